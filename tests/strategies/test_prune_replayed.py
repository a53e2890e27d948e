"""prune as replay runs it: on a history that grows, compaction outputs fed back, inside one memo.

Inside ``message_memo.remembering()`` (one replay) each message's row is worked out once and kept
by the message's identity; these properties say that whatever a replay kept from earlier
compactions, the columns are those of a transcript worked out afresh, and so is the output.
"""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from compactctl.facts import FactMatcher, declared_facts
from compactctl.message_memo import remembering
from compactctl.strategies.prune import PruneOptions, prune_plan
from compactctl.strategies.prune_columns import KeyMemo, Transcript
from tests.helpers import agent_transcripts, call
from tests.properties import examples

PROPERTY = settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.too_slow])
CHUNK = "a retrieved section of the manual, long enough to be worth a stub of its own"


def _columns(t: Transcript) -> dict[str, Any]:
    """Every column, and the facts each message's fact text holds (partly an earlier transcript's)."""
    columns = {name: value for name, value in vars(t).items() if name not in ("walk", "facts", "memo", "holding")}
    del columns["holding_from"]
    return {**columns, "holding": t._holding()}


def _plan(messages: list[dict[str, Any]], options: PruneOptions) -> tuple[Any, ...]:
    plan = prune_plan(lambda: messages, options)
    return plan.applied(messages), list(plan.origins), plan.stubs, plan.calls, plan.fates


@st.composite
def growths(draw: st.DrawFn) -> list[tuple[str, Any]]:
    """How a history grows between compactions: new turns, copies of earlier messages (new objects
    equal to old ones), a retrieved chunk again, and whether the compaction's output is fed back."""
    steps: list[tuple[str, Any]] = []
    for _ in range(draw(st.integers(1, 6))):
        kind = draw(st.sampled_from(["turns", "turns", "copies", "chunk"]))
        if kind == "turns":
            steps.append((kind, draw(agent_transcripts())[1:]))
        elif kind == "copies":
            steps.append((kind, draw(st.integers(1, 4))))
        else:
            steps.append((kind, draw(st.sampled_from([None, "retrieval", "observation"]))))
        steps.append(("fed back", draw(st.booleans())))
    return steps


def _grown(history: list[dict[str, Any]], kind: str, value: Any, call_ids: list[int]) -> list[dict[str, Any]]:
    if kind in ("turns", "copies"):  # fresh call ids, so a result answers the call beside it
        turns = copy.deepcopy(value if kind == "turns" else history[-value:])
        for message in turns:
            for c in message.get("tool_calls") or ():
                c["id"] = f"{c['id']}-{len(call_ids)}"
            if isinstance(message.get("tool_call_id"), str):
                message["tool_call_id"] = f"{message['tool_call_id']}-{len(call_ids)}"
        call_ids.append(0)
        return history + turns
    call_id = f"q{len(call_ids)}"
    call_ids.append(0)
    if value is None:  # a chunk fetched by a call of its own
        return [
            *history,
            {"role": "assistant", "content": None, "tool_calls": [call(call_id, "search", f'{{"q": "{call_id}"}}')]},
            {"role": "tool", "tool_call_id": call_id, "content": CHUNK.upper() if len(call_ids) % 2 else CHUNK},
        ]
    return [*history, {"role": "user", "content": CHUNK, "compactctl": {"kind": value}}]


@PROPERTY
@given(agent_transcripts(), growths(), st.sampled_from(["stub", "drop"]))
def test_a_replayed_prune_is_a_fresh_prune_at_every_compaction(start, steps, mode):
    options = PruneOptions(mode=mode)
    history, call_ids = start, list[int]()
    with remembering():
        for kind, value in steps:
            if kind != "fed back":
                history = _grown(history, kind, value, call_ids)
                continue
            matcher = FactMatcher(declared_facts(history))
            kept = Transcript(history, lambda h=history: h, matcher, KeyMemo({}), mode == "stub")
            with_memo = _plan(history, options)
            # Outside the memo: every row worked out again, from copies nothing was kept for.
            copies = copy.deepcopy(history)
            fresh_rows = _columns(Transcript(copies, lambda c=copies: c, matcher, KeyMemo({}), mode == "stub"))
            assert _columns(kept) == fresh_rows
            assert with_memo == _plan(copies, options)
            output = with_memo[0]
            assert _plan(output, options)[0] == output  # still idempotent inside the memo
            if value:  # the compaction's output is what the history grows from
                history = output


def test_a_row_follows_its_message_not_its_position():
    """The same message object in another place (after another assistant) gets its own owner and key."""
    result = {"role": "tool", "tool_call_id": "c1", "content": CHUNK}
    first = [{"role": "assistant", "content": None, "tool_calls": [call("c1", "read", '{"p": 1}')]}, result]
    second = [{"role": "assistant", "content": None, "tool_calls": [call("c1", "grep", '{"p": 1}')]}, result]
    with remembering():
        a = Transcript(first, lambda: first, FactMatcher([]), KeyMemo({}), True)
        b = Transcript(second, lambda: second, FactMatcher([]), KeyMemo({}), True)
        orphan = Transcript([result], lambda: [result], FactMatcher([]), KeyMemo({}), True)
    assert a.keys[1] != b.keys[1] and a.keys[1] is not None and a.owner[1] == b.owner[1] == 0
    assert orphan.keys == [None] and list(orphan.owner) == [-1]


def test_a_second_result_of_a_dropped_call_is_walked_not_a_crash():
    """Two results answer one call; the first is superseded by the second and goes with its call:
    the second's owner is gone, so the round's output is walked again (a KeyError before)."""
    from compactctl.strategies.prune import prune

    reading = {"role": "assistant", "content": None, "tool_calls": [call("c1", "read", '{"p": 1}')]}
    result = {"role": "tool", "tool_call_id": "c1", "content": "", "compactctl": {"key": "k1"}}
    messages = [{"role": "user", "content": "go"}, reading, result, dict(result)]
    assert prune(messages, PruneOptions(mode="drop"), None).messages == [messages[0], messages[3]]  # type: ignore[arg-type]
