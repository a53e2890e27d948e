# ruff: noqa: E501  (one case a line reads better than wrapped literals)
"""The Responses and Anthropic Messages APIs' own rules: one case per rule, each a bad case the
rule rejects beside the good case it passes, so every rule can fail.

Where each rule is written down is in docs/validity.md.
"""

from __future__ import annotations

import copy

import orjson
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from compactctl.compaction import compact
from compactctl.formats import Transcript, get_format, load, native_violation, write_as
from compactctl.formats.api_rules import (
    anthropic_violation,
    anthropic_violations,
    responses_violation,
    responses_violations,
)
from tests.formats.fixtures import read
from tests.formats.test_roundtrip import transcripts as roundtrip_transcripts
from tests.properties import examples

# -- Responses ------------------------------------------------------------------------

USER_ITEM = {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]}
CALL = {"type": "function_call", "call_id": "c1", "name": "f", "arguments": "{}"}
OUTPUT = {"type": "function_call_output", "call_id": "c1", "output": "ok"}
ANSWER = {
    "type": "message",
    "role": "assistant",
    "content": [{"type": "output_text", "text": "done", "annotations": []}],
}
REASONING = {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "think"}]}
GOOD_ITEMS = [USER_ITEM, REASONING, CALL, OUTPUT, ANSWER]


def with_item(index, **changes):
    items = copy.deepcopy(GOOD_ITEMS)
    items[index] = {k: v for k, v in {**items[index], **changes}.items() if v is not ...}
    return items


# rule -> (items the API rejects, what the violation says)
RESPONSES_RULES = {
    "an item is an object": ([USER_ITEM, "hello"], "an item is str, not an object"),
    "item type is known": ([USER_ITEM, {"type": "telepathy"}], "unknown item type 'telepathy'"),
    "message role is user, assistant, system or developer": (with_item(0, role="tool"), "message role 'tool' is not one of"),
    "message content is a string or parts": (with_item(0, content=5), "user message content is int"),
    "message content is required": (with_item(0, content=...), "user message content is missing"),
    "user content parts are input parts": (with_item(0, content=[{"type": "output_text", "text": "x"}]), "type 'output_text' is not allowed in user message"),
    "assistant content parts are output_text or refusal": (with_item(4, content=[{"type": "input_text", "text": "x"}]), "type 'input_text' is not allowed in assistant message"),
    "a content part is an object": (with_item(0, content=["hi"]), "content[0] is str, not an object"),
    "input_text has a text string": (with_item(0, content=[{"type": "input_text", "text": 5}]), "input_text has no text string"),
    "refusal has a refusal string": (with_item(4, content=[{"type": "refusal"}]), "refusal has no refusal string"),
    "input_image has an image_url or file_id": (with_item(0, content=[{"type": "input_image", "detail": "low"}]), "input_image has neither"),
    "function_call.arguments is a string": (with_item(2, arguments={"x": 1}), "function_call.arguments is dict, not a string"),
    "function_call has a call_id": (with_item(2, call_id=...), "function_call has no call_id string"),
    "function_call has a name": (with_item(2, name=""), "function_call has no name string"),
    "call ids are unique": ([USER_ITEM, CALL, CALL, OUTPUT, ANSWER], "call_id 'c1' is used by two calls"),
    "an output answers an earlier call": ([USER_ITEM, OUTPUT, CALL, ANSWER], "no function_call before it has call_id 'c1'"),
    "every call has an output": ([USER_ITEM, CALL, ANSWER], "no function_call_output for function_call 'c1'"),
    "output is a string or input parts": (with_item(3, output={"ok": True}), "function_call_output.output is dict"),
    "output parts are input parts": (with_item(3, output=[{"type": "output_text", "text": "x"}]), "type 'output_text' is not allowed in output"),
    "custom_tool_call.input is a string": ([USER_ITEM, {"type": "custom_tool_call", "call_id": "c1", "name": "f", "input": {"x": 1}}], "custom_tool_call.input is dict"),
    "reasoning has a summary list": (with_item(1, summary=...), "reasoning item has no summary list"),
    "reasoning summary entries are summary_text": (with_item(1, summary=[{"type": "text", "text": "x"}]), "summary_text objects"),
    "reasoning is followed by what it produced": ([USER_ITEM, REASONING, USER_ITEM], "reasoning item is followed by a 'user' message"),
    "reasoning is not the last item": ([USER_ITEM, REASONING], "reasoning item is followed by nothing"),
}  # fmt: skip


