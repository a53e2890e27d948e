"""Claude Code: one recorded call per API response, paired with its usage, across compactions."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from compactctl.formats.records import parse_records
from compactctl.recorded import claude_code
from tests.conftest import SHARED_TRANSCRIPTS, needs_transcripts
from tests.recorded.sessions import ClaudeSession, working_session


def test_a_response_split_by_a_tool_result_is_one_call_with_its_final_usage():
    session = ClaudeSession()
    session.user("List the files, then read the README.")
    message_id = session.response(text="Listing.", tools=[("Bash", {"command": "ls"}, "README.md")])
    # Streaming tool execution: a tool result was written before the response's last block.
    result = session.records.pop()
    session.records.insert(len(session.records) - 1, result)
    recorded = claude_code.read(session.parsed(), "s.jsonl")
    (context,) = recorded.contexts
    assert len(context.calls) == 1
    final = [r for r in session.records if r.get("message", {}).get("id") == message_id][-1]["message"]["usage"]
    assert context.calls[0].usage.output_tokens == final["output_tokens"]
    assert [m["role"] for m in context.messages] == ["user", "assistant", "tool"]


def test_api_error_stubs_are_no_call_and_an_api_error_record_stays_on_the_chain():
    session = ClaudeSession()
    session.user("first prompt")
    session.response(text="first answer")
    # The next try failed: a system api_error record, then a synthetic stub; the next prompt hangs off the error.
    session._envelope("system", subtype="api_error", level="error", error={"status": 529})
    stub = session._envelope(
        "assistant",
        isApiErrorMessage=True,
        message={
            "id": "x",
            "role": "assistant",
            "model": "<synthetic>",
            "content": [{"type": "text", "text": "API Error"}],
        },
    )
    session.last_uuid = stub["parentUuid"]
    session.user("second prompt")
    session.response(text="second answer")
    (context,) = claude_code.read(session.parsed(), "s.jsonl").contexts
    assert len(context.calls) == 2
    assert [m["content"] for m in context.messages] == [
        "first prompt",
        "first answer",
        "second prompt",
        "second answer",
    ]


def test_a_sidechain_is_a_context_of_its_own():
    session = working_session(calls=3)
    main_calls = session.calls
    session.last_uuid = None
    session.user("subagent task")
    session.records[-1]["isSidechain"] = True
    session.response(text="subagent answer")
    session.records[-1]["isSidechain"] = True
    recorded = claude_code.read(session.parsed(), "s.jsonl")
    assert [c.label for c in recorded.contexts] == ["main", "sidechain 1"]
    assert [len(c.calls) for c in recorded.contexts] == [main_calls, 1]


def test_a_compact_boundary_is_walked_through_to_the_whole_history():
    session = working_session(calls=4)
    before = session.calls
    session.compact("Summary: tests fixed.", {"trigger": "auto", "preTokens": 31_234})
    session.user("now update the changelog")
    session.response(text="Changelog updated.")
    (context,) = claude_code.read(session.parsed(), "s.jsonl").contexts
    assert len(context.calls) == before + 1  # every recorded call, not only those after the boundary
    (compaction,) = context.compactions
    assert (compaction.before_call, compaction.trigger, compaction.pre_tokens) == (before, "auto", 31_234)
    assert compaction.replacement[0]["content"].startswith("This session is being continued")
    assert not any("being continued" in str(m.get("content")) for m in context.messages)  # not history


def test_an_old_compact_summary_root_continues_the_history_before_it():
    session = working_session(calls=3)
    before = session.calls
    session.compact("Summary.", boundary=False)  # 1.0.x: the summary is a new root, no boundary record
    session.response(text="Continuing.")
    (context,) = claude_code.read(session.parsed(), "s.jsonl").contexts
    assert len(context.calls) == before + 1
    assert [c.before_call for c in context.compactions] == [before]


@needs_transcripts
@pytest.mark.parametrize(
    "name",
    [
        "d-kimuson__claude-code-viewer/fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl",
        "d-kimuson__claude-code-viewer/5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl",
        "kcosr__chat-to-html/claude.jsonl",
        "kesslerio__attio-mcp-server/chat.json",
        "yoavf__ai-sessions/claude-code-pomodoro-timer.jsonl",
    ],
)
def test_every_response_of_a_real_session_is_one_call(name):
    path = SHARED_TRANSCRIPTS / "claude-code" / name
    records, _ = parse_records(path.read_bytes(), str(path))
    ids = {
        r.value["message"]["id"]
        for r in records
        if r.value.get("type") == "assistant"
        and not r.value.get("isApiErrorMessage")
        and r.value["message"].get("model") != "<synthetic>"
    }
    recorded = claude_code.read(records, str(path))
    assert recorded.calls == len(ids)
    assert all(call.usage is not None for context in recorded.contexts for call in context.calls)


@needs_transcripts
def test_the_real_session_the_producer_compacted_replays_every_call():
    path = SHARED_TRANSCRIPTS / "claude-code" / "kesslerio__attio-mcp-server" / "chat.json"
    records, _ = parse_records(path.read_bytes(), str(path))
    main = claude_code.read(records, str(path)).contexts[0]
    assert len(main.calls) == 101
    assert [c.before_call for c in main.compactions] == [90]


DATA = Path(__file__).parent / "data"


def test_a_real_claude_code_partial_compaction_is_read_with_its_preserved_segment_and_session_total():
    path = DATA / "claude-code-2.1.332-compacted.jsonl"
    recorded = claude_code.read(parse_records(path.read_bytes(), str(path))[0], str(path))
    (context,) = recorded.contexts
    (compaction,) = context.compactions
    assert (compaction.before_call, compaction.trigger, compaction.partial) == (2, "manual", True)
    assert [m["role"] for m in compaction.replacement] == ["user", "assistant"]  # summary, then the kept call
    last = context.calls[compaction.before_call - 1].usage
    assert last.input_tokens + last.output_tokens == compaction.pre_tokens  # what preTokens counts
    # The session total (cost-state) also holds the producer's summarizing call, which wrote no message.
    paired = recorded.usage_total()
    assert paired.input_tokens + recorded.unpaired.input_tokens == recorded.reported_total.input_tokens
    assert paired.output_tokens + recorded.unpaired.output_tokens == recorded.reported_total.output_tokens


REAL_BRANCHES = (
    Path(__file__).resolve().parents[1] / "formats" / "data" / "real-clients" / "claude-code-2.1.332-branches"
)
MAIN_SESSION = REAL_BRANCHES / "a6b8705d-055c-4dac-8b9a-9741f0961deb.jsonl"


def _recorded(path: Path):
    from compactctl.formats import records_of
    from compactctl.recorded import read_recorded

    return read_recorded("claude-code", records_of(path.read_bytes(), str(path)), str(path))


def test_every_billed_call_of_a_real_session_is_read_rewound_branch_and_subagent_included():
    # Made by Claude Code 2.1.332 against the loopback fake (tests/fakes/record_fixtures.py): a
    # resume from an earlier message left one answered turn off the live thread, and a subagent
    # wrote its own file under <session>/subagents/.
    session = _recorded(MAIN_SESSION)
    assert [(c.label.split()[0], len(c.calls)) for c in session.contexts] == [("main", 6), ("subagent", 1)]
    assert len(session.off_thread) == 1 and session.off_thread[0].usage is not None
    # The session's own running total (its cost-state record) is every call we read, exactly.
    assert session.reported_total is not None and session.usage_total() == session.reported_total
    assert session.unpaired is None


def test_replay_bills_the_off_thread_call_in_every_row_and_says_so(tmp_path):
    from typer.testing import CliRunner

    from compactctl.cli.main import app

    result = CliRunner().invoke(app, ["replay", str(MAIN_SESSION), "-t", "30000", "--json"])
    assert result.exit_code == 0, result.output
    (entry,) = orjson.loads(result.stdout)["files"]
    off = entry["api"]["off_thread"]
    assert off["calls"] == 1 and off["cost"] > 0
    assert [row["calls"] for row in entry["settings"]] == [8, 8]
    assert any("1 of 8 billed calls" in note and "simulate the live thread" in note for note in entry["api"]["notes"])


FORK_SESSION = next(p for p in REAL_BRANCHES.glob("*.jsonl") if p != MAIN_SESSION)


def test_a_forked_session_is_read_as_its_own_thread_its_parents_calls_marked_copied():
    # `claude --resume MAIN --fork-session`: the new file starts with a copy of the parent's thread.
    session = _recorded(FORK_SESSION)
    (context,) = session.contexts
    assert [c.copied for c in context.calls] == [True] * 6 + [False]
    assert session.copied_from == (MAIN_SESSION.stem,) and session.off_thread == ()
    # Its bill is its own call; its cost-state goes on from the parent's total, so it checks nothing.
    assert session.usage_total() == context.calls[-1].usage
    assert session.reported_total is None and session.unpaired is None


def _billed_once(*paths: Path) -> tuple[int, int]:
    """(input, output) tokens of every response id written in these files, each id once: the API's bill."""
    usage: dict[str, dict] = {}
    for path in paths:
        for line in path.read_text().splitlines():
            record = orjson.loads(line)
            message = record.get("message")
            if record.get("type") == "assistant" and isinstance(message, dict) and message.get("usage"):
                u = message["usage"]
                known = usage.get(message["id"])
                if known is None or u["output_tokens"] >= known["output_tokens"]:
                    usage[message["id"]] = u
    fields = ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")
    return sum(sum(u.get(f) or 0 for f in fields) for u in usage.values()), sum(
        u["output_tokens"] for u in usage.values()
    )


