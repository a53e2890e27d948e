"""A file of no known format: one plain error, the closest format and why it did not match."""

from __future__ import annotations

import orjson
import pytest

from compactctl.errors import InputError
from compactctl.formats import FORMATS, load

KNOWN = f"(known: {', '.join(FORMATS)})"

# Shapes met in real folders of logs, none of them a transcript compactctl reads.
PACKAGE_JSON = b'{"name": "app", "version": "1.0.0", "scripts": {"test": "jest"}, "dependencies": {}}\n'
OPENHANDS = orjson.dumps(
    [
        {"id": 0, "timestamp": "2025-01-01T00:00:00", "source": "user", "message": "fix it", "action": "message"},
        {"id": 1, "timestamp": "2025-01-01T00:00:01", "source": "agent", "observation": "run", "content": "ok"},
    ]
)
PI_SESSION = (
    b'{"type":"session","version":3,"id":"9f1c","timestamp":"2026-02-20T20:17:15.095Z","cwd":"/home/u/app"}\n'
    b'{"type":"message","id":"a1","parentId":null,"timestamp":"2026-02-20T20:17:16Z",'
    b'"message":{"role":"user","content":[{"type":"text","text":"hi"}]}}\n'
)
ANTIGRAVITY_LOG = b'{"type":"USER_INPUT","source":"USER","status":"DONE","created_at":"2026-06-21","content":"hi"}\n'


def error_of(data: bytes, path: str = "logs/x.jsonl") -> str:
    with pytest.raises(InputError) as raised:
        load(data, path)
    return str(raised.value)


def test_every_format_but_the_database_has_a_signature_to_compare_with():
    assert {name for name, fmt in FORMATS.items() if fmt.signature is not None} | {"agents-sqlite"} == set(FORMATS)


@pytest.mark.parametrize("data", [b'{"foo": 1}\n', PACKAGE_JSON, OPENHANDS, b"[1, 2, 3]"])
def test_an_unknown_file_is_named_with_the_known_formats(data):
    message = error_of(data)
    assert message.startswith(f"cannot tell the format of logs/x.jsonl {KNOWN}; ")
    assert message.endswith("; pass `format` if you know it")  # the CLI says --format
    assert "has no 'role'" not in message  # the old chat-reader error, misleading here


def test_the_closest_format_and_what_it_lacks_are_named():
    # OpenHands events share 'content' with Anthropic messages, and lack their 'role'.
    message = error_of(OPENHANDS)
    assert "closest: anthropic" in message and "but no record has 'role'" in message
    assert "'action'" in message  # what the file does hold
    ui_like = error_of(b'{"id": "m1", "text": "hi"}\n')
    assert "closest: ai-sdk" in ui_like and "no record has 'role' nor 'parts'" in ui_like
    claude_like = error_of(b'{"type": "user", "message": {"content": "hi"}}\n')
    assert "closest: claude-code" in claude_like and "'sessionId' or 'uuid'" in claude_like


def test_records_that_are_not_objects_are_said_to_be_so():
    assert "its records are numbers, not JSON objects" in error_of(b"[1, 2, 3]")


@pytest.mark.parametrize(
    ("data", "producer"),
    [(PI_SESSION, "a pi coding-agent session"), (ANTIGRAVITY_LOG, "an Antigravity log")],
)
def test_known_producers_that_are_not_read_are_said_to_be_unsupported(data, producer):
    message = error_of(data)
    assert message.startswith(f"cannot tell the format of logs/x.jsonl {KNOWN}; ")
    assert f"it looks like {producer}, which is not supported" in message
    assert "--format" not in message  # naming a format would not help


def test_a_pi_session_with_a_title_line_before_its_header_is_still_named():
    titled = b'{"type":"title","v":1,"title":"Quantum"}\n' + PI_SESSION
    assert "it looks like a pi coding-agent session, which is not supported" in error_of(titled)


def test_a_chat_file_whose_first_line_is_not_a_message_still_reads_as_chat():
    data = b'{"note": "header"}\n{"role": "user", "content": "hi"}\n'
    with pytest.raises(InputError, match=r"x\.jsonl:1: .*'role'"):  # the chat reader names the bad line
        load(data, "x.jsonl")
    assert load(b'{"role": "user", "content": "hi"}\n')[0].name == "chat"
