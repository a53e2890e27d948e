"""Rollouts of Codex releases at the boundaries of how the rollout is written (issue 20), recorded against the
loopback fake (tests/fakes/record_codex_releases.py) with what it served: 0.45.0 and 0.77.0 compacting locally,
0.77.0 remotely through ``/v1/responses/compact``, 0.140.0 remotely through a ``compaction_trigger`` request.
Each: a tool loop, an ``apply_patch``, a model switch, a compaction, a resume after it. Read from the fixtures:
the releases are not installed in CI."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import orjson
from typer.testing import CliRunner

from compactctl.cli.main import app
from compactctl.errors import EXIT_OK
from compactctl.formats.records import parse_records
from compactctl.recorded import RecordedSession, codex

DATA = Path(__file__).parent / "data"


def _rollout(name: str) -> Path:
    (path,) = sorted((DATA / name).glob("*.jsonl"))
    return path


def _read(name: str) -> RecordedSession:
    path = _rollout(name)
    return codex.read(parse_records(path.read_bytes(), str(path))[0], str(path))


def _served(name: str) -> list[dict[str, Any]]:
    return json.loads((DATA / f"{name}.served.json").read_text())


def _replayed(name: str) -> dict[str, Any]:
    result = CliRunner().invoke(app, ["replay", str(DATA / name), "--json", "-q"])
    assert result.exit_code == EXIT_OK, result.output
    (entry,) = orjson.loads(result.stdout)["files"]
    return entry


def _calls(session: RecordedSession) -> list[tuple[str | None, int, int]]:
    return [
        (c.model, c.usage.input_tokens, c.usage.output_tokens)
        for context in session.contexts
        for c in context.calls
        if c.usage is not None
    ]


def test_0_45s_local_compaction_count_is_the_compactions_not_the_next_responses():
    """0.45 writes each count before its response's items: the summarizing call's count, just before the
    ``compacted`` line, went to the response after the compaction (8,259 input tokens for its 7,519), whose own
    count was then billed as a response never written. The fake served 12 responses: 11 calls and the
    compaction's, on gpt-5-codex then gpt-5."""
    served = [(r["model"], r["usage"]["input_tokens"], r["usage"]["output_tokens"]) for r in _served(
        "codex-0.45.0-local-compacted")]  # fmt: skip
    session = _read("codex-0.45.0-local-compacted")
    assert served[8] == ("gpt-5", 8259, 54)  # the summarizing request
    assert _calls(session) == served[:8] + served[9:]
    assert (session.compaction_calls, session.unheld_calls) == (1, 0)
    assert session.unpaired is not None and session.unpaired.input_tokens == 8259
    assert [(model, usage.input_tokens) for model, usage, _ in session.priced_apart] == [("gpt-5", 8259)]


def test_0_77s_local_compaction_call_is_a_compaction_not_a_response_never_written():
    """0.77 writes the summarizing call's count after the tool call's own, before the ``compacted`` line: a
    second count of the call before, which was read as a response the log never wrote (the note said "cut off")."""
    session = _read("codex-0.77.0-local-compacted")
    assert (session.compaction_calls, session.unheld_calls) == (1, 0)
    assert [(model, usage.input_tokens) for model, usage, _ in session.priced_apart] == [("gpt-5.1", 11565)]
    notes = _replayed("codex-0.77.0-local-compacted")["api"]["notes"]
    assert not any("cut off" in note for note in notes), notes


def test_local_compactions_bills_are_what_was_served():
    """Every served response in the bill once, at its model's list price (genai-prices): 11 calls and the
    compaction's (a compaction, as 0.171's are), 12 served; before, 12 calls and no compaction call."""
    for name, cost in [("codex-0.45.0-local-compacted", 0.100804), ("codex-0.77.0-local-compacted", 0.147671)]:
        bill = next(row for row in _replayed(name)["settings"] if row["basis"] == "bill")
        assert (bill["calls"], bill["compactions"], round(bill["cost"], 6)) == (11, 1, cost), name
        assert bill["calls"] + bill["compactions"] == len(_served(name))


def test_remote_compactions_the_rollout_records_no_usage_for_are_estimated_apart_as_served():
    """0.77 (``/v1/responses/compact``, mid-turn), 0.133 (the same endpoint before the turn) and 0.140 (a
    ``compaction_trigger`` request) write no usage for the compaction: the bill is the 10 or 11 calls the rollout
    records, each as served, and the compaction is estimated apart (``compaction_estimate``) from the last call.
    0.133's and 0.140's requests carried the tools as the turns' do: within 0.1 % of what was served; 0.77's sent
    none, and its estimate holds them (12,639 for 11,435: left as it is, the rollout does not say their size)."""
    for name, calls, served_input, estimate in [
        ("codex-0.77.0-remote-compacted", 11, 11435, 12639),
        ("codex-0.133.0-remote-compacted", 10, 16517, 16533),
        ("codex-0.140.0-remote-compacted", 10, 16963, 16971),
    ]:
        served = _served(name)
        (compaction,) = [r for r in served if r.get("caller") in ("compact", "compaction")]
        assert compaction["usage"]["input_tokens"] == served_input, name
        entry = _replayed(name)
        assert entry["api"]["compaction_estimate"]["calls"] == 1, name
        assert entry["api"]["compaction_estimate"]["input_tokens"] == estimate, name
        bill = next(row for row in entry["settings"] if row["basis"] == "bill")
        assert bill["calls"] == calls == len(served) - 1, name
        recorded = [r for r in served if r is not compaction]
        assert round(bill["cost"], 6) == round(entry["api"]["bill_cost"], 6), name
        assert bill["input_tokens"] == sum(r["usage"]["input_tokens"] for r in recorded), name
