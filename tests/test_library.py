"""The library API: plain functions on lists of message dicts."""

import copy

import orjson

import compactctl


def test_report_compares_two_lists_of_messages(agent_messages):
    original = copy.deepcopy(agent_messages)
    result = compactctl.compact(agent_messages, ["window"], {"keep_recent": 3})
    figures = compactctl.report(agent_messages, result.messages, facts=["src/app.py", "git status"])
    assert agent_messages == original
    counter = compactctl.TokenCounter()
    assert figures.tokens_before == counter.messages(agent_messages)
    assert figures.tokens_after == counter.messages(result.messages)
    assert figures.reduction == round(1 - figures.tokens_after / figures.tokens_before, 4)
    assert figures.facts_missing == ["git status"]
    assert figures.valid_before and figures.valid_after


def test_report_on_one_list_checks_its_annotated_facts():
    messages = [{"role": "user", "content": "Order CMD-1", "compactctl": {"facts": ["CMD-1", "CMD-2"]}}]
    figures = compactctl.report(messages)
    assert figures.tokens_after is None
    # CMD-2 is not in the input: absent (a warning), not missing (a failed gate).
    assert (figures.facts_required, figures.facts_missing, figures.facts_absent_before) == (2, [], ["CMD-2"])
    assert figures.facts_preserved == 1 and not figures.gate_failed


def test_the_documented_example_runs(agent_messages):
    fmt, transcripts = compactctl.load(b"".join(orjson.dumps(m) + b"\n" for m in agent_messages))
    result = compactctl.compact(transcripts[0].messages, ["trim-tools", "window"], {"keep_recent": 8})
    assert compactctl.find_violation(result.messages) is None
    assert compactctl.dump([transcripts[0]], fmt.name).count(b"\n") == len(agent_messages)
