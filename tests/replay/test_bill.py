"""replay's bill equals the file's own usage at the provider's list prices, on the real sessions.

The bill here is worked out apart from replay's code: straight from the file's records (each
Claude Code response id once, each changed Codex ``token_count`` once), each call priced by
``genai_prices.calc_price`` for the model it names on its day. Replay's row that stands for what
the session did (``none`` where the producer never compacted, ``recorded`` where it did) must
cost within 3 % of it (a producer's compaction call the file reports no usage for is estimated apart,
in no row: ``api.compaction_estimate``).
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import orjson
import pytest
from typer.testing import CliRunner

from compactctl.cli.main import app
from tests.conftest import SHARED_TRANSCRIPTS, needs_transcripts

REAL_CLIENTS = Path(__file__).resolve().parents[1] / "formats" / "data" / "real-clients"
CURRENT_MODELS = [
    ("claude-sonnet-4-6", "anthropic"),
    ("claude-opus-4-7", "anthropic"),
    ("claude-opus-5", "anthropic"),
    ("gpt-5.4", "openai"),
    ("gpt-5.5", "openai"),
    ("gpt-5.6-terra", "openai"),
    # Codex 0.171's default and Claude Code 2.1.332's subagent model: listed from genai-prices 0.2.5 on.
    ("gpt-6.2-sol", "openai"),
    ("claude-haiku-5-5", "anthropic"),
    ("claude-opus-5-5", "anthropic"),
]


def _when(value: Any) -> dt.datetime | None:
    if not isinstance(value, str):
        return None
    return dt.datetime.fromisoformat(value.replace("Z", "+00:00"))


def _price(model: str, provider: str, when: dt.datetime | None, **usage: int) -> float:
    from genai_prices import Usage, calc_price

    from compactctl.tokens import bare_model

    # A gateway's spelling (``openai/gpt-5.5``) is the maker's list price, which genai-prices lists without the prefix.
    counts = Usage(**usage)
    return float(calc_price(counts, bare_model(model), provider_id=provider, genai_request_timestamp=when).total_price)


def anthropic_counts(usage: dict[str, Any]) -> dict[str, int]:
    """genai-prices' usage of one Anthropic response: the cache writes split into 5-minute and 1-hour
    ones as ``cache_creation`` reports them (Claude Code asks for 1-hour writes; they cost 2x input,
    the 5-minute ones 1.25x)."""
    read = usage.get("cache_read_input_tokens") or 0
    written = usage.get("cache_creation_input_tokens") or 0
    counts = {
        "input_tokens": (usage.get("input_tokens") or 0) + read + written,
        "cache_read_tokens": read,
        "cache_write_tokens": written,
        "output_tokens": usage.get("output_tokens") or 0,
    }
    searches = (usage.get("server_tool_use") or {}).get("web_search_requests") or 0
    if searches:  # billed per search beside the tokens ($10 per 1,000)
        counts["web_searches"] = searches
    split = usage.get("cache_creation") or {}
    hour = split.get("ephemeral_1h_input_tokens") or 0
    if hour:
        counts.update(cache_write_1h_tokens=hour, cache_write_5m_tokens=written - hour)
    return counts


def openai_counts(usage: dict[str, Any]) -> dict[str, int]:
    """genai-prices' usage of one Codex response: its cache writes too where it reports them (0.171's
    ``cache_write_input_tokens``, part of the input like the cached tokens; gpt-5.6's are billed 1.25x)."""
    counts = {
        "input_tokens": usage["input_tokens"],
        "cache_read_tokens": usage.get("cached_input_tokens") or 0,
        "output_tokens": usage["output_tokens"],
    }
    if usage.get("cache_write_input_tokens"):
        counts["cache_write_tokens"] = usage["cache_write_input_tokens"]
    return counts


def google_counts(usage: dict[str, Any]) -> dict[str, int]:
    """genai-prices' usage of one Gemini API response (``usageMetadata``), as its own Google extractor maps it: the
    tool-use prompt is input beside the prompt, the thoughts output beside the candidates."""
    return {
        "input_tokens": (usage.get("promptTokenCount") or 0) + (usage.get("toolUsePromptTokenCount") or 0),
        "cache_read_tokens": usage.get("cachedContentTokenCount") or 0,
        "output_tokens": (usage.get("candidatesTokenCount") or 0) + (usage.get("thoughtsTokenCount") or 0),
    }