def test_well_formed_responses_items_of_every_kind_pass():
    items = [
        {"role": "developer", "content": "Be brief."},
        {"type": "message", "role": "system", "content": [{"type": "input_text", "text": "sys"}]},
        {
            "type": "message",
            "role": "user",
            "content": [
                {"type": "input_text", "text": "look"},
                {"type": "input_image", "image_url": "data:image/png;base64,AAAA", "detail": "low"},
                {"type": "input_image", "file_id": "file-1"},
                {"type": "input_file", "file_id": "file-2"},
            ],
        },
        REASONING,
        CALL,
        {"type": "custom_tool_call", "call_id": "c2", "name": "patch", "input": "*** Begin Patch"},
        OUTPUT,
        {"type": "custom_tool_call_output", "call_id": "c2", "output": [{"type": "input_text", "text": "applied"}]},
        {"type": "reasoning", "id": "rs_2", "summary": [], "encrypted_content": "AAAA"},
        ANSWER,
        {"type": "message", "role": "assistant", "content": [{"type": "refusal", "refusal": "no"}]},
        {"type": "compaction", "id": "cmp_1", "encrypted_content": "AAAA"},
        {"role": "assistant", "content": "plain text is an easy input message"},
    ]
    assert responses_violation(items) is None, responses_violation(items)
    assert responses_violation(GOOD_ITEMS) is None


# -- Anthropic ------------------------------------------------------------------------

USER = {"role": "user", "content": "hi"}
TOOL_USE = {"type": "tool_use", "id": "toolu_1", "name": "f", "input": {"q": 1}}
RESULT = {"type": "tool_result", "tool_use_id": "toolu_1", "content": "ok"}
THINKING = {"type": "thinking", "thinking": "plan", "signature": "c2ln"}
CALLING = {"role": "assistant", "content": [THINKING, {"type": "text", "text": "calling"}, TOOL_USE]}
ANSWERED = {"role": "user", "content": [RESULT, {"type": "text", "text": "thanks"}]}
FINAL = {"role": "assistant", "content": "done"}
GOOD_PARAMS = [{"system": "Be brief."}, USER, CALLING, ANSWERED, FINAL]


def with_block(message, index, **changes):
    params = copy.deepcopy(GOOD_PARAMS)
    blocks = params[message]["content"]
    blocks[index] = {k: v for k, v in {**blocks[index], **changes}.items() if v is not ...}
    return params


