"""prune's two walks: a prune on its own fills the columns straight from the messages
(``walked_columns``), a replay builds a row per message and keeps it (``remembered_columns``).
Whatever the messages, odd shapes included, both give the same columns, and so the same prune."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from compactctl.message_memo import remembering
from compactctl.strategies.prune import PruneOptions, prune_plan
from compactctl.strategies.prune_rows import remembered_columns, walked_columns
from tests.helpers import TEXTS, agent_transcripts, call
from tests.properties import examples

PROPERTY = settings(max_examples=examples(400), deadline=None, suppress_health_check=[HealthCheck.too_slow])

ODD_NOTES = st.sampled_from([None, {}, "not an object"])
NOTES = st.fixed_dictionaries(
    {},
    optional={
        "key": st.one_of(st.sampled_from(["k1", "k2"]), st.just({"b": 1, "a": [2]}), st.none()),
        "kind": st.sampled_from(["retrieval", "observation", "other"]),
        "pin": st.one_of(st.just(True), st.just(1)),
        "defines": st.one_of(st.sampled_from(["k1", "k2"]), st.lists(st.sampled_from(["k1", {"x": 1}]))),
        "references": st.one_of(st.just("k1"), st.lists(st.sampled_from(["k1", "k2"]), max_size=2)),
        "facts": st.one_of(st.just("alpha"), st.lists(st.sampled_from(["beta", "fox", 3]), max_size=2)),
    },
)
CONTENTS = st.one_of(
    st.sampled_from(TEXTS),
    st.none(),
    st.just([]),
    st.just(0),
    st.just({"text": "an object"}),
    st.lists(
        st.one_of(
            st.builds(lambda t: {"type": "text", "text": t}, st.sampled_from(TEXTS)),
            st.just({"type": "thinking", "thinking": "hmm", "signature": "s"}),
            st.just("not a part"),
        ),
        max_size=3,
    ),
)
CALLS = st.one_of(
    st.lists(
        st.one_of(
            st.builds(call, st.sampled_from(["c1", "c2", "c3"]), st.sampled_from(["read", "grep"]),
                      st.sampled_from(['{"p": 1}', '{"p":1}', "raw args", "[1, {\"b\": 2, \"a\": 1}]"])),
            st.just({"id": 7, "function": {"name": "read"}}),
            st.just({"id": "c1", "function": "not an object"}),
            st.just("not a call"),
        ),
        min_size=1,
        max_size=3,
    ),
    st.sampled_from([[], "not a list"]),
)  # fmt: skip


@st.composite
def odd_messages(draw: st.DrawFn) -> dict[str, Any]:
    role = draw(st.sampled_from(["system", "user", "assistant", "assistant", "tool", "tool", None]))
    message: dict[str, Any] = {"content": draw(CONTENTS)}
    if role is not None:
        message["role"] = role
    if role == "assistant" and draw(st.integers(0, 3)):
        message["tool_calls"] = draw(CALLS)
    if role == "tool":
        message["tool_call_id"] = draw(st.one_of(st.sampled_from(["c1", "c2", "c3", "none"]), st.just(5)))
    note = draw(st.one_of(ODD_NOTES, NOTES, NOTES, NOTES))
    if note is not None:
        message["compactctl"] = note
    return message


def _both(messages: list[dict[str, Any]]) -> tuple[Any, Any]:
    walked = walked_columns(iter(messages), {})
    with remembering():
        remembered = remembered_columns(messages, None, 0, {})
    return walked, remembered


# Shapes too rare among the drawn ones to be met every run: an assistant that is a chunk once its
# calls go, one call id twice (the first position answers), a keyed assistant whose calls list is empty.
RARE = [
    {"role": "assistant", "content": None, "tool_calls": [call("c1", "read")], "compactctl": {"kind": "retrieval"}},
    {"role": "assistant", "content": "", "tool_calls": [call("c1", "read"), call("c1", "grep")]},
    {"role": "tool", "tool_call_id": "c1", "content": TEXTS[0], "compactctl": {"facts": ["alpha"]}},
    {"role": "assistant", "content": TEXTS[2], "tool_calls": [], "compactctl": {"key": "k1", "kind": "retrieval"}},
    {"role": "tool", "tool_call_id": "c1", "content": [{"type": "text", "text": TEXTS[5]}]},
]


@PROPERTY
@given(st.lists(odd_messages(), max_size=14))
@example(RARE)
def test_the_walk_and_the_rows_give_the_same_columns(messages):
    walked, remembered = _both(messages)
    assert walked == remembered
    assert [type(column) for column in walked] == [type(column) for column in remembered]


@PROPERTY
@given(agent_transcripts(), st.sampled_from(["stub", "drop"]))
def test_a_prune_on_its_own_is_the_prune_a_replay_makes(messages, mode):
    """The whole plan, every round, walked or from rows: the same messages, origins, stubs and fates."""
    options = PruneOptions(mode=mode)

    def planned() -> tuple[Any, ...]:
        plan = prune_plan(lambda: messages, options)
        return plan.applied(messages), list(plan.origins), plan.stubs, plan.calls, plan.fates

    alone = planned()
    with remembering():
        assert planned() == alone
