"""Gemini CLI switched from gemini-3.1-pro-preview to gemini-3-flash-preview part-way through a session, as the real
0.61.0 wrote it (tests/fakes/record_gemini_switch.py): each call billed at its own model, and the client's
compression, made on the model in force (Flash), estimated at that model's prices, not the session's first."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest
from genai_prices import Usage, calc_price
from typer.testing import CliRunner

from compactctl.cli.main import app
from compactctl.formats.records import parse_records
from compactctl.recorded import gemini
from tests.replay.test_bill import google_counts
from tests.replay.test_price_conditions import _served

DATA = Path(__file__).parent / "data"
NAME = "gemini-cli-0.61.0-model-switch"
LOOPED = "gemini-cli-0.61.0-loop-detected"
SIDE_CALL = "side_call"  # what the recorder marks the compression's calls (sent without tools)


def _session(name: str) -> Path:
    (path,) = (DATA / name).glob("session-*.jsonl")
    return path


def _api(name: str) -> dict[str, Any]:
    result = CliRunner().invoke(app, ["replay", str(DATA / name), "-t", "100000", "--json", "-q"])
    assert result.exit_code == 0, result.stderr
    (file,) = orjson.loads(result.stdout)["files"]
    return dict(file["api"])


def _priced(responses: list[dict[str, Any]]) -> float:
    return sum(
        float(calc_price(Usage(**google_counts(r["usage"])), r["model"], provider_id="google").total_price)
        for r in responses
    )


def test_each_call_is_read_at_the_model_it_was_made_on():
    path = _session(NAME)
    session = gemini.read(parse_records(path.read_bytes(), str(path))[0], str(path))
    served = [r for r in _served(NAME) if r.get("caller") != SIDE_CALL]
    assert [c.model for c in session.contexts[0].calls] == [r["model"] for r in served]
    assert {r["model"] for r in served} == {"gemini-3.1-pro-preview", "gemini-3-flash-preview"}


def test_replay_bills_what_was_served_across_the_switch():
    api = _api(NAME)
    served = [r for r in _served(NAME) if r.get("caller") != SIDE_CALL]
    assert api["bill_cost"] == pytest.approx(_priced(served), rel=1e-6)
    assert api["bill_cost"] == pytest.approx(0.061613, abs=1e-6)


def test_the_compression_is_estimated_at_the_model_it_ran_on():
    estimate = _api(NAME)["compaction_estimate"]
    sides = [r for r in _served(NAME) if r.get("caller") == SIDE_CALL]
    assert estimate["calls"] == len(sides) == 2
    assert estimate["input_tokens"] == pytest.approx(sum(r["usage"]["promptTokenCount"] for r in sides), rel=0.05)
    (model,) = {r["model"] for r in sides}
    usage = Usage(
        input_tokens=estimate["input_tokens"],
        cache_read_tokens=estimate["cached_tokens"],
        output_tokens=estimate["output_tokens"],
    )
    # Priced at the session's first model (Pro) it was $0.0400, four times Flash's $0.0100.
    at_its_model = float(calc_price(usage, model, provider_id="google").total_price)
    assert estimate["cost"] == pytest.approx(at_its_model, rel=1e-6)


def test_the_two_responses_the_loop_detector_cut_short_are_estimated_in_the_bill():
    """0.61's loop detector stops the turn and keeps neither the cut response nor the answer to its feedback (a user
    record "System: Potential loop detected. ..."). The bill was the other 6 calls served, $0.060223 of $0.063190
    (bench/consistency_sweep.py: "replay $0.060223 (6 calls), served $0.063190 (8)"); now the two are estimated from
    the requests they were (the history and the prompt; the history and the feedback in its place), off the live
    thread the client rolled back: 8 calls, $0.063313 (+0.19 %)."""
    path = _session(LOOPED)
    assert path.read_bytes().count(b"System: Potential loop detected.") == 1
    api = _api(LOOPED)
    served = [r for r in _served(LOOPED) if r.get("caller") != SIDE_CALL]
    held = {
        (v["tokens"]["input"], v["tokens"]["output"])
        for v in map(orjson.loads, path.read_bytes().splitlines())
        if v.get("type") == "gemini" and "tokens" in v
    }
    missing = [r for r in served if (r["usage"]["promptTokenCount"], r["usage"]["candidatesTokenCount"]) not in held]
    assert [r["usage"]["promptTokenCount"] for r in missing] == [25_843, 25_917]
    assert (api["off_thread"]["calls"], api["off_thread"]["input_tokens"]) == (2, 25_844 + 25_918)
    assert round(api["bill_cost"], 6) == 0.063313
    assert api["bill_cost"] == pytest.approx(_priced(served), rel=0.005)
    assert any("2 call(s) of the turns Gemini CLI's loop detector stopped" in n for n in api["notes"])
    (note,) = [n for n in api["notes"] if n.startswith("not in the bill")]
    assert "loop detector stopped" not in note


def test_a_copy_of_a_chat_with_a_stopped_turn_bills_its_estimates_once(tmp_path):
    """Plain ``compact`` keeps every line, the feedback with them: replay of the chat and its output together bills
    the stopped turn's two calls once (keyed by the feedback's record), not 10 calls."""
    out = tmp_path / _session(LOOPED).name
    compacted = CliRunner().invoke(app, ["compact", str(_session(LOOPED)), "-o", str(out), "-q", "--write-unchanged"])
    assert compacted.exit_code == 0
    result = CliRunner().invoke(app, ["replay", str(_session(LOOPED)), str(out), "-t", "100000", "--json", "-q"])
    files = orjson.loads(result.stdout)["files"]
    bills = [row for f in files for row in f["settings"] if row.get("basis") == "bill"]
    assert sum(row["calls"] for row in bills) == 8
    assert round(sum(row["cost"] for row in bills), 6) == 0.063313


def test_a_switch_is_not_said_to_be_the_routers_alone():
    (note,) = [n for n in _api(NAME)["notes"] if n.startswith("not in the bill")]
    assert "the router ran here, or the model was switched" in note and "loop detector stopped" not in note


TWICE = "gemini-cli-0.61.0-compressed-twice"


def test_two_compressions_and_a_resume_in_a_later_minute_read_as_such():
    # The resume's header went to a file of its own minute; this file has the session named and the history listed
    # again, less the compressions' ``info`` records, which once read as a third compaction (compactctl's own).
    path = _session(TWICE)
    session = gemini.read(parse_records(path.read_bytes(), str(path))[0], str(path))
    (context,) = session.contexts
    assert [c.trigger for c in context.compactions] == ["", ""]
    assert [c.before_call for c in context.compactions] == [1, 2]
    assert context.resumes == [3]
    api = _api(TWICE)
    assert api["producer_compactions"] == 2 and api["compaction_estimate"]["calls"] == 4
    assert not [n for n in api["notes"] if "compactctl's own" in n]
    assert api["calibration"]["prefix"]["main@3"] < api["calibration"]["prefix"]["main@2"]  # ``-p`` sends less


def test_replay_bills_what_was_served_across_two_compressions():
    served = [r for r in _served(TWICE) if r.get("caller") != SIDE_CALL]
    assert len(served) == 4 and len(_served(TWICE)) == 8
    assert _api(TWICE)["bill_cost"] == pytest.approx(_priced(served), rel=1e-6)


def test_a_stopped_turn_is_estimated_by_what_the_detector_saw():
    """A repeated tool call (5 in a row) cut: that call's output; the detector's own model check stops a turn before
    its request: only the answer to its feedback (the feedback texts as 0.61's ``_recoverFromLoop`` writes them)."""
    from compactctl.recorded.gemini_loops import stopped_calls

    def feedback(detail: str) -> dict[str, Any]:
        text = f"System: Potential loop detected. Details: {detail}. Please take a step back and confirm ..."
        return {"id": detail[:8], "type": "user", "content": [{"text": text}]}

    answered = {"id": "g", "type": "gemini", "tokens": {"input": 1_000, "output": 20, "thoughts": 5, "cached": 900}}
    prompt = {"id": "p", "type": "user", "content": [{"text": "Go on."}]}
    looped = feedback('Repeated tool call: read_file with arguments {"file_path":"a.py"}')
    cut, answer = stopped_calls([answered, prompt, looped], gemini.usage_of)
    # The history (1,000, and the response re-sent: its 20 output tokens, not its thoughts) and the prompt (7 in
    # cl100k, as a message); the repeated call's name and arguments (9).
    assert (cut.usage.input_tokens, cut.usage.cached_tokens, cut.usage.output_tokens) == (1_027, 1_000, 9)
    assert answer.usage.input_tokens > 1_020 and answer.usage.cached_tokens == 1_020 and not answer.usage.output_tokens
    (only,) = stopped_calls([answered, prompt, feedback("the model's own analysis")], gemini.usage_of)
    assert only.usage.cached_tokens == 1_020 and not only.usage.output_tokens