ANTHROPIC_RULES = {
    "a message is an object": ([USER, "hello"], "a message is str, not an object"),
    "role is user, assistant or system": (
        [{"role": "developer", "content": "x"}, USER],
        "role 'developer' is not 'user', 'assistant' or 'system'",
    ),
    "content is a string or blocks": ([{"role": "user", "content": {"text": "x"}}], "user content is dict"),
    "at least one message": ([{"system": "only a system prompt"}], "at least one message is required"),
    "the first message is user": ([FINAL, USER], 'the first message must use the "user" role'),
    "non-empty content except the final assistant": ([USER, {"role": "assistant", "content": []}, USER], "empty content"),
    "an empty user message is not allowed, even last": ([USER, FINAL, {"role": "user", "content": ""}], "empty content"),
    "text blocks are non-empty": ([{"role": "user", "content": [{"type": "text", "text": ""}]}], "text blocks must be non-empty"),
    "text blocks hold more than whitespace": ([{"role": "user", "content": [{"type": "text", "text": " \n"}]}], "non-whitespace text"),
    "text block has a text string": ([{"role": "user", "content": [{"type": "text", "text": 3}]}], "text block has no text string"),
    "user blocks are user block types": ([{"role": "user", "content": [TOOL_USE]}], "block type 'tool_use' is not allowed in a user message"),
    "assistant blocks are assistant block types": ([USER, {"role": "assistant", "content": [RESULT]}], "block type 'tool_result' is not allowed in a assistant message"),
    "tool_use.input is an object": (with_block(2, 2, input='{"q": 1}'), "tool_use.input is str, not an object"),
    "tool_use has an id": (with_block(2, 2, id=...), "tool_use has no id string"),
    "tool_use has a name": (with_block(2, 2, name=""), "tool_use has no name string"),
    "thinking has a signature": (with_block(2, 0, signature=...), "thinking block has no signature"),
    "thinking has a thinking string": (with_block(2, 0, thinking=None), "thinking block has no thinking string"),
    "redacted_thinking has data": ([USER, {"role": "assistant", "content": [{"type": "redacted_thinking"}, {"type": "text", "text": "x"}]}], "redacted_thinking block has no data"),
    "tool_use is answered in the next user message": ([USER, CALLING, {"role": "user", "content": "no result"}, FINAL], "have tool_result blocks not in the next user message"),
    "tool_result blocks come first": ([USER, CALLING, {"role": "user", "content": [{"type": "text", "text": "x"}, RESULT]}, FINAL], "not at the start of the next user message"),
    "tool_result answers the message before it": ([USER, FINAL, {"role": "user", "content": [RESULT]}], "answers no tool_use of the message before it"),
    "tool_result in the first message answers nothing": ([{"role": "user", "content": [RESULT]}], "answers no tool_use"),
    "tool_result ids match": ([USER, CALLING, {"role": "user", "content": [{**RESULT, "tool_use_id": "toolu_9"}]}, FINAL], "'toolu_1' have tool_result blocks not in"),
    "tool_result has a tool_use_id": (with_block(3, 0, tool_use_id=...), "tool_result has no tool_use_id string"),
    "tool_result content is text, image, document or tool_reference blocks": (with_block(3, 0, content=[TOOL_USE]), "tool_result content.0: block type 'tool_use'"),
    "image media types": ([{"role": "user", "content": [{"type": "image", "source": {"type": "base64", "media_type": "image/bmp", "data": "AA"}}]}], "media_type 'image/bmp' is not one of"),
    "image has a source": ([{"role": "user", "content": [{"type": "image"}]}], "image has no source object"),
}  # fmt: skip


# (the check, where its violations say they are, the rules): each rule's bad case must fail it.
RULE_SETS = {"responses": (responses_violation, "input", RESPONSES_RULES), "anthropic": (anthropic_violation, "messages", ANTHROPIC_RULES)}  # fmt: skip


@pytest.mark.parametrize(
    ("api", "rule"),
    [pytest.param(api, rule, id=f"{api}: {rule}") for api, (_, _, rules) in RULE_SETS.items() for rule in rules],
)
def test_each_rule_rejects_its_bad_case(api, rule):
    check, where, rules = RULE_SETS[api]
    records, problem = rules[rule]
    violation = check(records)
    assert violation is not None, rule
    assert problem in violation.problem, (rule, violation.problem)
    assert str(violation).startswith(where), str(violation)


def test_well_formed_anthropic_messages_of_every_kind_pass():
    image = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBO"}}
    params = [
        *GOOD_PARAMS[:-1],
        # Consecutive turns of one role are joined by the API, so two user messages are one turn.
        {"role": "user", "content": [image, {"type": "image", "source": {"type": "url", "url": "https://x/y.png"}}]},
        {
            "role": "assistant",
            "content": [{"type": "redacted_thinking", "data": "AAAA"}, {**TOOL_USE, "id": "toolu_2"}],
        },
        {
            "role": "user",
            "content": [{**RESULT, "tool_use_id": "toolu_2", "content": [{"type": "text", "text": "r"}, image]}],
        },
        {"role": "assistant", "content": []},  # the final assistant message may be empty (a prefill)
    ]
    assert anthropic_violation(params) is None, anthropic_violation(params)
    request = {"model": "claude", "max_tokens": 10, "system": "x", "messages": [p for p in GOOD_PARAMS if "role" in p]}
    assert anthropic_violation([request]) is None
    assert "line 2 messages.0" in str(anthropic_violation([request, {**request, "messages": [FINAL]}]))


