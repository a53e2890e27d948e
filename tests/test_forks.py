"""Forked workers beside the parent's own thread (``compactctl.forks``): each task answered by the
slot it was given to, the parent's slot in the parent, and a worker that cannot answer named, never waited on."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading

import pytest

from compactctl.forks import Workers


def test_each_slot_answers_its_own_tasks_the_parent_s_in_the_parent():
    workers = Workers(2, forked=lambda task: (task * task, os.getpid()), here=lambda task: (-task, os.getpid()))
    try:
        assert workers.slots == 3
        answers: dict[int, tuple[int, int]] = {}
        for slot, task in ((0, 3), (1, 4), (2, 5)):
            workers.give(slot, task)
        while len(answers) < 3:
            answers.update(workers.finished())
        workers.give(2, 6)  # a worker runs task after task
        (slot, again), *_ = workers.finished()
    finally:
        workers.close()
    assert [answers[slot][0] for slot in range(3)] == [-3, 16, 25]
    assert answers[0][1] == os.getpid() and len({pid for _, pid in answers.values()} - {os.getpid()}) == 2
    assert (slot, again) == (2, (36, answers[2][1]))


def test_the_workers_are_gone_after_close():
    workers = Workers(2, forked=lambda task: task, here=lambda task: task)
    workers.close()
    for pid in workers.pids:
        with pytest.raises(ChildProcessError):  # reaped: no zombie left
            os.waitpid(pid, os.WNOHANG)


def test_what_the_parent_s_thread_raises_is_raised_in_the_main_thread():
    def here(task: int) -> int:
        raise ValueError(f"task {task}")

    workers = Workers(1, forked=lambda task: task, here=here)
    try:
        workers.give(0, 7)
        with pytest.raises(ValueError, match="task 7"):
            workers.finished()
    finally:
        workers.close()


def test_an_answer_that_cannot_be_pickled_is_named():
    workers = Workers(1, forked=lambda task: threading.Lock(), here=lambda task: task)
    try:
        workers.give(1, 0)
        with pytest.raises(RuntimeError, match="could not send its answer back: TypeError"):
            workers.finished()
    finally:
        workers.close()


def test_a_worker_killed_in_the_middle_of_a_task_is_an_error_not_a_wait():
    def forked(task: int) -> int:
        os.kill(os.getpid(), signal.SIGKILL)
        return task

    workers = Workers(1, forked=forked, here=lambda task: task)
    try:
        workers.give(1, 0)
        with pytest.raises(RuntimeError, match="ended in the middle of a task"):
            workers.finished()
    finally:
        workers.close()


def test_forking_files_imports_no_multiprocessing():
    # The pool it replaces imported multiprocessing and its queues before the fork: ~20-40 ms of every run.
    code = (
        "import sys\n"
        "from compactctl.files.io import Job\n"
        "from compactctl.files.jobs import run_jobs\n"
        "jobs = [Job(f'f{i}', None, f'f{i}') for i in range(4)]\n"
        "done = run_jobs(jobs, lambda job: job.name, parallel=2, engine='processes')\n"
        "assert done == (['f0', 'f1', 'f2', 'f3'], []), done\n"
        "print(sorted(m for m in sys.modules if m.startswith(('multiprocessing', 'concurrent.futures.process'))))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_tasks_given_ahead_are_each_answered_once_in_order():
    # The parent's thread may end two tasks before the main thread reads either answer.
    both_done = threading.Event()

    def here(task: int) -> int:
        if task == 2:
            both_done.set()
        return task * 10

    workers = Workers(1, forked=lambda task: task + 100, here=here)
    try:
        for task in (1, 2):
            workers.give(0, task)
        for task in (3, 4):
            workers.give(1, task)
        assert both_done.wait(10)
        answers: list[tuple[int, int]] = []
        while len(answers) < 4:
            answers += workers.finished()
    finally:
        workers.close()
    assert [answer for slot, answer in answers if slot == 0] == [10, 20]
    assert [answer for slot, answer in answers if slot == 1] == [103, 104]


def test_the_parent_s_thread_starts_no_task_given_ahead_after_a_stop():
    running, release, ran = threading.Event(), threading.Event(), []

    def here(task: int) -> int:
        ran.append(task)
        running.set()
        release.wait(10)
        return task

    workers = Workers(1, forked=lambda task: task, here=here)
    workers.give(0, 1)
    workers.give(0, 2)  # given ahead, behind the task it runs
    assert running.wait(10)
    workers.stop()
    workers.close(wait=False)
    release.set()
    workers.here.join(10)
    assert not workers.here.is_alive() and ran == [1]


def test_a_worker_told_there_is_no_more_leaves_after_the_tasks_it_holds_and_its_end_is_no_error():
    import time

    workers = Workers(1, forked=lambda task: task * 2, here=lambda task: -task)
    try:
        for task in (3, 4):
            workers.give(1, task)
        workers.give_no_more()
        answers: list[tuple[int, int]] = []
        while len(answers) < 2:
            answers += workers.finished()
        assert answers == [(1, 6), (1, 8)]
        deadline = time.monotonic() + 10
        while not (ended := os.waitpid(workers.pids[0], os.WNOHANG))[0] and time.monotonic() < deadline:
            time.sleep(0.01)
        assert ended == (workers.pids[0], 0)  # it left on its own, before close told it to
        workers.give(0, 5)  # the end of its answer pipe is readable now: skipped, not a worker that died
        assert workers.finished() == [(0, -5)]
    finally:
        workers.close()
