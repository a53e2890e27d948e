"""summary, rolling, selective and structured with a scripted summarizer."""

from __future__ import annotations

import json

import pytest

from compactctl.compaction import compact
from compactctl.errors import InputError
from compactctl.strategies import STRATEGIES, StepContext, options_from
from compactctl.strategies.summarizing import SUMMARY_HEADER, chunk
from compactctl.summarizers.render import render_message
from compactctl.tokens import counter_for
from compactctl.transcript import is_valid
from tests.conftest import unchanged
from tests.helpers import call

COUNTER = counter_for()


def run(name, messages, settings, summarizer):
    strategy = STRATEGIES[name]
    return strategy.run(messages, options_from(strategy.options, settings), StepContext(COUNTER, summarizer))


def long_chat(turns: int, words: int = 60) -> list[dict]:
    """A system prompt, then user/assistant turns with a tool round in each."""
    messages: list[dict] = [{"role": "system", "content": "You are a support agent."}]
    for n in range(turns):
        messages.append(
            {"role": "user", "content": f"Question {n}: " + "please check the order status " * (words // 5)}
        )
        messages.append(
            {"role": "assistant", "content": None, "tool_calls": [call(f"c{n}", "lookup", json.dumps({"order": n}))]}
        )
        messages.append({"role": "tool", "tool_call_id": f"c{n}", "content": f"order {n}: shipped " * (words // 3)})
        messages.append({"role": "assistant", "content": f"Order {n} has shipped. " * (words // 4)})
    return messages


def test_summary_below_the_threshold_changes_nothing(agent_messages, scripted):
    result = run("summary", agent_messages, {}, scripted)
    assert result.messages == agent_messages and scripted.requests == []


def test_summary_replaces_old_messages_after_the_system_prompt(scripted):
    messages = long_chat(6)
    original = unchanged(messages)
    scripted.enqueue("the gist", prompt_tokens=100, completion_tokens=20)
    result = run("summary", messages, {"threshold": 100, "keep_recent": 2}, scripted)
    assert messages == original
    # The last 2 messages start on a tool result: the tail moves back to its call.
    assert messages[-2]["role"] == "tool"
    assert result.messages[0] == messages[0]
    assert result.messages[1]["role"] == "system"
    # The model's summary lost the user's latest request (summarized, not in the tail): it is appended.
    latest = messages[-4]["content"].strip()
    assert result.messages[1]["content"] == (
        SUMMARY_HEADER.format(count=len(messages) - 4) + "\n\nthe gist\n\n## Latest user request (verbatim)\n" + latest
    )
    assert result.messages[2:] == messages[-3:]
    assert result.origins == [0, None, *range(len(messages) - 3, len(messages))]
    assert {f.action for f in result.fates.values()} == {"summarized"}
    assert sorted(result.fates) == list(range(1, len(messages) - 3))
    assert result.usage.calls == 1 and result.usage.prompt_tokens == 100
    (request,) = scripted.requests
    assert request.strategy == "summary" and request.max_tokens == 500
    assert request.messages == messages[1:-3]
    assert is_valid(result.messages)


def test_summary_role_user_on_request(scripted):
    scripted.enqueue("gist")
    result = run("summary", long_chat(4), {"threshold": 10, "summary_role": "user"}, scripted)
    assert result.messages[1]["role"] == "user"
    with pytest.raises(InputError, match="summary_role must be one of system, user, not 'tool'"):
        run("summary", long_chat(4), {"threshold": 10, "summary_role": "tool"}, scripted)


def test_pinned_messages_and_the_last_copy_of_a_fact_are_never_summarized(scripted):
    messages = long_chat(6)
    messages[1] = {**messages[1], "compactctl": {"pin": True}}
    # Only message 7 (a tool result: its call stays too) holds "order 1: SHIPPED".
    messages[7] = {**messages[7], "compactctl": {"facts": ["order 1:  SHIPPED"]}}
    scripted.enqueue("gist")
    result = run("summary", messages, {"threshold": 10, "keep_recent": 2}, scripted)
    for index in (1, 6, 7):
        assert messages[index] in result.messages and index not in result.fates
    assert all(m not in scripted.requests[0].messages for m in (messages[1], messages[6], messages[7]))
    assert is_valid(result.messages)


def test_a_fact_the_kept_tail_holds_lets_its_earlier_copies_be_summarized(scripted):
    messages = long_chat(6)
    messages[7] = {**messages[7], "compactctl": {"facts": ["shipped"]}}  # the kept tail says "has shipped" too
    scripted.enqueue("gist")
    result = run("summary", messages, {"threshold": 10, "keep_recent": 2}, scripted)
    assert result.fates[7].action == "summarized"
    assert "shipped" in result.messages[-1]["content"]


def test_still_over_the_threshold_is_said_not_looped(scripted):
    messages = long_chat(3, words=400)
    scripted.enqueue("gist")
    result = run("summary", messages, {"threshold": 50, "keep_recent": 4}, scripted)
    assert len(scripted.requests) == 1
    assert any("still" in note and "over the threshold of 50" in note for note in result.notes)


def test_chunks_in_order_each_carry_the_running_summary_and_fit_the_limit(scripted):
    messages = long_chat(10, words=200)
    limit = 1500
    span = messages[1:-6]
    pieces = chunk(span, limit, COUNTER, reserved=100)
    scripted.enqueue(*[f"running summary {i}" for i in range(1, len(pieces) + 1)])
    settings = {"threshold": 10, "summary_max_tokens": 100, "summary_input_max_tokens": limit}
    result = run("summary", messages, settings, scripted)
    assert len(pieces) > 2 and len(scripted.requests) == len(pieces)  # no merge step
    seen = []
    for number, request in enumerate(scripted.requests, 1):
        running = COUNTER(request.previous_summary or "")
        assert sum(COUNTER(render_message(m, 9999)) + 2 for m in request.messages) + running <= limit
        # Each chunk is summarized knowing the summary of every chunk before it, in order.
        assert request.previous_summary == (f"running summary {number - 1}" if number > 1 else None)
        assert request.part == (number, len(pieces)) and request.whole_span == scripted.requests[0].whole_span
        seen += request.messages
    whole = scripted.requests[0].whole_span
    assert seen == whole == messages[1 : 1 + len(whole)] and abs(len(whole) - len(span)) <= 1
    assert "running summary " + str(len(pieces)) in result.messages[1]["content"]
    assert result.usage.calls == len(pieces)


def test_one_huge_message_is_cut_into_pieces_under_the_limit(scripted):
    huge = {"role": "tool", "tool_call_id": "c0", "content": "x1 y2 z3 " * 3000}
    pieces = chunk([huge], 500, COUNTER)
    assert len(pieces) > 1
    assert all(sum(COUNTER(render_message(m, 9999)) + 2 for m in piece) <= 500 for piece in pieces)


def test_too_small_an_input_limit_is_refused(scripted):
    with pytest.raises(InputError, match="`summary_input_max_tokens`"):
        run("summary", long_chat(4), {"threshold": 10, "summary_input_max_tokens": 100}, scripted)


def test_rolling_folds_with_the_previous_summary_reinjected(scripted):
    messages = long_chat(8)
    original = unchanged(messages)
    scripted.enqueue("memory 1", "memory 2", "memory 3", "memory 4", "memory 5", "memory 6")
    threshold = COUNTER.messages(messages) // 3
    result = run("rolling", messages, {"threshold": threshold, "window": 4}, scripted)
    assert messages == original
    assert len(scripted.requests) >= 2
    assert scripted.requests[0].previous_summary is None
    for before, after in zip(scripted.requests, scripted.requests[1:], strict=False):
        assert after.previous_summary == f"memory {scripted.requests.index(before) + 1}"
    last = f"memory {len(scripted.requests)}"
    scripted.replies.clear()  # the walk used what it needed
    assert result.messages[1]["content"].endswith(last) and result.origins[1] is None
    # Nothing summarized twice, nothing lost: every input message is kept or folded.
    kept = {i for i in result.origins if i is not None}
    assert kept | set(result.fates) == set(range(len(messages))) and not kept & set(result.fates)
    assert result.messages[-1] == messages[-1] and is_valid(result.messages)
    assert COUNTER.messages(result.messages) <= threshold or result.notes


def test_rolling_under_the_threshold_is_the_whole_transcript(agent_messages, scripted):
    assert run("rolling", agent_messages, {}, scripted).messages == agent_messages


def test_selective_keeps_code_json_and_patterns_in_place(scripted):
    messages = long_chat(5)
    messages[1] = {"role": "user", "content": "Here is the config:\n```toml\n[tool]\nx = 1\n```"}
    messages[5] = {"role": "user", "content": '{"order": 42, "items": [1, 2]}'}
    messages[9] = {"role": "user", "content": "Ticket SUP-1234 is the one to watch, remember it."}
    scripted.enqueue("chat gist")
    result = run("selective", messages, {"threshold": 10, "keep_pattern": [r"SUP-\d+"]}, scripted)
    assert [result.messages.index(messages[i]) for i in (1, 5, 9)] == sorted(
        result.messages.index(messages[i]) for i in (1, 5, 9)
    )
    for index in (1, 5, 9):
        assert messages[index] in result.messages and index not in result.fates
    assert all(m not in scripted.requests[0].messages for m in (messages[1], messages[5], messages[9]))
    assert scripted.requests[0].max_tokens == 200 and scripted.requests[0].strategy == "selective"
    assert result.messages[1]["content"].endswith("chat gist") and is_valid(result.messages)


def test_selective_refuses_a_bad_pattern(scripted):
    with pytest.raises(InputError, match="`keep_pattern`"):
        run("selective", long_chat(2), {"keep_pattern": ["("]}, scripted)


def test_structured_keeps_the_last_turns_and_trims_long_outputs_first(scripted):
    messages = long_chat(6)
    messages[-2] = {**messages[-2], "content": "\n".join(f"line {n}" for n in range(2000))}  # in the kept tail
    original = unchanged(messages)
    scripted.enqueue("## Goal\n- help")
    settings = {
        "keep_turns": 2,
        "keep_recent": 50,
        "tool_max_tokens": 200,
        "summary_ratio": 0,
        "summary_max_tokens": 1000,
    }
    result = run("structured", messages, settings, scripted)
    assert messages == original
    users = [i for i, m in enumerate(messages) if m["role"] == "user"]
    tail = messages[users[-2] :]
    assert len(result.messages) == 2 + len(tail)
    assert "\n\n## Goal\n- help" in result.messages[1]["content"]
    trimmed = result.messages[-2]
    assert "compactctl elided" in trimmed["content"] and result.fates[len(messages) - 2].action == "elided"
    assert scripted.requests[0].messages == messages[1 : users[-2]]  # the summarizer reads the originals
    assert scripted.requests[0].max_tokens == 1000


def test_structured_caps_one_long_agent_turn(scripted):
    messages = long_chat(1) + [m for m in long_chat(6)[2:] if m["role"] != "user"]
    scripted.enqueue("gist")
    result = run("structured", messages, {"keep_recent": 4}, scripted)
    assert len(result.messages) <= 2 + 4 and result.messages[0]["role"] == "system"
    assert result.messages[2]["role"] != "tool" and is_valid(result.messages)


def test_structured_over_a_threshold_only_trims_when_that_is_enough(scripted):
    messages = long_chat(3)
    messages[3] = {**messages[3], "content": "\n".join(f"row {n}" for n in range(3000))}
    size_after_trim = COUNTER.messages(messages) - COUNTER(messages[3]["content"]) + 300
    result = run("structured", messages, {"threshold": size_after_trim + 200, "tool_max_tokens": 200}, scripted)
    assert scripted.requests == [] and len(result.messages) == len(messages)
    assert [f.action for f in result.fates.values()] == ["elided"]


def test_structured_trims_as_trim_tools_does_keeping_cache_control_and_the_last_output(scripted):
    messages = long_chat(3)[:-1]  # it ends with the output the agent is about to answer
    rows = "\n".join(f"row {n}" for n in range(3000))
    messages[3] = {**messages[3], "content": [{"type": "text", "text": rows, "cache_control": {"type": "ephemeral"}}]}
    messages[-1] = {**messages[-1], "content": rows}
    settings = {"threshold": 10**6, "tool_max_tokens": 200}
    result = run("structured", messages, settings, scripted)
    trimmed = run("trim-tools", messages, settings, scripted)
    assert result.messages[3] == trimmed.messages[3]
    assert result.messages[3]["content"][0]["cache_control"] == {"type": "ephemeral"}
    assert "compactctl elided" in result.messages[3]["content"][0]["text"]
    assert result.messages[-1] is messages[-1] and trimmed.messages[-1] is not messages[-1]
    assert result.fates[3].reason == "structured: tool output over 200 tokens trimmed"


def test_structured_with_the_extractive_summarizer_quotes_constraints(agent_messages):
    french = {"role": "user", "content": "Merci. Ne touchez jamais au fichier setup.py. Il faut garder Python 3.11."}
    messages = [*agent_messages[:8], french, {"role": "assistant", "content": "Compris."}, *agent_messages[8:]]
    # A long explanation, so the summary is smaller than what it replaces (else nothing is replaced).
    messages[7] = {**messages[7], "content": messages[7]["content"] + " It was a sign slip." * 150}
    result = compact(messages, ["structured"], {"keep_turns": 1})
    summary = result.messages[1]["content"]
    for quoted in (
        "Do not change the public interface.",
        "Ne touchez jamais au fichier setup.py.",
        "Il faut garder Python 3.11.",
    ):
        assert quoted in summary
    for fact in ("src/app.py", "pytest -q", "FAILED tests/test_app.py::test_add", "0.12s"):
        assert fact in summary


class Numbered:
    """Answers every request with "gist N" and records what it was given."""

    def __init__(self) -> None:
        self.requests: list = []

    def summarize(self, request):
        from compactctl.summarizers import Summary

        self.requests.append(request)
        return Summary(f"gist {len(self.requests)}")


def summaries_in(messages):
    return [m for m in messages if str(m.get("content", "")).startswith("[compactctl summary of")]


@pytest.mark.parametrize(
    ("name", "settings"),
    [
        ("summary", {"threshold": 100, "keep_recent": 2}),
        ("structured", {"keep_turns": 1, "keep_recent": 2}),
        ("selective", {"threshold": 100, "keep_recent": 2}),
        ("rolling", {"threshold": 600, "window": 2}),
    ],
)
def test_compacting_again_folds_the_earlier_summary_instead_of_piling_up(name, settings):
    summarizer = Numbered()
    first = run(name, long_chat(6), settings, summarizer)
    (earlier,) = summaries_in(first.messages)
    calls = len(summarizer.requests)
    grown = first.messages + long_chat(4)[1:]
    second = run(name, grown, settings, summarizer)
    (summary,) = summaries_in(second.messages)
    # The earlier summary is re-injected, so nothing learned before is forgotten, and counted.
    # (the latest request, which "gist N" lost, is appended to it verbatim)
    assert summarizer.requests[calls].previous_summary.startswith(f"gist {calls}\n\n## Latest user request")
    assert f"\n\ngist {len(summarizer.requests)}" in summary["content"]
    assert grown.index(earlier) in second.fates
    new = [i for i, fate in second.fates.items() if fate.action == "summarized" and grown[i] is not earlier]
    earlier_count = int(earlier["content"].split(" of ")[1].split()[0])
    assert summary["content"].startswith(f"[compactctl summary of {earlier_count + len(new)} earlier messages]")
    assert is_valid(second.messages)


def test_rolling_with_threshold_zero_folds_once_at_the_end():
    # Replay compacts at a stage end with threshold 0: one fold, not one per unit.
    summarizer = Numbered()
    messages = long_chat(8)
    result = run("rolling", messages, {"threshold": 0, "window": 4}, summarizer)
    assert len(summarizer.requests) == 1
    assert len(result.messages) == 1 + 1 + 4  # system, summary, the window
    assert is_valid(result.messages)


def test_rolling_over_its_own_summary_alone_waits_for_new_messages_to_fold():
    # A summary already over the threshold, before any new message: nothing to fold yet
    # (this was an IndexError, seen replaying a real Claude Code session at -t 4000).
    first = compact(
        [{"role": "user", "content": f"{word} " * 300} for word in ("one", "two", "three")]
        + [{"role": "assistant", "content": "ok " * 300}],
        ["rolling"],
        {"threshold": 50, "window": 1},
    )
    again = compact(first.messages, ["rolling"], {"threshold": 1, "window": 1})
    assert again.messages[0]["content"].startswith(SUMMARY_HEADER.split("{")[0])
    assert is_valid(again.messages)


@pytest.mark.parametrize("name", ["summary", "structured", "rolling"])
def test_an_earlier_summary_read_back_as_developer_is_folded_too(name):
    # Codex has no system message item: a system summary written there is read back as developer.
    settings = {"threshold": 100, "keep_recent": 2, "keep_turns": 1, "window": 2}
    if name == "rolling":
        settings["threshold"] = 600
    summarizer = Numbered()
    first = run(name, long_chat(6), settings, summarizer)
    calls = len(summarizer.requests)
    moved = [{**m, "role": "developer"} if m in summaries_in(first.messages) else m for m in first.messages]
    second = run(name, moved + long_chat(4)[1:], settings, summarizer)
    assert len(summaries_in(second.messages)) == 1  # folded, not piled up
    assert summarizer.requests[calls].previous_summary.startswith(f"gist {calls}")


def test_a_summary_no_smaller_than_what_it_replaces_is_not_used(agent_messages):
    # Four short messages summarized: the extractive summary's sections outweigh them.
    result = compact(agent_messages, ["structured"], {"keep_turns": 1})
    assert result.messages == agent_messages
    assert any("would not be smaller" in note for note in result.notes)
    assert result.usage.calls == 1  # the summarizer ran; its result was not used


def _owned(message: dict) -> bool:
    return str(message.get("content")).startswith("<environment_context>")


@pytest.mark.parametrize("name", ["summary", "selective", "structured", "rolling"])
def test_a_summary_never_folds_the_client_s_own_context_and_follows_it(name, scripted):
    from compactctl.strategies import ClientView

    messages = long_chat(6)
    messages.insert(1, {"role": "user", "content": "<environment_context>\n  <cwd>/srv</cwd>\n</environment_context>"})
    original = unchanged(messages)
    scripted.enqueue("the gist")
    strategy = STRATEGIES[name]
    settings = {"threshold": 0, "keep_recent": 2, "window": 2, "keep_turns": 1}
    context = StepContext(COUNTER, scripted, ClientView(owned=_owned))
    result = strategy.run(messages, options_from(strategy.options, settings), context)
    assert messages == original
    assert 1 not in result.fates  # kept in place, not folded into the summary
    assert result.messages[:2] == messages[:2]  # the system prompt, then the client's context
    assert result.origins[2] is None and "the gist" in result.messages[2]["content"]  # then the summary


@pytest.mark.parametrize("name", ["summary", "rolling"])
def test_a_summary_is_judged_as_the_output_s_writer_writes_it(name, scripted):
    from compactctl.strategies import ClientView

    messages = long_chat(2, words=10)
    scripted.enqueue("the gist")
    settings = {"threshold": 0, "keep_recent": 2, "window": 2}
    strategy = STRATEGIES[name]
    in_memory = strategy.run(messages, options_from(strategy.options, settings), StepContext(COUNTER, scripted))
    assert any(origin is None for origin in in_memory.origins)  # smaller in memory: made
    scripted.enqueue("the gist")
    preamble = "Another language model started to solve this problem. " * 20

    def written(summary: dict) -> dict:
        return {"role": "user", "content": preamble + summary["content"]}

    context = StepContext(COUNTER, scripted, ClientView(summary=written))
    as_written = strategy.run(messages, options_from(strategy.options, settings), context)
    assert as_written.messages == messages  # as the writer writes it, it saves nothing: not made
    assert any("would not be smaller" in note for note in as_written.notes)