def test_merged_turns_are_checked_as_one():
    # A tool_result in a second user message right after the first one is at the start of
    # neither message, but the API joins them: the text comes first, so it is rejected.
    params = [USER, CALLING, {"role": "user", "content": "wait"}, {"role": "user", "content": [RESULT]}, FINAL]
    assert "not at the start of" in anthropic_violation(params).problem
    fixed = [USER, CALLING, {"role": "user", "content": [RESULT]}, {"role": "user", "content": "wait"}, FINAL]
    assert anthropic_violation(fixed) is None


# -- through the reader and writer ----------------------------------------------------


def lines(values):
    return b"".join(orjson.dumps(v) + b"\n" for v in values)


@pytest.mark.parametrize(
    ("good", "bad", "problem"),
    [
        (GOOD_ITEMS, with_item(2, arguments={"x": 1}), "input[2]: function_call.arguments is dict"),
        (GOOD_PARAMS, with_block(2, 2, input="not an object"), "messages.1: content.2: tool_use.input is str"),
    ],
    ids=["responses", "anthropic"],
)
def test_a_native_file_is_held_to_its_own_api(good, bad, problem):
    (transcript,) = load(lines(good)).transcripts
    assert native_violation(transcript) is None
    (broken,) = load(lines(bad)).transcripts
    assert problem in str(native_violation(broken))


def test_chat_files_have_no_native_rules_beyond_chat_completions():
    (transcript,) = load(lines([{"role": "assistant", "content": "first"}])).transcripts
    assert native_violation(transcript) is None


# -- strategies keep native validity -----------------------------------------------------

STEP_SETS = st.sampled_from(
    [
        ["prune"],
        ["window"],
        ["trim-tools", "window"],
        ["clear-thinking"],
        ["prune", "trim-tools", "clear-thinking", "window"],
        ["summary"],
        ["structured"],
        ["selective"],
        ["rolling"],
    ]
)
SETTINGS = st.fixed_dictionaries(
    {
        "keep_recent": st.integers(0, 8),
        "tool_max_tokens": st.sampled_from([4, 16, 400]),
        "prune_mode": st.sampled_from(["stub", "drop"]),
        "keep_thinking_turns": st.integers(0, 2),
        "summary_role": st.sampled_from(["system", "user"]),
        "threshold": st.sampled_from([0, 60]),
    }
)


def compacted(transcript, steps, options):
    # As compact and prune run it on an Anthropic file: a step that cuts the head keeps the
    # conversation opening on the user's turn.
    options = {**options, "open_on_user": transcript.read_as == "anthropic"}
    result = compact(transcript.messages, steps, options)
    return transcript.rewritten(result.messages, result.origins)


@pytest.mark.parametrize("name", ["responses", "anthropic"])
@settings(max_examples=examples(40), deadline=None)
@given(messages=roundtrip_transcripts(), steps=STEP_SETS, options=SETTINGS)
def test_compacting_a_valid_native_transcript_keeps_it_valid(name, messages, steps, options):
    (transcript,) = load(write_as([Transcript(messages)], get_format("chat"), name), format=name).transcripts
    assume(native_violation(transcript) is None)  # generated text may be only whitespace, which Anthropic rejects
    out = compacted(transcript, steps, options)
    assert native_violation(out) is None, (steps, native_violation(out))


@pytest.mark.parametrize("name", ["responses", "anthropic"])
@settings(max_examples=examples(30), deadline=None)
@given(steps=STEP_SETS, options=SETTINGS)
def test_compacting_the_sample_files_with_thinking_keeps_them_valid(name, steps, options):
    _, _, transcript = read(name)  # reasoning / thinking / redacted_thinking, images, parallel calls
    assert native_violation(transcript) is None
    out = compacted(transcript, steps, options)
    assert native_violation(out) is None, (steps, native_violation(out))


