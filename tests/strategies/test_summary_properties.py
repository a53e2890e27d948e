"""Invariants of the summarizing strategies over generated transcripts (offline extractive summarizer)."""

from __future__ import annotations

import json

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from compactctl.compaction import compact
from compactctl.transcript import is_pinned, is_valid
from tests.conftest import unchanged
from tests.helpers import call, lost_facts
from tests.properties import examples

WORDS = st.sampled_from(
    [
        "fix",
        "src/app.py",
        "never",
        "do not",
        "must",
        "pytest -q",
        "42 ms",
        "ORD-1234",
        "Error: boom",
        "ok",
        "il faut",
        "the",
    ]
)
TEXT = st.lists(WORDS, min_size=1, max_size=40).map(" ".join)


@st.composite
def transcripts(draw) -> list[dict]:
    messages: list[dict] = []
    if draw(st.booleans()):
        messages.append({"role": "system", "content": draw(TEXT)})
    for n in range(draw(st.integers(1, 14))):
        kind = draw(st.sampled_from(["user", "assistant", "tools"]))
        annotation = draw(
            st.sampled_from([None, {"pin": True}, {"facts": ["ok"]}, {"facts": ["ORD-1234  Error:"]}, None, None])
        )
        if kind == "tools":
            ids = [f"c{n}_{k}" for k in range(draw(st.integers(1, 3)))]
            messages.append(
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [call(i, "bash", json.dumps({"cmd": "ls"})) for i in ids],
                }
            )
            for i in ids:
                messages.append(
                    {
                        "role": "tool",
                        "tool_call_id": i,
                        "content": draw(TEXT) + "\n```\ncode\n```" * draw(st.booleans()),
                    }
                )
        else:
            messages.append({"role": kind, "content": draw(TEXT)})
        if annotation:
            messages[-1] = {**messages[-1], "compactctl": annotation}
    return messages


SETTINGS = st.fixed_dictionaries(
    {
        "threshold": st.integers(0, 400),
        "keep_recent": st.integers(0, 6),
        "keep_turns": st.integers(0, 3),
        "window": st.integers(0, 6),
        "summary_max_tokens": st.integers(40, 300),
        "summary_input_max_tokens": st.integers(1100, 4000),
        "tool_max_tokens": st.integers(5, 200),
    }
)


# Found by hypothesis: structured trimmed the only copy of a fact (spelled with other spacing
# than in the tool output holding it) before looking for the copy to keep.
FACT_ONLY_IN_A_LONG_TOOL_OUTPUT = [
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"id": "c0_0", "type": "function", "function": {"name": "bash", "arguments": '{"cmd": "ls"}'}}],
    },
    {
        "role": "tool",
        "tool_call_id": "c0_0",
        "content": "fix fix fix fix src/app.py ORD-1234 ORD-1234 Error: boom\n```\ncode\n```",
    },
    {"role": "user", "content": "fix"},
    {"role": "user", "content": "fix", "compactctl": {"facts": ["ORD-1234  Error:"]}},
]
TIGHT = {
    "threshold": 0, "keep_recent": 0, "keep_turns": 0, "window": 0,
    "summary_max_tokens": 40, "summary_input_max_tokens": 1100, "tool_max_tokens": 5,
}  # fmt: skip


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(transcripts(), SETTINGS, st.sampled_from(["summary", "rolling", "selective", "structured"]))
@example(FACT_ONLY_IN_A_LONG_TOOL_OUTPUT, TIGHT, "structured")
def test_output_is_valid_pinned_and_facts_kept_input_untouched(messages, options, name):
    original = unchanged(messages)
    result = compact(messages, [name], options)
    assert messages == original
    assert is_valid(result.messages)
    for message in messages:
        if is_pinned(message) or message.get("role") in ("system", "developer"):
            assert message in result.messages
    # Every fact the input holds keeps a copy (one suffices), case and whitespace folded.
    # A fact is held by a message: text that only runs across two messages holds none.
    assert lost_facts(messages, result.messages) == []
    actions = {entry.action for entry in result.manifest}
    assert actions <= {"kept", "summarized", "elided"}
    summaries = [m for m in result.messages if str(m.get("content", "")).startswith("[compactctl summary")]
    assert len(summaries) <= 1
    assert ("summarized" in actions) == bool(summaries)


@settings(max_examples=examples(30), deadline=None)
@given(transcripts(), SETTINGS)
def test_compacting_twice_still_valid(messages, options):
    once = compact(messages, ["structured"], options).messages
    twice = compact(once, ["structured"], options).messages
    assert is_valid(twice)
