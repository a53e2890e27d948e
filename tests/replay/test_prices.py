"""Prices: list prices from genai-prices (bundled, never downloaded), a team's table over them,
long-context tiers, the 5-minute / 1-hour cache-write split, and unpriced models kept unknown."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from datetime import date

import orjson
import pytest
from typer.testing import CliRunner

from compactctl.cli.main import app
from compactctl.errors import InputError
from compactctl.replay.price_source import listed_prices, source_label, source_version
from compactctl.replay.prices import PriceTable, load_prices, prices_for, shipped_prices, with_summarizer_prices
from tests.conftest import SHARED_TRANSCRIPTS, needs_transcripts
from tests.recorded.sessions import working_session


def test_current_model_names_from_real_logs_have_list_prices():
    table = shipped_prices()
    for model, provider in [
        ("claude-sonnet-4-6", "anthropic"),
        ("claude-opus-4-7", "anthropic"),
        ("claude-opus-5", "anthropic"),
        ("claude-opus-4-5-20251101", "anthropic"),
        ("gpt-5.4", "openai"),
        ("gpt-5.5", "openai"),
        ("gpt-5.6-terra", "openai"),
    ]:
        prices = table.find(model, provider)
        assert prices is not None, model
        assert prices.provider == provider and prices.input > 0 and prices.output > prices.input
        assert 0 < prices.cached_input < prices.input  # cache reads are discounted everywhere
        assert source_version() in prices.source


def test_anthropic_cache_writes_cost_more_and_one_hour_writes_most():
    prices = listed_prices("claude-sonnet-4-5", "anthropic")
    assert prices is not None
    assert prices.cache_write == pytest.approx(1.25 * prices.input)
    assert prices.cache_write_1h == pytest.approx(2 * prices.input)
    # 1,000 tokens written, 400 of them with the one-hour lifetime, as the usage splits them.
    cost = prices.call_cost(1000, 0, 1000, 0, written_1h=400)
    assert cost == pytest.approx((600 * prices.cache_write + 400 * prices.cache_write_1h) / 1e6)


def test_openai_writes_are_plain_input_because_its_usage_reports_none():
    prices = listed_prices("gpt-5.5", "openai")
    assert prices is not None
    assert prices.cache_write == prices.input and prices.cache_write_1h is None


def test_an_openai_model_that_lists_a_write_price_bills_writes_at_it():
    """genai-prices lists cache writes for the gpt-5.6 family (1.25x input), and Codex 0.171 records them."""
    prices = listed_prices("gpt-5.6-terra", "openai")
    assert prices is not None
    assert prices.cache_write == pytest.approx(1.25 * prices.input) and prices.cache_write_1h is None


def test_a_call_over_the_long_context_tier_is_billed_whole_at_the_tier_price():
    prices = listed_prices("claude-sonnet-4-5", "anthropic")
    assert prices is not None and prices.tiers
    start, tier = prices.tiers[0]
    assert start == 200_000 and tier.input == 2 * prices.input
    below = prices.call_cost(start, 0, 0, 1000)
    above = prices.call_cost(start + 1, 0, 0, 1000)
    assert below == pytest.approx((start * prices.input + 1000 * prices.output) / 1e6)
    # Crossing the tier prices every token of the call at the tier's rates, output too.
    assert above == pytest.approx(((start + 1) * tier.input + 1000 * tier.output) / 1e6)


def test_prices_are_those_of_the_call_s_day():
    # Anthropic dropped Sonnet 4.6's long-context surcharge on 2026-03-13 (genai-prices dates it).
    before = listed_prices("claude-sonnet-4-6", "anthropic", date(2026, 3, 1))
    after = listed_prices("claude-sonnet-4-6", "anthropic", date(2026, 4, 1))
    assert before is not None and after is not None
    assert before.tiers and not after.tiers
    assert before.call_cost(300_000, 0, 0, 0) == pytest.approx(2 * after.call_cost(300_000, 0, 0, 0))


def test_a_model_no_source_knows_is_unpriced_not_free():
    assert shipped_prices().find("claude-future-9", "anthropic") is None
    with pytest.raises(InputError, match=r"unknown model 'gpt-9'.*genai-prices.*`prices` FILE"):
        prices_for(shipped_prices(), "gpt-9")


def test_a_team_price_file_is_laid_over_the_listed_prices(tmp_path):
    own = tmp_path / "prices.toml"
    own.write_text("[models.house-llm]\ninput = 1.0\ncached_input = 0.2\noutput = 3.0\nmin_cached_tokens = 512\n")
    table = load_prices(own)
    assert table.default == shipped_prices().default
    house = prices_for(table, "house-llm")
    assert (house.input, house.cached_input, house.cache_write, house.output) == (1.0, 0.2, 1.0, 3.0)
    assert house.min_cached_tokens == 512
    assert prices_for(table, "gpt-4o").input == 2.5  # the rest still listed


def test_a_team_row_wins_over_the_listed_price(tmp_path):
    own = tmp_path / "prices.json"
    own.write_text('{"models": {"gpt-4o": {"input": 1.0, "output": 2.0}}}')
    assert prices_for(load_prices(own), "gpt-4o-2024-08-06").input == 1.0  # a dated id matches its row


def test_an_override_drops_the_long_context_tiers():
    prices = prices_for(shipped_prices(), "claude-sonnet-4-5", input=1.0)
    assert prices.tiers == () and prices.call_cost(300_000, 0, 0, 0) == pytest.approx(0.3)


def test_an_llm_summarizer_is_priced_at_its_own_listed_model():
    base = prices_for(shipped_prices(), "gpt-4o")
    priced = with_summarizer_prices(base, shipped_prices(), "openai", "gpt-4o-mini")
    assert priced.summarizer is not None and priced.summarizer.input == 0.15


def test_pricing_never_reaches_the_network(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("genai-prices tried the network")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    listed_prices.cache_clear()
    assert listed_prices("gpt-5.6-terra", "openai") is not None
    from genai_prices import data_snapshot

    assert data_snapshot._custom_snapshot is None  # no UpdatePrices snapshot was installed


def test_help_does_not_import_genai_prices():
    code = "import sys\nfrom compactctl.cli.main import main\ntry:\n    main()\nexcept SystemExit:\n    pass\n"
    code += "print('genai_prices' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", code, "--help"], capture_output=True, text=True, check=True)
    assert result.stdout.strip().endswith("False")


def _session_file(tmp_path, model: str):
    session = working_session(calls=4)
    for record in session.records:
        if record["type"] == "assistant":
            record["message"]["model"] = model
    path = tmp_path / "session.jsonl"
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in session.records))
    return path


def test_an_unpriced_session_says_so_before_the_table_and_exits_0(tmp_path):
    path = _session_file(tmp_path, "claude-future-9")
    result = CliRunner().invoke(app, ["replay", str(path), "-t", "50000"])
    assert result.exit_code == 0, result.output
    note = result.stdout.index("claude-future-9")
    assert note < result.stdout.index("┏")  # the note comes before the table
    assert "--model-pricing" in result.stdout[note:]
    assert "unpriced" in result.stdout and "$0.0000" not in result.stdout


def test_an_unpriced_session_s_json_cost_is_null(tmp_path):
    path = _session_file(tmp_path, "claude-future-9")
    result = CliRunner().invoke(app, ["replay", str(path), "-t", "50000", "--json"])
    data = orjson.loads(result.stdout)
    (entry,) = data["files"]
    assert [row["cost"] for row in entry["settings"]] == [None, None]
    assert entry["settings"][0]["unpriced_calls"] == 4
    assert entry["api"]["unpriced_models"] == ["claude-future-9"]
    assert data["total"]["settings"][0]["cost"] is None
    assert data["total"]["prices"] == source_label()


def test_model_pricing_prices_the_unknown_model(tmp_path):
    path = _session_file(tmp_path, "claude-future-9")
    result = CliRunner().invoke(
        app, ["replay", str(path), "-t", "50000", "--json", "--model-pricing", "claude-sonnet-4-5"]
    )
    (entry,) = orjson.loads(result.stdout)["files"]
    assert all(row["cost"] > 0 for row in entry["settings"])
    assert entry["api"]["unpriced_models"] == []


@needs_transcripts
def test_every_model_named_in_the_real_transcripts_is_priced():
    from compactctl.formats import load_records, records_of
    from compactctl.recorded import read_recorded

    table = PriceTable({})
    seen: set[tuple[str, str]] = set()
    for producer, provider in (("claude-code", "anthropic"), ("codex", "openai")):
        for path in sorted((SHARED_TRANSCRIPTS / producer).glob("*/*.json*")):
            records = records_of(path.read_bytes(), str(path), None)
            fmt, _ = load_records(records, str(path), "auto", None)
            session = read_recorded(fmt.name, records, str(path))
            for context in session.contexts if session is not None else ():
                seen.update((str(c.model), provider) for c in context.calls if c.model)
    assert len({model for model, _ in seen}) >= 8
    unpriced = sorted(model for model, provider in seen if table.find(model, provider) is None)
    assert unpriced == []


def test_with_no_threshold_a_claude_code_session_is_replayed_at_its_producer_s_own_points(tmp_path):
    from compactctl.formats import get_format
    from compactctl.replay.fitted_thresholds import fitted_thresholds

    fitted = fitted_thresholds(get_format("claude-code"), "claude-sonnet-4-6")
    assert fitted is not None and fitted.window == 200_000 and fitted.trigger == 177_000  # 200k less 23k, measured
    assert fitted.thresholds == [44_250, 88_500, 177_000]
    codex = fitted_thresholds(get_format("codex"), "gpt-5.1")
    assert codex is not None and codex.trigger == round(0.9 * codex.window)
    path = _session_file(tmp_path, "claude-sonnet-4-6")
    result = CliRunner().invoke(app, ["replay", str(path), "--json"])
    data = orjson.loads(result.stdout)
    (entry,) = data["files"]
    assert [row["threshold"] for row in entry["settings"][1:]] == [44_250, 88_500, 177_000]
    assert "auto-compact point 177,000" in data["total"]["thresholds_from"]
    shown = CliRunner().invoke(app, ["replay", str(path)])
    assert shown.stdout.index("auto-compact point") < shown.stdout.index("┏")
    # The same session piped in: fitted the same (it was replayed at 8,000/16,000/32,000, 39 of 41 calls compacting
    # on the real pomodoro session), every figure as from the file.
    piped = orjson.loads(CliRunner().invoke(app, ["replay", "-", "--json"], input=path.read_bytes()).stdout)
    assert piped["files"][0]["settings"] == entry["settings"]
    assert piped["total"]["thresholds_from"] == data["total"]["thresholds_from"]


def test_calls_over_the_threshold_are_counted_per_row(tmp_path):
    path = _session_file(tmp_path, "claude-sonnet-4-5")
    result = CliRunner().invoke(app, ["replay", str(path), "-t", "1000", "-s", "window", "--json"])
    (entry,) = orjson.loads(result.stdout)["files"]
    none, low = entry["settings"]
    assert none["calls_over_threshold"] == 0
    # The hidden 20k prefix alone is over 1,000 tokens: every call is spent above the threshold.
    assert low["calls_over_threshold"] == low["calls"] == 4


def test_non_monotonic_compaction_counts_are_explained():
    from compactctl.cli.replay import non_monotonic_note
    from compactctl.replay.simulate import ScenarioResult

    def row(threshold, compactions):
        return ScenarioResult(
            "threshold", threshold, "window", 10, compactions, 0, 0, 0.0, 0, 0, 0, 0, 0, 0, 0.0, 0, []
        )

    assert non_monotonic_note([row(100, 5), row(200, 3)]) is None
    note = non_monotonic_note([row(100, 3), row(200, 7)])
    assert note is not None and "not monotonic" in note and "over after" in note


def test_a_listed_price_is_read_back_from_the_cache_without_importing_genai_prices(tmp_path):
    code = (
        "import sys\nfrom datetime import date\nfrom compactctl.replay.price_source import listed_prices\n"
        "found = [listed_prices('claude-sonnet-4-5', 'anthropic', date(2026, 3, 1)), listed_prices('no-such-model')]\n"
        "print(repr(found))\nprint('genai_prices' in sys.modules)\n"
    )
    env = {**os.environ, "COMPACTCTL_PRICES_CACHE": str(tmp_path)}

    def run() -> list[str]:
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env)
        return done.stdout.splitlines()

    looked_up, imported = run()
    assert imported == "True" and "claude-sonnet-4-5" in looked_up and "tiers=((200000" in looked_up
    assert run() == [looked_up, "False"]  # the same Prices, tiers and all, and the unknown model still unknown
    (cached,) = tmp_path.glob("genai-prices-*.json")
    cached.write_text("{not json")
    assert run() == [looked_up, "True"]  # a damaged file is ignored and written anew
    assert run() == [looked_up, "False"]