@pytest.mark.parametrize("step", ["window", "summary", "structured", "selective", "rolling"])
def test_without_open_on_user_a_cut_head_can_open_on_the_model_and_anthropic_rejects_it(step):
    # What open_on_user is for: the same compaction without it is rejected by the Messages API.
    long_result = {**RESULT, "content": "row of output, never skip the tests. " * 60}
    messages = [
        {"role": "user", "content": "Fix the failing test in src/app.py; do not touch the API. " * 20},
        CALLING,
        {"role": "user", "content": [long_result, {"type": "text", "text": "thanks"}]},
        {"role": "assistant", "content": "working on it, the fix is in src/app.py line 12. " * 20},
        FINAL,
    ]
    (transcript,) = load(lines(messages)).transcripts
    options = {"keep_recent": 1, "keep_turns": 0, "threshold": 0, "window": 1, "summary_role": "system"}
    plain = compact(transcript.messages, [step], options)
    rejected = str(native_violation(transcript.rewritten(plain.messages, plain.origins)))
    assert 'first message must use the "user" role' in rejected or "at least one message is required" in rejected
    assert native_violation(compacted(transcript, [step], options)) is None


def test_window_on_an_anthropic_file_keeps_the_request_its_tail_answers():
    messages = [USER, CALLING, ANSWERED, FINAL]
    (transcript,) = load(lines(messages)).transcripts
    plain = compact(transcript.messages, ["window"], {"keep_recent": 1})
    assert [m["role"] for m in plain.messages] == ["assistant"]  # as window cuts for other formats
    out = compacted(transcript, ["window"], {"keep_recent": 1})
    assert [m["content"] for m in out.messages] == ["thanks", "done"]
    assert native_violation(transcript.rewritten(plain.messages, plain.origins)) is not None
    assert native_violation(out) is None


def test_a_session_ending_on_a_running_tool_use_is_an_open_call_not_a_fault():
    assert anthropic_violation([USER, CALLING]) is None
    assert anthropic_violation([USER, CALLING, USER, FINAL]) is not None  # answered by nothing, then more


def test_a_rollout_ending_on_a_function_call_with_no_output_yet_is_not_a_fault():
    items = [
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "run it"}]},
        {"type": "function_call", "call_id": "c1", "name": "shell", "arguments": "{}"},
    ]
    assert responses_violation(items) is None
    later = [*items, {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "next"}]}]
    assert "no function_call_output" in str(responses_violation(later))


def test_tool_reference_blocks_claude_code_writes_are_accepted_in_a_tool_result():
    reference = {"type": "tool_reference", "tool_name": "WebFetch"}
    answered = {"role": "user", "content": [{**RESULT, "content": [reference]}]}
    assert anthropic_violation([USER, CALLING, answered, FINAL]) is None


def test_blocks_the_api_takes_back_in_an_assistant_turn_are_accepted():
    """A model fallback's seam (the real Claude Code 2.1.332 writes it as a record of its own), a server-side
    compaction's summary, the tool-search and advisor server tools' results: the SDK's content block params."""
    fallback = {"type": "fallback", "from": {"model": "claude-opus-5"}, "to": {"model": "claude-sonnet-5"}}
    compaction = {"type": "compaction", "content": "Summary of the earlier turns."}
    search = {"type": "tool_search_tool_result", "tool_use_id": "srvtoolu_1", "content": {"type": "tool_search_result"}}
    called = {"type": "server_tool_use", "id": "srvtoolu_2", "name": "advisor", "input": {}}
    advisor = {"type": "advisor_tool_result", "tool_use_id": "srvtoolu_2", "content": {"type": "advisor_result"}}
    assistant = {
        "role": "assistant",
        "content": [fallback, compaction, search, called, advisor, {"type": "text", "text": "ok"}],
    }
    assert anthropic_violation([USER, assistant, USER]) is None
    assert "'fallback' is not allowed in a user message" in str(
        anthropic_violation([{"role": "user", "content": [fallback]}])
    )
    instructions = {"type": "mid_conv_system", "content": [{"type": "text", "text": "Answer in French."}]}
    assert anthropic_violation([{"role": "user", "content": [instructions, {"type": "text", "text": "hi"}]}]) is None


