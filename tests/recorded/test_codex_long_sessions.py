"""Shapes of long real Codex 0.171.0 sessions (tests/fakes/record_codex_long.py), pinned to what the fake served:
streams broken and retried; two commands in one response, a goal and an image."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest
from genai_prices import Usage, calc_price
from typer.testing import CliRunner

from compactctl.cli.main import app
from tests.conftest import SHARED_TRANSCRIPTS, needs_transcripts
from tests.fakes.clients import Codex, require_client
from tests.fakes.record_copies import _serving
from tests.fakes.responses import FakeResponses
from tests.fakes.scenarios import project
from tests.replay.test_bill import openai_counts
from tests.replay.test_price_conditions import _served, _served_cost

DATA = Path(__file__).parent / "data"
STREAM_ERRORS = "codex-0.171.0-stream-errors"


def _lines(rollout: Path) -> list[dict[str, Any]]:
    return [orjson.loads(line) for line in rollout.read_bytes().splitlines() if line.strip()]


def _replayed(path: Path) -> dict[str, Any]:
    result = CliRunner().invoke(app, ["replay", str(path), "--json", "-q"])
    assert result.exit_code == 0, result.stderr
    (file,) = orjson.loads(result.stdout)["files"]
    return dict(file)


def _priced(responses: list[dict[str, Any]]) -> float:
    return sum(
        float(calc_price(Usage(**openai_counts(r["usage"])), r["model"], provider_id="openai").total_price)
        for r in responses
    )


def _recorded_ids(rollout: Path) -> list[str]:
    return [v["payload"]["response_id"] for v in _lines(rollout) if v.get("type") == "token_usage_record"]


def _responses_written(rollout: Path) -> int:
    """The runs of model output items (reasoning, a message, a call) the rollout holds: one a response."""
    runs, open_run = 0, False
    for value in _lines(rollout):
        payload = value.get("payload") or {}
        if value.get("type") == "response_item":
            output = payload.get("type") in ("reasoning", "function_call") or payload.get("role") == "assistant"
            runs += output and not open_run
            open_run = output
        elif payload.get("type") == "token_count":
            open_run = False  # 0.171 writes one after each response, a broken stream's too
    return runs


def test_a_broken_stream_writes_its_items_and_no_usage_and_codex_retries_it():
    (rollout,) = (DATA / STREAM_ERRORS).glob("rollout-*.jsonl")
    served = _served(STREAM_ERRORS)
    # 6 requests: a 500, a stream cut after its items (no usage), 2 whole, a response.failed with usage, its retry.
    assert [r.get("status") for r in served] == [None, None, "failed", None]
    recorded = _recorded_ids(rollout)
    assert recorded == [r["id"] for r in served if r.get("status") != "failed"]
    # Both broken responses' items are in the rollout (the cut one's command ran): 5 responses, 3 with usage.
    assert _responses_written(rollout) == 5
    texts = [v["payload"].get("content") for v in _lines(rollout) if v["payload"].get("role") == "assistant"]
    assert len(texts) == 3 and texts[1] == texts[2]  # the failed answer and its retry


def test_replay_counts_each_broken_response_as_a_call_and_bills_the_usage_the_rollout_kept():
    file = _replayed(DATA / STREAM_ERRORS)
    api, (none, *_) = file["api"], file["settings"]
    served = _served(STREAM_ERRORS)
    assert none["calls"] == 5 and none["basis"] == "estimate"  # was 4: the failed answer and its retry were one
    assert api["bill_cost"] == pytest.approx(_priced([r for r in served if r.get("status") != "failed"]), abs=1e-9)
    assert api["bill_cost"] == pytest.approx(0.154780, abs=1e-6)
    # The served bill holds the failed response too, whose usage Codex kept nowhere: the estimate counts both broken.
    assert _served_cost(STREAM_ERRORS, "openai") == pytest.approx(0.207520, abs=1e-6)
    assert none["cost"] == pytest.approx(0.252885, abs=1e-6)
    (note,) = [n for n in api["notes"] if "no usage" in n]
    assert note.startswith("2 response(s) the run went on past have no usage in the log (a broken stream")
    assert api["calibration"]["error"]["held_out"]["median"] < 0.05


def test_report_counts_no_usage_for_the_broken_streams_response():
    # 0.171's count after a failed stream repeats the totals: it was read as the failed response's usage (4 calls,
    # 39,595 reported: the answer before it counted twice).
    result = CliRunner().invoke(app, ["report", str(DATA / STREAM_ERRORS), "--json"])
    (file,) = orjson.loads(result.stdout)["files"]
    assert file["api_usage"]["calls"] == 3 and file["api_usage"]["reported_input_tokens"] == 29714
    assert file["valid_before"] is True


@pytest.mark.slow  # drives the real Codex
def test_codex_writes_a_broken_streams_items_and_retries_it(tmp_path: Path) -> None:
    from tests.fakes.record_codex_long import codex_stream_errors_session

    client = require_client("codex")
    with _serving() as served, FakeResponses() as fake:
        codex = Codex(client, tmp_path, project(tmp_path), fake, model="gpt-5.5")
        codex_stream_errors_session(codex, fake)
        statuses = [r.status for r in fake.requests if r.method == "POST"]
    assert statuses == [500, 200, 200, 200, 200, 200]
    (rollout,) = codex.rollouts()
    assert _responses_written(rollout) == 5 and len(_recorded_ids(rollout)) == 3 and len(served) == 4
    assert _replayed(rollout)["settings"][0]["calls"] == 5


PARALLEL = "codex-0.171.0-parallel-calls"


def test_two_commands_in_one_response_and_a_goal_are_one_call_each_billed_as_served():
    (rollout,) = (DATA / PARALLEL).glob("rollout-*.jsonl")
    items = [v["payload"] for v in _lines(rollout) if v.get("type") == "response_item"]
    image = next(i for i in items if i.get("role") == "user" and "input_image" in str(i.get("content")))
    assert image["content"][1]["image_url"].startswith("data:image/png;base64,")
    named = [i for i in items if i.get("name") == "goal_objective"]
    assert len(named) == 1 and "call_id" not in named[0] and named[0]["namespace"] == "agent"
    file = _replayed(DATA / PARALLEL)
    api, (none, *_) = file["api"], file["settings"]
    assert none["calls"] == len(_served(PARALLEL)) == 5 and none["basis"] == "bill"
    assert api["bill_cost"] == pytest.approx(_served_cost(PARALLEL, "openai"), rel=1e-6)
    assert api["bill_cost"] == pytest.approx(0.266810, abs=1e-6)
    assert api["calibration"]["error"]["held_out"]["median"] < 0.02


def test_codexs_goal_objective_output_is_context_not_an_unanswered_tool_message(tmp_path: Path):
    # Codex 0.171 sends an active goal's objective as a function_call_output with a name and no call_id, which the
    # API takes: it read as a tool message answering no call ("API-valid: no", message 7).
    (rollout,) = (DATA / PARALLEL).glob("rollout-*.jsonl")
    result = CliRunner().invoke(app, ["report", str(rollout), "--json"])
    (file,) = orjson.loads(result.stdout)["files"]
    assert file["valid_before"] is True and file["violations_before"] == []
    out = tmp_path / "out.jsonl"
    args = ["compact", str(rollout), "-s", "window", "--keep-recent", "2", "-o", str(out), "--json"]
    (compacted,) = orjson.loads(CliRunner().invoke(app, args).stdout)["files"]
    assert compacted["valid_after"] is True and (compacted["tokens_before"], compacted["tokens_after"]) == (6400, 5698)
    kept = [orjson.loads(line)["payload"] for line in out.read_bytes().splitlines() if b"goal_objective" in line]
    assert [(k["type"], k.get("call_id"), k["output"]) for k in kept] == [
        ("function_call_output", None, "Say what the picture, notes.txt and app.py hold.")
    ]
    (again,) = orjson.loads(CliRunner().invoke(app, ["report", str(out), "--json"]).stdout)["files"]
    assert again["tokens_before"] == compacted["tokens_after"] and again["valid_before"] is True


MODELS = "codex-0.171.0-models-resumed"


def test_a_thread_resumed_on_another_model_and_after_a_kill_bills_each_call_at_its_models_price():
    served = _served(MODELS)
    assert [r["model"] for r in served] == ["gpt-5.4"] * 2 + ["gpt-5.5"] * 4
    file = _replayed(DATA / MODELS)
    api, (none, *_) = file["api"], file["settings"]
    assert none["calls"] == 6 and none["basis"] == "bill"
    assert api["bill_cost"] == pytest.approx(_priced(served[:2]) + _priced(served[2:]), rel=1e-9)
    assert api["bill_cost"] == pytest.approx(0.360998, abs=1e-6)
    assert api["calibration"]["error"]["held_out"]["median"] < 0.02


def test_report_counts_the_killed_turns_response_from_its_usage_record():
    # The run killed while the response's command ran wrote its token_usage_record and no token_count: report read
    # token_count alone (5 calls, 65,537 reported), replay 6 (80,694).
    result = CliRunner().invoke(app, ["report", str(DATA / MODELS), "--json"])
    (file,) = orjson.loads(result.stdout)["files"]
    assert (file["api_usage"]["calls"], file["api_usage"]["reported_input_tokens"]) == (6, 80694)
    assert file["valid_before"] is True


SEARCHES = "codex-0.171.0-web-searches"


def test_hosted_web_searches_are_billed_per_search_beside_the_tokens_as_served():
    served = _served(SEARCHES)
    assert [r.get("web_searches", 0) for r in served] == [2, 0, 1]
    price = calc_price(Usage(input_tokens=1), "gpt-5.5", provider_id="openai").model_price
    fee = 3 * float(price.web_searches_kcount or 0) / 1000
    assert fee == pytest.approx(0.03, abs=1e-9)  # $10 per 1,000
    file = _replayed(DATA / SEARCHES)
    api, (none, *_) = file["api"], file["settings"]
    assert none["calls"] == 3 and none["basis"] == "bill"
    assert api["bill_cost"] == pytest.approx(_priced(served) + fee, rel=1e-9)
    assert api["bill_cost"] == pytest.approx(0.185020, abs=1e-6)
    assert any("3 web search(es) ($0.0300, billed per search)" in note for note in api["notes"])


def test_the_sweep_prices_the_served_searches():
    # The sweep priced the served tokens alone ($0.155020): the bill looked $0.03 over what was served.
    from bench.consistency_sweep import served_bill

    (rollout,) = (DATA / SEARCHES).glob("rollout-*.jsonl")
    calls, cost = served_bill(DATA / SEARCHES)
    assert calls == 3 and cost == pytest.approx(0.185020, abs=1e-6)
    assert cost == pytest.approx(_replayed(rollout)["api"]["bill_cost"], rel=1e-9)


def _recorded_again(tmp_path: Path, session: Any, extra_config: str = "") -> tuple[Path, list[dict[str, Any]], Any]:
    """``session`` run again with the real Codex: its one rollout, what the fake served, and the fake."""
    client = require_client("codex")
    with _serving() as served, FakeResponses() as fake:
        codex = Codex(client, tmp_path, project(tmp_path), fake, model="gpt-5.5", extra_config=extra_config)
        session(codex, fake)
    (rollout,) = codex.rollouts()
    return rollout, served, fake


@pytest.mark.slow  # drives the real Codex
def test_codex_sends_both_commands_in_one_response_and_a_goals_objective_as_a_named_output(tmp_path: Path) -> None:
    from tests.fakes.record_codex_long import codex_parallel_calls_session

    rollout, served, fake = _recorded_again(tmp_path, codex_parallel_calls_session)
    first, *later = fake.model_calls()
    assert first["parallel_tool_calls"] is True
    assert any(i.get("name") == "goal_objective" and "call_id" not in i for i in later[0]["input"])
    file = _replayed(rollout)
    assert file["settings"][0]["calls"] == len(served) == 5
    assert file["api"]["bill_cost"] == pytest.approx(_priced(served), rel=1e-9)
    (report,) = orjson.loads(CliRunner().invoke(app, ["report", str(rollout), "--json"]).stdout)["files"]
    assert report["valid_before"] is True


@pytest.mark.slow  # drives the real Codex
def test_codex_resumed_on_another_model_and_after_a_kill_bills_every_response(tmp_path: Path) -> None:
    from tests.fakes.record_codex_long import codex_models_resumed_session

    rollout, served, _ = _recorded_again(tmp_path, codex_models_resumed_session)
    assert [r["model"] for r in served] == ["gpt-5.4"] * 2 + ["gpt-5.5"] * 4
    file = _replayed(rollout)
    assert file["settings"][0]["calls"] == 6
    assert file["api"]["bill_cost"] == pytest.approx(_priced(served), rel=1e-9)
    (report,) = orjson.loads(CliRunner().invoke(app, ["report", str(rollout), "--json"]).stdout)["files"]
    assert report["api_usage"]["calls"] == 6


@pytest.mark.slow  # drives the real Codex
def test_codex_web_searches_are_billed_per_search(tmp_path: Path) -> None:
    from tests.fakes.record_codex_long import codex_web_searches_session

    rollout, served, _ = _recorded_again(tmp_path, codex_web_searches_session, 'web_search = "live"\n')
    assert sum(r.get("web_searches", 0) for r in served) == 3
    assert _replayed(rollout)["api"]["bill_cost"] == pytest.approx(_priced(served) + 0.03, rel=1e-9)


@needs_transcripts
def test_a_count_at_a_streams_start_after_its_first_item_does_not_end_the_response():
    # A real 0.133 resume writes the totals again after the first response's reasoning item (the rate limits at the
    # stream's start): ending the response there made it 2 calls, one without usage (58, not 57), and the sweep's
    # replay of the file with its compacted copy billed a call more than the file alone.
    session = SHARED_TRANSCRIPTS / "codex" / "qiushiyan__duet" / "codex-session.jsonl"
    (billed,) = [row for row in _replayed(session)["settings"] if row["basis"] == "bill"]
    assert billed["calls"] == 57 and billed["cost"] == pytest.approx(8.182192, abs=1e-6)


REFUSED = "codex-0.171.0-refused-turn"


def test_a_turn_the_api_refused_with_429_keeps_its_prompt_and_bills_nothing():
    (rollout,) = (DATA / REFUSED).glob("rollout-*.jsonl")
    said = [v["payload"] for v in _lines(rollout) if v.get("type") == "response_item"]
    texts = [i["content"][0]["text"] for i in said if i.get("role") == "user"]
    prompts = [text for text in texts if not text.startswith("<")]  # not Codex's context
    assert prompts == ["What do the notes say?", "What does app.py print?", "Again: what does app.py print?"]
    served = _served(REFUSED)
    assert len(served) == len(_recorded_ids(rollout)) == 3  # the 429 served no response
    file = _replayed(DATA / REFUSED)
    (none, *_) = file["settings"]
    assert none["calls"] == 3 and none["basis"] == "bill"
    assert file["api"]["bill_cost"] == pytest.approx(_priced(served), rel=1e-9)
    assert file["api"]["bill_cost"] == pytest.approx(0.147985, abs=1e-6)
    (report,) = orjson.loads(CliRunner().invoke(app, ["report", str(rollout), "--json"]).stdout)["files"]
    assert report["valid_before"] is True and report["api_usage"]["calls"] == 3