def _records(path: Path) -> list[dict[str, Any]]:
    data = path.read_bytes()
    if data.lstrip().startswith(b"["):
        return list(orjson.loads(data))
    return [orjson.loads(line) for line in data.splitlines() if line.strip()]


def _claude_code_bill(path: Path) -> tuple[float, int]:
    best: dict[str, dict[str, Any]] = {}
    for record in _records(path):
        message = record.get("message")
        if record.get("type") != "assistant" or not isinstance(message, dict) or not message.get("usage"):
            continue
        if message.get("model") == "<synthetic>" or record.get("isApiErrorMessage"):
            continue
        known = best.get(message["id"])
        if known is None or message["usage"].get("output_tokens", 0) >= known["message"]["usage"].get(
            "output_tokens", 0
        ):
            best[message["id"]] = record
    cost = 0.0
    for record in best.values():
        usage, model = record["message"]["usage"], record["message"]["model"]
        cost += _price(model, "anthropic", _when(record.get("timestamp")), **anthropic_counts(usage))
    return cost, len(best)


def _codex_bill(path: Path) -> tuple[float, int]:
    cost, calls, model, last_total = 0.0, 0, None, None
    for line in _records(path):
        payload = line.get("payload") or {}
        if line.get("type") == "turn_context" and payload.get("model"):
            model = payload["model"]
        info = payload.get("info") if payload.get("type") == "token_count" else None
        if not isinstance(info, dict) or info.get("total_token_usage") == last_total:
            continue
        last_total = info.get("total_token_usage")
        usage = info["last_token_usage"]
        calls += 1
        cost += _price(model, "openai", _when(line.get("timestamp")), **openai_counts(usage))
    return cost, calls


def _sessions() -> list[Path]:
    found = [
        p for producer in ("claude-code", "codex") for p in sorted((SHARED_TRANSCRIPTS / producer).rglob("*.json*"))
    ]
    return [p for p in found if "bastion" not in str(p)]  # its usage is zeroed: no bill to check


@pytest.mark.slow  # every real session with usage replayed: 0.3-0.9 s of CPU each
@needs_transcripts
@pytest.mark.parametrize("path", _sessions() if SHARED_TRANSCRIPTS.is_dir() else [], ids=lambda p: p.parent.name)
def test_replay_s_bill_is_the_file_s_usage_at_list_prices(path: Path):
    producer = "codex" if "codex" in path.relative_to(SHARED_TRANSCRIPTS).parts[0] else "claude-code"
    expected, calls = (_codex_bill if producer == "codex" else _claude_code_bill)(path)
    assert calls > 0 and expected > 0
    result = CliRunner().invoke(app, ["replay", str(path), "-t", "100000", "--json"])
    assert result.exit_code == 0, result.output
    (entry,) = orjson.loads(result.stdout)["files"]
    assert entry["api"]["unpriced_models"] == []
    bill = next(row for row in entry["settings"] if row["basis"] == "bill")
    assert bill["cost"] == pytest.approx(expected, rel=0.03)


@pytest.mark.parametrize(("model", "provider"), CURRENT_MODELS)
def test_current_model_names_are_priced_with_a_context_window(model: str, provider: str):
    from compactctl.formats import get_format
    from compactctl.replay.fitted_thresholds import context_window
    from compactctl.replay.prices import PriceTable

    prices = PriceTable({}).find(model, provider)
    assert prices is not None and prices.input > 0 and prices.output > prices.input
    auto = get_format("claude-code" if provider == "anthropic" else "codex").auto_compact
    assert auto is not None and auto.provider == provider
    assert context_window(model, auto)[0] >= 200_000


def test_every_model_the_real_clients_wrote_is_priced():
    from compactctl.files.io import is_sidecar
    from compactctl.formats import load_records, records_of
    from compactctl.recorded import read_recorded
    from compactctl.replay.prices import PriceTable

    seen: set[tuple[str, str]] = set()
    recorded = Path(__file__).resolve().parents[1] / "recorded" / "data"
    every = [*sorted(REAL_CLIENTS.rglob("*.jsonl")), *sorted(recorded.rglob("*.jsonl"))]
    # a Codex home's session_index.jsonl is none; nor an empty stub (Claude Code 2.0.x's --resume leaves one)
    for path in [path for path in every if not is_sidecar(path) and path.stat().st_size]:
        records = records_of(path.read_bytes(), str(path), None)
        fmt, _ = load_records(records, str(path), "auto", None)
        session = read_recorded(fmt.name, records, str(path))
        provider = {"claude-code": "anthropic", "codex": "openai", "gemini": "google"}.get(fmt.name)
        if session is None or provider is None:
            continue
        calls = [*(c for context in session.contexts for c in context.calls), *session.off_thread]
        seen.update((str(c.model), provider) for c in calls if c.model)
    assert {provider for _, provider in seen} == {"anthropic", "openai", "google"}
    assert sorted(m for m, p in seen if PriceTable({}).find(m, p) is None) == []


