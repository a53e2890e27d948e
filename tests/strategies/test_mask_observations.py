"""mask-observations: old tool results become a one-line placeholder naming the call."""

from __future__ import annotations

import copy
import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from compactctl.compaction import compact
from compactctl.strategies.mask_observations import is_placeholder
from compactctl.tokens import TokenCounter
from compactctl.transcript import is_pinned, is_valid
from tests.helpers import agent_transcripts, call, lost_facts
from tests.properties import examples

counter = TokenCounter("approx")


def reads(count: int, lines: int = 30, **note: Any) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = [{"role": "user", "content": "go"}]
    for n in range(count):
        arguments = json.dumps({"path": f"src/m{n}.py"})
        messages.append({"role": "assistant", "content": None, "tool_calls": [call(f"c{n}", "read_file", arguments)]})
        result: dict[str, Any] = {
            "role": "tool",
            "tool_call_id": f"c{n}",
            "content": "\n".join(f"line {j} of module {n}" for j in range(lines)),
        }
        if note:
            result["compactctl"] = note
        messages.append(result)
    return messages


def mask(messages: list[dict[str, Any]], **options: Any):
    return compact(messages, ["mask-observations"], options, counter=counter)


def test_results_older_than_the_last_three_tool_uses_become_placeholders():
    messages = reads(5)
    original = copy.deepcopy(messages)
    result = mask(messages)
    assert messages == original
    tokens = counter("\n".join(f"line {j} of module 0" for j in range(30)))
    assert result.messages[2]["content"] == f"[compactctl: masked read_file(src/m0.py): 30 lines, {tokens} tokens cut]"
    assert [is_placeholder(str(m.get("content"))) for m in result.messages[2::2]] == [True, True, False, False, False]
    assert [(e.index, e.action) for e in result.manifest if e.action != "kept"] == [(2, "elided"), (4, "elided")]
    assert is_valid(result.messages)
    assert mask(result.messages).messages == result.messages


def test_keep_turns_counts_assistant_turns_not_calls():
    messages = reads(2)
    two = {"role": "assistant", "content": None, "tool_calls": [call("x", "grep", '{"q": "a"}'), call("y", "ls")]}
    messages += [two, *({"role": "tool", "tool_call_id": i, "content": "hit\n" * 40} for i in ("x", "y"))]
    result = mask(messages, mask_keep_turns=1)
    assert [is_placeholder(str(m["content"])) for m in result.messages if m["role"] == "tool"] == [
        True,
        True,
        False,
        False,
    ]
    assert mask(messages, keep_tool_uses=1).messages[6]["content"].startswith("[compactctl: masked grep(a)")


def test_never_masked_tools_pinned_results_and_short_results_stay():
    messages = reads(5)
    messages[4]["compactctl"] = {"pin": True}
    messages[5]["tool_calls"][0]["function"]["name"] = "todo"
    messages[6]["content"] = messages[6]["content"]  # todo's own output
    messages += [{"role": "assistant", "content": None, "tool_calls": [call("s", "ls")]}]
    messages += [{"role": "tool", "tool_call_id": "s", "content": "a"}]  # a placeholder would be longer
    result = mask(messages, never_mask=["todo"], keep_tool_uses=0)
    assert [is_placeholder(str(m["content"])) for m in result.messages if m["role"] == "tool"] == [
        True,
        False,
        False,
        True,
        True,
        False,
    ]


def test_mask_inputs_replaces_the_masked_calls_arguments_with_a_shorter_json():
    messages = reads(4)
    long = json.dumps({"path": "src/very/long/path/to/a/module/somewhere.py", "start": 1, "end": 400})
    messages[1]["tool_calls"][0]["function"]["arguments"] = long
    result = mask(messages, mask_inputs=True)
    arguments = result.messages[1]["tool_calls"][0]["function"]["arguments"]
    assert json.loads(arguments) == {"compactctl_masked_input": f"{len(long)} characters"}
    assert "src/very/long/path" in result.messages[2]["content"]  # the placeholder still names the call
    assert result.messages[3] == messages[3]  # a masked input is never longer than the input
    assert mask(result.messages, mask_inputs=True).messages == result.messages
    assert is_valid(result.messages)


def test_under_the_minimum_to_clear_nothing_is_masked():
    messages = reads(5)
    result = mask(messages, mask_min_tokens=100_000)
    assert result.messages == messages
    assert result.notes and "under --mask-min-tokens 100,000" in result.notes[0]
    assert mask(messages, mask_min_tokens=10).messages != messages


def test_a_fact_keeps_its_latest_copy_unless_the_output_holds_it_elsewhere():
    messages = reads(6, facts=["LINE 7  of module"])
    result = mask(messages)
    # Every read holds the fact; the last three stay, so no old copy is needed.
    assert sum(is_placeholder(str(m["content"])) for m in result.messages) == 3
    messages = reads(6)
    messages[4]["content"] += "\nTIMEOUT = 30 (ticket TKT-9)"
    messages[6]["content"] += "\nTIMEOUT = 30 (ticket tkt-9)"
    messages[1]["compactctl"] = {"facts": ["ticket TKT-9"]}
    result = mask(messages)
    assert [is_placeholder(str(m["content"])) for m in result.messages[2::2]] == [
        True,
        True,
        False,
        False,
        False,
        False,
    ]
    assert mask(result.messages).messages == result.messages


def test_observations_in_user_messages_are_masked_and_named_by_the_action():
    messages = [{"role": "system", "content": "You are an agent."}, {"role": "user", "content": "fix it"}]
    for n in range(5):
        messages.append({"role": "assistant", "content": f"Let me look.\n```\nopen src/f{n}.py\n```"})
        messages.append(
            {"role": "user", "content": f"[File: src/f{n}.py]\n" + "code\n" * 50, "compactctl": {"kind": "observation"}}
        )
    result = mask(messages)
    assert result.messages[3]["content"].startswith("[compactctl: masked open(src/f0.py): 51 lines")
    assert result.messages[1] == messages[1]  # a typed prompt is never an observation
    assert sum(is_placeholder(m["content"]) for m in result.messages) == 2


PROPERTY = settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.too_slow])
OPTIONS = st.fixed_dictionaries(
    {
        "keep_tool_uses": st.integers(0, 4),
        "mask_keep_turns": st.integers(0, 2),
        "mask_inputs": st.booleans(),
        "mask_min_tokens": st.sampled_from([0, 0, 5, 50]),
        "never_mask": st.sampled_from([[], ["grep"]]),
    }
)


@PROPERTY
@given(agent_transcripts(), OPTIONS)
def test_masking_is_valid_idempotent_deterministic_and_keeps_facts(messages, options):
    original = copy.deepcopy(messages)
    result = mask(messages, **options)
    assert messages == original, "input mutated"
    assert mask(copy.deepcopy(messages), **options).messages == result.messages, "not deterministic"
    assert mask(result.messages, **options).messages == result.messages, "not idempotent"
    assert is_valid(result.messages)
    assert len(result.messages) == len(messages)
    assert lost_facts(messages, result.messages) == []
    for message, out in zip(messages, result.messages, strict=True):
        if is_pinned(message):
            assert out == message
        assert out.get("role") == message.get("role")
