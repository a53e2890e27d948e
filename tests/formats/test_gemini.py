"""Gemini CLI chats: read as the client resumes them (each response once), written as it resumes them again.

The file under data/real-clients was written by Gemini CLI 0.61.0 itself (tests/fakes/record_fixtures.py):
a first prompt, a resume (the client's ``$set`` checkpoint), a tool call and its answer.
"""

from __future__ import annotations

import json
from typing import Any

import orjson
import pytest

from compactctl.formats import dump, get_format, load
from compactctl.transcript import content_text, find_violation
from tests.formats.fixtures import FILES

GEMINI = get_format("gemini")
CHAT = FILES["gemini"]


def _lines(data: bytes) -> list[dict[str, Any]]:
    return [orjson.loads(line) for line in data.splitlines() if line.strip()]


def _jsonl(*records: dict[str, Any]) -> bytes:
    return b"".join(json.dumps(r).encode() + b"\n" for r in records)


HEADER = {"sessionId": "s-1", "projectHash": "p", "startTime": "t0", "lastUpdated": "t0", "kind": "main"}


def _user(id_: str, text: str) -> dict[str, Any]:
    return {"id": id_, "timestamp": "t", "type": "user", "content": [{"text": text}]}


def _gemini(id_: str, text: str, **extra: Any) -> dict[str, Any]:
    return {"id": id_, "timestamp": "t", "type": "gemini", "content": text, "thoughts": [], **extra}


def _texts(data: bytes) -> list[tuple[str, str]]:
    (transcript,) = load(data, "chat.jsonl").transcripts
    return [(m["role"], content_text(m)) for m in transcript.messages]


def test_the_clients_chat_reads_with_each_tool_response_once_and_without_its_own_context() -> None:
    fmt, (transcript,) = load(CHAT.read_bytes(), str(CHAT))
    assert fmt.name == "gemini"
    messages = transcript.messages
    assert [m["role"] for m in messages] == ["user", "assistant", "user", "assistant", "tool", "assistant"]
    # The file holds the response twice (toolCalls[].result and a user record): read once.
    assert CHAT.read_bytes().count(b'"functionResponse"') >= 2
    assert find_violation(messages) is None
    assert messages[3]["content"] == [{"type": "thinking", "thinking": "Read the notes."}]
    assert messages[3]["tool_calls"][0]["function"] == {"name": "read_file", "arguments": '{"file_path":"notes.txt"}'}
    assert not any("<session_context>" in content_text(m) for m in messages)
    assert messages[-1]["usage"]["input_tokens"] == 11744  # the call's tokens.input


def test_the_last_copy_of_a_message_wins_in_the_place_of_its_first() -> None:
    data = _jsonl(HEADER, _user("u1", "one"), _gemini("g1", "draft"), _user("u2", "two"), _gemini("g1", "final"))
    assert _texts(data) == [("user", "one"), ("assistant", "final"), ("user", "two")]


def test_a_rewind_drops_the_message_it_names_and_all_after_it() -> None:
    data = _jsonl(
        HEADER, _user("u1", "one"), _gemini("g1", "a"), _user("u2", "two"), _gemini("g2", "b"), {"$rewindTo": "u2"}
    )
    assert _texts(data) == [("user", "one"), ("assistant", "a")]
    unknown = _jsonl(HEADER, _user("u1", "one"), {"$rewindTo": "nowhere"}, _user("u3", "three"))
    assert _texts(unknown) == [("user", "three")]  # the client clears everything for an id it does not know


def test_a_messages_checkpoint_replaces_what_came_before() -> None:
    data = _jsonl(
        HEADER,
        _user("u1", "one"),
        _gemini("g1", "a"),
        {"$set": {"messages": [_user("u9", "summary"), _gemini("g9", "ok")], "lastUpdated": "t9"}},
        _user("u2", "two"),
    )
    assert _texts(data) == [("user", "summary"), ("assistant", "ok"), ("user", "two")]


