"""Anthropic Messages: tool_use/tool_result blocks, thinking kept as is, system prompt as its own record."""

from __future__ import annotations

import orjson

from compactctl.compaction import compact
from compactctl.formats import load
from compactctl.transcript import find_violation
from tests.conftest import unchanged
from tests.formats.fixtures import DATA, lines, read, rewritten, shape

REQUEST = DATA / "anthropic-request.json"


def test_blocks_map_to_canonical_messages():
    _, _, transcript = read("anthropic")
    roles = [m["role"] for m in transcript.messages]
    assert roles == [
        "system",
        "user",
        "assistant",
        "tool",
        "tool",
        "user",
        "assistant",
        "user",
        "assistant",
        "tool",
        "assistant",
    ]
    assistant = transcript.messages[2]
    thinking, text = assistant["content"]  # the thinking block is a part, whole, before the text
    assert (
        thinking["type"] == "thinking" and thinking["signature"] and text == {"type": "text", "text": "Let me check."}
    )
    assert orjson.loads(assistant["tool_calls"][1]["function"]["arguments"]) == {"name": "Ada Lovelace"}
    assert transcript.messages[4]["content"] == '{"customer_id":"c9"}'
    assert transcript.messages[5]["content"] == "Also, can it go to my card?"
    assert find_violation(transcript.messages) is None


def test_rebuilt_assistant_keeps_thinking_and_gets_input_objects():
    data, fmt, transcript = read("anthropic")
    thinking = transcript.messages[2]["content"][0]
    edited = {**transcript.messages[2], "content": [thinking, {"type": "text", "text": "Checking order and customer."}]}
    out = lines(rewritten(fmt, transcript, [*transcript.messages[:2], edited, *transcript.messages[3:]]))
    before = lines(data)
    assert out[0] == before[0] and out[1] == before[1] and out[3:] == before[3:]
    blocks = out[2]["content"]
    assert blocks[0] == before[2]["content"][0]  # thinking with its signature, unmodified
    assert blocks[1] == {"type": "text", "text": "Checking order and customer."}
    assert blocks[2:] == before[2]["content"][2:]


def test_tool_results_come_first_in_their_user_message():
    data, fmt, transcript = read("anthropic")
    trimmed = {**transcript.messages[3], "content": "[elided]"}
    out = lines(rewritten(fmt, transcript, [*transcript.messages[:3], trimmed, *transcript.messages[4:]]))
    user = out[3]
    assert [b["type"] for b in user["content"]] == ["tool_result", "tool_result", "text"]
    assert user["content"][0] == {"type": "tool_result", "tool_use_id": "toolu_1", "content": "[elided]"}
    assert user["content"][1:] == lines(data)[3]["content"][1:]


def test_window_output_alternates_and_stays_valid():
    _, fmt, transcript = read("anthropic")
    original = unchanged(transcript.messages)
    result = compact(transcript.messages, ["window"], {"keep_recent": 4})
    kept = result.messages
    out = rewritten(fmt, transcript, kept, result.origins)
    assert transcript.messages == original
    records = lines(out)
    assert "system" in records[0] and [r["role"] for r in records[1:]] == ["user", "assistant", "user", "assistant"]
    _, (again,) = load(out)
    assert shape(again.messages) == shape(kept)


def test_request_objects_keep_their_other_keys():
    data = REQUEST.read_bytes()
    fmt, (transcript,) = load(data)
    assert fmt.name == "anthropic" and transcript.messages[0] == {**transcript.messages[0], "role": "system"}
    assert orjson.loads(fmt.write([transcript])) == orjson.loads(data)
    result = compact(transcript.messages, ["window"], {"keep_recent": 2})
    kept = result.messages
    request = orjson.loads(rewritten(fmt, transcript, kept, result.origins))
    assert request["model"] == "claude-sonnet-4-5" and request["tools"][0]["name"] == "get_order"
    assert request["system"] == "You are a support agent."
    assert [m["role"] for m in request["messages"]] == ["assistant", "user", "assistant"]


def test_unchanged_messages_are_written_back_byte_for_byte():
    data, fmt, transcript = read("anthropic")
    assert fmt.write([transcript]) == data


def test_a_summary_after_the_system_prompt_joins_it_in_a_request():
    fmt, (transcript,) = load(REQUEST.read_bytes())
    summary = {"role": "system", "content": "Summary: Ada Lovelace, order 1234, refund offered."}
    last = len(transcript.messages)
    messages = [transcript.messages[0], summary, *transcript.messages[-2:]]
    request = orjson.loads(rewritten(fmt, transcript, messages, [0, None, last - 2, last - 1]))
    assert request["system"] == "You are a support agent.\n\nSummary: Ada Lovelace, order 1234, refund offered."


