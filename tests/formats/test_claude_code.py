"""Claude Code sessions: merged assistant records, records kept aside, /compact written back."""

from __future__ import annotations

import itertools

import orjson

from compactctl.compaction import compact
from compactctl.formats import carried_parts, load
from compactctl.formats.claude_code import SUMMARY_INTRO
from compactctl.transcript import Validator, annotations_of, content_text, find_violation
from tests.conftest import unchanged
from tests.formats.fixtures import lines, read, rewritten, shape


def test_split_assistant_records_are_merged_by_message_id():
    data, _, transcript = read("claude-code")
    records = lines(data)
    assistant_records = [r for r in records if r.get("type") == "assistant"]
    api_messages = {r["message"]["id"] for r in assistant_records}
    assistants = [m for m in transcript.messages if m["role"] == "assistant"]
    assert len(assistant_records) == 8 and len(assistants) == len(api_messages) == 4
    first = assistants[0]
    assert first["content"][0]["type"] == "thinking"  # its own record's block, carried whole as a part
    assert content_text(first) == "I'll read the refund code and run the tests in parallel."
    assert [c["id"] for c in first["tool_calls"]] == ["toolu_01A", "toolu_01B"]
    assert orjson.loads(first["tool_calls"][0]["function"]["arguments"]) == {"file_path": "/home/dev/shop/refunds.py"}


def test_parallel_tool_results_in_separate_records_follow_their_call():
    _, _, transcript = read("claude-code")
    roles = [m["role"] for m in transcript.messages]
    call = roles.index("assistant")
    assert roles[call + 1 : call + 3] == ["tool", "tool"]
    assert [m["tool_call_id"] for m in transcript.messages[call + 1 : call + 3]] == ["toolu_01A", "toolu_01B"]
    # The attachment and last-prompt records between them are not messages.
    assert find_violation(transcript.messages[: call + 6]) is None


def test_only_model_input_becomes_messages():
    data, _, transcript = read("claude-code")
    texts = "\n".join(str(m.get("content")) for m in transcript.messages)
    for aside in ("todo_reminder", "Fix refund limit", "stop_hook_summary", "trackedFileBackups", "originalFile"):
        assert aside in data.decode()
        assert aside not in texts


def test_harness_text_is_annotated():
    _, _, transcript = read("claude-code")
    harness = [m["content"] for m in transcript.messages if annotations_of(m).get("kind") == "harness"]
    assert harness[0].startswith("<command-name>/init")
    assert harness[1].startswith("[Image: original")
    typed = [m for m in transcript.messages if m["role"] == "user" and annotations_of(m).get("kind") != "harness"]
    assert "Ada Lovelace" in str(typed[0]["content"])


def test_images_become_data_urls():
    _, _, transcript = read("claude-code")
    image = transcript.messages[1]["content"][1]
    assert image["type"] == "image_url"
    assert image["image_url"]["url"].startswith("data:image/png;base64,iVBORw0KGgo")


def test_trailing_unanswered_tool_use_is_an_open_call_not_a_fault():
    _, fmt, transcript = read("claude-code")
    validator = Validator(carried_parts("claude-code"))
    for message in transcript.messages:
        validator.feed(message)
    assert validator.finish() is None and validator.open_call == "toolu_04A"
    result = compact(transcript.messages, ["window"], {"keep_recent": 3})
    assert result.messages[-1]["tool_calls"][0]["id"] == "toolu_04A"
    assert fmt.write([transcript]) is not None


def test_usage_is_read_from_assistant_records():
    _, _, transcript = read("claude-code")
    usages = [m["usage"] for m in transcript.messages if m["role"] == "assistant"]
    assert [u["cache_read_input_tokens"] for u in usages] == [9000, 12100, 12900, 13200]