def test_the_older_one_document_chat_is_read_and_written_as_one_document() -> None:
    document = {**HEADER, "messages": [_user("u1", "one"), _gemini("g1", "a" * 400), _user("u2", "two")]}
    data = json.dumps(document, indent=2).encode()
    fmt, (transcript,) = load(data, "chat.json")
    assert fmt.name == "gemini" and [m["role"] for m in transcript.messages] == ["user", "assistant", "user"]
    assert fmt.write([transcript]) == data
    shorter = transcript.rewritten([transcript.messages[0], transcript.messages[2]], [0, 2])
    written = json.loads(fmt.write([shorter]))
    assert [m["id"] for m in written["messages"]] == ["u1", "u2"] and written["sessionId"] == "s-1"


def test_commands_info_records_and_the_clients_context_are_not_read() -> None:
    data = _jsonl(
        HEADER,
        _user("c", "<session_context>\nThis is the Gemini CLI.\n</session_context>"),
        _user("u1", "/stats"),
        {"id": "i1", "timestamp": "t", "type": "info", "content": "Request cancelled."},
        _user("u2", "real question"),
        _gemini("g1", "answer"),
    )
    assert _texts(data) == [("user", "real question"), ("assistant", "answer")]


def test_a_shortened_chat_ends_with_one_checkpoint_in_the_layout_the_client_resumes() -> None:
    data = CHAT.read_bytes()
    _, (transcript,) = load(data, str(CHAT))
    kept = transcript.messages[2:]  # the first exchange dropped, as a window keeps the rest
    out = GEMINI.write([transcript.rewritten(kept, range(2, len(transcript.messages)))])
    assert out.startswith(data)  # every line the client wrote stays, unchanged
    (checkpoint,) = _lines(out[len(data) :])
    messages = checkpoint["$set"]["messages"]
    assert checkpoint["$set"]["lastUpdated"] == _lines(data)[-1]["$set"]["lastUpdated"]
    assert len({m["id"] for m in messages}) == len(messages)
    # No toolCalls: Gemini CLI 0.61 replays a toolCalls result beside the response record (#29365).
    assert not any("toolCalls" in m for m in messages)
    responses = [p for m in messages for p in m["content"] if "functionResponse" in p]
    calls = [p for m in messages for p in m["content"] if "functionCall" in p]
    assert len(responses) == len(calls) == 1  # one call, answered once
    assert [m["type"] for m in messages] == ["user", "gemini", "user", "gemini"]
    assert messages[1]["thoughts"][0]["description"] == "Read the notes."  # thoughts stay in thoughts
    _, (again,) = load(out, "out.jsonl")
    assert again.messages == kept


def test_stubbed_tool_output_is_written_as_the_response_output() -> None:
    data = CHAT.read_bytes()
    _, (transcript,) = load(data, str(CHAT))
    messages = [dict(m, content="[elided]") if m["role"] == "tool" else m for m in transcript.messages]
    out = GEMINI.write([transcript.rewritten(messages, range(len(messages)))])
    (checkpoint,) = _lines(out[len(data) :])
    records = checkpoint["$set"]["messages"]
    (response,) = [p["functionResponse"] for m in records for p in m["content"] if "functionResponse" in p]
    assert response["response"] == {"output": "[elided]"} and response["name"] == "read_file"


@pytest.mark.parametrize("source", ["codex", "claude-code"])
def test_a_transcript_from_another_format_becomes_a_chat_the_client_can_load(source: str) -> None:
    (transcript,) = load(FILES[source].read_bytes(), str(FILES[source])).transcripts
    out = dump([transcript], "gemini")
    header = _lines(out)[0]
    assert header["sessionId"] and header["projectHash"]  # the client's loader needs both
    fmt, (again,) = load(out, "chat.jsonl")
    assert fmt.name == "gemini"
    assert str(find_violation(again.messages)) == str(find_violation(transcript.messages))  # valid, or as unfinished
    calls = [c["id"] for m in transcript.messages for c in m.get("tool_calls") or []]
    assert [c["id"] for m in again.messages for c in m.get("tool_calls") or []] == calls


