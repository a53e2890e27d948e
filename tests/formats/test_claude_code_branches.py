"""Claude Code sessions are trees: only the active chain (leaf back to root) is the conversation.

``data/claude-code-rewind.jsonl``: the first prompt is answered (a split assistant record,
a tool call), then the second prompt is sent, run (one tool call answered, one not), and
rewound: the user edited it, so the edited prompt (``u3``) is a second child of the same
parent (``a4``) and the last ``last-prompt`` points at the new branch's leaf (``c2``).
The new branch makes two parallel calls whose results hang off the records holding the
calls, as Claude Code writes them, so a walk from the leaf passes through one result only.
"""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import orjson
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from compactctl.cli.main import app
from compactctl.compaction import compact
from compactctl.formats import load
from compactctl.formats.claude_code import SUMMARY_INTRO
from compactctl.tokens import TokenCounter
from compactctl.transcript import content_text, find_violation
from tests.conftest import unchanged
from tests.formats.fixtures import DATA, lines, rewritten, shape
from tests.properties import examples

REWIND = DATA / "claude-code-rewind.jsonl"
ABANDONED = {"u2", "b1", "b2", "rb1", "b3"}  # the branch of the prompt as first typed


def _load(data: bytes) -> tuple[Any, Any]:
    fmt, (transcript,) = load(data, "session.jsonl", "claude-code")
    return fmt, transcript


def _without(data: bytes, uuids: set[str]) -> bytes:
    return b"".join(line + b"\n" for line in data.splitlines() if orjson.loads(line).get("uuid") not in uuids)


def test_the_fixture_is_a_rewind():
    records = lines(REWIND.read_bytes())
    parent = {r["uuid"]: r.get("parentUuid") for r in records if "uuid" in r}
    assert parent["u2"] == parent["u3"] == "a4"  # one parent, two prompts
    assert [r["leafUuid"] for r in records if r["type"] == "last-prompt"][-1] == "c2"
    assert records[-1]["type"] == "last-prompt"  # so the leaf is not simply the last line


def test_only_the_active_branch_is_read():
    data = REWIND.read_bytes()
    _, transcript = _load(data)
    texts = [content_text(m) for m in transcript.messages]
    assert "Now add a --delimiter option to the CSV export." in texts
    assert not any("Excel" in t or "openpyxl" in t or "customer_" in t for t in texts)
    calls = [c["id"] for m in transcript.messages for c in m.get("tool_calls") or []]
    assert calls == ["toolu_A1", "toolu_C1", "toolu_C2"]
    # The abandoned branch ended on an unanswered call: read in file order it made the sequence invalid.
    assert find_violation(transcript.messages) is None
    # Same messages as the file with the abandoned branch cut out.
    _, pruned = _load(_without(data, ABANDONED))
    assert shape(transcript.messages) == shape(pruned.messages)
    assert [m["role"] for m in transcript.messages] == [m["role"] for m in pruned.messages]


def test_split_assistant_records_on_the_chain_are_merged():
    _, transcript = _load(REWIND.read_bytes())
    first = transcript.messages[1]
    assert first["role"] == "assistant" and content_text(first) == "I'll look at the report command first."
    assert first["content"][0]["type"] == "thinking"
    assert [c["id"] for c in first["tool_calls"]] == ["toolu_A1"]
    assert transcript.messages[2]["tool_call_id"] == "toolu_A1"


def test_a_rewound_session_round_trips_byte_for_byte():
    data = REWIND.read_bytes()
    fmt, transcript = _load(data)
    assert fmt.write([transcript]) == data


def test_the_last_prompt_pointer_chooses_the_branch():
    data = REWIND.read_bytes()
    records = lines(data)
    # Pointing at the abandoned branch's leaf reads that branch instead (up to its unanswered call).
    pointer = {"type": "last-prompt", "lastPrompt": "x", "leafUuid": "b3", "sessionId": records[0]["sessionId"]}
    _, old_branch = _load(data + orjson.dumps(pointer) + b"\n")
    calls = [c["id"] for m in old_branch.messages for c in m.get("tool_calls") or []]
    assert calls == ["toolu_A1", "toolu_B1", "toolu_B2"]
    # Without any last-prompt the last message record in the file is the leaf: here, the same branch.
    no_pointer = b"".join(line + b"\n" for line in data.splitlines() if b'"type":"last-prompt"' not in line)
    _, active = _load(no_pointer)
    assert shape(active.messages) == shape(_load(data)[1].messages)


