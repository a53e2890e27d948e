# ruff: noqa: E501  (one case a line reads better than wrapped literals)
"""The validator says no where the Chat Completions API does: one test per rule of shape.

Each case is a transcript the API rejects for the type of one field; the validator must
name that field. The pairing rules (orphans, unanswered calls) are in test_transcript.py.
"""

from __future__ import annotations

import pytest

from compactctl.transcript import find_violation, is_valid
from tests.helpers import call

USER = {"role": "user", "content": "hi"}


def answered(*calls, content=None):
    """An assistant message with these tool_calls, then an answer for each well-formed one."""
    replies = [
        {"role": "tool", "tool_call_id": c["id"], "content": "ok"}
        for c in calls
        if isinstance(c, dict) and isinstance(c.get("id"), str)
    ]
    return [USER, {"role": "assistant", "content": content, "tool_calls": list(calls)}, *replies]


def function_call(**function):
    return {"id": "c1", "type": "function", "function": function}


RULES = {
    "arguments as an object": (answered(function_call(name="f", arguments={"x": 1})), "arguments is dict, not a JSON string"),
    "arguments missing": (answered(function_call(name="f")), "arguments is missing"),
    "tool_calls entries not objects": ([USER, {"role": "assistant", "content": None, "tool_calls": [1, "x", None]}], "tool call 1: is int, not an object"),
    "tool_calls not a list": ([USER, {"role": "assistant", "content": None, "tool_calls": {"id": "c1"}}], "tool_calls is dict, not a list"),
    "tool_calls empty": ([USER, {"role": "assistant", "content": "x", "tool_calls": []}], "empty list"),
    "function as a string": (answered({"id": "c1", "type": "function", "function": "f"}), "function is str, not an object"),
    "function without a name": (answered(function_call(arguments="{}")), "function has no name"),
    "call without an id": ([USER, {"role": "assistant", "content": None, "tool_calls": [{"type": "function", "function": {"name": "f", "arguments": "{}"}}]}], "has no id string"),
    "call of another type": (answered({"id": "c1", "type": "custom", "function": {"name": "f", "arguments": "{}"}}), "not 'function'"),
    "content part not an object": ([{"role": "user", "content": ["hello"]}], "content part 1: is str"),
    "content part without a type": ([{"role": "user", "content": [{"text": "hello"}]}], "has no type"),
    "image in a system message": ([{"role": "system", "content": [{"type": "image_url", "image_url": {"url": "x"}}]}], "not allowed in a system message"),
    "refusal in a user message": ([{"role": "user", "content": [{"type": "refusal", "refusal": "no"}]}], "not allowed in a user message"),
    "image part in a tool result": (
        [USER, {"role": "assistant", "content": None, "tool_calls": [call("c1", "f")]}, {"role": "tool", "tool_call_id": "c1", "content": [{"type": "image_url", "image_url": {"url": "x"}}]}],
        "not allowed in a tool message",
    ),
    "text part whose text is not a string": ([{"role": "user", "content": [{"type": "text", "text": 5}]}], "'text' is int, not a string"),
    "image_url part without a url": ([{"role": "user", "content": [{"type": "image_url", "image_url": {"detail": "low"}}]}], "no url string"),
    "image_url as a string": ([{"role": "user", "content": [{"type": "image_url", "image_url": "http://x/y.png"}]}], "'image_url' is str, not an object"),
    "content a number": ([{"role": "user", "content": 5}], "content is int"),
    "role a list": ([{"role": ["user"], "content": "hi"}], "unknown role ['user']"),
    "message not an object": ([USER, "hello"], "a message is str, not an object"),
    "name not a string": ([{"role": "user", "name": 7, "content": "hi"}], "name is int"),
    "tool_call_id not a string": (
        [USER, {"role": "assistant", "content": None, "tool_calls": [call("1", "f")]}, {"role": "tool", "tool_call_id": 1, "content": "r"}],
        "tool_call_id is int, not a string",
    ),
    "tool result without tool_call_id": (
        [USER, {"role": "assistant", "content": None, "tool_calls": [call("1", "f")]}, {"role": "tool", "content": "r"}],
        "tool message has no tool_call_id",
    ),
}  # fmt: skip


@pytest.mark.parametrize("rule", RULES)
def test_validator_rejects_what_the_api_rejects(rule):
    messages, problem = RULES[rule]
    violation = find_violation(messages)
    assert violation is not None, rule
    assert problem in violation.problem, (rule, violation.problem)


def test_well_formed_shapes_of_every_kind_are_valid():
    messages = [
        {"role": "system", "content": [{"type": "text", "text": "Be brief."}]},
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "What is this?"},
                {"type": "image_url", "image_url": {"url": "https://example.com/a.png", "detail": "low"}},
                {"type": "input_audio", "input_audio": {"data": "UklGR", "format": "wav"}},
                {"type": "file", "file": {"file_id": "file-abc"}},
            ],
        },
        {"role": "assistant", "content": [{"type": "refusal", "refusal": "I cannot tell."}]},
        {"role": "assistant", "content": [{"type": "thinking", "thinking": "carried for the writer"}, {"type": "text", "text": "ok"}]},
        {"role": "user", "content": "Look it up.", "name": "ada"},
        {"role": "assistant", "content": None, "tool_calls": [call("c1", "search", '{"q": "a.png"}')]},
        {"role": "tool", "tool_call_id": "c1", "content": [{"type": "text", "text": "a cat"}]},
    ]  # fmt: skip
    assert is_valid(messages), find_violation(messages)