def _call_part(call_id: str, **extra: Any) -> dict[str, Any]:
    return {"functionCall": {"id": call_id, "name": "read_file", "args": {"file_path": "a.txt"}}, **extra}


def _response_part(call_id: str, output: str = "alpha") -> dict[str, Any]:
    return {"functionResponse": {"id": call_id, "name": "read_file", "response": {"output": output}}}


def test_a_response_the_client_copied_on_each_resume_is_read_once() -> None:
    # After two resumes 0.61 holds three copies: toolCalls[].result, its saved <id>_response, the original record.
    tool_call = {
        "id": "read_file__1",
        "name": "read_file",
        "args": {"file_path": "a.txt"},
        "result": [_response_part("read_file__1")],
    }
    checkpoint = [
        _user("u1", "read it"),
        _gemini("g1", "", content=[{"text": "Reading."}, _call_part("read_file__1")], toolCalls=[tool_call]),
        {"id": "g1_response", "timestamp": "t", "type": "user", "content": [_response_part("read_file__1")]},
        {"id": "r1", "timestamp": "t", "type": "user", "content": [_response_part("read_file__1")]},
        _gemini("g2", "It says alpha."),
    ]
    data = _jsonl(HEADER, {"$set": {"messages": checkpoint}})
    (transcript,) = load(data, "chat.jsonl").transcripts
    assert [m["role"] for m in transcript.messages] == ["user", "assistant", "tool", "assistant"]
    assert find_violation(transcript.messages) is None


def test_an_older_chat_with_results_only_in_tool_calls_is_answered_from_them() -> None:
    # Before the client also recorded responses as user messages, toolCalls[].result was the only copy.
    tool_call = {
        "id": "c1",
        "name": "read_file",
        "args": {"file_path": "a.txt"},
        "result": "alpha",
        "status": "success",
    }
    data = _jsonl(HEADER, _user("u1", "read it"), _gemini("g1", "Reading.", toolCalls=[tool_call]), _gemini("g2", "ok"))
    (transcript,) = load(data, "chat.jsonl").transcripts
    assert [(m["role"], content_text(m)) for m in transcript.messages][1:3] == [
        ("assistant", "Reading."),
        ("tool", "alpha"),
    ]
    shorter = transcript.rewritten(transcript.messages[1:], range(1, len(transcript.messages)))
    (checkpoint,) = _lines(GEMINI.write([shorter])[len(data) :])
    records = checkpoint["$set"]["messages"]
    assert [r["id"] for r in records] == ["g1", "g1_response", "g2"]
    assert records[1]["content"] == [
        {"functionResponse": {"id": "c1", "name": "read_file", "response": {"output": "alpha"}}}
    ]


def test_a_rewritten_call_keeps_its_thought_signature() -> None:
    signed = _call_part("c1", thoughtSignature="c2ln")
    data = _jsonl(
        HEADER,
        _user("u1", "read it"),
        _gemini("g1", "", content=[{"text": "Reading."}, signed], thoughts=[{"subject": "", "description": "why"}]),
        {"id": "r1", "timestamp": "t", "type": "user", "content": [_response_part("c1")]},
    )
    (transcript,) = load(data, "chat.jsonl").transcripts
    messages = [dict(m, content="Reading it.") if m["role"] == "assistant" else m for m in transcript.messages]
    (checkpoint,) = _lines(GEMINI.write([transcript.rewritten(messages, range(len(messages)))])[len(data) :])
    model = checkpoint["$set"]["messages"][1]
    assert model["content"] == [{"text": "Reading it."}, signed]
    assert model["thoughts"] == []  # the rewritten message has no thinking part left