def test_records_written_after_the_last_prompt_continue_its_thread():
    data = REWIND.read_bytes()
    # Move the final last-prompt back to point at the edited prompt, as if written as it was sent.
    kept = [line for line in data.splitlines() if not line.startswith(b'{"type":"last-prompt"')]
    records = [orjson.loads(line) for line in kept]
    at = next(i for i, r in enumerate(records) if r.get("uuid") == "u3")
    pointer = {"type": "last-prompt", "lastPrompt": "x", "leafUuid": "u3", "sessionId": records[0]["sessionId"]}
    moved = [*kept[: at + 1], orjson.dumps(pointer), *kept[at + 1 :]]
    _, transcript = _load(b"".join(line + b"\n" for line in moved))
    assert shape(transcript.messages) == shape(_load(data)[1].messages)


def test_compacting_keeps_the_active_branch_and_links_the_boundary_to_its_leaf():
    data = REWIND.read_bytes()
    fmt, transcript = _load(data)
    original = unchanged(transcript.messages)
    result = compact(transcript.messages, ["window"], {"keep_recent": 4})
    kept = result.messages
    summary = {"role": "user", "content": "Added a CSV export to `report`."}
    out = rewritten(fmt, transcript, [summary, *kept], [None, *result.origins])
    assert transcript.messages == original
    assert out.startswith(data)  # every old record, abandoned branch included, stays byte for byte
    boundary, summary_record, *rest = new = lines(out[len(data) :])
    assert boundary["subtype"] == "compact_boundary" and boundary["parentUuid"] is None
    # The active leaf, not the last record written (the stop hook) nor the abandoned leaf.
    assert boundary["logicalParentUuid"] == "c2"
    assert boundary["compactMetadata"]["preTokens"] == 5 + 9300  # the active leaf's reported input
    *chained, pointer = new
    for parent, child in itertools.pairwise(chained):
        assert child["parentUuid"] == parent["uuid"]
    assert pointer == {
        "type": "last-prompt",
        "leafUuid": chained[-1]["uuid"],
        "explicit": True,
        "sessionId": boundary["sessionId"],
    } | ({"lastPrompt": pointer["lastPrompt"]} if "lastPrompt" in pointer else {})
    assert summary_record["isCompactSummary"] is True
    # Read back (the old last-prompt still names c2): the boundary continues c2, so it is the context.
    fmt_again, again = _load(out)
    assert again.messages[0]["content"] == SUMMARY_INTRO + summary["content"]
    assert shape(again.messages[1:]) == shape(kept)
    assert not any("Excel" in content_text(m) for m in again.messages)
    assert fmt_again.write([again]) == out
    # The kept tool result is rebuilt from the active branch's record (its own tool copy kept).
    result = next(r for r in rest if r["type"] == "user" and r.get("sourceToolAssistantUUID"))
    assert result["toolUseResult"]["newString"] == "csv.writer(f, delimiter=args.delimiter)"


def test_an_emptied_session_reads_back_empty():
    data = REWIND.read_bytes()
    fmt, transcript = _load(data)
    out = rewritten(fmt, transcript, [])
    assert _load(out)[1].messages == []


def test_a_compacted_session_without_links_reads_back_compacted():
    # No parentUuid links, but a last-prompt naming an old record (as bench/formats_bench.py writes).
    pointer = orjson.dumps({"type": "last-prompt", "leafUuid": "a1", "sessionId": "s1"}) + b"\n"
    data = (
        _record("user", "u1", None, "q1")
        + _record("assistant", "a1", None, "a1")
        + pointer
        + _record("user", "u2", None, "q2")
        + _record("assistant", "a2", None, "a2")
    )
    fmt, transcript = _load(data)
    assert [content_text(m) for m in transcript.messages] == ["q1", "a1", "q2", "a2"]
    asked = {"role": "user", "content": "asked twice"}
    out = rewritten(fmt, transcript, [asked, transcript.messages[-1]], [None, len(transcript.messages) - 1])
    assert [content_text(m) for m in _load(out)[1].messages] == [SUMMARY_INTRO + "asked twice", "a2"]


def test_report_counts_the_active_chain_only(tmp_path: Path):
    data = REWIND.read_bytes()
    pruned = tmp_path / "pruned.jsonl"
    pruned.write_bytes(_without(data, ABANDONED))
    # The session "after" is the same session with its abandoned branch cut out: nothing to count there.
    result = CliRunner().invoke(app, ["report", str(REWIND), str(pruned), "--json"])
    assert result.exit_code == 0, result.output
    (report,) = orjson.loads(result.stdout)["files"]
    _, transcript = _load(data)
    assert report["messages_before"] == report["messages_after"] == len(transcript.messages) == 9
    assert report["tokens_before"] == report["tokens_after"] == TokenCounter().messages(transcript.messages)
    assert report["valid_before"] is True
    usages = [r["message"]["usage"] for r in lines(data) if r.get("uuid") in {"a3", "a4", "c1b", "c2"}]
    reported = sum(u["input_tokens"] + u["cache_read_input_tokens"] + u["cache_creation_input_tokens"] for u in usages)
    assert report["api_usage"]["calls"] == 4 and report["api_usage"]["reported_input_tokens"] == reported


