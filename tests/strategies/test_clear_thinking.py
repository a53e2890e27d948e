"""clear-thinking: reasoning blocks stay in the last N assistant turns and in a tool loop in progress."""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from compactctl.compaction import compact
from compactctl.tokens import TokenCounter
from compactctl.transcript import is_thinking, is_valid
from tests.helpers import call
from tests.properties import examples

counter = TokenCounter("approx")


def thinking(n: int) -> dict[str, Any]:
    return {"type": "thinking", "thinking": f"Let me think about step {n}. " * 20, "signature": f"sig{n}=="}


def turn(n: int, tools: bool = False) -> list[dict[str, Any]]:
    parts = [thinking(n), {"type": "text", "text": f"Step {n}."}]
    assistant: dict[str, Any] = {"role": "assistant", "content": parts}
    if tools:
        assistant["tool_calls"] = [call(f"c{n}", "bash", '{"cmd": "ls"}')]
        return [assistant, {"role": "tool", "tool_call_id": f"c{n}", "content": "a.py"}]
    return [{"role": "user", "content": f"question {n}"}, assistant]


def clear(messages: list[dict[str, Any]], **options: Any):
    return compact(messages, ["clear-thinking"], options, counter=counter)


def test_thinking_leaves_all_but_the_last_turn_whole_blocks_only():
    messages = [*turn(0), *turn(1), *turn(2)]
    original = copy.deepcopy(messages)
    result = clear(messages)
    assert messages == original
    assert result.messages[1]["content"] == [{"type": "text", "text": "Step 0."}]
    assert result.messages[5] == messages[5]  # the last turn keeps its block, signature and all
    assert [(e.index, e.action) for e in result.manifest if e.action != "kept"] == [(1, "elided"), (3, "elided")]
    assert counter.messages(result.messages) < counter.messages(messages)  # thinking is counted
    assert clear(result.messages).messages == result.messages
    assert clear(messages, keep_thinking_turns=0).messages[5]["content"] == [{"type": "text", "text": "Step 2."}]


def test_a_tool_loop_in_progress_keeps_the_thinking_of_its_whole_turn():
    messages = [*turn(0), {"role": "user", "content": "fix it"}, *turn(1, tools=True), *turn(2, tools=True)]
    result = clear(messages, keep_thinking_turns=0)
    assert result.messages[1]["content"] == [{"type": "text", "text": "Step 0."}]
    assert result.messages[3] == messages[3] and result.messages[5] == messages[5]
    # Once the loop is over (the model answered in text), its thinking may go.
    done = [*messages, {"role": "assistant", "content": "Done."}]
    assert not any(is_thinking(p) for m in clear(done, keep_thinking_turns=0).messages for p in m["content"] or [])


def test_redacted_thinking_and_reasoning_items_are_blocks_too_and_a_message_never_empties():
    redacted = {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix"}
    reasoning = {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "gAAAA"}
    messages = [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": [redacted, {"type": "text", "text": "a"}]},
        {"role": "user", "content": "and?"},
        {"role": "assistant", "content": [reasoning]},  # nothing else to say: left as it is
        {"role": "user", "content": "ok"},
        {"role": "assistant", "content": [thinking(3), {"type": "text", "text": "b"}]},
    ]
    result = clear(messages)
    assert result.messages[1]["content"] == [{"type": "text", "text": "a"}]
    assert result.messages[3] == messages[3] and result.messages[5] == messages[5]
    assert is_valid(result.messages)


@st.composite
def thinking_transcripts(draw: st.DrawFn) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = [{"role": "system", "content": "sys"}]
    for n in range(draw(st.integers(0, 10))):
        kind = draw(st.sampled_from(["user", "assistant", "tools"]))
        if kind == "user":
            messages.append({"role": "user", "content": f"q{n}"})
            continue
        parts = [thinking(n)] * draw(st.integers(0, 2))
        parts += [{"type": "text", "text": f"t{n}"}] * draw(st.integers(0 if kind == "tools" else 1, 1))
        assistant: dict[str, Any] = {"role": "assistant", "content": parts}
        if kind == "tools":
            assistant["tool_calls"] = [call(f"c{n}", "f")]
        messages.append(assistant)
        if kind == "tools" and draw(st.integers(0, 5)):
            messages.append({"role": "tool", "tool_call_id": f"c{n}", "content": "r"})
        elif kind == "tools":
            break  # a pending call ends the transcript
    return messages


@settings(max_examples=examples(300), deadline=None)
@given(thinking_transcripts(), st.integers(0, 3))
def test_clearing_is_valid_idempotent_and_keeps_the_turn_in_progress(messages, keep):
    original = copy.deepcopy(messages)
    result = clear(messages, keep_thinking_turns=keep)
    assert messages == original
    assert clear(result.messages, keep_thinking_turns=keep).messages == result.messages
    assert is_valid(result.messages) == is_valid(messages)
    from compactctl.strategies.clear_thinking import turn_in_progress

    for i in turn_in_progress(messages):
        assert result.messages[i] == messages[i]
    for before, after in zip(messages, result.messages, strict=True):
        kept = [p for p in after.get("content") or [] if is_thinking(p)]
        assert kept in ([], [p for p in before.get("content") or [] if is_thinking(p)])  # whole blocks
