"""OpenAI Responses items: calls paired by call_id, reasoning and compaction items kept opaque in place."""

from __future__ import annotations

from typing import Any

import orjson
from hypothesis import given, settings
from hypothesis import strategies as st

from compactctl.compaction import compact
from compactctl.formats import load
from compactctl.formats.responses import ResponsesNative
from compactctl.transcript import content_text, find_violation
from tests.conftest import unchanged
from tests.formats.fixtures import lines, read, rewritten, shape
from tests.properties import examples


def test_items_map_to_canonical_messages():
    _, _, transcript = read("responses")
    assert [m["role"] for m in transcript.messages] == [
        "developer",
        "user",
        "assistant",
        "tool",
        "tool",
        "assistant",
        "user",
        "assistant",
    ]
    call = transcript.messages[2]
    assert [part["type"] for part in call["content"]] == ["reasoning"]  # the reasoning item before the calls
    assert [(c["id"], c["function"]["name"]) for c in call["tool_calls"]] == [
        ("call_1", "get_order"),
        ("call_2", "get_customer"),
    ]
    assert transcript.messages[4]["content"] == '{"customer_id":"c9","tier":"gold"}'
    image = transcript.messages[1]["content"][1]
    assert image["image_url"]["detail"] == "low" and image["image_url"]["url"].startswith("data:image/png;base64,")
    assert find_violation(transcript.messages) is None


def test_reasoning_is_a_part_whose_encrypted_content_is_not_text():
    data, _, transcript = read("responses")
    blob = lines(data)[2]["encrypted_content"]
    assert transcript.messages[2]["content"][0]["encrypted_content"] == blob
    assert all(blob not in content_text(m) for m in transcript.messages)


def test_dropped_messages_take_their_reasoning_along_and_compaction_stays_in_place():
    data, fmt, transcript = read("responses")
    original = unchanged(transcript.messages)
    result = compact(transcript.messages, ["window"], {"keep_recent": 2})
    items = lines(rewritten(fmt, transcript, result.messages, result.origins))
    assert transcript.messages == original
    assert [item.get("type", "message") for item in items] == ["message", "message", "compaction", "message"]
    assert items[2] == lines(data)[10]
    assert all(item.get("type") != "reasoning" for item in items)


def test_trimmed_output_keeps_its_item_and_other_items_stay_verbatim():
    data, fmt, transcript = read("responses")
    index = next(i for i, m in enumerate(transcript.messages) if m.get("tool_call_id") == "call_1")
    trimmed = {**transcript.messages[index], "content": "[order elided]"}
    out = rewritten(fmt, transcript, [*transcript.messages[:index], trimmed, *transcript.messages[index + 1 :]])
    before, after = lines(data), lines(out)
    assert len(before) == len(after)
    changed = [(b, a) for b, a in zip(before, after, strict=True) if b != a]
    assert changed == [(before[5], {**before[5], "output": "[order elided]"})]


def test_a_json_array_of_items_reads_and_writes_as_an_array():
    data, _, transcript = read("responses")
    document = orjson.dumps(lines(data), option=orjson.OPT_INDENT_2)
    fmt, (again,) = load(document)
    assert fmt.name == "responses" and isinstance(again.native, ResponsesNative) and again.native.layout == "json"
    assert shape(again.messages) == shape(transcript.messages)
    assert orjson.loads(fmt.write([again])) == lines(data)


def test_unchanged_items_are_written_back_byte_for_byte():
    data, fmt, transcript = read("responses")
    assert fmt.write([transcript]) == data


def test_calls_before_the_text_of_one_response_are_one_turn_written_back_in_their_order():
    # The API pairs an output with its call by call_id: a response may put its commentary after its calls.
    items = [
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "List the files."}]},
        {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "gAAAA"},
        {"type": "function_call", "call_id": "c1", "name": "ls", "arguments": "{}"},
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Listing them."}]},
        {"type": "function_call_output", "call_id": "c1", "output": "a.py b.py"},
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Two files."}]},
    ]
    data = b"".join(orjson.dumps(item) + b"\n" for item in items)
    fmt, (transcript,) = load(data)
    turn = transcript.messages[1]
    assert [m["role"] for m in transcript.messages] == ["user", "assistant", "tool", "assistant"]
    assert [c["id"] for c in turn["tool_calls"]] == ["c1"] and content_text(turn) == "Listing them."
    assert find_violation(transcript.messages) is None
    assert fmt.write([transcript]) == data
    trimmed = [*transcript.messages[:2], {**transcript.messages[2], "content": "[elided]"}, transcript.messages[3]]
    written = lines(rewritten(fmt, transcript, trimmed))
    assert [item["type"] for item in written] == [item["type"] for item in items]
    assert written[3] == items[3] and written[4]["output"] == "[elided]"


@st.composite
def responses_turns(draw: st.DrawFn) -> list[dict[str, Any]]:
    """Input items as a Responses client (Codex among them) saves them: each response's reasoning, text and calls in
    either order the API streams them, each call answered after the response, a response with no call the end of
    the turn, now and then another agent's message."""
    items: list[dict[str, Any]] = [
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Go."}]}
    ]
    for turn in range(draw(st.integers(1, 5))):
        calls = [
            {"type": "function_call", "call_id": f"c{turn}_{n}", "name": "sh", "arguments": f'{{"n": {n}}}'}
            for n in range(draw(st.integers(0, 2)))
        ]
        text = {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": f"Turn {turn}."}]}
        response = [*calls, text] if draw(st.booleans()) else [text, *calls]
        if draw(st.booleans()):
            response.insert(0, {"type": "reasoning", "id": f"rs_{turn}", "summary": [], "encrypted_content": "gAAA"})
        items += response
        items += [{"type": "function_call_output", "call_id": c["call_id"], "output": f"out {turn}"} for c in calls]
        if not calls:  # the turn is over: the next response answers the user's next message
            items.append({"type": "message", "role": "user", "content": [{"type": "input_text", "text": "And?"}]})
        if draw(st.booleans()):
            note = f"Message Type: FINAL_ANSWER\nPayload:\nagent {turn} done"
            items.append({"type": "agent_message", "author": "/root/a", "recipient": "/root",
                          "content": [{"type": "input_text", "text": note}]})  # fmt: skip
    return items


@settings(max_examples=examples(60), deadline=None)
@given(responses_turns())
def test_any_order_of_a_responses_items_reads_as_valid_turns_and_writes_back(items: list[dict[str, Any]]):
    data = b"".join(orjson.dumps(item) + b"\n" for item in items)
    fmt, (transcript,) = load(data)
    assert fmt.name == "responses"
    assert find_violation(transcript.messages, fmt.carried_parts) is None
    assert fmt.write([transcript]) == data
    # Every tool result changed: each item written back in its place, the outputs with their new text.
    changed = [{**m, "content": "[elided]"} if m["role"] == "tool" else m for m in transcript.messages]
    written = lines(rewritten(fmt, transcript, changed))
    assert [item["type"] for item in written] == [item["type"] for item in items]
    assert all(item["output"] == "[elided]" for item in written if item["type"] == "function_call_output")