# -- odd trees -------------------------------------------------------------------------


def _record(kind: str, uid: str | None, parent: str | None, text: str, **extra: Any) -> bytes:
    message: dict[str, Any] = {"role": kind, "content": text}
    if kind == "assistant":
        message = {
            "id": extra.pop("msg", f"msg_{uid}"),
            "type": "message",
            **message,
            "content": [{"type": "text", "text": text}],
        }
    record: dict[str, Any] = {"parentUuid": parent, "sessionId": "s1", "type": kind, "message": message, **extra}
    if uid is not None:
        record["uuid"] = uid
    return orjson.dumps(record) + b"\n"


def _texts(data: bytes) -> list[str]:
    fmt, transcript = _load(data)
    assert fmt.write([transcript]) == data
    return [content_text(m) for m in transcript.messages]


def test_a_missing_parent_ends_the_chain():
    data = (
        _record("user", "u1", None, "lost start")
        + _record("assistant", "a1", "u1", "lost answer")
        + _record("user", "u2", "gone", "resumed here")  # its parent is not in the file
        + _record("assistant", "a2", "u2", "answer")
    )
    assert _texts(data) == ["resumed here", "answer"]


def test_a_cycle_is_read_once_and_ends():
    data = (
        _record("user", "u1", "a2", "question")  # points forward: u1 -> a2 -> u1
        + _record("assistant", "a2", "u1", "answer")
    )
    assert _texts(data) == ["question", "answer"]


def test_records_without_uuids_are_read_in_file_order():
    data = b"".join(_record(k, None, None, t) for k, t in [("user", "q1"), ("assistant", "a1"), ("user", "q2")])
    assert _texts(data) == ["q1", "a1", "q2"]


def test_a_subagent_file_follows_its_own_chain():
    side = {"isSidechain": True, "agentId": "ag1"}
    data = (
        _record("user", "s1", None, "List the tables.", **side)
        + _record("assistant", "s2", "s1", "users, orders, carts", **side)
        + _record("user", "s3", "s1", "List the tables, without carts.", **side)  # rewound
        + _record("assistant", "s4", "s3", "users, orders", **side)
    )
    assert _texts(data) == ["List the tables.", "List the tables, without carts.", "users, orders"]


def test_sidechain_records_in_a_main_file_stay_aside():
    data = (
        _record("user", "u1", None, "Plan the migration.")
        + _record("user", "s1", None, "Subagent: list the tables.", isSidechain=True)
        + _record("assistant", "s2", "s1", "users, orders", isSidechain=True)
        + _record("assistant", "a1", "u1", "Two tables to migrate.")
    )
    assert _texts(data) == ["Plan the migration.", "Two tables to migrate."]


def test_split_records_chain_through_each_other_across_non_message_records():
    attachment = {"type": "attachment", "uuid": "t1", "parentUuid": "a1", "sessionId": "s1", "attachment": {}}
    data = (
        _record("user", "u1", None, "Go.")
        + _record("assistant", "a1", "u1", "Part one.", msg="msg_1")
        + orjson.dumps(attachment)
        + b"\n"
        + _record("assistant", "a2", "t1", "Part two.", msg="msg_1")
    )
    texts = _texts(data)
    assert len(texts) == 2 and texts[0] == "Go."
    assert "Part one." in texts[1] and "Part two." in texts[1]  # one API message, as written


def _call(uid: str, parent: str, tool: str, msg: str = "msg_1") -> bytes:
    block = {"type": "tool_use", "id": tool, "name": "Bash", "input": {"command": tool}}
    message = {"id": msg, "type": "message", "role": "assistant", "content": [block]}
    record = {"parentUuid": parent, "sessionId": "s1", "type": "assistant", "message": message, "uuid": uid}
    return orjson.dumps(record) + b"\n"


def _result(uid: str, call_record: str, tool: str) -> bytes:
    """A tool result as Claude Code writes it: a child of the record holding its call."""
    content = [{"type": "tool_result", "tool_use_id": tool, "content": f"{tool} done"}]
    record = {
        "parentUuid": call_record,
        "sessionId": "s1",
        "type": "user",
        "message": {"role": "user", "content": content},
        "uuid": uid,
        "sourceToolAssistantUUID": call_record,
    }
    return orjson.dumps(record) + b"\n"


