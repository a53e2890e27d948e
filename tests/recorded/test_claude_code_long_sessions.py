"""The shapes of long Claude Code 2.1.332 sessions, as the real client wrote them (tests/fakes/record_long_sessions.py):
its own auto-compact in the middle of a tool loop, three tool calls in one response and two subagents at once (in the
foreground and in the background), a background command read and stopped, calls the fake answered 529 and 500
before the client's retry, and a stream the connection dropped before the retry. Each bills what the fake served
(``<fixture>.served.json``): every response once, the auto-compact's summary in the cost as the producer's compaction,
the refused requests (no usage) not at all, the dropped stream as the call it was."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from compactctl.cli.main import app
from compactctl.formats import load
from compactctl.model_input import model_input
from tests.recorded.served import anthropic_cost as _cost
from tests.recorded.served import served as _served

DATA = Path(__file__).parent / "data"


def _held(responses: list[dict[str, Any]], folder: Path) -> list[dict[str, Any]]:
    """The responses some file of ``folder`` holds (a summary's is in none)."""
    data = b"".join(path.read_bytes() for path in sorted(folder.rglob("*.jsonl")))
    return [r for r in responses if f'"id":"{r["id"]}"'.encode() in data]


def _invoke(*args: str) -> dict[str, Any]:
    result = CliRunner().invoke(app, [*args, "--json", "-q"])
    assert result.exit_code == 0, result.output
    return dict(json.loads(result.stdout))


def _bill(path: Path) -> tuple[int, float, int]:
    """Replay's bill of a file or folder: its calls, cost and compactions, summed over the files' ``bill`` rows."""
    rows = [row for f in _invoke("replay", str(path), "-t", "100000")["files"] for row in f["settings"]]
    billed = [r for r in rows if r.get("basis") == "bill"]
    return sum(r["calls"] for r in billed), sum(r["cost"] for r in billed), sum(r["compactions"] for r in billed)


# fixture: (responses served, calls replay bills, compactions, the bill in $)
PINNED = {
    "claude-code-2.1.332-auto-compacted": (7, 6, 1, 0.652815),
    "claude-code-2.1.332-refused-compacted": (6, 5, 1, 0.549744),
    "claude-code-2.1.332-parallel": (6, 6, 0, 0.346314),
    "claude-code-2.1.332-background-agents": (6, 6, 0, 0.341034),
    "claude-code-2.1.332-background": (6, 6, 0, 0.431991),
    "claude-code-2.1.332-retried": (3, 3, 0, 0.198381),
}


@pytest.mark.parametrize("fixture", sorted(PINNED))
def test_replay_bills_every_response_the_fake_served_once(fixture: str) -> None:
    served, calls, compactions, dollars = PINNED[fixture]
    responses = _served(fixture)
    assert len(responses) == served
    billed_calls, cost, billed_compactions = _bill(DATA / fixture)
    assert (billed_calls, billed_compactions) == (calls, compactions)
    assert billed_calls == len(_held(responses, DATA / fixture))  # the summary's response is in no record
    assert round(cost, 6) == round(_cost(responses), 6) == dollars


def _session(fixture: str) -> Path:
    (path,) = (DATA / fixture).glob("*.jsonl")
    return path


def test_the_auto_compaction_is_the_producers_own_and_keeps_the_pending_call_after_its_summary() -> None:
    """2.1.332 compacted by itself (``trigger: "auto"``) between a tool's result and the next call: the summary's
    request left out the last call and its result, and the call after it was sent the summary, that call and its
    result (``preservedSegment``). Read so, the thread the client resumes opens on the summary, then part 2's call."""
    path = _session("claude-code-2.1.332-auto-compacted")
    records = [json.loads(line) for line in path.read_bytes().splitlines()]
    (boundary,) = [r for r in records if r.get("subtype") == "compact_boundary"]
    assert boundary["compactMetadata"]["trigger"] == "auto"
    assert len(boundary["compactMetadata"]["preservedMessages"]["uuids"]) == 4
    rows = [r for f in _invoke("replay", str(path), "-t", "100000")["files"] for r in f["settings"]]
    (row,) = [r for r in rows if r.get("basis") == "bill"]
    assert (row["strategy"], row["compactions"]) == ("producer", 1)
    assert row["context_per_call"] == [21818, 27900, 33982, 28132, 34214, 34292]
    (transcript,) = load(path.read_bytes(), str(path)).transcripts
    roles = [m["role"] for m in model_input(transcript)]
    assert roles == ["user", "assistant", "tool", "assistant", "tool", "assistant", "user", "assistant"]
    assert "part 2:" in str(model_input(transcript)[2]["content"])


@pytest.mark.parametrize("fixture", sorted(PINNED))
def test_report_of_compacts_output_says_compacts_after_figure(fixture: str, tmp_path: Path) -> None:
    path = _session(fixture)
    out = tmp_path / path.name
    compacted = _invoke("compact", str(path), "-o", str(out), "--write-unchanged", "-s", "window", "--keep-recent", "2")
    reported = _invoke("report", str(path), str(out))
    assert [f["tokens_after"] for f in reported["files"]] == [f["tokens_after"] for f in compacted["files"]]
    assert all(f["valid_before"] and f["valid_after"] for f in reported["files"])


def test_the_refused_requests_are_in_the_session_but_not_in_the_bill() -> None:
    """The client writes each refusal as a ``system`` ``api_error`` record (no usage), and the retry's response as
    the turn's: 3 responses, 3 calls."""
    records = [json.loads(line) for line in _session("claude-code-2.1.332-retried").read_bytes().splitlines()]
    errors = [r for r in records if r.get("subtype") == "api_error"]
    assert [str(r["error"]["message"])[:3] for r in errors] == ["529", "500"]


STREAM_CUT = "claude-code-2.1.332-stream-cut"


def test_a_response_whose_stream_the_connection_dropped_is_a_billed_call() -> None:
    """The connection dropped after the response's start and its text (ECONNRESET): the client wrote an
    ``api_error`` record and no message of it, sent the request again, and its cost-state counts the cut response
    (its input, 129 output tokens of the text it got; the fake made 136). Before, replay billed its cost in the
    cost-state's remainder but 2 calls for the 3 served; now the dropped stream is a call, and a note says so."""
    responses = _served(STREAM_CUT)
    assert [r.get("caller") for r in responses] == [None, "cut_stream", None]
    assert len(_held(responses, DATA / STREAM_CUT)) == 2
    calls, cost, compactions = _bill(DATA / STREAM_CUT)
    assert (calls, compactions) == (3, 0)
    assert round(cost, 6) == 0.199878
    assert cost == pytest.approx(_cost(responses), rel=1e-3)  # the client counted 7 output tokens fewer
    (entry,) = _invoke("replay", str(_session(STREAM_CUT)), "-t", "100000")["files"]
    assert any(note.startswith("1 billed response(s) the log holds no message for") for note in entry["api"]["notes"])


def test_refused_requests_are_no_call_where_nothing_else_is_billed() -> None:
    """The 529 and 500 ``api_error`` records have ``connection: null``: no usage, no call (the retried fixture's 3)."""
    from compactctl.recorded.claude_code_side import dropped_streams

    values = [json.loads(line) for line in _session("claude-code-2.1.332-retried").read_bytes().splitlines()]
    assert dropped_streams(values) == 0
    values = [json.loads(line) for line in _session(STREAM_CUT).read_bytes().splitlines()]
    assert dropped_streams(values) == 1


@pytest.mark.slow  # drives the real Claude Code
@pytest.mark.parametrize(
    "shape",
    ["auto_compacted", "refused_compacted", "parallel", "background_agents", "background", "retried", "stream_cut"],
)
def test_the_real_client_records_the_shape_and_replay_bills_what_was_served(shape: str, tmp_path: Path) -> None:
    from tests.fakes import record_long_sessions

    recorded = getattr(record_long_sessions, f"claude_code_{shape}_session")(tmp_path / "run")
    folder = tmp_path / recorded.name
    for name, data in recorded.files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_bytes(data)
    # The run records with the release CI pins (its name says which); a shape serves and bills the same calls on
    # each (2.1.337 re-recorded all six: the same counts), so the fixtures' counts are looked up by shape.
    pinned = f"claude-code-2.1.332-{recorded.name.split('-', 3)[-1]}"
    served, calls, compactions, _ = PINNED.get(pinned, (3, 3, 0, None))  # the stream cut: 3 served, 3 calls
    assert len(recorded.served) == served
    billed_calls, cost, billed_compactions = _bill(folder)
    assert (billed_calls, billed_compactions) == (calls, compactions)
    # A dropped stream is billed as the client counted what it got of it (its output estimated from the text).
    assert cost == pytest.approx(_cost(recorded.served), rel=1e-3 if shape == "stream_cut" else 1e-6)


@pytest.mark.slow  # drives the real Claude Code
@pytest.mark.parametrize("case", ["compact", "summary", "window", "prune-drop"])
def test_the_real_client_resumes_what_compactctl_wrote_of_its_auto_compacted_session(case: str, tmp_path: Path) -> None:
    """compactctl's output of the session the client auto-compacted mid tool loop (the pending call kept after the
    summary), resumed by the client: the fake, as the API, takes the request, which opens on the client's summary
    (compactctl's own, where it summarized; the last turn alone after ``window --keep-recent 2``)."""
    from tests.fakes import record_long_sessions
    from tests.fakes.clients import require_client
    from tests.fakes.resume import CASES, resume_claude_code, run_compactctl
    from tests.fakes.scenarios import Recorded

    root = tmp_path / "run"
    recorded = record_long_sessions.claude_code_auto_compacted_session(root)
    (name,) = [n for n in recorded.files if "/" not in n]
    (path,) = root.glob(f".claude/projects/*/{name}")
    session = Recorded(root, root / "project", name.removesuffix(".jsonl"), path)
    compacted = run_compactctl(path, tmp_path / "out.jsonl", CASES[case])
    resumed = resume_claude_code(require_client("claude"), session, compacted.data)
    assert not resumed.rejected, resumed.rejected
    first = json.dumps(resumed.body["messages"][0])
    assert ("Anything missing?" if case == "window" else "This session is being continued") in first