def test_replaying_a_parent_with_its_fork_bills_each_call_once():
    from typer.testing import CliRunner

    from compactctl.cli.main import app

    subagents = list((REAL_BRANCHES / MAIN_SESSION.stem / "subagents").glob("agent-*.jsonl"))
    result = CliRunner().invoke(app, ["replay", str(MAIN_SESSION), str(FORK_SESSION), "-t", "30000", "--json"])
    assert result.exit_code == 0, result.output
    doc = orjson.loads(result.stdout)
    baseline = doc["total"]["settings"][0]
    assert (baseline["input_tokens"], baseline["output_tokens"]) == _billed_once(MAIN_SESSION, FORK_SESSION, *subagents)
    # The fork's rows count its one own call; the note says where the copied ones were billed.
    fork = next(entry for entry in doc["files"] if entry["file"] == str(FORK_SESSION))
    assert [row["calls"] for row in fork["settings"]] == [1, 1]
    assert any("6 calls were copied from session" in note for note in fork["api"]["notes"])


REAL_FORKS = REAL_BRANCHES.parent / "claude-code-2.1.332-forks"


def test_forks_from_the_end_and_from_an_earlier_message_bill_each_call_once():
    # Made by Claude Code 2.1.332 against the loopback fake (tests/fakes/record_fixtures.py): a parent
    # of two turns, `--fork-session` from its end, and `--fork-session --resume-session-at` its first answer.
    from typer.testing import CliRunner

    from compactctl.cli.main import app

    parent, at_end, earlier = (REAL_FORKS / f"{n}.jsonl" for n in ("parent", "fork-at-end", "fork-at-first-answer"))
    assert [[c.copied for c in x.calls] for x in _recorded(earlier).contexts] == [[True, False]]
    assert [[c.copied for c in x.calls] for x in _recorded(at_end).contexts] == [[True, True, False]]
    result = CliRunner().invoke(app, ["replay", str(parent), str(at_end), str(earlier), "-t", "100000", "--json"])
    assert result.exit_code == 0, result.output
    doc = orjson.loads(result.stdout)
    baseline = doc["total"]["settings"][0]
    assert baseline["calls"] == 4  # two turns of the parent, one of each fork
    assert (baseline["input_tokens"], baseline["output_tokens"]) == _billed_once(parent, at_end, earlier)


def test_a_compaction_no_usage_records_is_estimated_as_the_request_it_was():
    # The real 2.1.332 /compact session without its cost-state records (as versions before 2.1 write
    # it): the summarizing call is estimated; the cost-state's figure is the check.
    from compactctl.formats import records_of
    from compactctl.recorded import read_recorded

    path = REAL_BRANCHES.parent / "claude-code-2.1.332-compacted.jsonl"
    data = path.read_bytes()
    truth = _recorded(path).unpaired  # cost-state less every response: the summarizing call
    stripped = b"\n".join(line for line in data.splitlines() if b'"cost-state"' not in line)
    estimated = read_recorded("claude-code", records_of(stripped, str(path)), str(path))
    assert (estimated.compaction_calls, estimated.compaction_calls_estimated) == (1, 1)
    assert estimated.compaction_estimate.input_tokens == pytest.approx(truth.input_tokens, rel=0.01)