def test_parallel_results_hanging_off_their_calls_are_read_with_the_call():
    # Results came back out of order: the walk from the leaf passes r1 -> c1 and misses c2 and r2.
    data = (
        _record("user", "u1", None, "Run both.")
        + _call("c1", "u1", "toolu_1")
        + _call("c2", "c1", "toolu_2")
        + _result("r2", "c2", "toolu_2")
        + _result("r1", "c1", "toolu_1")
        + _record("assistant", "a1", "r1", "Both ran.")
    )
    fmt, transcript = _load(data)
    roles = [(m["role"], m.get("tool_call_id")) for m in transcript.messages]
    assert roles == [("user", None), ("assistant", None), ("tool", "toolu_2"), ("tool", "toolu_1"), ("assistant", None)]
    assert [c["id"] for c in transcript.messages[1]["tool_calls"]] == ["toolu_1", "toolu_2"]
    assert find_violation(transcript.messages) is None
    assert fmt.write([transcript]) == data


def test_a_result_already_on_the_chain_is_not_read_twice():
    # A stray copy of a result (same call id) hanging off the call is not a second answer.
    data = (
        _record("user", "u1", None, "Run it.")
        + _call("c1", "u1", "toolu_1")
        + _result("r1", "c1", "toolu_1")
        + _result("r1copy", "c1", "toolu_1")
        + _record("assistant", "a1", "r1", "Ran.")
    )
    _, transcript = _load(data)
    assert [m["role"] for m in transcript.messages] == ["user", "assistant", "tool", "assistant"]


# -- property: any tree, any leaf ----------------------------------------------------------


@st.composite
def sessions(draw: st.DrawFn) -> tuple[bytes, list[int], dict[int, list[str]]]:
    """Turns whose prompts hang off earlier turns' answers; the leaf's chain of turns, and each turn's calls.

    A turn is a prompt, then maybe parallel calls (one record each, one ``message.id``) whose
    results hang off their call records in any order, as Claude Code writes them, then an
    answer continuing from the last record written.
    """
    count = draw(st.integers(1, 8))
    parents: list[int | None] = [None] + [draw(st.sampled_from([None, *range(turn)])) for turn in range(1, count)]
    leaf = draw(st.sampled_from([t for t in range(count) if t not in parents]))
    out: list[bytes] = []
    calls_of: dict[int, list[str]] = {}
    for turn, parent in enumerate(parents):
        out.append(_record("user", f"u{turn}", None if parent is None else f"a{parent}", f"prompt {turn}"))
        last = f"u{turn}"
        calls_of[turn] = [f"toolu_{turn}_{n}" for n in range(draw(st.integers(0, 3)))]
        for n, tool in enumerate(calls_of[turn]):
            out.append(_call(f"c{turn}_{n}", last, tool, msg=f"msg_{turn}c"))
            last = f"c{turn}_{n}"
        for n in draw(st.permutations(range(len(calls_of[turn])))):
            out.append(_result(f"r{turn}_{n}", f"c{turn}_{n}", calls_of[turn][n]))
            last = f"r{turn}_{n}"
        out.append(_record("assistant", f"a{turn}", last, f"answer {turn}", msg=f"msg_{turn}"))
        if draw(st.booleans()):  # a stale pointer: only the last one counts
            out.append(orjson.dumps({"type": "last-prompt", "leafUuid": f"a{turn}", "sessionId": "s1"}) + b"\n")
    out.append(orjson.dumps({"type": "last-prompt", "leafUuid": f"a{leaf}", "sessionId": "s1"}) + b"\n")
    chain = [leaf]
    while (parent := parents[chain[-1]]) is not None:
        chain.append(parent)
    return b"".join(out), chain[::-1], calls_of


@settings(max_examples=examples(60), deadline=None)
@given(session=sessions())
def test_any_branching_session_reads_the_chain_to_its_leaf(session: tuple[bytes, list[int], dict[int, list[str]]]):
    data, chain, calls_of = session
    fmt, transcript = _load(data)
    prompts = [m["content"] for m in transcript.messages if m["role"] == "user"]
    assert prompts == [f"prompt {turn}" for turn in chain]
    answers = [content_text(m) for m in transcript.messages if m["role"] == "assistant" and m.get("content")]
    assert answers == [f"answer {turn}" for turn in chain]
    calls = [c["id"] for m in transcript.messages for c in m.get("tool_calls") or []]
    assert calls == [tool for turn in chain for tool in calls_of[turn]]
    assert sorted(m["tool_call_id"] for m in transcript.messages if m["role"] == "tool") == sorted(calls)
    assert find_violation(transcript.messages) is None
    assert fmt.write([transcript]) == data
    # Compacted to its last answer, it reads back as summary + that answer, whatever the tree.
    summary = {"role": "user", "content": "s"}
    out = fmt.write([transcript.rewritten([summary, transcript.messages[-1]], [None, len(transcript.messages) - 1])])
    again = _load(out)[1].messages
    assert [m["role"] for m in again] == ["user", "assistant"] and content_text(again[1]) == answers[-1]
