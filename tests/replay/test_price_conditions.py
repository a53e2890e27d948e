"""Calls billed at other than the standard list price, as the real clients wrote them (tests/fakes/record_tiers.py):
Codex's service tier ("fast" is sent as "priority", "flex"), Claude Code's fast mode and US-only inference. Each
row prices a call as it was billed; the bill is what the fake served, priced by genai-prices apart from replay."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest
from genai_prices import Usage, calc_price
from typer.testing import CliRunner

from compactctl.cli.main import app
from tests.replay.test_bill import anthropic_counts, google_counts, openai_counts

RECORDED = Path(__file__).parents[1] / "recorded" / "data"
TIERS = RECORDED / "codex-0.171.0-service-tiers"
FAST_AND_US = RECORDED / "claude-code-2.1.332-fast-and-us"


def _served(name: str) -> list[dict[str, Any]]:
    return list(orjson.loads((RECORDED / f"{name}.served.json").read_bytes()))


def _served_cost(name: str, provider: str, conditions: bool = True) -> float:
    """What the fake served at list prices, each response at the tier it was answered at (``conditions``)
    or, for comparison, all at the standard price. US-only inference is 1.1x the tokens (Anthropic's page)."""
    total = 0.0
    for response in _served(name):
        usage = response["usage"]
        if provider == "openai":
            counts = openai_counts({**usage, "cached_input_tokens": usage["input_tokens_details"]["cached_tokens"]})
            context = {"service_tier": response["service_tier"]} if "service_tier" in response else None
        elif provider == "google":
            counts, context = google_counts(usage), None
        else:
            counts = anthropic_counts(usage)
            context = {"speed": "fast"} if usage.get("speed") == "fast" else None
        price = calc_price(
            Usage(**counts), response["model"], provider_id=provider, price_context=context if conditions else None
        )
        surcharge = 1.1 if conditions and usage.get("inference_geo") == "us" else 1.0
        total += float(price.total_price) * surcharge
    return total


def _replayed(path: Path) -> dict[str, Any]:
    result = CliRunner().invoke(app, ["replay", str(path), "-t", "20000", "--json", "-q"])
    assert result.exit_code == 0, result.stderr
    return dict(orjson.loads(result.stdout))


def test_codex_calls_at_the_priority_and_flex_tiers_are_billed_at_those_tiers():
    """Four calls of a thread started with ``service_tier = "fast"`` (sent as "priority", kept by the thread when
    resumed with "flex") and two of a thread started with "flex": $0.5535 at their tiers, not $0.3007 at the
    standard price."""
    served = _served("codex-0.171.0-service-tiers")
    assert [r.get("service_tier") for r in served] == ["priority"] * 4 + ["flex"] * 2
    report = _replayed(TIERS)
    none, threshold = report["total"]["settings"]
    expected = _served_cost("codex-0.171.0-service-tiers", "openai")
    assert none["calls"] == threshold["calls"] == 6
    assert none["cost"] == pytest.approx(expected, rel=1e-6)
    assert expected > 1.5 * _served_cost("codex-0.171.0-service-tiers", "openai", conditions=False)
    notes = [n for f in report["files"] for n in f["api"]["notes"]]
    assert "4 of 4 calls billed at service tier priority prices, as the log records (every row prices them so)" in notes
    assert "2 of 2 calls billed at service tier flex prices, as the log records (every row prices them so)" in notes


def test_claude_code_calls_in_fast_mode_and_with_us_inference_are_billed_at_their_prices():
    """Two responses in fast mode (``usage.speed``), two with US-only inference (``usage.inference_geo``: 1.1x), two
    standard, all on claude-opus-5: replay's bill is the served usage at those prices."""
    (session,) = FAST_AND_US.glob("*.jsonl")
    report = _replayed(session)
    (entry,) = report["files"]
    bill = next(row for row in entry["settings"] if row["basis"] == "bill")
    expected = _served_cost("claude-code-2.1.332-fast-and-us", "anthropic")
    assert bill["calls"] == 6
    assert bill["cost"] == pytest.approx(expected, rel=1e-6)
    assert expected > 1.25 * _served_cost("claude-code-2.1.332-fast-and-us", "anthropic", conditions=False)
    assert sorted(n for n in entry["api"]["notes"] if "billed at" in n) == [
        "2 of 6 calls billed at inference geo us prices, as the log records (every row prices them so)",
        "2 of 6 calls billed at speed fast prices, as the log records (every row prices them so)",
    ]


def test_a_tier_the_listing_has_no_price_for_is_unpriced_not_the_standard_price():
    from compactctl.replay.price_source import listed_prices, priced_name

    assert listed_prices("claude-opus-5", "anthropic", None, (("speed", "fast"),)) is not None
    assert listed_prices("claude-opus-4-7", "anthropic", None, (("speed", "fast"),)) is None  # no fast mode listed
    assert listed_prices("claude-opus-4-7", "anthropic", None) is not None
    assert priced_name("claude-opus-4-7", (("speed", "fast"),)) == "claude-opus-4-7 (speed fast)"


def test_us_inference_is_ten_percent_more_on_every_token_price_and_only_at_anthropic():
    from compactctl.replay.price_source import listed_prices

    us = (("inference_geo", "us"),)
    standard, local = listed_prices("claude-opus-5", "anthropic"), listed_prices("claude-opus-5", "anthropic", None, us)
    assert standard is not None and local is not None
    for field in ("input", "cached_input", "cache_write", "output"):
        assert getattr(local, field) == pytest.approx(1.1 * getattr(standard, field))
    assert local.web_search == standard.web_search  # searches are billed as listed
    assert listed_prices("gpt-5.5", "openai", None, us) == listed_prices("gpt-5.5", "openai")


@pytest.mark.parametrize(
    ("usage", "expected"),
    [
        ({"speed": "fast", "inference_geo": "us"}, (("speed", "fast"), ("inference_geo", "us"))),
        ({"speed": "standard", "inference_geo": "", "service_tier": "standard"}, ()),
        ({"inference_geo": "global"}, ()),
        (None, ()),
    ],
)
def test_the_price_conditions_of_an_anthropic_usage(usage: Any, expected: tuple):
    from compactctl.recorded import usage_pricing

    assert usage_pricing(usage) == expected


@pytest.mark.parametrize(
    ("tier", "expected"),
    [("priority", (("service_tier", "priority"),)), ("Flex", (("service_tier", "flex"),)), ("default", ()),
     ("auto", ()), (None, ()), ("", ())],
)  # fmt: skip
def test_a_codex_service_tier_as_a_price_condition(tier: Any, expected: tuple):
    from compactctl.recorded import service_tier_pricing

    assert service_tier_pricing(tier) == expected


def test_codex_compaction_calls_are_billed_at_the_threads_tier():
    """A thread on gpt-5.5 at "priority" (``service_tier = "fast"``) that compacts on a low limit, with a subagent and
    a fork that compact too (tests/fakes/record_tiers.py): the compaction calls, which no message records, were
    served at the thread's tier like its turns. Replay billed them at the standard price: $1.5070 of $2.0320."""
    name = "codex-0.171.0-compacted-priority"
    served = _served(name)
    assert {r.get("service_tier") for r in served} == {"priority"}
    replayed = _replayed(RECORDED / name)
    bills = [row for f in replayed["files"] for row in f["settings"] if row["basis"] == "bill"]
    assert sum(f["api"]["unpaired_cost"] for f in replayed["files"]) > 0  # compaction calls in the bill
    standard = _served_cost(name, "openai", conditions=False)
    assert sum(row["cost"] for row in bills) == pytest.approx(_served_cost(name, "openai"), rel=0.005)
    assert sum(row["cost"] for row in bills) > 2 * standard
