"""Vercel AI SDK UIMessage arrays, produced by the real `ai` package and read back through it.

tests/formats/aisdk/produce.mjs runs streamText over a scripted mock model (a tool loop with
reasoning) and saves the UIMessages readUIMessageStream builds; check.mjs feeds what we write
to validateUIMessages and convertToModelMessages. Both need node and `npm ci` in that folder
(.ci/run does it); without them the tests skip locally and fail in CI (tests/needs.py).
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import orjson
import pytest

from compactctl.compaction import compact
from compactctl.errors import EXIT_OK, InputError
from compactctl.formats import load
from compactctl.transcript import find_violation
from tests.cli.conftest import Cli
from tests.needs import needs


def node(script: str, stdin: bytes = b"") -> subprocess.CompletedProcess[bytes]:
    aisdk = needs("node-ai")
    return subprocess.run(["node", script], cwd=aisdk, input=stdin, capture_output=True, timeout=120, check=False)


@pytest.fixture(scope="module")
def ui_messages() -> bytes:
    produced = node("produce.mjs")
    assert produced.returncode == 0, produced.stderr.decode()
    return produced.stdout


def model_messages(data: bytes) -> list[dict]:
    checked = node("check.mjs", data)
    assert checked.returncode == 0, checked.stderr.decode()
    return orjson.loads(checked.stdout)


def test_steps_become_calls_and_tool_parts_become_call_result_pairs(ui_messages: bytes):
    fmt, (transcript,) = load(ui_messages, "chat.json")
    assert fmt.name == "ai-sdk"
    roles = [m["role"] for m in transcript.messages]
    assert roles == ["user", "assistant", "tool", "assistant", "user"]
    call = transcript.messages[1]
    assert call["tool_calls"][0]["function"] == {"name": "weather", "arguments": '{"city":"Oslo"}'}
    assert call["content"][0]["type"] == "reasoning"  # kept as the part it is
    assert orjson.loads(transcript.messages[2]["content"])["sky"] == "rain"
    assert find_violation(transcript.messages) is None


def test_an_unchanged_file_is_written_back_byte_for_byte(ui_messages: bytes):
    fmt, transcripts = load(ui_messages, "chat.json")
    assert fmt.write(transcripts) == ui_messages


def test_a_trimmed_tool_output_is_written_into_its_part_and_the_sdk_accepts_it(ui_messages: bytes):
    fmt, (transcript,) = load(ui_messages, "chat.json")
    result = compact(transcript.messages, ["trim-tools"], {"tool_max_tokens": 20})
    assert result.messages[2] != transcript.messages[2]
    written = fmt.write([transcript.rewritten(result.messages, result.origins)])
    ui = orjson.loads(written)
    tool_part = next(p for p in ui[1]["parts"] if p["type"] == "tool-weather")
    assert tool_part["state"] == "output-available" and tool_part["output"] == result.messages[2]["content"]
    assert [p["type"] for p in ui[1]["parts"]] == [p["type"] for p in orjson.loads(ui_messages)[1]["parts"]]
    converted = model_messages(written)
    assert [m["role"] for m in converted] == ["user", "assistant", "tool", "assistant", "user"]
    _, (again,) = load(written, "out.json")
    assert again.messages == result.messages


def test_a_dropped_turn_leaves_valid_ui_messages(ui_messages: bytes):
    fmt, (transcript,) = load(ui_messages, "chat.json")
    result = compact(transcript.messages, ["window"], {"keep_recent": 2})
    written = fmt.write([transcript.rewritten(result.messages, result.origins)])
    assert model_messages(written)[-1]["content"][0]["text"] == "And tomorrow?"


def test_chat_converts_to_ui_messages_the_sdk_reads(agent_messages, tmp_path: Path):
    source = tmp_path / "chat.jsonl"
    source.write_bytes(b"".join(orjson.dumps(m) + b"\n" for m in agent_messages))
    done = Cli()("compact", source, "--to", "ai-sdk", "-o", tmp_path / "ui.json", "--strategy", "window")
    assert done.exit_code == EXIT_OK, done.output
    converted = model_messages((tmp_path / "ui.json").read_bytes())
    assert {m["role"] for m in converted} >= {"user", "assistant", "tool"}


def test_bad_ui_messages_name_the_message_and_part(ui_messages: bytes):
    ui = orjson.loads(ui_messages)
    del ui[1]["parts"][2]["toolCallId"]
    with pytest.raises(InputError) as raised:
        load(orjson.dumps(ui), "chat.json", format="ai-sdk")
    assert str(raised.value) == "chat.json:1: message 1 (id 'a1'): parts[2] (tool-weather) has no toolCallId"
    lines = b"".join(orjson.dumps(m) + b"\n" for m in [ui[0], {**ui[2], "role": "robot"}])
    with pytest.raises(InputError, match=r"chat.jsonl:2: message 1 \(id 'u2'\): unknown role 'robot'"):
        load(lines, "chat.jsonl", format="ai-sdk")