CACHED = REAL_CLIENTS / "claude-code-2.1.332-cache-1h-long-context.jsonl"


def _bill_row(path: Path) -> dict[str, Any]:
    """The row of ``replay --json`` that stands for what the session was billed."""
    result = CliRunner().invoke(app, ["replay", str(path), "-t", "100000", "--json", "-q"])
    assert result.exit_code == 0, result.output
    (entry,) = orjson.loads(result.stdout)["files"]
    return dict(next(row for row in entry["settings"] if row["basis"] == "bill"))


def test_one_hour_cache_writes_and_long_context_calls_are_billed_at_their_own_prices():
    """The real Claude Code 2.1.332 wrote this session from a fake that reports caching as the API does
    (tests/fakes/record_fixtures.py claude_code_cache_fixture): every write kept one hour, three calls on
    claude-sonnet-4-5 over 200k input, one on claude-opus-4-7. The reference bill prices the 1-hour writes
    at their own rate (2x input, not the 5-minute 1.25x) and each call at its tier; replay's bill is it.
    Priced as 5-minute writes, the same usage would be a third lower: the reference used to do that."""
    from genai_prices import Usage, calc_price

    expected, calls = _claude_code_bill(CACHED)
    assert calls == 4
    bill = _bill_row(CACHED)
    assert bill["calls"] == 4
    assert bill["cost"] == pytest.approx(expected, rel=1e-6)
    responses = {
        record["message"]["id"]: record["message"]
        for record in _records(CACHED)
        if record.get("type") == "assistant" and (record.get("message") or {}).get("usage")
    }
    five_minutes = 0.0
    for message in responses.values():
        counts = {k: v for k, v in anthropic_counts(message["usage"]).items() if "_1h" not in k and "_5m" not in k}
        five_minutes += float(calc_price(Usage(**counts), message["model"], provider_id="anthropic").total_price)
    assert five_minutes < 0.8 * expected, (five_minutes, expected)


WEB_SEARCH = REAL_CLIENTS / "claude-code-2.1.332-web-search.jsonl"


def test_claude_codes_web_searches_are_billed_per_search():
    """The real Claude Code 2.1.332, two turns each a WebSearch (tests/fakes/record_server_tools.py): the tool
    is a request of Claude Code's own with the API's ``web_search`` server tool, which writes no message; the
    session's ``cost-state`` counts its tokens and its searches (``webSearchRequests``), billed $10 per 1,000.
    Replay billed the tokens and not the searches: $0.269751 against the client's own $0.289751 (-6.9 %)."""
    from genai_prices import Usage, calc_price

    state = [r for r in _records(WEB_SEARCH) if r["type"] == "cost-state"][-1]
    expected = 0.0
    for model, figures in state["modelUsage"].items():
        counts = Usage(
            input_tokens=figures["inputTokens"],
            output_tokens=figures["outputTokens"],
            web_searches=figures["webSearchRequests"],
        )
        expected += float(calc_price(counts, model, provider_id="anthropic").total_price)
    assert state["modelUsage"]["claude-sonnet-4-6"]["webSearchRequests"] == 2
    assert expected == pytest.approx(state["totalCostUSD"], rel=1e-6)
    result = CliRunner().invoke(app, ["replay", str(WEB_SEARCH), "-t", "100000", "--json", "-q"])
    (entry,) = orjson.loads(result.stdout)["files"]
    bill = next(row for row in entry["settings"] if row["basis"] == "bill")
    assert bill["cost"] == pytest.approx(expected, rel=1e-6)
    assert "2 web search(es) ($0.0200, billed per search) are in every row as billed" in entry["api"]["notes"]


