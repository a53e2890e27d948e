"""The library API: plain functions on lists of message dicts."""

import copy
import types

import orjson
import pytest

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


def test_options_after_the_input_are_keywords(agent_messages):
    counter = compactctl.TokenCounter("approx")
    with pytest.raises(TypeError):
        compactctl.compact(agent_messages, ["window"], {"keep_recent": 3}, counter)  # type: ignore[misc]
    with pytest.raises(TypeError):
        compactctl.prune(agent_messages, "drop")  # type: ignore[misc]
    result = compactctl.compact(agent_messages, ["window"], {"keep_recent": 3}, counter=counter)
    assert len(result.messages) < len(agent_messages)
    rows = compactctl.replay.replay(agent_messages, compactctl.settings_grid([50], False, ["window"]), counter=counter)
    assert [row.trigger for row in rows] == ["none", "threshold"]


def test_module_names_are_modules_not_the_functions_they_hold():
    import compactctl.compaction as compaction
    import compactctl.replay as replay
    import compactctl.reporting as reporting
    import compactctl.strategies.prune as prune

    assert all(isinstance(module, types.ModuleType) for module in (compaction, replay, reporting, prune))
    assert compactctl.replay is replay and callable(replay.replay)


def test_a_bad_value_is_an_input_error_and_a_value_error(agent_messages):
    with pytest.raises(ValueError, match="unknown strategy 'nope'") as raised:
        compactctl.compact(agent_messages, ["nope"])
    assert isinstance(raised.value, compactctl.errors.InputError)
