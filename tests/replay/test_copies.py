"""Each billed call once across a run's files (compactctl/replay/copies.py): which file a shared call belongs to."""

from __future__ import annotations

from compactctl.replay.copies import BilledKeys, billed_elsewhere, reverted_at


def test_a_call_belongs_to_the_file_that_wrote_it_first():
    # A resume of a resume: the second copies the first's two calls (written when it was resumed, later), the third
    # copies those and the second's own.
    first = BilledKeys("first.jsonl", {"a": 10.0, "b": 11.0}, 2)
    second = BilledKeys("second.jsonl", {"a": 20.0, "b": 20.0, "c": 21.0}, 3)
    third = BilledKeys("third.jsonl", {"a": 30.0, "b": 30.0, "c": 30.0, "d": 31.0}, 4)
    assert billed_elsewhere([third, first, second]) == [
        {"a": "first.jsonl", "b": "first.jsonl", "c": "second.jsonl"},
        {},
        {"a": "first.jsonl", "b": "first.jsonl"},
    ]


def test_without_timestamps_the_file_with_fewer_calls_then_the_one_named_first_owns_it():
    origin = BilledKeys("origin.jsonl", {"a": None}, 1)
    resumed = BilledKeys("resumed.jsonl", {"a": None, "b": None}, 2)
    assert billed_elsewhere([resumed, origin]) == [{"a": "origin.jsonl"}, {}]
    same = BilledKeys("same.jsonl", {"a": 1.0}, 1)
    assert billed_elsewhere([same, same]) == [{}, {"a": "same.jsonl"}]


def test_calls_no_other_file_holds_stay_where_they_are():
    assert billed_elsewhere([BilledKeys("x", {"a": 1.0}, 1), BilledKeys("y", {"b": 1.0}, 1)]) == [{}, {}]


def test_each_revert_cuts_the_rollout_it_goes_on_from_at_the_threads_line_less_that_rollouts_start():
    # Codex 0.171's lines as three reverts named them (tests/recorded/data/codex-0.171.0-reverts): each rollout's base
    # is the one before it, and its lines are counted from where that one was kept up to.
    first = BilledKeys("first", {}, 3, thread="t")
    second = BilledKeys("second", {}, 1, thread="r2", continues=("t", 22))
    third = BilledKeys("third", {}, 3, thread="r3", continues=("r2", 26))
    last = BilledKeys("last", {}, 1, thread="r4", continues=("r3", 51))
    assert reverted_at([first, second, third, last]) == [22, 4, 25, None]
    # Two reverts of one rollout: the later one is the live thread.
    again = BilledKeys("again", {}, 1, thread="r5", continues=("t", 9))
    assert reverted_at([first, second, again]) == [9, None, None]
