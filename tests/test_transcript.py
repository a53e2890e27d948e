import pytest
from hypothesis import given
from hypothesis import strategies as st

from compactctl.transcript import KEPT_VIOLATIONS, Validator, find_violation, is_valid, tool_units, unit_start
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


def test_a_transcript_ending_on_a_running_call_is_valid_with_its_open_call_named():
    validator = Validator()
    for message in [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": None, "tool_calls": [call("a", "f")]},
    ]:
        validator.feed(message)
    assert validator.finish() is None
    assert validator.open_call == "a"


def test_every_violation_is_counted_and_the_first_few_kept():
    messages = [{"role": "user", "content": None} for _ in range(KEPT_VIOLATIONS + 3)]
    validator = Validator()
    for message in messages:
        validator.feed(message)
    validator.finish()
    assert validator.count == KEPT_VIOLATIONS + 3
    assert [v.index for v in validator.violations] == list(range(KEPT_VIOLATIONS))


def test_one_unanswered_call_is_reported_once_not_at_every_later_message():
    messages = [
        {"role": "assistant", "content": None, "tool_calls": [call("a", "f")]},
        {"role": "user", "content": "next"},
        {"role": "assistant", "content": "ok"},
        {"role": "user", "content": "more"},
    ]
    validator = Validator()
    for message in messages:
        validator.feed(message)
    validator.finish()
    assert validator.count == 1 and "unanswered tool call 'a'" in validator.violations[0].problem


def test_a_producer_s_own_blocks_are_accepted_where_its_api_takes_them():
    from compactctl.formats import carried_parts

    messages = [
        {"role": "user", "content": [{"type": "document", "source": {"type": "base64", "data": "JVBE"}}]},
        {"role": "assistant", "content": None, "tool_calls": [call("a", "ToolSearch")]},
        {"role": "tool", "tool_call_id": "a", "content": [{"type": "tool_reference", "tool_name": "WebFetch"}]},
    ]
    assert "document" in str(find_violation(messages))  # not a Chat Completions part
    assert find_violation(messages, carried_parts("claude-code")) is None
    assert find_violation(messages, carried_parts("chat")) is not None


def test_a_server_tool_call_needs_no_tool_message():
    messages = [
        {"role": "user", "content": "search"},
        {"role": "assistant", "content": "found", "tool_calls": [call("srvtoolu_1", "web_search")]},
        {"role": "user", "content": "thanks"},
    ]
    assert find_violation(messages) is None


@given(st.lists(st.sampled_from([0, 1, 2])), st.lists(st.sampled_from([0, 1, 2])))
def test_shared_prefix_is_the_run_of_leading_equal_items(a, b):
    from compactctl.transcript import shared_prefix

    shared = 0
    while shared < min(len(a), len(b)) and a[shared] == b[shared]:
        shared += 1
    assert shared_prefix(a, b) == shared_prefix(b, a) == shared


def test_a_first_assistant_message_breaks_only_a_format_that_opens_on_the_user():
    # Claude Code sends what follows its last compact boundary as it is; the Messages API refuses a first
    # assistant turn. Chat Completions takes one.
    messages = [
        {"role": "system", "content": "You help."},
        {"role": "assistant", "content": None, "tool_calls": [call("c1", "ls")]},
        {"role": "tool", "tool_call_id": "c1", "content": "a.txt"},
        {"role": "user", "content": "Go on."},
    ]
    opening = Validator(opens_on_user=True)
    for message in messages:
        opening.feed(message)
    assert opening.finish() is not None and opening.count == 1  # the calls' pairing is followed on past it
    assert opening.violation.index == 1 and '"user" role' in opening.violation.problem
    assert find_violation(messages) is None
    after_a_prompt = Validator(opens_on_user=True)
    for message in [messages[0], {"role": "user", "content": "Hi."}, *messages[1:]]:
        after_a_prompt.feed(message)
    assert after_a_prompt.finish() is None


def test_two_calls_of_one_id_are_refused_where_the_producers_api_refuses_them():
    # The Messages API refuses a request in which two tool_use blocks share an id, wherever they are
    # ("`tool_use` ids must be unique"); Chat Completions took them (tau-bench's gpt-4o runs repeat ids).
    messages = [
        {"role": "user", "content": "List twice."},
        {"role": "assistant", "content": None, "tool_calls": [call("toolu_1", "ls")]},
        {"role": "tool", "tool_call_id": "toolu_1", "content": "a.txt"},
        {"role": "assistant", "content": None, "tool_calls": [call("toolu_1", "ls")]},
        {"role": "tool", "tool_call_id": "toolu_1", "content": "a.txt"},
        {"role": "assistant", "content": "Done."},
    ]
    assert find_violation(messages) is None
    anthropic = Validator(unique_call_ids=True)
    for message in messages:
        anthropic.feed(message)
    assert anthropic.finish() is not None and anthropic.count == 1
    assert anthropic.violation.index == 3 and "`tool_use` ids must be unique" in anthropic.violation.problem
    distinct = Validator(unique_call_ids=True)
    for message in [
        *messages[:3],
        {**messages[3], "tool_calls": [call("toolu_2", "ls")]},
        {**messages[4], "tool_call_id": "toolu_2"},
    ]:
        distinct.feed(message)
    assert distinct.finish() is None
