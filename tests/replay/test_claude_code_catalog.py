"""Claude Code's baked-in model catalog prices what genai-prices has not listed yet."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from typer.testing import CliRunner

from compactctl.cli.main import app
from compactctl.replay import price_source
from compactctl.replay.prices import shipped_prices
from tests.recorded.sessions import working_session

ROOT = Path(__file__).resolve().parents[2]
CATALOG = price_source.claude_code_catalog()


def test_every_model_claude_code_can_run_is_priced():
    unpriced = [model for model in CATALOG["models"] if shipped_prices().find(model, "anthropic") is None]
    assert unpriced == []


def test_a_model_genai_prices_lacks_is_priced_from_the_catalog_and_says_so():
    prices = shipped_prices().find("claude-mythos-5-1", "anthropic")
    assert prices is not None
    assert (prices.input, prices.cached_input, prices.cache_write, prices.cache_write_1h, prices.output) == (
        10.0,
        0.25,
        12.5,
        20.0,
        50.0,
    )
    assert prices.source == f"Claude Code {CATALOG['version']}'s model catalog (anthropic/claude-mythos-5-1)"


@pytest.mark.parametrize("spelling", ["claude-mythos-5[1m]", "us.anthropic.claude-mythos-5", "CLAUDE-MYTHOS-5"])
def test_the_catalog_knows_a_model_by_any_spelling_the_client_sends(spelling):
    found = price_source.catalog_entry(spelling)
    assert found is not None and found[0] == "claude-mythos-5"


def test_a_fast_mode_call_on_a_catalog_model_is_unpriced_not_the_standard_price():
    assert price_source.listed_prices("claude-mythos-5", "anthropic", None, (("speed", "fast"),)) is None


def test_us_only_inference_on_a_catalog_model_carries_the_surcharge():
    standard = price_source.listed_prices("claude-mythos-5", "anthropic")
    us_only = price_source.listed_prices("claude-mythos-5", "anthropic", None, (("inference_geo", "us"),))
    assert standard is not None and us_only is not None
    assert us_only.input == pytest.approx(1.1 * standard.input) and us_only.output == pytest.approx(55.0)
    assert us_only.source.endswith("(anthropic/claude-mythos-5, inference_geo us)")  # the caption says why it is more
    assert standard.source.endswith("(anthropic/claude-mythos-5)")


def test_a_catalog_long_prompt_tier_bills_the_whole_call_at_its_prices():
    entry = CATALOG["models"]["claude-haiku-5-5"]
    prices = price_source._from_catalog("claude-haiku-5-5", "anthropic", ())
    assert prices is not None and entry["long_prompt"] is not None
    (start, tier), above = prices.tiers[0], entry["long_prompt"]["above_prompt_tokens"]
    assert start == above and tier.input == entry["long_prompt"]["input"]
    assert prices.call_cost(above + 1, 0, 0, 0) == pytest.approx((above + 1) * tier.input / 1e6)


def test_where_genai_prices_lists_a_model_it_agrees_with_the_catalog():
    """The two sources are kept apart; a disagreement means one of them moved (re-cut the catalog)."""
    disagreements = []
    for model in CATALOG["models"]:
        listed = price_source._looked_up(model, "anthropic", None)
        if listed is None or not listed.source.startswith(price_source.PACKAGE):
            continue
        catalog = price_source._from_catalog(model, "anthropic", ())
        assert catalog is not None
        for field in ("input", "cached_input", "cache_write", "cache_write_1h", "output"):
            if getattr(listed, field) != pytest.approx(getattr(catalog, field)):
                disagreements.append((model, field, getattr(listed, field), getattr(catalog, field)))
    assert disagreements == []


def test_a_session_on_a_catalog_model_replays_with_a_cost(tmp_path):
    session = working_session(calls=4)
    for record in session.records:
        if record["type"] == "assistant":
            record["message"]["model"] = "claude-mythos-5"
    path = tmp_path / "session.jsonl"
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in session.records))
    result = CliRunner().invoke(app, ["replay", str(path), "-t", "50000", "--json"])
    (entry,) = orjson.loads(result.stdout)["files"]
    assert entry["api"]["unpriced_models"] == []
    assert all(row["cost"] > 0 for row in entry["settings"])


@pytest.mark.clients
def test_the_shipped_catalog_is_the_pinned_client_s_own(monkeypatch):
    from tests.fakes.clients import require_client

    client = require_client("claude")
    monkeypatch.syspath_prepend(str(ROOT / "bench"))
    import claude_code_catalog

    cut = claude_code_catalog.catalog(client.binary)
    assert cut == CATALOG, "re-cut it: python bench/claude_code_catalog.py"