def test_a_cleared_thinking_block_is_gone_and_the_rest_written_in_place():
    data, fmt, transcript = read("anthropic")
    result = compact(transcript.messages, ["clear-thinking"], {"keep_thinking_turns": 0})
    out = lines(rewritten(fmt, transcript, result.messages))
    before = lines(data)
    assert before[2]["content"][0]["type"] == "thinking"
    assert out[2]["content"] == before[2]["content"][1:]  # whole block gone, text and tool_use as they were
    for o, b in zip(out, before, strict=True):  # every other record as it was, or without its thinking blocks
        blocks = b.get("content")
        kept = (
            [x for x in blocks if x.get("type") not in ("thinking", "redacted_thinking")]
            if isinstance(blocks, list)
            else blocks
        )
        assert o in (b, {**b, "content": kept})


SYSTEM_MESSAGES = [
    {"system": "You are a helpful agent."},
    {"role": "user", "content": "List the files."},
    {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "ls", "input": {}}]},
    {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "a.py b.py " * 40}]},
    # The SDK's tool runner takes a tool away mid-conversation; the API takes system messages in ``messages``.
    {"role": "system", "content": [{"type": "tool_removal", "tool": {"type": "tool_reference", "tool_name": "ls"}}]},
    {"role": "system", "content": "Answer in one line."},
    {"role": "assistant", "content": [{"type": "text", "text": "Two files: a.py and b.py."}]},
    {"role": "user", "content": "Thanks."},
]


def test_system_messages_in_the_conversation_stay_where_they_were_given():
    data = b"".join(orjson.dumps(value) + b"\n" for value in SYSTEM_MESSAGES)
    fmt, (transcript,) = load(data)
    assert fmt.name == "anthropic"
    assert [m["role"] for m in transcript.messages] == ["system", "user", "assistant", "tool", "system", "system",
                                                         "assistant", "user"]  # fmt: skip
    assert find_violation(transcript.messages, fmt.carried_parts) is None and fmt.violations is not None
    assert fmt.violations(lines(data)) == []
    assert fmt.write([transcript]) == data
    trimmed = [*transcript.messages[:3], {**transcript.messages[3], "content": "[elided]"}, *transcript.messages[4:]]
    written = lines(rewritten(fmt, transcript, trimmed))
    assert written[4:6] == SYSTEM_MESSAGES[4:6] and written[0] == SYSTEM_MESSAGES[0]
    assert written[3]["content"][0]["content"] == "[elided]"


def test_a_request_keeps_its_system_messages_in_its_messages():
    request = {"model": "claude-opus-5", "max_tokens": 1024, "system": "Be brief.", "messages": SYSTEM_MESSAGES[1:]}
    fmt, (transcript,) = load(orjson.dumps(request) + b"\n")
    trimmed = [*transcript.messages[:3], {**transcript.messages[3], "content": "[elided]"}, *transcript.messages[4:]]
    (written,) = lines(rewritten(fmt, transcript, trimmed))
    assert written["system"] == "Be brief."  # the system messages are not folded into the system prompt
    assert written["messages"][3:5] == SYSTEM_MESSAGES[4:6]
    assert fmt.violations is not None and fmt.violations([written]) == []


def test_a_system_message_holds_instructions_not_the_models_blocks():
    fmt, _ = load(b"".join(orjson.dumps(value) + b"\n" for value in SYSTEM_MESSAGES))
    bad = [{"role": "user", "content": "hi"}, {"role": "system", "content": [{"type": "tool_use", "id": "t",
                                                                              "name": "ls", "input": {}}]}]  # fmt: skip
    assert fmt.violations is not None
    (violation,) = fmt.violations(bad)
    assert "block type 'tool_use' is not allowed in a system message" in violation.problem


def test_a_rewritten_turn_keeps_the_advisors_result_after_its_call_and_drops_it_with_its_call():
    """The advice (an ``advisor_tool_result``) is no call of its own: a turn written back changed (a call's input
    masked) keeps it after its ``server_tool_use``, where the API wants it; a turn that lost the call loses it too."""
    from compactctl.formats.anthropic import assistant_blocks, assistant_message
    from compactctl.formats.api_rules import anthropic_violation

    called = {"type": "server_tool_use", "id": "srvtoolu_1", "name": "advisor", "input": {}}
    advice = {"type": "advisor_tool_result", "tool_use_id": "srvtoolu_1",
              "content": {"type": "advisor_result", "text": "Read the notes first."}}  # fmt: skip
    read = {"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {"file_path": "notes.txt"}}
    template = [called, advice, {"type": "text", "text": "Reading."}, read]
    message = assistant_message(template)
    masked = [{**call, "function": {**call["function"], "arguments": "{}"}} for call in message["tool_calls"]]
    blocks = assistant_blocks({**message, "tool_calls": masked}, template)
    assert [b["type"] for b in blocks] == ["server_tool_use", "advisor_tool_result", "text", "tool_use"]
    assert blocks[1] == advice
    answered = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "CSV."}]}
    turns = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": blocks}, answered]
    assert anthropic_violation(turns) is None
    without = [call for call in masked if call["id"] != "srvtoolu_1"]
    blocks = assistant_blocks({**message, "tool_calls": without}, template)
    assert [b["type"] for b in blocks] == ["text", "tool_use"]
