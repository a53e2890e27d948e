"""Claude as Bedrock, Vertex and the gateways name it, and the current model names, are priced and read as Claude.

A Claude Code session on Bedrock names ``us.anthropic.claude-sonnet-4-20250514-v1:0``; on Vertex,
``claude-3-7-sonnet@20250219``. Each is the same model as Anthropic's id: the same thinking rule, the
same cache minimum, and a price from that cloud's own listing in genai-prices (Bedrock's regional
endpoints list above its global ones), never $0 and never "unpriced" for a model genai-prices lists.
"""

from __future__ import annotations

import dataclasses

import orjson
import pytest
from typer.testing import CliRunner

from compactctl.calibration import features
from compactctl.cli.main import app
from compactctl.replay.prices import shipped_prices
from compactctl.tokens import claude_model, encoding_for_model, provider_of
from tests.replay.test_bill import CURRENT_MODELS
from tests.replay.test_prices import _session_file

SPELLINGS = [  # (as a log names it, Anthropic's id, whose listing prices it)
    ("claude-3-7-sonnet@20250219", "claude-3-7-sonnet-20250219", "google"),
    ("claude-sonnet-4@20250514", "claude-sonnet-4-20250514", "google"),
    ("claude-opus-4-5@20251101", "claude-opus-4-5-20251101", "google"),
    ("anthropic.claude-3-7-sonnet-20250219-v1:0", "claude-3-7-sonnet-20250219", "aws"),
    ("us.anthropic.claude-3-7-sonnet-20250219-v1:0", "claude-3-7-sonnet-20250219", "aws"),
    ("us.anthropic.claude-sonnet-4-20250514-v1:0", "claude-sonnet-4-20250514", "aws"),
    ("us.anthropic.claude-sonnet-4-5-20250929-v1:0", "claude-sonnet-4-5-20250929", "aws"),
    ("eu.anthropic.claude-haiku-4-5-20251001-v1:0", "claude-haiku-4-5-20251001", "aws"),
    ("global.anthropic.claude-opus-4-5-20251101-v1:0", "claude-opus-4-5-20251101", "aws"),
    ("us.anthropic.claude-opus-4-7-v1:0", "claude-opus-4-7", "aws"),
    (
        "arn:aws:bedrock:us-east-1:111122223333:inference-profile/us.anthropic.claude-sonnet-4-20250514-v1:0",
        "claude-sonnet-4-20250514",
        "aws",
    ),
]


@pytest.mark.parametrize(("spelled", "own", "listing"), SPELLINGS)
def test_a_bedrock_or_vertex_id_is_read_as_anthropic_s_and_priced_from_its_cloud_s_listing(spelled, own, listing):
    assert claude_model(spelled) == own and provider_of(spelled) == "anthropic"
    assert features.strips_thinking(spelled) is features.strips_thinking(own)
    table = shipped_prices()
    served, anthropic = table.find(spelled, "anthropic"), table.find(own, "anthropic")
    assert served is not None and anthropic is not None, spelled
    assert f"({listing}/" in served.source
    assert served.input > 0 and 0 < served.cached_input < served.input < served.cache_write < served.output
    assert served.min_cached_tokens == anthropic.min_cached_tokens  # the model's cache rule, whoever serves it
    assert anthropic.input <= served.input <= 1.1 * anthropic.input  # a regional endpoint lists up to 10 % more


@pytest.mark.parametrize(
    ("model", "strips"),
    [
        ("claude-3-7-sonnet@20250219", True),
        ("anthropic.claude-3-7-sonnet-20250219-v1:0", True),
        ("us.anthropic.claude-sonnet-4-20250514-v1:0", True),
        ("claude-sonnet-4-5@20250929", True),
        ("us.anthropic.claude-sonnet-4-5-20250929-v1:0", True),
        ("global.anthropic.claude-opus-4-5-20251101-v1:0", False),
        ("us.anthropic.claude-opus-4-7-v1:0", False),
        ("claude-opus-4-7@20260101", False),
        ("gpt-5.5", False),
    ],
)
def test_the_thinking_rule_knows_the_cloud_spellings(model, strips):
    assert features.strips_thinking(model) is strips