def test_compaction_is_written_as_boundary_and_summary_after_the_old_records():
    data, fmt, transcript = read("claude-code")
    original = unchanged(transcript.messages)
    result = compact(transcript.messages, ["window"], {"keep_recent": 4})
    kept = result.messages
    summary = {"role": "user", "content": "Ada Lovelace's refunds over 100 EUR failed; LIMIT check found."}
    out = rewritten(fmt, transcript, [summary, *kept], [None, *result.origins])
    assert transcript.messages == original
    assert out.startswith(data)  # every old record stays, byte for byte
    new = lines(out[len(data) :])
    boundary, summary_record, *rest = new
    old = lines(data)
    assert boundary["type"] == "system" and boundary["subtype"] == "compact_boundary"
    assert boundary["parentUuid"] is None and boundary["logicalParentUuid"] == old[-1]["uuid"]
    assert boundary["compactMetadata"]["trigger"] == "manual"
    assert boundary["compactMetadata"]["preTokens"] == 5 + 13200 + 150
    assert summary_record["isCompactSummary"] is True and summary_record["parentUuid"] == boundary["uuid"]
    assert summary_record["message"]["content"] == SUMMARY_INTRO + summary["content"]
    *copied, pointer = rest
    for parent, child in itertools.pairwise([summary_record, *copied]):
        assert child["parentUuid"] == parent["uuid"]
    assert all(len(r["message"]["content"]) == 1 for r in copied if r["type"] == "assistant")
    # As Claude Code does after compacting, the leaf to resume from is named.
    assert pointer["type"] == "last-prompt" and pointer["leafUuid"] == copied[-1]["uuid"]
    assert {r["sessionId"] for r in new} == {old[-1]["sessionId"]}
    # Read back, the session is the compacted one: the boundary hides what came before.
    _, again = load(out)
    assert shape(again[0].messages[1:]) == shape(kept)
    assert again[0].messages[0]["content"].endswith(summary["content"])


def test_a_changed_tail_is_written_as_new_records_with_new_message_ids():
    data, fmt, transcript = read("claude-code")
    result = compact(transcript.messages, ["window"], {"keep_recent": 4})
    last = {**result.messages[-1], "content": "Done: the suite passes."}
    summary = {"role": "user", "content": "Refund limit fixed."}
    out = rewritten(fmt, transcript, [summary, *result.messages[:-1], last], [None, *result.origins])
    boundary, summary_record, *rest, pointer = lines(out[len(data) :])
    assert "preservedSegment" not in boundary["compactMetadata"]
    for parent, child in itertools.pairwise([summary_record, *rest]):
        assert child["parentUuid"] == parent["uuid"]
    assert all(len(r["message"]["content"]) == 1 for r in rest if r["type"] == "assistant")
    old_ids = {r["message"]["id"] for r in lines(data) if r.get("type") == "assistant"}
    assert not old_ids & {r["message"]["id"] for r in rest if r["type"] == "assistant"}
    assert pointer["type"] == "last-prompt" and pointer["leafUuid"] == rest[-1]["uuid"]
    _, again = load(out)
    assert shape(again[0].messages[1:]) == shape([*result.messages[:-1], last])


def test_thinking_blocks_stay_unmodified_when_a_message_is_rebuilt():
    data, fmt, transcript = read("claude-code")
    first = next(i for i, m in enumerate(transcript.messages) if m["role"] == "assistant")
    thinking = [p for p in transcript.messages[first]["content"] if p["type"] == "thinking"]
    edited = {
        **transcript.messages[first],
        "content": [*thinking, {"type": "text", "text": "Reading refunds.py and running the tests."}],
    }
    messages = [*transcript.messages[:first], edited, *transcript.messages[first + 1 :]]
    new = lines(rewritten(fmt, transcript, messages)[len(data) :])
    thinking_old = next(r for r in lines(data) if r.get("type") == "assistant")["message"]["content"][0]
    blocks = [r["message"]["content"][0] for r in new if r["type"] == "assistant"]
    assert thinking_old["type"] == "thinking" and thinking_old in blocks
    assert {"type": "text", "text": "Reading refunds.py and running the tests."} in blocks


def test_changed_tool_results_drop_the_stale_tool_use_result():
    data, fmt, transcript = read("claude-code")
    index = next(i for i, m in enumerate(transcript.messages) if m.get("tool_call_id") == "toolu_01A")
    trimmed = {**transcript.messages[index], "content": "[file elided]"}
    messages = [*transcript.messages[:index], trimmed, *transcript.messages[index + 1 :]]
    new = lines(rewritten(fmt, transcript, messages)[len(data) :])
    results = {
        r["message"]["content"][0]["tool_use_id"]: r
        for r in new
        if r["type"] == "user"
        and isinstance(r["message"]["content"], list)
        and "tool_use_id" in r["message"]["content"][0]
    }
    assert "toolUseResult" not in results["toolu_01A"]
    assert results["toolu_01A"]["message"]["content"][0]["content"] == "[file elided]"
    assert "toolUseResult" in results["toolu_01B"]  # unchanged, so its copy still matches


