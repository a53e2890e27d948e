"""Round trips for every format: what is read is written back as it was; what is written reads back the same."""

from __future__ import annotations

from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from compactctl.compaction import compact
from compactctl.errors import InputError
from compactctl.formats import FORMATS, Transcript, dump, gemini, get_format, load, write_as
from tests.formats.fixtures import FILES, codex_initial_context, read, shape
from tests.properties import examples

# How each format stores roles it has no place for.
ROLE_MAP = {
    "claude-code": {"system": "user", "developer": "user"},
    "anthropic": {"developer": "system"},
    "gemini": {"system": "user", "developer": "user"},
}

text = st.text(st.characters(exclude_categories=("Cs",)), min_size=1, max_size=24)
arguments = st.dictionaries(st.sampled_from(["path", "cmd", "query", "n"]), text, max_size=3)


@st.composite
def transcripts(draw: st.DrawFn) -> list[dict[str, Any]]:
    """API-valid canonical transcripts: a system prompt, user turns, tool rounds, answers."""
    messages: list[dict[str, Any]] = []
    if draw(st.booleans()):
        messages.append({"role": "system", "content": draw(text)})
    ids = iter(range(10_000))
    for _ in range(draw(st.integers(1, 3))):
        messages.append({"role": "user", "content": draw(text)})
        for _ in range(draw(st.integers(0, 2))):
            calls = [
                {
                    "id": f"call_{next(ids)}",
                    "type": "function",
                    "function": {
                        "name": draw(st.sampled_from(["read", "bash"])),
                        "arguments": orjson.dumps(draw(arguments)).decode(),
                    },
                }
                for _ in range(draw(st.integers(1, 3)))
            ]
            messages.append({"role": "assistant", "content": draw(st.none() | text), "tool_calls": calls})
            messages.extend({"role": "tool", "tool_call_id": c["id"], "content": draw(text)} for c in calls)
        messages.append({"role": "assistant", "content": draw(text)})
    return messages


def mapped(messages: list[dict[str, Any]], fmt: str) -> list[dict[str, Any]]:
    roles = ROLE_MAP.get(fmt, {})
    out = [{**m, "role": roles.get(m["role"], m["role"])} for m in messages]
    if fmt == "gemini":  # user texts Gemini CLI does not send on resume ("/cmd", "?", blank) are not read
        out = [m for m in out if not (m["role"] == "user" and gemini.ignored_text(m["content"]))]
    return out


@pytest.mark.parametrize("name", [name for name, fmt in FORMATS.items() if fmt.writes])
@settings(max_examples=examples(25), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(messages=transcripts())
def test_written_transcripts_are_detected_read_back_and_rewritten_identically(name, messages):
    data = write_as([Transcript(messages)], get_format("chat"), name)
    detected = load(data)[0].name
    # Plain-text Anthropic messages without a system prompt are also plain chat: either reading is right.
    plain = name == "anthropic" and not any(m.get("tool_calls") or m["role"] == "system" for m in messages)
    assert detected == name or (plain and detected == "chat")
    fmt, again = load(data, format=name)
    assert shape([m for t in again for m in t.messages]) == shape(mapped(messages, name))
    assert fmt.write(again) == data


@pytest.mark.parametrize("name", list(FILES))
@settings(max_examples=examples(15), deadline=None)
@given(keep_recent=st.integers(0, 12), trim=st.booleans())
def test_compacted_native_transcripts_read_back_as_compacted(name, keep_recent, trim):
    data, fmt, transcript = read(name)
    steps = ["trim-tools", "window"] if trim else ["window"]
    result = compact(transcript.messages, steps, {"keep_recent": keep_recent, "tool_max_tokens": 8})
    kept = result.messages
    out = fmt.write([transcript.rewritten(kept, result.origins)])
    detected = load(out)[0].name
    # What is left may be only easy messages ({role, content}), which are plain chat as well.
    records = [orjson.loads(line) for line in out.splitlines()]
    assert detected == name or (detected == "chat" and all(set(r) == {"role", "content"} for r in records))
    again_fmt, (again,) = load(out, format=name)
    # Codex writes its initial context again on resume from this rollout (it has no world_state
    # to restate), so the old copies are left out of the replacement history.
    expected = [m for m in kept if not (name == "codex" and out != data and codex_initial_context(m))]
    assert shape(again.messages) == shape(expected)
    assert again_fmt.write([again]) == out  # a compacted file round-trips byte for byte too


@pytest.mark.parametrize("name", list(FILES))
def test_every_fixture_is_detected_and_round_trips_byte_for_byte(name):
    data, fmt, transcript = read(name)
    assert fmt.name == name
    assert fmt.write([transcript]) == data


def test_formats_without_a_shared_shape_are_told_apart():
    for document, name in [
        (b'{"role": "user", "content": "hi"}\n', "chat"),
        (b'[{"role": "user", "content": "hi"}]', "chat"),
        (b'{"messages": [{"role": "user", "content": "hi"}], "id": 1}\n', "dataset"),
        (b'[{"task_id": 1, "traj": [{"role": "user", "content": "hi"}]}]', "tau-bench"),
        (b'{"history": [{"role": "user", "content": "hi"}], "trajectory": []}', "swe-agent"),
        (b'{"system": "Be brief."}\n{"role": "user", "content": "hi"}\n', "anthropic"),
        (b'{"model": "m", "max_tokens": 5, "messages": [{"role": "user", "content": "hi"}]}\n', "anthropic"),
        (b'{"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]}\n', "responses"),
        (b'{"timestamp": "t", "type": "session_meta", "payload": {"id": "x"}}\n', "codex"),
        (b'{"type": "summary", "summary": "s", "leafUuid": "u"}\n', "claude-code"),
    ]:
        assert load(document)[0].name == name, document


def test_an_unknown_shape_is_a_clear_input_error():
    # An object with no 'role' is no chat message: the file's format is unknown, said as such.
    with pytest.raises(InputError, match=r"^cannot tell the format of odd\.jsonl \(known: "):
        load(b'{"foo": 1}\n', "odd.jsonl")


def test_dump_converts_transcripts_read_in_another_format():
    _, _, transcript = read("codex")
    chat = dump([transcript], "chat")
    assert b'"source"' not in chat
    assert shape([orjson.loads(line) for line in chat.splitlines()]) == shape(transcript.messages)
    assert dump([transcript], "codex") == FILES["codex"].read_bytes()
