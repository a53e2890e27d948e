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


def _sized_jobs(folder, sizes):
    from compactctl.files.io import Job

    jobs = []
    for i, size in enumerate(sizes):
        path = folder / f"f{i:02d}.jsonl"
        path.write_bytes(b"x" * size)
        jobs.append(Job(str(path), None, path.name))
    return jobs


class _Recorded:
    """A progress reporter that keeps what it was told, in order."""

    def __init__(self) -> None:
        self.said: list[tuple[str, str]] = []

    def started(self, name: str) -> None:
        self.said.append(("started", name))

    def finished(self, name: str, size: int, failed: bool) -> None:
        self.said.append(("finished", name))

    def close(self) -> None:
        pass


def test_files_are_given_ahead_while_many_are_left_and_the_results_keep_the_files_order(tmp_path, monkeypatch):
    import os

    from compactctl import forks
    from compactctl.files.jobs import run_jobs

    # Copies of one size (10 s, 5 s, 3 s...), as a folder of sessions and their backups is.
    jobs = _sized_jobs(tmp_path, [100 + 10 * (i % 7) for i in range(21)])
    outstanding: dict[int, int] = {}
    most: dict[int, int] = {}  # files left to give -> the most one slot held at once
    real = forks.Workers

    class Watched(real):  # type: ignore[misc, valid-type]
        def give(self, slot: int, task: int) -> None:
            outstanding[slot] = outstanding.get(slot, 0) + 1
            left = len(jobs) - sum(seen.values())
            most[left] = max(most.get(left, 0), outstanding[slot])
            seen[task] = 1
            super().give(slot, task)

        def finished(self) -> list[tuple[int, object]]:
            done = super().finished()
            for slot, _ in done:
                outstanding[slot] -= 1
            return done

    seen: dict[int, int] = {}
    monkeypatch.setattr(forks, "Workers", Watched)
    results, failures = run_jobs(jobs, lambda job: (job.name, os.getpid()), parallel=2, engine="processes")
    assert [name for name, _ in results] == [job.name for job in jobs] and failures == []
    assert len({pid for _, pid in results}) == 2
    assert max(most.values()) == 2  # a slot was given its next file before it ended the one it ran
    assert all(held == 1 for left, held in most.items() if left <= 2)  # the last ones one at a time


def test_a_file_given_ahead_is_said_started_when_it_starts(tmp_path, monkeypatch):
    from compactctl import progress
    from compactctl.files.jobs import run_jobs

    jobs = _sized_jobs(tmp_path, [50 + i for i in range(12)])
    recorded = _Recorded()
    monkeypatch.setattr(progress, "progress_for", lambda *args: recorded)
    run_jobs(jobs, lambda job: job.name, parallel=2, engine="processes", progress=True)
    running: set[str] = set()
    for what, name in recorded.said:
        if what == "started":
            assert name not in running
            running.add(name)
            assert len(running) <= 2  # two processes: at most two files at once, though four are given
        else:
            running.remove(name)
    assert running == set() and sorted(name for what, name in recorded.said if what == "started") == sorted(
        job.source for job in jobs
    )