CURRENT = [
    *CURRENT_MODELS,  # the names the issue saw unpriced, and the ones after them
    ("gpt-5.3-codex", "openai"),
    ("gemini-3-pro-preview", "google"),
    ("gemini-3-flash-preview", "google"),
    ("gemini-2.5-pro", "google"),
]


@pytest.mark.parametrize(("model", "provider"), CURRENT)
def test_the_current_model_names_have_list_prices(model, provider):
    prices = shipped_prices().find(model, provider)
    assert prices is not None and prices.provider == provider
    assert prices.input > 0 and prices.output > prices.input and 0 < prices.cached_input < prices.input


@pytest.mark.parametrize("spelled", ["us.anthropic.claude-sonnet-4-20250514-v1:0", "claude-sonnet-4@20250514"])
def test_a_session_on_bedrock_or_vertex_is_priced_as_the_same_session_on_anthropic_s_api(tmp_path, spelled):
    def costs(model: str) -> list[float | None]:
        path = _session_file(tmp_path / model.replace(":", "_").replace("@", "_"), model)
        result = CliRunner().invoke(app, ["replay", str(path), "-t", "50000", "--json"])
        (entry,) = orjson.loads(result.stdout)["files"]
        assert entry["api"]["unpriced_models"] == []
        return [row["cost"] for row in entry["settings"]]

    (tmp_path / "claude-sonnet-4-20250514").mkdir()
    (tmp_path / spelled.replace(":", "_").replace("@", "_")).mkdir()
    on_cloud, on_api = costs(spelled), costs("claude-sonnet-4-20250514")
    assert all(cost is not None and cost > 0 for cost in on_cloud)
    assert on_cloud == pytest.approx(on_api)  # Sonnet 4 lists the same on all three


GATEWAY_SPELLINGS = [  # (as a gateway or a framework names it, the maker's id, the provider)
    ("anthropic/claude-sonnet-4.6", "claude-sonnet-4-6", "anthropic"),  # OpenRouter, the Vercel AI Gateway
    ("anthropic/claude-sonnet-4.5", "claude-sonnet-4-5", "anthropic"),
    ("openrouter/anthropic/claude-opus-4.7", "claude-opus-4-7", "anthropic"),
    ("litellm/anthropic/claude-opus-4-7", "claude-opus-4-7", "anthropic"),  # the Agents SDK over LiteLLM
    ("openai/gpt-5.5", "gpt-5.5", "openai"),
    ("litellm/openai/gpt-5.4", "gpt-5.4", "openai"),
    ("google/gemini-3.5-flash", "gemini-3.5-flash", "google"),
]


@pytest.mark.parametrize(("spelled", "own", "provider"), GATEWAY_SPELLINGS)
def test_a_gateway_s_spelling_is_the_maker_s_model_at_its_list_price(spelled, own, provider):
    assert provider_of(spelled) == provider and encoding_for_model(spelled) == encoding_for_model(own)
    assert claude_model(spelled) == (own if provider == "anthropic" else None)
    assert features.strips_thinking(spelled) is features.strips_thinking(own)
    table = shipped_prices()
    through_gateway, listed = table.find(spelled, provider), table.find(own, provider)
    assert through_gateway is not None and listed is not None, spelled
    assert through_gateway.source == listed.source  # the same listing: the maker's
    assert _figures(through_gateway) == _figures(listed)


def _figures(prices):
    """A price row's figures, and its tiers', without the model name it was asked by."""
    tiers = tuple((start, _figures(tier)) for start, tier in prices.tiers)
    return dataclasses.replace(prices, model="", tiers=()), tiers


def test_a_session_through_a_gateway_is_priced_as_on_the_maker_s_api(tmp_path):
    def costs(model: str) -> list[float | None]:
        folder = tmp_path / model.replace("/", "_")
        folder.mkdir()
        result = CliRunner().invoke(app, ["replay", str(_session_file(folder, model)), "-t", "50000", "--json"])
        (entry,) = orjson.loads(result.stdout)["files"]
        assert entry["api"]["unpriced_models"] == []
        return [row["cost"] for row in entry["settings"]]

    through_gateway, on_api = costs("anthropic/claude-sonnet-4.6"), costs("claude-sonnet-4-6")
    assert all(cost is not None and cost > 0 for cost in through_gateway)
    assert through_gateway == pytest.approx(on_api)
