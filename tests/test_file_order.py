"""The order forked workers take files in: every file once, largest first, copies kept on one worker."""

from hypothesis import given, settings
from hypothesis import strategies as st

from compactctl.files.jobs import _FileOrder
from tests.properties import examples


@settings(max_examples=examples(300))
@given(st.lists(st.integers(0, 5), max_size=30), st.integers(1, 4), st.randoms(use_true_random=False))
def test_every_file_is_run_once_and_a_freed_worker_keeps_to_its_size(sizes, workers, chance):
    order = _FileOrder(sizes)
    running: list[int] = []
    taken: list[int] = []
    while len(running) < min(workers, len(sizes)):
        running.append(order.next(None, running))
    taken += running
    while len(taken) < len(sizes):
        freed = running.pop(chance.randrange(len(running)))
        left_same = [i for i in range(len(sizes)) if i not in taken and sizes[i] == sizes[freed]]
        left_other = [i for i in range(len(sizes)) if i not in taken and sizes[i] not in {sizes[r] for r in running}]
        index = order.next(freed, running)
        if left_same:
            assert sizes[index] == sizes[freed]
        elif left_other:  # no two workers on one size while another size is left
            assert sizes[index] == max(sizes[i] for i in left_other)
        running.append(index)
        taken.append(index)
    assert sorted(taken) == list(range(len(sizes)))


def test_the_largest_files_start_first_each_on_its_own_size():
    order = _FileOrder([10, 30, 30, 20, 30])
    first = order.next(None, [])
    second = order.next(None, [first])
    assert (first, second) == (1, 3)  # 30, then 20: the other 30s wait for the worker on 30
    assert order.next(first, [second]) == 2


def test_without_sizes_the_files_keep_their_order():
    order = _FileOrder([0, 0, 0, 0])
    running = [order.next(None, []), order.next(None, [0])]
    assert running == [0, 1]
    assert [order.next(0, [1]), order.next(2, [1])] == [2, 3]