@pytest.mark.parametrize("path", [WEB_SEARCH, REAL_CLIENTS / "claude-code-2.1.332-web-fetch.jsonl"])
def test_rows_that_compact_nothing_carry_the_side_requests_as_billed(path: Path):
    """WebSearch's and WebFetch's own requests send the query or the page, not the context: billed whatever the
    setting. On the real 2.1.332 web-search session the rows that compact nothing billed their searches and not
    their tokens ($0.2859 against the bill's $0.2898, "-1.3 %" saved by no compaction), and --json's
    ``recorded_estimate_cost`` held the side requests' searches the live thread's bill leaves out ($0.2859 against
    ``live_thread_bill_cost`` $0.2659, +7.6 % in bench/calibration.py)."""
    result = CliRunner().invoke(app, ["replay", str(path), "-t", "100000", "--json", "-q"])
    (entry,) = orjson.loads(result.stdout)["files"]
    bill = next(row for row in entry["settings"] if row["basis"] == "bill")
    (row,) = [row for row in entry["settings"] if row["basis"] == "estimate"]
    assert row["compactions"] == 0
    assert (row["calls"], row["output_tokens"]) == (bill["calls"], bill["output_tokens"])
    assert row["cost"] == pytest.approx(bill["cost"], rel=0.002)
    api = entry["api"]
    for estimate in ("recorded_estimate_cost", "baseline_estimate_cost"):
        assert api[estimate] == pytest.approx(api["live_thread_bill_cost"], rel=0.002), estimate


def test_side_requests_billed_with_compaction_calls_are_carried_as_their_searches_alone():
    """Where the cost-state's remainder also holds the producer's compaction calls, the side requests' tokens
    cannot be told apart from the summaries' (which the compaction rows replace by their own summarizer): every
    row carries their searches' fee only, and counts no call; alone in it, all of it and their calls."""
    from compactctl.recorded import ApiUsage, RecordedSession
    from compactctl.replay.billed_apart import side_request_notes, side_requests_carried

    remainder = ApiUsage(5_000, output_tokens=900, web_searches=2)
    alone = RecordedSession("claude-code", [], unpaired=remainder, side_calls=2)
    assert side_requests_carried(alone, 0.03, 0.02) == (remainder, 0.03, 2)
    assert "every row carries them as billed" in side_request_notes(alone, 2)[0]
    mixed = RecordedSession("claude-code", [], unpaired=remainder, side_calls=2, compaction_calls=1)
    assert side_requests_carried(mixed, 0.03, 0.02) == (ApiUsage(0), 0.02, 0)
    assert "bill their searches, not their tokens" in side_request_notes(mixed, 0)[0]


WEB_FETCH = REAL_CLIENTS / "claude-code-2.1.332-web-fetch.jsonl"
# Four WebFetch results in one turn: a page it got (200), a 404, a redirect to another host, a refused URL; the fake
# served five calls on claude-opus-4-7 and one page summary on claude-haiku-4-5
# (record_server_tools.claude_code_web_fetch_outcomes_fixture).
WEB_FETCH_OUTCOMES = REAL_CLIENTS / "claude-code-2.1.332-web-fetch-outcomes.jsonl"


def test_a_side_request_on_another_model_is_billed_at_that_models_price():
    """The real Claude Code 2.1.332, a WebFetch on claude-opus-4-7 (tests/fakes/record_server_tools.py): the page
    is summarized by a request of its own on claude-haiku-4-5, which writes no message; the cost-state bills it
    under that model. Replay priced that remainder at Opus 4.7's prices: unpaired $0.001340 for $0.000268, the
    bill $0.221695 against the client's own $0.220623 (+0.49 %)."""
    from genai_prices import Usage, calc_price

    state = [r for r in _records(WEB_FETCH) if r["type"] == "cost-state"][-1]
    assert set(state["modelUsage"]) == {"claude-opus-4-7", "claude-haiku-4-5"}
    side = state["modelUsage"]["claude-haiku-4-5"]
    side_cost = float(
        calc_price(Usage(input_tokens=side["inputTokens"], output_tokens=side["outputTokens"]), "claude-haiku-4-5",
                   provider_id="anthropic").total_price
    )  # fmt: skip
    expected, calls = _claude_code_bill(WEB_FETCH)
    assert calls == 2
    result = CliRunner().invoke(app, ["replay", str(WEB_FETCH), "-t", "100000", "--json", "-q"])
    (entry,) = orjson.loads(result.stdout)["files"]
    assert entry["api"]["unpaired_cost"] == pytest.approx(side_cost, rel=1e-6)
    bill = next(row for row in entry["settings"] if row["basis"] == "bill")
    assert bill["cost"] == pytest.approx(expected + side_cost, rel=1e-6)
    assert bill["cost"] == pytest.approx(state["totalCostUSD"], rel=1e-6)