def test_unchanged_session_is_written_back_byte_for_byte():
    data, fmt, transcript = read("claude-code")
    assert fmt.write([transcript]) == data


def _record(kind: str, uuid: str, content, **extra) -> bytes:
    message = {"role": kind, "content": content}
    if kind == "assistant":
        message = {"id": f"msg_{uuid}", "type": "message", **message}
    record = {"parentUuid": None, "sessionId": "s1", "type": kind, "message": message, "uuid": uuid, **extra}
    return orjson.dumps(record) + b"\n"


def test_interleaved_sidechain_records_are_not_the_main_conversation():
    data = b"".join(
        [
            _record("user", "u1", "Plan the migration."),
            _record("user", "s1", "Subagent: list the tables.", isSidechain=True),
            _record("assistant", "s2", [{"type": "text", "text": "users, orders"}], isSidechain=True),
            _record("assistant", "a1", [{"type": "text", "text": "Two tables to migrate."}]),
        ]
    )
    fmt, (transcript,) = load(data)
    assert fmt.name == "claude-code"
    assert [m["content"] for m in transcript.messages] == ["Plan the migration.", "Two tables to migrate."]


def test_a_subagent_file_reads_as_the_subagents_conversation():
    data = b"".join(
        [
            _record("user", "s1", "List the tables.", isSidechain=True, agentId="a1"),
            _record("assistant", "s2", [{"type": "text", "text": "users, orders"}], isSidechain=True, agentId="a1"),
        ]
    )
    fmt, (transcript,) = load(data)
    assert [m["content"] for m in transcript.messages] == ["List the tables.", "users, orders"]
    out = fmt.write([transcript.rewritten(transcript.messages[1:], [1])])
    boundary = lines(out)[2]
    assert boundary["subtype"] == "compact_boundary" and boundary["isSidechain"] is True
    assert [m["content"] for m in load(out)[1][0].messages] == ["users, orders"]


def test_a_compact_boundary_in_the_input_hides_what_came_before():
    data = b"".join(
        [
            _record("user", "u1", "Old question."),
            _record("assistant", "a1", [{"type": "text", "text": "Old answer."}]),
            orjson.dumps(
                {
                    "type": "system",
                    "subtype": "compact_boundary",
                    "uuid": "b1",
                    "parentUuid": None,
                    "logicalParentUuid": "a1",
                    "sessionId": "s1",
                    "compactMetadata": {"trigger": "auto", "preTokens": 155025},
                }
            )
            + b"\n",
            _record("user", "c1", SUMMARY_INTRO + "Asked an old question.", isCompactSummary=True),
            _record("user", "u2", "New question."),
        ]
    )
    fmt, (transcript,) = load(data)
    assert [m["content"] for m in transcript.messages] == [SUMMARY_INTRO + "Asked an old question.", "New question."]
    assert fmt.write([transcript]) == data


def test_a_response_split_by_an_early_tool_result_reports_its_usage_once():
    usage = {"input_tokens": 10, "cache_read_input_tokens": 500, "output_tokens": 20}

    def call(uuid: str, tool: str) -> bytes:
        block = {"type": "tool_use", "id": tool, "name": "Bash", "input": {"command": "ls"}}
        message = {"id": "msg_9", "type": "message", "role": "assistant", "content": [block], "usage": usage}
        return orjson.dumps({"type": "assistant", "uuid": uuid, "sessionId": "s1", "message": message}) + b"\n"

    def result(uuid: str, tool: str) -> bytes:
        return _record("user", uuid, [{"type": "tool_result", "tool_use_id": tool, "content": "ok"}])

    data = (
        _record("user", "u1", "List twice.")
        + call("a1", "t1")
        + result("r1", "t1")
        + call("a2", "t2")
        + result("r2", "t2")
    )
    _, (transcript,) = load(data)
    assert [m["role"] for m in transcript.messages] == ["user", "assistant", "tool", "assistant", "tool"]
    assert find_violation(transcript.messages) is None
    assert ["usage" in m for m in transcript.messages if m["role"] == "assistant"] == [True, False]
