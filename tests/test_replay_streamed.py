"""Replay a message at a time: the incremental context, figures worked out once, the chat file streamed."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from compactctl.errors import InputError
from compactctl.files.io import opener
from compactctl.formats import chat, load, load_records, records_of
from compactctl.replay import Prices, replay, settings_grid
from compactctl.replay.simulate import Context, FigureCounter, replay_streamed
from compactctl.strategies import StrategyOptions
from compactctl.tokens import TokenCounter
from compactctl.transcript import facts_of
from tests.helpers import replay_file_with

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))

from workloads import generate

from tests.properties import examples

PRICES = Prices("test", input=2.0, cached_input=0.5, cache_write=2.5, output=8.0, min_cached_tokens=0)


def figures_of(messages: list[dict[str, Any]], counter: TokenCounter, facts: tuple[str, ...] = ()):
    counts = FigureCounter(counter, facts, None)
    return [counts.figures(m) for m in messages]


def test_context_keeps_prefix_sums_facts_and_keys_as_it_grows():
    counter = TokenCounter("approx")
    messages = [
        {"role": "system", "content": "You are terse."},
        {"role": "user", "content": "My order is ORD-1.", "compactctl": {"defines": ["order"]}},
        {"role": "assistant", "content": "Noted ord-1."},
    ]
    figures = figures_of(messages, counter, ("ORD-1",))
    context = Context()
    for message, figure in zip(messages, figures, strict=True):
        context.append(message, figure)
    sizes = [counter.message(m) for m in messages]
    assert list(context.prefix) == [0, sizes[0], sizes[0] + sizes[1], sum(sizes)]
    assert context.tokens == sum(sizes) and context.length == 3
    assert context.facts["ord-1"] == 2  # folded: both spellings count
    assert context.keys["order"] == 1
    assert context.shared_prefix_tokens(context, 2) == sizes[0] + sizes[1]


def test_a_context_that_never_compacts_keeps_only_its_sums():
    counter = TokenCounter("approx")
    messages = generate("tool", 20, seed=1)
    figures = figures_of(messages, counter)
    kept, counted = Context(), Context(keep_messages=False)
    for message, figure in zip(messages, figures, strict=True):
        kept.append(message, figure)
        counted.append(message, figure)
    assert counted.messages == [] and counted.figures == []
    assert (counted.prefix, counted.length, counted.keys) == (kept.prefix, kept.length, kept.keys)


def test_rebuilt_reuses_the_figures_of_kept_messages_and_counts_new_ones():
    counter = TokenCounter("approx")
    messages = [{"role": "user", "content": "a b c"}, {"role": "assistant", "content": "d e f g h"}]
    figures = figures_of(messages, counter)
    old = Context()
    for message, figure in zip(messages, figures, strict=True):
        old.append(message, figure)

    worked_out: list[Any] = []

    class Counting(FigureCounter):
        def figures(self, message):
            worked_out.append(message)
            return super().figures(message)

    summary = {"role": "user", "content": "summary of earlier turns"}
    new = Context.rebuilt([summary, messages[1]], old, Counting(counter, (), None))
    assert worked_out == [summary]  # the kept reply is not counted again
    assert new.figures[1] is figures[1]
    assert list(new.prefix) == [0, counter.message(summary), counter.message(summary) + figures[1].tokens]
    # Equal but not the same object: counted afresh (identity is what the figures are kept by).
    assert Context.rebuilt([dict(messages[0])], old, Counting(counter, (), None)).tokens == figures[0].tokens
    assert len(worked_out) == 2


def test_figures_find_facts_folded_and_stage_ends_by_marker_or_annotation():
    counter = TokenCounter("approx")
    counts = FigureCounter(counter, ["Budget is 40 EUR", "  "], re.compile(r"STAGE DONE"))
    assert counts.facts == ("budget is 40 eur",)  # an empty fact is no fact
    found = counts.figures({"role": "user", "content": "the  BUDGET is 40 eur. STAGE DONE"})
    assert found.facts == ("budget is 40 eur",) and found.ends_stage
    annotated = counts.figures({"role": "tool", "content": "x", "compactctl": {"stage_end": True, "references": "k"}})
    assert annotated.ends_stage and annotated.references == ("k",) and annotated.facts == ()
    assert not counts.figures({"role": "user", "content": "stage done"}).ends_stage  # the marker is case-sensitive


@settings(max_examples=examples(25), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    turns=st.integers(5, 60),
    seed=st.integers(0, 50),
    workload=st.sampled_from(["chat", "rag", "tool"]),
    thresholds=st.lists(st.integers(300, 6000), min_size=1, max_size=3),
    steps=st.sampled_from([("window",), ("prune", "trim-tools"), ("structured",), ("mask-observations",)]),
)
def test_streamed_replay_equals_replay_of_the_list_and_walks_twice(turns, seed, workload, thresholds, steps):
    messages = generate(workload, turns, seed=seed, facts_in="tools" if workload != "chat" else "user")
    grid = settings_grid(thresholds, True, steps)
    counter = TokenCounter("approx")
    walks = []

    def walk():
        walks.append(1)
        return iter(messages)  # a one-shot iterator, as a file stream is

    streamed = replay_streamed(
        walk, grid, StrategyOptions.from_values({"keep_recent": 4}), counter=counter, prices=PRICES
    )
    assert len(walks) == 2  # once for the facts, once for the calls
    assert streamed == replay(messages, grid, {"keep_recent": 4}, counter=counter, prices=PRICES)


def test_observations_are_marked_as_the_whole_file_reader_marks_them(tmp_path):
    messages = [
        {"role": "system", "content": "run commands"},
        {"role": "user", "content": "<returncode>0</returncode> not after an assistant"},
        {"role": "assistant", "content": "```bash\nls\n```"},
        {"role": "user", "content": "<returncode>0</returncode><output>a.py</output>"},
        {"role": "assistant", "content": "```bash\ncat a.py\n```"},
        {"role": "user", "content": "<returncode>1</returncode>", "compactctl": {"pin": True}},
        {"role": "assistant", "content": "done"},
        {"role": "user", "content": "thanks"},
    ]
    path = tmp_path / "run.jsonl"
    path.write_text("".join(json.dumps(m) + "\n" for m in messages))
    _, (read_whole,) = load(path.read_bytes(), str(path))
    marked = [message for message, _ in chat.LineFile(opener(str(path)), str(path))()]
    assert marked == read_whole.messages
    assert [i for i, m in enumerate(marked) if m.get("compactctl") == {"kind": "observation"}] == [3]
    assert messages[3] == {"role": "user", "content": "<returncode>0</returncode><output>a.py</output>"}  # a copy


@pytest.mark.parametrize("skip", [False, True])
def test_replay_file_streams_a_chat_file_and_lists_a_skipped_line_once(tmp_path, skip):
    messages = generate("tool", 40, seed=2)
    lines = [json.dumps(m) for m in messages]
    path = tmp_path / "agent.jsonl"
    path.write_text("\n".join([*lines[:5], "{bad", *lines[5:]]) + "\n")
    grid = settings_grid([3000], False, ["window"])
    counter = TokenCounter("approx")
    options = {"on_error": "skip" if skip else "fail", "keep_recent": 4}
    if not skip:
        with pytest.raises(InputError, match=r"agent.jsonl:6:2: malformed JSON"):
            replay_file_with(str(path), "agent.jsonl", grid, options, counter, PRICES)
        return
    result = replay_file_with(str(path), "agent.jsonl", grid, options, counter, PRICES)
    assert [s.line for s in result.skipped_lines] == [6]
    assert (result.format, result.transcripts) == ("chat", 1)
    assert result.settings == replay(messages, grid, options, counter=counter, prices=PRICES)


def test_chat_facts_finds_every_declared_fact_a_whole_read_finds(tmp_path):
    lines = [
        b'\xef\xbb\xbf{"role": "user", "content": "hi", "compactctl": {"facts": ["BOM first line"]}}',
        b'{"role": "assistant", "content": "facts are not here"}',
        b'{"role": "user", "content": "x", "compactctl": {"f\\u0061cts": ["escaped key"]}}',
        b'{"role": "user", "content": "y", "compactctl": {"facts": "one without its list"}}',
        b'{"role": "user", "content": "no annotation at all"}',
    ]
    path = tmp_path / "facts.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    _, (whole,) = load(path.read_bytes(), str(path))
    expected = [fact for message in whole.messages for fact in facts_of(message)]
    assert expected == ["BOM first line", "escaped key", "one without its list"]
    assert chat.LineFile(opener(str(path)), str(path)).declared_facts() == expected


def test_chat_facts_leaves_a_bad_line_to_the_walk(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_bytes(b'{"role": "user", "content": "a", "compactctl": {"facts": ["kept"]}}\n{"facts": \n[1, "facts"]\n')
    assert chat.LineFile(opener(str(path)), str(path)).declared_facts() == ["kept"]


def test_skipped_lines_are_listed_as_a_whole_read_lists_them(tmp_path):
    messages = generate("chat", 6, seed=4)
    lines = [json.dumps(m) for m in messages]
    # A line that is a JSON value but not a message (line 3) comes before one that is not JSON (line 6).
    path = tmp_path / "mixed.jsonl"
    path.write_text("\n".join([*lines[:2], '{"content": "no role"}', *lines[2:4], "{bad", *lines[4:]]) + "\n")
    grid = settings_grid([500], False, ["window"])
    counter = TokenCounter("approx")
    options = {"on_error": "skip", "keep_recent": 2}
    streamed = replay_file_with(str(path), "mixed.jsonl", grid, options, counter, PRICES)
    skipped: list = []
    _, (whole,) = load_records(records_of(path.read_bytes(), str(path), skipped), str(path), "auto", skipped)
    assert streamed.skipped_lines == tuple(sorted(skipped, key=lambda s: s.line))  # what and where, in file order
    assert [s.line for s in streamed.skipped_lines] == [3, 6]
    assert streamed.settings == replay(whole.messages, grid, options, counter=counter, prices=PRICES)


def test_a_chat_file_with_no_readable_message_fails_as_a_whole_read_fails(tmp_path):
    path = tmp_path / "none.jsonl"
    path.write_text('{"content": "no role"}\n{"role": "nobody"}\n')
    grid = settings_grid([500], False, ["window"])
    counter = TokenCounter("approx")
    with pytest.raises(InputError) as streamed:
        replay_file_with(str(path), "none.jsonl", grid, {"on_error": "skip"}, counter, PRICES)
    assert "unknown role 'nobody'" in str(streamed.value)