@pytest.mark.parametrize(
    ("path", "messages", "served"),
    [
        # Two turns, each: the call that asks for WebSearch, the search's own request, the answer.
        (WEB_SEARCH, 4, 6),
        # The call that asks for WebFetch, the page summary on claude-haiku-4-5, the answer (the fake served the
        # models [opus, haiku, opus]: tests/fakes/record_server_tools.claude_code_web_fetch_fixture).
        (WEB_FETCH, 2, 3),
        # Only the page it got was summarized: 1 side request, not one per WebFetch result (4 before).
        (WEB_FETCH_OUTCOMES, 5, 6),
    ],
)
def test_the_bill_counts_the_side_requests_it_bills(path: Path, messages: int, served: int):
    """Every billed call: WebSearch's and WebFetch's requests write no message, and the cost-state's remainder
    bills them, so the bill's calls count them and say so. Before, the bill row held their cost and counted
    only the calls the log has a message for (4 of 6, 2 of 3)."""
    _, calls = _claude_code_bill(path)
    assert calls == messages
    result = CliRunner().invoke(app, ["replay", str(path), "-t", "100000", "--json", "-q"])
    (entry,) = orjson.loads(result.stdout)["files"]
    bill = next(row for row in entry["settings"] if row["basis"] == "bill")
    assert bill["calls"] == served
    assert entry["api"]["side_requests"] == served - messages
    assert any(f"{served - messages} side request(s)" in note for note in entry["api"]["notes"])


# A subagent (run_in_background false) fetches a page it gets (200), a 404 and a URL it may not (localhost: refused),
# and searches the web; the fake served eight calls on claude-opus-4-7 (two of the main thread, five of the subagent,
# the search's own request) and one page summary on claude-haiku-4-5
# (record_server_tools.claude_code_subagent_web_fetch_fixture).
SUBAGENT_WEB_FETCH = REAL_CLIENTS / "claude-code-2.1.332-subagent-web-fetch"


def test_a_subagents_web_fetch_and_web_search_are_side_requests_of_the_bill():
    """The subagent's file writes its tool results with no toolUseResult object (no ``code``, no ``searchCount``): its
    WebFetch of a page it got is told by the result's text, a refused one by ``is_error``. The cost-state billed
    both side requests all along; the bill counted 7 of its 9 calls (side_requests 0) before."""
    (main,) = SUBAGENT_WEB_FETCH.glob("*.jsonl")
    (agent,) = SUBAGENT_WEB_FETCH.glob("*/subagents/agent-*.jsonl")
    assert not any(isinstance(r.get("toolUseResult"), dict) for r in _records(agent))  # the refusal's is a string
    state = [r for r in _records(main) if r["type"] == "cost-state"][-1]
    result = CliRunner().invoke(app, ["replay", str(main), "-t", "100000", "--json", "-q"])
    (entry,) = orjson.loads(result.stdout)["files"]
    bill = next(row for row in entry["settings"] if row["basis"] == "bill")
    assert (bill["calls"], entry["api"]["side_requests"]) == (9, 2)
    assert bill["cost"] == pytest.approx(state["totalCostUSD"], rel=1e-6)


def _search_notes(path: Path, *flags: str) -> list[str]:
    result = CliRunner().invoke(app, ["replay", str(path), "-t", "100000", "--json", "-q", *flags])
    assert result.exit_code == 0, result.output
    (entry,) = orjson.loads(result.stdout)["files"]
    return [note for note in entry["api"]["notes"] if "web search" in note]


