"""Claude Code 2.1.332 sessions compacted more than once (tests/fakes/record_compactions.py): the client's own
``/compact`` twice in one session, and its ``/compact`` of the new session ``compactctl compact --session`` wrote.
Each ``/compact`` is a call of the client's that writes no message (its summary's response is in no record); the
session's ``cost-state`` bills it. compactctl's new session opens on the original's records, its cost-states too,
and the client resuming it counts on from their total: before, replay read no total from such a file (a fork's goes
on from its parent's), and the new session's summary call went unbilled (2 calls $0.133731 for the $0.206544 the
fake served it; the folder $0.562866 for $0.635679). Now the share past the last copied cost-state is its own."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from compactctl.cli.main import app
from tests.recorded.served import anthropic_cost as _cost
from tests.recorded.served import served as _served

DATA = Path(__file__).parent / "data"
TWICE = "claude-code-2.1.332-compacted-twice"
AFTER_COMPACTCTL = "claude-code-2.1.332-compactctl-session-compacted"


def _held(responses: list[dict[str, Any]], *paths: Path) -> list[dict[str, Any]]:
    """The responses some record of ``paths`` holds (the summaries' are in none)."""
    data = b"".join(path.read_bytes() for path in paths)
    return [r for r in responses if f'"id":"{r["id"]}"'.encode() in data]


def _bill(path: Path) -> tuple[int, float, int]:
    """Replay's bill of a file or folder: its calls, cost and compactions, summed over the files' ``bill`` rows."""
    result = CliRunner().invoke(app, ["replay", str(path), "-t", "100000", "--json", "-q"])
    assert result.exit_code == 0, result.output
    rows = [row for f in json.loads(result.stdout)["files"] for row in f["settings"] if row.get("basis") == "bill"]
    return sum(r["calls"] for r in rows), sum(r["cost"] for r in rows), sum(r["compactions"] for r in rows)


def test_two_compactions_of_one_session_bill_both_summaries_as_served():
    (path,) = (DATA / TWICE).glob("*.jsonl")
    served = _served(TWICE)
    calls, cost, compactions = _bill(path)
    assert len(served) == 10 and compactions == 2
    assert calls == len(_held(served, path)) == 8  # the two summaries billed in the cost, not as rows' calls
    assert cost == pytest.approx(_cost(served), rel=1e-6)


def test_the_clients_compaction_of_compactctls_new_session_is_billed_there():
    sessions = json.loads((DATA / f"{AFTER_COMPACTCTL}.sessions.json").read_text())
    new = DATA / AFTER_COMPACTCTL / f"{sessions['new']}.jsonl"
    original = DATA / AFTER_COMPACTCTL / f"{sessions['original']}.jsonl"
    served = _served(AFTER_COMPACTCTL)
    made_there = served[5:]  # the original's 5 first, then the new session's turn, summary and turn
    calls, cost, _ = _bill(new)
    assert calls == len(_held(made_there, new)) == 2
    assert cost == pytest.approx(_cost(made_there), rel=1e-6)
    calls, cost, _ = _bill(DATA / AFTER_COMPACTCTL)
    assert calls == len(_held(served, new, original)) == 7
    assert cost == pytest.approx(_cost(served), rel=1e-6)


def test_the_original_alone_bills_its_own_five():
    sessions = json.loads((DATA / f"{AFTER_COMPACTCTL}.sessions.json").read_text())
    calls, cost, _ = _bill(DATA / AFTER_COMPACTCTL / f"{sessions['original']}.jsonl")
    assert calls == 5
    assert cost == pytest.approx(_cost(_served(AFTER_COMPACTCTL)[:5]), rel=1e-6)


def test_a_session_continued_four_times_bills_what_was_served():
    """``claude -p --continue`` four times, a ``/compact`` among them: 2.1.332 goes on in the one file each time (the
    same session id), and its cost-state bills the summary."""
    fixture = "claude-code-2.1.332-continued"
    assert len(set(json.loads((DATA / f"{fixture}.sessions.json").read_text())["sessions"])) == 1
    (path,) = (DATA / fixture).glob("*.jsonl")
    served = _served(fixture)
    calls, cost, compactions = _bill(path)
    assert len(served) == 6 and compactions == 1
    assert calls == len(_held(served, path)) == 5
    assert cost == pytest.approx(_cost(served), rel=1e-6)


def test_a_session_with_an_mcp_server_bills_what_was_served():
    """A stdio MCP server's tool in three turns (a line; a note over the client's MCP output limit, which it saved to
    a file and answered with an error naming it; an image), then ``/compact`` and a turn."""
    fixture = "claude-code-2.1.332-mcp"
    (path,) = (DATA / fixture).glob("*.jsonl")
    data = path.read_bytes()
    assert b"exceeds maximum allowed tokens. Output has been saved to" in data and b'"media_type":"image/png"' in data
    served = _served(fixture)
    calls, cost, compactions = _bill(path)
    assert len(served) == 8 and compactions == 1
    assert calls == len(_held(served, path)) == 7
    assert cost == pytest.approx(_cost(served), rel=1e-6)
