"""The prune step: each pass, each mode, restoration, protection, and its invariants."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import compactctl
from compactctl.compaction import compact
from compactctl.errors import InputError
from compactctl.strategies.prune_rows import is_stub
from compactctl.transcript import is_observation, is_pinned, is_valid, message_text
from tests.conftest import unchanged
from tests.helpers import agent_transcripts as transcripts
from tests.helpers import call, lost_facts
from tests.properties import examples

LONG = "line of a long tool output that is well worth pruning\n" * 4


def read(call_id: str, path: str, content: str, **note: Any) -> list[dict[str, Any]]:
    """An assistant reading a file and the tool result."""
    result: dict[str, Any] = {"role": "tool", "tool_call_id": call_id, "content": content}
    if note:
        result["compactctl"] = note
    return [
        {"role": "assistant", "content": None, "tool_calls": [call(call_id, "read_file", f'{{"path": "{path}"}}')]},
        result,
    ]


def test_expired_tool_result_becomes_a_stub_naming_the_latest(agent_messages):
    messages = [
        {"role": "user", "content": "look at a.py"},
        *read("c1", "a.py", "old " + LONG),
        *read("c2", "a.py", "middle " + LONG),
        *read("c3", "a.py", "new " + LONG),
    ]
    messages[2]["id"] = "msg-2"
    original = unchanged(messages)
    result = compactctl.prune(messages)
    assert messages == original
    assert result.messages[2] == {
        "role": "tool",
        "tool_call_id": "c1",
        "content": "[compactctl: superseded by message #6]",
        "id": "msg-2",
    }
    assert result.messages[4]["content"] == "[compactctl: superseded by message #6]"
    assert result.messages[6] == messages[6]
    assert {i: (f.action, f.reason) for i, f in result.fates.items()} == {
        2: ("elided", "superseded by #6"),
        4: ("elided", "superseded by #6"),
    }
    assert is_valid(result.messages)


def test_key_is_tool_name_plus_canonical_arguments():
    messages = [
        {"role": "assistant", "content": None, "tool_calls": [call("c1", "search", '{"q": "x", "n": 3}')]},
        {"role": "tool", "tool_call_id": "c1", "content": "first " + LONG},
        {"role": "assistant", "content": None, "tool_calls": [call("c2", "search", '{"n":3,"q":"x"}')]},
        {"role": "tool", "tool_call_id": "c2", "content": "second " + LONG},
        {"role": "assistant", "content": None, "tool_calls": [call("c3", "lookup", '{"n":3,"q":"x"}')]},
        {"role": "tool", "tool_call_id": "c3", "content": "third " + LONG},
        {"role": "assistant", "content": None, "tool_calls": [call("c4", "lookup", "not json {")]},
        {"role": "tool", "tool_call_id": "c4", "content": "fourth " + LONG},
        {"role": "assistant", "content": None, "tool_calls": [call("c5", "lookup", "not json {")]},
        {"role": "tool", "tool_call_id": "c5", "content": "fifth " + LONG},
    ]
    fates = compactctl.prune(messages).fates
    # Same arguments in another order: the same key. Another tool name: another key.
    assert {i: f.reason for i, f in fates.items()} == {1: "superseded by #3", 7: "superseded by #9"}


def test_annotated_key_supersedes_non_tool_messages():
    messages = [
        {"role": "user", "content": "Status: the build is red on main, see the logs.", "compactctl": {"key": "status"}},
        {"role": "assistant", "content": "Noted."},
        {"role": "user", "content": "Status: the build is green again.", "compactctl": {"key": "status"}},
    ]
    result = compactctl.prune(messages)
    assert result.messages[0]["content"] == "[compactctl: superseded by message #2]"
    assert result.messages[0]["compactctl"] == {"key": "status"}
    dropped = compactctl.prune(messages, mode="drop")
    assert dropped.messages == messages[1:]
    assert dropped.origins == [1, 2]


def test_duplicates_fold_case_and_whitespace_and_cover_retrievals():
    chunk = "The refund policy allows returns within 30 days of purchase for unused items."
    messages = [
        {"role": "user", "content": chunk, "compactctl": {"kind": "retrieval"}},
        {"role": "user", "content": "Thanks, and what about shipping?"},
        {
            "role": "user",
            "content": "  the REFUND policy allows returns\nwithin 30 days of purchase for unused items. ",
            "compactctl": {"kind": "retrieval"},
        },
        {"role": "user", "content": chunk},  # not a retrieval and not a tool result: never a duplicate
        *read("c1", "notes.txt", LONG),
        *read("c2", "other.txt", LONG.upper()),
    ]
    result = compactctl.prune(messages)
    assert {i: f.reason for i, f in result.fates.items()} == {2: "duplicate of #0", 7: "duplicate of #5"}
    assert result.messages[2]["content"] == "[compactctl: duplicate of message #0]"
    assert result.messages[3] == messages[3]


def test_drop_mode_removes_the_call_with_its_result():
    messages = [
        {"role": "user", "content": "check"},
        {
            "role": "assistant",
            "content": "Reading both.",
            "tool_calls": [call("c1", "read_file", '{"path": "a"}'), call("c2", "read_file", '{"path": "b"}')],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "a1 " + LONG},
        {"role": "tool", "tool_call_id": "c2", "content": "b1 " + LONG},
        *read("c3", "a", "a2 " + LONG),
        {"role": "assistant", "content": "", "tool_calls": [call("c4", "read_file", '{"path": "d"}')]},
        {"role": "tool", "tool_call_id": "c4", "content": "d1 " + LONG},
        *read("c5", "d", "d2 " + LONG),
    ]
    original = unchanged(messages)
    result = compactctl.prune(messages, mode="drop")
    assert messages == original
    assert result.origins == [0, 1, 3, 4, 5, 8, 9]
    # The first assistant keeps its other call; its superseded call went with its result.
    assert result.messages[1]["tool_calls"] == [messages[1]["tool_calls"][1]]
    assert result.fates[1].action == "elided"
    assert result.fates[6] == compactctl.Fate("removed", "no content and no calls left")
    assert result.fates[7] == compactctl.Fate("removed", "superseded by #9")
    assert result.fates[2] == compactctl.Fate("removed", "superseded by #5")
    assert is_valid(result.messages)


def test_drop_mode_superseded_call_and_result_leave_together():
    messages = [{"role": "user", "content": "go"}, *read("c1", "a", "v1 " + LONG), *read("c2", "a", "v2 " + LONG)]
    result = compactctl.prune(messages, mode="drop")
    assert result.messages == [messages[0], *messages[3:]]
    assert {i: f.action for i, f in result.fates.items()} == {1: "removed", 2: "removed"}


def test_an_assistant_with_content_keeps_it_when_all_its_calls_go():
    messages = [
        {
            "role": "assistant",
            "content": "Let me look.",
            "tool_calls": [call("c1", "read_file", '{"path": "a"}')],
            "id": "m1",
        },
        {"role": "tool", "tool_call_id": "c1", "content": "v1 " + LONG},
        *read("c2", "a", "v2 " + LONG),
    ]
    result = compactctl.prune(messages, mode="drop")
    assert result.messages[0] == {"role": "assistant", "content": "Let me look.", "id": "m1"}
    assert list(result.messages[0]) == ["role", "content", "id"]
    assert is_valid(result.messages)


@pytest.mark.parametrize("mode", ["stub", "drop"])
def test_restoration_follows_a_chain_of_references(mode):
    messages = [
        {"role": "user", "content": "Investigate."},
        *read("c1", "config.toml", "port = 8080\n" + LONG, defines=["port"]),
        *read("c2", "server.py", "listen(config.port)\n" + LONG, defines=["server"], references=["port"]),
        {
            "role": "assistant",
            "content": "The server listens on the configured port.",
            "compactctl": {"references": ["server"]},
        },
        *read("c3", "config.toml", "port = 9090\n" + LONG),
        *read("c4", "server.py", "listen(config.port) # changed\n" + LONG),
    ]
    original = unchanged(messages)
    result = compactctl.prune(messages, mode=mode)
    assert messages == original
    assert result.fates[4] == compactctl.Fate("restored", "referenced by #5")
    assert result.fates[2] == compactctl.Fate("restored", "referenced by #4")
    kept = [result.origins.index(i) for i in (1, 2, 3, 4)]
    assert [result.messages[k] for k in kept] == messages[1:5]
    assert is_valid(result.messages)


def test_a_reference_already_satisfied_restores_nothing():
    messages = [
        *read("c1", "a", "v1 " + LONG, defines=["a"]),
        *read("c2", "b", "b " + LONG, defines=["a"]),
        {"role": "assistant", "content": "as a says", "compactctl": {"references": ["a"]}},
        *read("c3", "a", "v2 " + LONG),
    ]
    fates = compactctl.prune(messages).fates
    assert fates == {1: compactctl.Fate("elided", "superseded by #6")}


def test_drop_mode_restoring_a_result_restores_its_call():
    messages = [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": None, "tool_calls": [call("c1", "get_user", '{"id": 7}'), call("c2", "ping")]},
        {
            "role": "tool",
            "tool_call_id": "c1",
            "content": "user 7: Ada Lovelace, gold member\n" + LONG,
            "compactctl": {"defines": ["user7"]},
        },
        {"role": "tool", "tool_call_id": "c2", "content": "pong " + LONG},
        {"role": "assistant", "content": "Ada is a gold member.", "compactctl": {"references": ["user7"]}},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [call("c3", "get_user", '{"id":7}'), call("c4", "ping", "{}")],
        },
        {"role": "tool", "tool_call_id": "c3", "content": "user 7: Ada Lovelace, platinum member\n" + LONG},
        {"role": "tool", "tool_call_id": "c4", "content": "pong " + LONG},
    ]
    result = compactctl.prune(messages, mode="drop")
    assert result.fates[2] == compactctl.Fate("restored", "referenced by #4")
    assert result.fates[3].action == "removed"
    assert result.origins == [0, 1, 2, 4, 5, 6, 7]
    assert result.messages[1]["tool_calls"] == [messages[1]["tool_calls"][0]]
    assert is_valid(result.messages)


@pytest.mark.parametrize("mode", ["stub", "drop"])
def test_pinned_messages_are_never_pruned(mode):
    messages = [
        *read("c1", "a", "v1 " + LONG, pin=True),
        *read("c2", "a", "v2 " + LONG),
        *read("c3", "b", "v1 " + LONG),  # a duplicate of a pinned message goes, the pinned one stays
    ]
    result = compactctl.prune(messages, mode=mode)
    assert messages[1] in result.messages
    assert result.fates[5] == compactctl.Fate("elided" if mode == "stub" else "removed", "duplicate of #1")
    assert set(result.fates) == ({5} if mode == "stub" else {4, 5})  # drop: its call goes with it


@pytest.mark.parametrize("mode", ["stub", "drop"])
def test_a_fact_read_many_times_keeps_one_copy_the_latest(mode):
    # The same file read five times, each read holding the fact, then the file changes.
    messages = [{"role": "user", "content": "fix the timeout"}]
    for n in range(5):
        messages += read(f"c{n}", "cfg.py", "TIMEOUT = 30  # ticket TKT-7 " + LONG, facts=["ticket tkt-7"])
    messages += read("c9", "cfg.py", "TIMEOUT = 60 " + LONG)
    result = compactctl.prune(messages, mode=mode)
    kept = [m for m in result.messages if "TKT-7" in message_text(m)]
    assert len(kept) == 1
    assert result.fates[10] == compactctl.Fate("restored", "last copy of fact 'ticket tkt-7'")
    assert all(result.fates[i].action == ("elided" if mode == "stub" else "removed") for i in (2, 4, 6, 8))
    assert messages[12] in result.messages and is_valid(result.messages)
    assert compactctl.prune(result.messages, mode=mode).messages == result.messages


def test_a_fact_a_kept_message_holds_brings_no_copy_back():
    messages = [{"role": "user", "content": "Confirmed: the ORDER\n ORD-1 ships today."}]
    messages += read("c1", "o", "order ord-1 " + LONG, facts=["order ord-1"])
    messages += read("c2", "o", "order ord-2 " + LONG)
    result = compactctl.prune(messages)
    assert result.fates == {2: compactctl.Fate("elided", "superseded by #4")}


def test_drop_mode_keeps_every_call_of_a_protected_assistant():
    messages = [
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [call("c1", "read_file", '{"path": "a"}')],
            "compactctl": {"pin": True},
        },
        {"role": "tool", "tool_call_id": "c1", "content": "v1 " + LONG},
        *read("c2", "a", "v2 " + LONG),
    ]
    result = compactctl.prune(messages, mode="drop")
    assert result.messages == messages
    assert result.fates == {1: compactctl.Fate("restored", "call in pinned #0")}


def test_a_stub_is_never_longer_than_what_it_replaces():
    messages = [*read("c1", "a", "ok"), *read("c2", "a", "ok"), *read("c3", "b", "ok")]
    assert compactctl.prune(messages).messages == messages
    # Drop mode removes the superseded "ok" (the same call comes again), but not the "ok" of
    # another call that merely reads the same: that would lose the call to save two tokens.
    assert compactctl.prune(messages, mode="drop").origins == [2, 3, 4, 5]


def test_stubs_of_an_earlier_run_are_left_as_they_are():
    messages = [
        *read("c1", "a", "v1 " + LONG),
        *read("c2", "b", "v1 " + LONG),
        *read("c3", "a", "v2 " + LONG),
        *read("c4", "b", "v3 " + LONG),
    ]
    messages[1]["content"] = messages[3]["content"] = LONG  # both superseded, and duplicates of each other
    once = compactctl.prune(messages)
    assert [once.messages[i]["content"] for i in (1, 3)] == [
        "[compactctl: superseded by message #5]",
        "[compactctl: superseded by message #7]",
    ]
    twice = compactctl.prune(once.messages)
    assert twice.messages == once.messages
    assert twice.fates == {}


def test_one_copy_of_a_text_stays_whatever_call_fetched_it():
    # Three queries answered by the same manual section, the first query asked again: one copy
    # stays (the first), every other copy defers to it, and what the repeat superseded names it too.
    section = "Section 4.2: refunds are issued within 14 days. " + LONG
    search = [
        *read("c1", "how do refunds work", section),
        *read("c2", "refund delay", section.upper()),  # the same text, another case
        *read("c3", "how do refunds work", "  ".join(section.split())),
        *read("c4", "when is my money back", section),
    ]
    for message in search[::2]:
        message["tool_calls"][0]["function"]["name"] = "search_manual"
    stubbed = compactctl.prune(search)
    assert [m["content"] for m in stubbed.messages[1::2]] == [
        "[compactctl: superseded by message #3]",
        section.upper(),
        "[compactctl: duplicate of message #3]",
        "[compactctl: duplicate of message #3]",
    ]
    assert compactctl.prune(stubbed.messages).messages == stubbed.messages
    assert is_valid(stubbed.messages)
    dropped = compactctl.prune(search, mode="drop")
    assert dropped.origins == [2, 3] and dropped.messages == search[2:4]
    assert compactctl.prune(dropped.messages, mode="drop").messages == dropped.messages


def test_a_duplicate_that_something_relies_on_comes_back():
    section = "Section 4.2: refunds are issued within 14 days. " + LONG
    messages = [*read("c1", "refunds", section), *read("c2", "refund delay", section)]
    messages[3]["compactctl"] = {"defines": ["manual:4.2"]}
    messages.append(
        {"role": "assistant", "content": "As the manual says...", "compactctl": {"references": ["manual:4.2"]}}
    )
    result = compactctl.prune(messages)
    # The first copy defines nothing: the copy that defines what the answer cites stays too.
    assert result.messages == messages
    assert result.fates == {3: compactctl.Fate("restored", "referenced by #4")}


def test_unknown_mode_is_a_usage_error():
    with pytest.raises(InputError, match="mode must be one of stub, drop, not 'cut'"):
        compactctl.prune([{"role": "user", "content": "hi"}], mode="cut")


def test_prune_is_a_compact_step_and_reads_mode_from_settings():
    messages = [{"role": "user", "content": "go"}, *read("c1", "a", "v1 " + LONG), *read("c2", "a", "v2 " + LONG)]
    stubbed = compact(messages, ["prune"], {})
    dropped = compact(messages, ["prune"], {"mode": "drop"})
    assert len(stubbed.messages) == 5 and len(dropped.messages) == 3
    assert [e.action for e in dropped.manifest] == ["kept", "removed", "removed", "kept", "kept"]
    assert dropped.manifest[2].reason == "superseded by #4"


# --- properties over generated transcripts -------------------------------------------------


def calls_subsequence(out: list[dict[str, Any]], of: list[dict[str, Any]]) -> bool:
    it = iter(of)
    return all(any(c == o for o in it) for c in out)


def same_apart_from_calls(out: dict[str, Any], original: dict[str, Any]) -> bool:
    rest = {k: v for k, v in out.items() if k != "tool_calls"}
    return rest == {k: v for k, v in original.items() if k != "tool_calls"} and calls_subsequence(
        out.get("tool_calls", []), original.get("tool_calls", [])
    )


PROPERTY = settings(max_examples=examples(600), deadline=None, suppress_health_check=[HealthCheck.too_slow])


@PROPERTY
@given(transcripts(), st.sampled_from(["stub", "drop"]))
def test_prune_invariants(messages, mode):
    assert is_valid(messages)
    original = copy.deepcopy(messages)
    result = compactctl.prune(messages, mode=mode)
    assert messages == original, "input mutated"
    again = compactctl.prune(copy.deepcopy(messages), mode=mode)
    assert again.messages == result.messages and again.fates == result.fates, "not deterministic"
    assert compactctl.prune(result.messages, mode=mode).messages == result.messages, "not idempotent"
    assert is_valid(result.messages), "API validity lost"
    assert result.origins == sorted(set(result.origins)), "order not preserved"
    assert lost_facts(messages, result.messages) == [], "fact lost"
    for index, message in enumerate(messages):
        if is_pinned(message):
            assert index in result.origins and result.messages[result.origins.index(index)] == message
    if mode == "drop":
        for out, index in zip(result.messages, result.origins, strict=True):
            stubbed_observation = is_observation(messages[index]) and is_stub(out)  # no call to drop it with
            assert stubbed_observation or same_apart_from_calls(out, messages[index]), "drop output not a subsequence"
    else:
        assert len(result.messages) == len(messages)
        # A stub points at a message this run kept whole, never at another stub it made.
        for fate in result.fates.values():
            if fate.action == "elided":
                target = int(fate.reason.rsplit("#", 1)[1])
                assert getattr(result.fates.get(target), "action", "kept") != "elided"
        for out, message in zip(result.messages, messages, strict=True):
            assert {k: v for k, v in out.items() if k != "content"} == {
                k: v for k, v in message.items() if k != "content"
            }
    # Whatever is not kept verbatim has a fate, and a fate names an index that exists.
    changed = {o for o, out in zip(result.origins, result.messages, strict=True) if out == messages[o]}
    assert set(range(len(messages))) - changed <= set(result.fates)


@settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(transcripts(), st.sampled_from(["stub", "drop"]))
def test_output_plus_what_the_manifest_archives_gives_back_the_input(messages, mode):
    result = compact(messages, ["prune"], {"mode": mode})
    archived = {e.index: e.action for e in result.manifest if e.action in ("elided", "removed")}
    rest = iter(result.messages)
    rebuilt = []
    for index, message in enumerate(messages):
        if index not in archived:
            assert next(rest) == message, "a message the manifest calls kept or restored was changed"
            rebuilt.append(message)
            continue
        rebuilt.append(message)  # the archive holds the original
        if archived[index] == "elided":
            assert next(rest) != message
    assert next(rest, None) is None
    assert rebuilt == messages


def test_a_text_that_is_also_an_argument_string_keeps_both_meanings():
    # An echo tool answers with its own arguments: the one string is a key part and a text.
    arguments = '{"path": "A", "note": "' + "x " * 40 + '"}'
    messages = [
        {"role": "assistant", "content": None, "tool_calls": [call("c1", "echo", arguments)]},
        {"role": "tool", "tool_call_id": "c1", "content": arguments},
        {"role": "assistant", "content": None, "tool_calls": [call("c2", "cat", '{"path": "copy"}')]},
        {"role": "tool", "tool_call_id": "c2", "content": arguments.upper()},
    ]
    assert compactctl.prune(messages).fates == {3: compactctl.Fate("elided", "duplicate of #1")}


@pytest.mark.parametrize("mode", ["stub", "drop"])
def test_observations_in_user_messages_are_duplicate_candidates_stubbed_in_both_modes(mode):
    observation = {"compactctl": {"kind": "observation"}}
    messages = [
        {"role": "user", "content": "fix the bug"},
        {"role": "assistant", "content": "```\nls\n```"},
        {"role": "user", "content": "a.py\nb.py\n" + LONG, **observation},
        {"role": "assistant", "content": "```\nls -a\n```"},
        {"role": "user", "content": "a.py\nb.py\n" + LONG, **observation},
        {"role": "assistant", "content": "```\nls\n```"},
        {"role": "user", "content": "a.py  b.py " + LONG.upper()},  # a typed message is never pruned
    ]
    result = compactctl.prune(messages, mode=mode)
    assert result.messages[4]["content"] == "[compactctl: duplicate of message #2]"
    assert result.fates == {4: compactctl.Fate("elided", "duplicate of #2")}
    assert len(result.messages) == len(messages) and result.messages[6] == messages[6]
    assert compactctl.prune(result.messages, mode=mode).messages == result.messages


def _columns(t: Any) -> dict[str, Any]:
    # What a replay keeps for a later transcript is no column (a derived round is never kept).
    kept = ("walk", "facts", "memo", "declaring", "holding", "holding_from")
    return {name: value for name, value in vars(t).items() if name not in kept}


def _drop_round(messages: list[dict[str, Any]]) -> tuple[Any, Any]:
    """A drop round's output as worked out from the round's columns, and as a walk over it finds it."""
    from compactctl.facts import FactMatcher, declared_facts
    from compactctl.strategies.prune import PrunePlan, _once
    from compactctl.strategies.prune_columns import KeyMemo, Transcript

    matcher = FactMatcher(declared_facts(messages, ()))
    first = Transcript(messages, lambda: messages, matcher, KeyMemo({}), False)
    step, _ = _once(first, False, range(first.n))
    output = PrunePlan.identity(first.n).then(step).applied(messages)
    walked = Transcript(output, lambda: output, matcher, first.memo, False)
    return Transcript.after(first, step, lambda: output), walked


@PROPERTY
@given(transcripts())
def test_a_drop_round_worked_out_from_its_columns_is_what_walking_its_output_finds(messages):
    derived, walked = _drop_round(messages)
    if derived is not None:  # None: the output must be walked (a stub made, an assistant's role changed)
        assert _columns(derived) == _columns(walked)


def test_a_drop_round_of_a_long_workload_needs_no_second_walk():
    from bench.workloads import generate

    for workload in ("chat", "rag", "tool"):
        derived, walked = _drop_round(generate(workload, 300))
        assert derived is not None and _columns(derived) == _columns(walked)