def test_a_web_search_fee_with_no_known_price_is_unpriced_never_a_computed_zero(tmp_path: Path):
    """The real 2.1.332 web-search session priced by a team row that lists no per-search price, and the same file
    with its model renamed to one no source knows: the note said "2 web search(es) ($0.0000, billed per search) are
    in every row as billed", a computed $0 for a price nobody gave. It says unpriced, and a row that names
    ``web_search`` prices them."""
    team = tmp_path / "team.toml"
    team.write_text("[models.claude-sonnet-4-6]\ninput = 3.0\noutput = 15.0\n")
    (note,) = _search_notes(WEB_SEARCH, "--prices", str(team))
    assert "2 web search(es) are unpriced" in note and "claude-sonnet-4-6" in note and "$0" not in note
    renamed = tmp_path / "house.jsonl"
    renamed.write_bytes(WEB_SEARCH.read_bytes().replace(b"claude-sonnet-4-6", b"house-model-9"))
    (note,) = _search_notes(renamed)
    assert "2 web search(es) are unpriced" in note and "house-model-9" in note and "$0" not in note
    team.write_text("[models.claude-sonnet-4-6]\ninput = 3.0\noutput = 15.0\nweb_search = 0.01\n")
    assert _search_notes(WEB_SEARCH, "--prices", str(team)) == [
        "2 web search(es) ($0.0200, billed per search) are in every row as billed"
    ]


OLD_SEARCH = Path(__file__).parents[1] / "recorded" / "data" / "claude-code-1.0.69-web-search.jsonl"


def test_a_log_with_no_cost_state_bills_the_searches_its_tool_results_show():
    """The real Claude Code 1.0.69, one prompt and two WebSearch calls (tests/fakes/record_claude_1_0.py
    claude_code_1_0_web_search_fixture): each search is a request of the client's own that writes no message, and
    1.0.x writes no cost-state, so the search fee ($10 per 1,000) stood nowhere: the bill was the messages' usage
    alone, $0.127254. Each tool result holds its search (``results``: one ``tool_use_id`` entry per search; 2.1
    writes ``searchCount``): the fee stands in, with a note. (With a cost-state it bills them, once:
    test_claude_codes_web_searches_are_billed_per_search.)"""
    assert not [r for r in _records(OLD_SEARCH) if r["type"] == "cost-state"]
    expected, calls = _claude_code_bill(OLD_SEARCH)
    assert calls == 3
    result = CliRunner().invoke(app, ["replay", str(OLD_SEARCH), "-t", "100000", "--json", "-q"])
    (entry,) = orjson.loads(result.stdout)["files"]
    bill = next(row for row in entry["settings"] if row["basis"] == "bill")
    assert expected == pytest.approx(0.127254, rel=1e-6)
    assert bill["cost"] == pytest.approx(expected + 2 * 10 / 1000, rel=1e-6)
    assert bill["calls"] == 5 and entry["api"]["side_requests"] == 2
    assert any("no cost-state to bill them: their 2 search(es)" in note for note in entry["api"]["notes"])
    estimate = next(row for row in entry["settings"] if row["basis"] == "estimate")
    assert estimate["cost"] == pytest.approx(bill["cost"], rel=0.01)  # every row makes the searches


CODEX_SEARCH = REAL_CLIENTS / "codex-0.171.0-web-search.jsonl"


def test_codexs_hosted_web_searches_are_billed_per_call():
    """The real Codex 0.171 with ``web_search = "live"`` on gpt-5.5 (tests/fakes/record_server_tools.py): a
    response that searched twice, a resumed one that searched once. Each search is a ``web_search_call`` item
    of the rollout, billed $10 per 1,000 beside the tokens, and counted in no usage; replay billed the tokens
    alone ($0.03 under the reference, which prices each search at genai-prices' rate)."""
    from tests.recorded.test_codex_calls import _each_response_at_its_model

    expected, calls = _each_response_at_its_model(CODEX_SEARCH)
    assert calls == 2
    bill = _bill_row(CODEX_SEARCH)
    assert bill["cost"] == pytest.approx(expected, rel=1e-6)
    tokens_alone = expected - 0.03
    assert bill["cost"] - tokens_alone == pytest.approx(0.03, rel=1e-6)


def test_the_estimates_json_compares_with_the_bill_make_the_same_searches():
    """--json's ``recorded_estimate_cost`` and ``baseline_estimate_cost`` are what ``live_thread_bill_cost`` is
    compared with (bench/calibration.py); they billed the tokens alone, 22.7 % under that bill on this rollout,
    all of it the three searches' fee."""
    result = CliRunner().invoke(app, ["replay", str(CODEX_SEARCH), "-t", "100000", "--json", "-q"])
    (entry,) = orjson.loads(result.stdout)["files"]
    api = entry["api"]
    for estimate in ("recorded_estimate_cost", "baseline_estimate_cost"):
        assert api[estimate] == pytest.approx(api["live_thread_bill_cost"], rel=0.01), estimate


CODEX_WRITES = REAL_CLIENTS / "codex-0.171.0-cache-writes.jsonl"


