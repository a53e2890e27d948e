"""window and trim-tools: examples, and properties over generated transcripts."""

import copy

from hypothesis import given, settings
from hypothesis import strategies as st

from compactctl.compaction import compact
from compactctl.strategies.trim_tools import TrimOptions, trim_text
from compactctl.tokens import TokenCounter
from compactctl.transcript import is_pinned, is_valid
from tests.helpers import agent_transcripts, call, lost_facts, valid_transcripts
from tests.properties import examples

counter = TokenCounter("approx")


def test_trim_keeps_head_and_tail_lines_and_says_what_it_elided():
    text = "\n".join(f"line {i}" for i in range(100))
    trimmed = trim_text(text, TrimOptions(tool_max_tokens=10, head_lines=2, tail_lines=1), counter)
    elided = "\n".join(f"line {i}" for i in range(2, 99))
    assert trimmed == f"line 0\nline 1\n[... compactctl elided 97 lines ({counter(elided)} tokens) ...]\nline 99"


def test_trim_cuts_one_huge_line_by_characters():
    text = "x" * 10_000
    trimmed = trim_text(text, TrimOptions(tool_max_tokens=100), counter)
    assert trimmed.startswith("x" * 200 + "\n[... compactctl elided 9600 characters (")
    assert trimmed.endswith("\n" + "x" * 200)


def test_short_outputs_and_protected_messages_are_not_trimmed():
    long = "\n".join(["row"] * 3000)
    messages = [
        {"role": "assistant", "content": None, "tool_calls": [call("a", "f"), call("b", "f")]},
        {"role": "tool", "tool_call_id": "a", "content": long, "compactctl": {"pin": True}},
        {"role": "tool", "tool_call_id": "b", "content": [{"type": "text", "text": long, "cache_control": {"x": 1}}]},
    ]
    result = compact(messages, ["trim-tools"], {"tool_max_tokens": 50}, counter=counter)
    assert result.messages[1] is messages[1]
    part = result.messages[2]["content"][0]
    assert part["cache_control"] == {"x": 1} and "compactctl elided" in part["text"]
    assert [e.action for e in result.manifest] == ["kept", "kept", "elided"]


def test_window_keeps_the_latest_copy_of_a_fact_with_its_unit():
    def read(call_id: str, text: str) -> list[dict]:
        return [
            {"role": "assistant", "content": None, "tool_calls": [call(call_id, "f")]},
            {"role": "tool", "tool_call_id": call_id, "content": text, "compactctl": {"facts": ["cmd-1"]}},
        ]

    messages = [
        {"role": "user", "content": "first"},
        *read("a", "order CMD-1 (first read)"),
        *read("b", "order  CMD-1 (second read)"),
        {"role": "user", "content": "middle"},
        {"role": "assistant", "content": "last"},
    ]
    result = compact(messages, ["window"], {"keep_recent": 1}, counter=counter)
    assert [m.get("content") for m in result.messages] == [None, "order  CMD-1 (second read)", "last"]
    assert is_valid(result.messages)
    # When the kept tail holds the fact, no earlier copy is needed.
    messages[-1] = {"role": "assistant", "content": "Done: Cmd-1 shipped."}
    result = compact(messages, ["window"], {"keep_recent": 1, "require": ["Mentioned nowhere"]}, counter=counter)
    assert result.messages == [messages[-1]]


@given(valid_transcripts(), st.sampled_from(["window", "trim-tools"]), st.integers(0, 6), st.integers(1, 12))
def test_steps_keep_api_validity_and_never_mutate_input(messages, step, keep_recent, tool_max_tokens):
    original = copy.deepcopy(messages)
    settings = {"keep_recent": keep_recent, "tool_max_tokens": tool_max_tokens, "head_lines": 1, "tail_lines": 1}
    result = compact(messages, [step], settings, counter=counter)
    assert messages == original
    assert is_valid(result.messages)
    assert len(result.manifest) == len(messages)
    pinned = [m for m in messages if is_pinned(m)]
    assert all(any(m is kept for kept in result.messages) for m in pinned)
    assert result.messages[0]["role"] == "system"


@settings(max_examples=examples(300), deadline=None)
@given(agent_transcripts(), st.integers(0, 6))
def test_window_keeps_one_copy_of_every_fact_and_is_idempotent(messages, keep_recent):
    result = compact(messages, ["window"], {"keep_recent": keep_recent}, counter=counter)
    assert is_valid(result.messages)
    assert lost_facts(messages, result.messages) == []
    assert (
        compact(result.messages, ["window"], {"keep_recent": keep_recent}, counter=counter).messages == result.messages
    )


def test_trim_tools_trims_observations_in_user_messages_too():
    long = "\n".join(f"row {i}" for i in range(400))
    messages = [
        {"role": "user", "content": "run it"},
        {"role": "assistant", "content": "```\ncat log.txt\n```"},
        {"role": "user", "content": long, "compactctl": {"kind": "observation"}},
        {"role": "user", "content": long},  # typed by a person: never trimmed
    ]
    result = compact(messages, ["trim-tools"], {"tool_max_tokens": 50}, counter=counter)
    assert "compactctl elided" in result.messages[2]["content"] and result.messages[3] == messages[3]


def test_trimming_reads_the_elided_lines_count_off_the_outputs_own():
    real = TokenCounter()
    counted: list[str] = []
    recorded = TokenCounter()
    recorded.load()  # the table: else the first count puts the loaded encoder in place of the recorder
    encode = recorded._encode_len
    recorded._encode_len = lambda text: counted.append(text) or encode(text)
    lines = [f"    {n:3}→ let total{n} = add(total{n - 1}, {n});" for n in range(300)]
    text = "\n".join(lines)
    options = TrimOptions(tool_max_tokens=100, head_lines=3, tail_lines=2)
    trimmed = trim_text(text, options, recorded)
    elided = "\n".join(lines[3:-2])
    marker = f"[... compactctl elided 295 lines ({real(elided)} tokens) ...]"
    assert trimmed == "\n".join([*lines[:3], marker, *lines[-2:]])
    assert elided not in counted and max(map(len, counted[1:])) < len(text) // 10  # the whole once, then pieces