def test_an_advisors_result_must_follow_its_call_in_the_same_message():
    """The API refuses advice whose ``server_tool_use`` is not before it in its message (its wording, as a real
    Claude Code 2.1.170 session met it: anthropics/claude-code#66944)."""
    called = {"type": "server_tool_use", "id": "srvtoolu_9", "name": "advisor", "input": {}}
    advice = {
        "type": "advisor_tool_result",
        "tool_use_id": "srvtoolu_9",
        "content": {"type": "advisor_result", "text": "x"},
    }
    ok = {"type": "text", "text": "ok"}
    assert anthropic_violation([USER, {"role": "assistant", "content": [called, advice, ok]}, USER]) is None
    for content in ([advice, called, ok], [advice, ok]):
        found = anthropic_violation([USER, {"role": "assistant", "content": content}, USER])
        assert found is not None and found.at == "messages.1"
        assert found.problem == (
            "content.0: unexpected `tool_use_id` found in `advisor_tool_result` blocks: srvtoolu_9. Each "
            "`advisor_tool_result` block must have a corresponding `server_tool_use` block before it"
        )


def test_every_violation_is_listed_in_order():
    bad_text = {"role": "user", "content": [{"type": "text", "text": ""}]}
    found = anthropic_violations([FINAL, bad_text, {"role": "assistant", "content": [RESULT]}])
    problems = [v.problem for v in found]
    assert len(found) == 3
    assert "text blocks must be non-empty" in problems[0] and "not allowed in a assistant" in problems[1]
    assert 'first message must use the "user" role' in problems[2]


@pytest.mark.parametrize("where", ["tool_use_id", "id"])
def test_an_id_that_is_a_list_is_a_violation_not_a_crash(where):
    # Found by the CLI fuzz (prune on a field mutant of anthropic-request.json): an id of the
    # wrong type reached a set and raised TypeError (unhashable list).
    odd = [{"type": "text"}]
    calling = {**CALLING, "content": [{**TOOL_USE, "id": odd}]} if where == "id" else CALLING
    answer = {"role": "user", "content": [{**RESULT, "tool_use_id": odd}]} if where == "tool_use_id" else None
    params = [USER, calling, answer or {"role": "user", "content": [RESULT]}, FINAL]
    problems = [v.problem for v in anthropic_violations(params)]
    assert any(p.endswith(("has no id string", "has no tool_use_id string")) for p in problems), problems
    request = {"model": "claude", "max_tokens": 10, "messages": params}
    assert anthropic_violations([request])  # the request form walks the same pairing


def test_two_tool_use_blocks_of_one_id_anywhere_in_the_request_are_refused():
    """The API's words, at the later block (anthropics/claude-code#28515: "messages.43.content.2: tool_use ids must be
    unique"); each repeat is a violation of its own."""
    again = {"role": "assistant", "content": [{"type": "text", "text": "again"}, TOOL_USE]}
    params = [USER, CALLING, ANSWERED, again, {"role": "user", "content": [RESULT]}, FINAL]
    found = anthropic_violations(params)
    assert [(v.at, v.problem) for v in found] == [("messages.3.content.1", "`tool_use` ids must be unique")]
    renamed = {**again, "content": [again["content"][0], {**TOOL_USE, "id": "toolu_2"}]}
    answered = {"role": "user", "content": [{**RESULT, "tool_use_id": "toolu_2"}]}
    assert anthropic_violations([USER, CALLING, ANSWERED, renamed, answered, FINAL]) == []


def test_two_input_items_of_one_id_are_refused():
    """The Responses API refuses an input holding one item twice ("Duplicate item found with id rs_...", as a
    client that replays a response's items after sending them met it: vercel/ai#7883)."""
    again = {**REASONING, "summary": [{"type": "summary_text", "text": "think again"}]}
    items = [USER_ITEM, REASONING, CALL, OUTPUT, again, ANSWER]
    assert [(v.at, v.problem) for v in responses_violations(items)] == [
        ("input[4]", "Duplicate item found with id rs_1")
    ]
    assert responses_violations([USER_ITEM, REASONING, CALL, OUTPUT, {**again, "id": "rs_2"}, ANSWER]) == []