def test_codex_cache_writes_are_billed_at_the_write_price_of_a_model_that_lists_one():
    """The real Codex 0.171 on gpt-5.6-terra against a fake that reports cache writes as OpenAI bills them for
    that family (``input_tokens_details.cache_write_tokens``): the rollout records ``cache_write_input_tokens``,
    which replay read as plain input ($0.038173 against $0.045842 at genai-prices' write price, -16.7 %)."""
    from tests.recorded.test_codex_calls import _each_response_at_its_model

    expected, calls = _each_response_at_its_model(CODEX_WRITES)
    assert calls == 3
    bill = _bill_row(CODEX_WRITES)
    assert bill["cost"] == pytest.approx(expected, rel=1e-6)
    assert bill["cache_write_tokens"] == sum(
        r["payload"]["usage"]["cache_write_input_tokens"]
        for r in _records(CODEX_WRITES)
        if r["type"] == "token_usage_record"
    )


CODEX_REVIEW = REAL_CLIENTS / "codex-0.171.0-review"


def test_the_findings_codex_relays_from_a_review_are_no_model_call():
    """``codex exec review`` by the real 0.171, then the asking thread resumed to fix the finding: Codex writes
    the review's findings into that thread as an assistant message of its own (its metadata says the model
    sampled nothing for it). Read as a call, it was a call with no usage and no model: the thread's every row
    unpriced (cost null), with a note that a response's usage was never written."""
    from tests.recorded.test_codex_calls import _each_response_at_its_model

    host = CODEX_REVIEW / "host.jsonl"
    expected, calls = _each_response_at_its_model(host)
    assert calls == 2  # the resumed turn's command and answer; the relayed findings are none
    bill = _bill_row(host)
    assert bill["calls"] == 2 and bill["cost"] == pytest.approx(expected, rel=1e-6)
    result = CliRunner().invoke(app, ["replay", str(CODEX_REVIEW), "-t", "100000", "--json", "-q"])
    document = orjson.loads(result.stdout)
    assert result.exit_code == 0 and not document["failed"], result.output
    folder = sum(_each_response_at_its_model(path)[0] for path in CODEX_REVIEW.glob("*.jsonl"))
    assert document["total"]["settings"][0]["cost"] == pytest.approx(folder, rel=1e-6)
    notes = {Path(entry["file"]).name: (entry["api"] or {}).get("notes") for entry in document["files"]}
    # The review's own rollout says what it is (compactctl/recorded/codex_agents.py); nothing else has a note.
    assert notes["host.jsonl"] == [] and len(notes["review.jsonl"]) == 1
    assert notes["review.jsonl"][0].startswith("this rollout is the code review the thread asked for")


def test_a_review_s_thread_before_it_goes_on_bills_no_call(tmp_path):
    """The asking thread as it was when the review ended (the fixture's lines up to its first turn's end): the
    relayed findings are its only assistant message, and no response was billed. Replay counted it as a call
    and priced it at the default model (gpt-4o: $0.0118), a fifth over the review's own $0.05576."""
    lines = (CODEX_REVIEW / "host.jsonl").read_bytes().splitlines(keepends=True)
    end = next(n for n, line in enumerate(lines) if b'"task_complete"' in line)
    before = tmp_path / "host.jsonl"
    before.write_bytes(b"".join(lines[: end + 1]))
    result = CliRunner().invoke(app, ["replay", str(before), "-t", "100000", "--json", "-q"])
    assert result.exit_code == 0, result.output
    (entry,) = orjson.loads(result.stdout)["files"]
    assert [(row["calls"], row["cost"]) for row in entry["settings"]] == [(0, 0.0), (0, 0.0)]


def test_a_tool_use_with_a_name_that_is_no_text_is_no_side_request():
    """A damaged record's tool name (a list, found by tests/test_fuzz.py) is read past, not a TypeError."""
    from compactctl.recorded.claude_code_side import SideRequests, side_requests

    use = {"message": {"content": [{"type": "tool_use", "id": "t1", "name": ["WebSearch"]}]}}
    answer = {"type": "tool_result", "tool_use_id": "t1"}
    result = {"message": {"content": [answer]}, "toolUseResult": {"searchCount": 2}}
    assert side_requests([use, result]) == SideRequests(0, 0)
    use["message"]["content"][0]["name"] = "WebSearch"
    assert side_requests([use, result]) == SideRequests(1, 2)
