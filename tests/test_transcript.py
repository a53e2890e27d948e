import pytest

from compactctl.transcript import find_violation, is_valid, tool_units, unit_start
from tests.helpers import call


def test_agent_session_is_valid(agent_messages):
    assert find_violation(agent_messages) is None


def test_tool_units_keep_a_call_with_its_results(agent_messages):
    units = tool_units(agent_messages)
    assert [list(u) for u in units] == [[0], [1], [2, 3], [4, 5, 6], [7], [8], [9]]
    assert unit_start(agent_messages, 6) == 4
    assert unit_start(agent_messages, 7) == 7


@pytest.mark.parametrize(
    ("messages", "problem"),
    [
        ([{"role": "user", "content": "hi"}, {"role": "tool", "tool_call_id": "x", "content": "r"}], "after a user"),
        (
            [
                {"role": "assistant", "content": None, "tool_calls": [call("a", "f")]},
                {"role": "tool", "tool_call_id": "b", "content": "r"},
            ],
            "orphan tool result",
        ),
        (
            [
                {"role": "assistant", "content": None, "tool_calls": [call("a", "f"), call("b", "f")]},
                {"role": "tool", "tool_call_id": "a", "content": "r"},
                {"role": "user", "content": "next"},
            ],
            "unanswered tool call 'b'",
        ),
        (
            [{"role": "assistant", "content": None, "tool_calls": [call("a", "f")]}],
            "unanswered tool call 'a' at the end",
        ),
        ([{"role": "critic", "content": "x"}], "unknown role 'critic'"),
        ([{"content": "x"}], "missing role"),
        ([{"role": "user", "content": None}], "user message has no content"),
        ([{"role": "assistant"}], "assistant message has no content"),
        ([{"role": "user", "content": 3}], "not a string or a list"),
        (
            [
                {"role": "assistant", "content": None, "tool_calls": [call("a", "f")]},
                {"role": "tool", "tool_call_id": "a", "content": "r"},
                {"role": "tool", "tool_call_id": "a", "content": "r"},
            ],
            "answered twice",
        ),
        (
            [
                {"role": "assistant", "content": None, "tool_calls": [call("a", "f")]},
                {"role": "tool", "tool_call_id": "a", "content": None},
            ],
            "tool message has no content",
        ),
    ],
)
def test_find_violation_names_the_first_problem(messages, problem):
    violation = find_violation(messages)
    assert violation is not None
    assert problem in str(violation)


def test_violation_points_at_the_offending_message():
    messages = [
        {"role": "system", "content": "s"},
        {"role": "user", "content": "u"},
        {"role": "tool", "tool_call_id": "x", "content": "r"},
    ]
    assert find_violation(messages).index == 2


def test_assistant_with_only_tool_calls_needs_no_content():
    messages = [
        {"role": "assistant", "content": None, "tool_calls": [call("a", "f")]},
        {"role": "tool", "tool_call_id": "a", "content": [{"type": "text", "text": "ok"}]},
    ]
    assert is_valid(messages)


def test_a_single_fact_written_as_a_string_is_one_fact_not_its_characters():
    from compactctl.transcript import facts_of

    assert facts_of({"role": "user", "content": "x", "compactctl": {"facts": "Claire Dubois"}}) == ["Claire Dubois"]
    assert facts_of({"role": "user", "content": "x", "compactctl": {"facts": 5}}) == []
