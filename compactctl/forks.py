"""Forked workers beside the parent's own thread, fed task numbers through pipes.

A ``ProcessPoolExecutor`` did this before: its imports (multiprocessing, its queues) and its
two threads cost the parent about 40 ms of CPU before the fork and beside its own files, where
this exchange costs a few: each worker reads a task's number from one pipe and writes back its
pickled answer, length first, on another; the parent's main thread waits on every answer pipe
and on its own file thread with one selector, so it stays free for signals. A slot may be given
its next task before it ends the one it runs (each runs them in the order given): it then
starts it at once, without waiting for the parent's main thread to be told and to answer.

The work itself is never sent: the workers are forked holding it (a closure over the run's
settings, counter and summarizer), before any thread of this process starts (a fork copies
only the forking thread: a lock another thread held would stay locked in the child for good).
"""

from __future__ import annotations

import contextlib
import os
import pickle
import selectors
import signal
import struct
import sys
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import Any, NoReturn

_TASK = struct.Struct(">i")  # parent -> worker: the task to run next; -1: leave
_LENGTH = struct.Struct(">Q")  # worker -> parent: the length of the pickled answer that follows
LEAVE = -1


class Workers:
    """Slot 0, the parent's own thread, running ``here``; slots 1 to ``workers``, forked processes
    running ``forked`` (after ``started``, in each). Each runs one task at a time: ``give`` it one,
    ``finished`` says which ended and what they answered."""

    def __init__(
        self,
        workers: int,
        forked: Callable[[int], Any],
        here: Callable[[int], Any],
        started: Callable[[], None] = lambda: None,
    ) -> None:
        self.pids: list[int] = []
        self.leaving = False  # the workers were told to leave after the tasks they hold
        self.held: dict[int, int] = {}  # slot -> the tasks given to its worker not yet answered
        self.tasks: list[int] = []  # the parent's ends: task numbers out
        self.answers: list[int] = []  # and answers in
        for _ in range(workers):
            self._fork(forked, started)
        self.selector = selectors.DefaultSelector()
        for slot, answers in enumerate(self.answers, start=1):
            self.selector.register(answers, selectors.EVENT_READ, slot)
            self.held[slot] = 0
        # The parent's thread says it is done through a pipe of its own, so that one select
        # wakes the main thread for whichever slot ends first.
        self.here_done, self.here_said = os.pipe()
        self.selector.register(self.here_done, selectors.EVENT_READ, 0)
        self.here_answers: deque[Any] = deque()  # one per byte said, in the order of the tasks
        self.here_todo: deque[int] = deque()
        self.here_given = threading.Condition()
        self.here = threading.Thread(target=self._serve_here, args=(here,), name="compactctl-files", daemon=True)
        self.here.start()

    @property
    def slots(self) -> int:
        return 1 + len(self.pids)

    def _fork(self, forked: Callable[[int], Any], started: Callable[[], None]) -> None:
        to_worker, tasks = os.pipe()
        answers, from_worker = os.pipe()
        for stream in (sys.stdout, sys.stderr):  # or what is buffered would be printed twice
            with contextlib.suppress(Exception):
                stream.flush()
        pid = os.fork()
        if pid == 0:
            # The parent's ends, earlier workers' too, are closed: each worker then sees the end
            # of its tasks the moment the parent goes, whatever became of the others.
            for fd in (tasks, answers, *self.tasks, *self.answers):
                os.close(fd)
            _serve(to_worker, from_worker, forked, started)
        os.close(to_worker)
        os.close(from_worker)
        self.pids.append(pid)
        self.tasks.append(tasks)
        self.answers.append(answers)

    def give(self, slot: int, task: int) -> None:
        """Task ``task`` to slot ``slot``, run after those it was given before."""
        if slot == 0:
            with self.here_given:
                self.here_todo.append(task)
                self.here_given.notify()
        else:  # a worker gone is found by ``finished``, at the end of its answers
            self.held[slot] += 1
            with contextlib.suppress(BrokenPipeError):
                os.write(self.tasks[slot - 1], _TASK.pack(task))

    def give_no_more(self) -> None:
        """No task is given after this: each worker leaves once it has answered those it holds.
        Its exit, the kernel freeing its memory (5-13 ms on bench/jobs_bench.py's 40 files), then
        runs beside the parent's last task and the run's end instead of after them, in ``close``."""
        if self.leaving:
            return
        self.leaving = True
        for tasks in self.tasks:  # a worker gone is found by ``finished``, at the end of its answers
            with contextlib.suppress(OSError):
                os.write(tasks, _TASK.pack(LEAVE))

    def finished(self) -> list[tuple[int, Any]]:
        """The slots that ended their task, with what they answered (waits for at least one).

        What a task raised in the parent's thread is raised here; a worker that could not answer
        (it died, or its answer could not be pickled) is a RuntimeError."""
        done: list[tuple[int, Any]] = []
        while not done:
            for key, _ in self.selector.select():
                slot = key.data
                if slot == 0:
                    os.read(self.here_done, 1)
                    answer = self.here_answers.popleft()
                    if isinstance(answer, BaseException):
                        raise answer
                    done.append((0, answer))
                elif self.leaving and not self.held[slot]:  # the end of its answers: it left, as told
                    self.selector.unregister(key.fileobj)
                else:
                    self.held[slot] -= 1
                    done.append((slot, _answer_of(self.answers[slot - 1], self.pids[slot - 1])))
        return done

    def _serve_here(self, here: Callable[[int], Any]) -> None:
        while True:
            with self.here_given:
                while not self.here_todo:
                    self.here_given.wait()
                task = self.here_todo.popleft()
            if task == LEAVE:
                return
            try:
                answer = here(task)
            except BaseException as error:  # handed to the main thread, as a future's result() raises it
                answer = error
            self.here_answers.append(answer)
            os.write(self.here_said, b".")

    def stop(self) -> None:
        """SIGTERM to every worker (each leaves on it at once: ``started`` says how, and the tasks
        it was given ahead are never started); the parent's thread starts none of its own either."""
        self._leave_here()
        for pid in self.pids:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGTERM)

    def close(self, wait: bool = True) -> None:
        """Tell the workers and the thread to leave, and wait for the workers to end; after a stop
        (``wait`` false) for half a second at most, and the thread, maybe still running, keeps
        its pipe. The parent's thread starts no task it was given ahead; a worker runs those it
        was given before it leaves (``stop`` first, for it not to)."""
        self._leave_here()
        self.give_no_more()
        self.selector.close()
        for fd in (*self.tasks, *self.answers):
            os.close(fd)
        if wait:
            self.here.join()
            os.close(self.here_done)
            os.close(self.here_said)
        deadline = time.monotonic() + 0.5
        for pid in self.pids:
            with contextlib.suppress(ChildProcessError):
                while not os.waitpid(pid, 0 if wait else os.WNOHANG)[0] and time.monotonic() < deadline:
                    time.sleep(0.01)

    def _leave_here(self) -> None:
        with self.here_given:
            self.here_todo.clear()  # what it was given ahead is dropped: it leaves after its task
            self.here_todo.append(LEAVE)
            self.here_given.notify()


def _answer_of(answers: int, pid: int) -> Any:
    head = _read_exactly(answers, _LENGTH.size)
    if len(head) < _LENGTH.size:
        _, status = os.waitpid(pid, 0)
        raise RuntimeError(f"a worker process ended in the middle of a task (wait status {status})")
    sent, answer = pickle.loads(_read_exactly(answers, _LENGTH.unpack(head)[0]))
    if not sent:
        raise RuntimeError(f"a worker process could not send its answer back: {answer}")
    return answer


def _read_exactly(fd: int, length: int) -> bytes:
    """``length`` bytes from a pipe, fewer only at its end."""
    parts, left = [], length
    while left:
        part = os.read(fd, min(left, 1 << 20))
        if not part:
            break
        parts.append(part)
        left -= len(part)
    return b"".join(parts)


def _serve(tasks: int, answers: int, forked: Callable[[int], Any], started: Callable[[], None]) -> NoReturn:
    """A forked worker's life: each task it is given run, its answer sent back. It never returns
    into the parent's code (``os._exit``), whatever happens."""
    code = 0
    try:
        started()
        while len(told := _read_exactly(tasks, _TASK.size)) == _TASK.size:
            (task,) = _TASK.unpack(told)
            if task == LEAVE:
                break
            try:
                payload = pickle.dumps((True, forked(task)), pickle.HIGHEST_PROTOCOL)
            except Exception as error:  # an answer that cannot be pickled: said, not silently lost
                payload = pickle.dumps((False, f"{type(error).__name__}: {error}"))
            view = memoryview(_LENGTH.pack(len(payload)) + payload)
            while view:
                view = view[os.write(answers, view) :]
    except BaseException:  # the parent is gone (a broken pipe), or a bug: the parent says so
        code = 1
    finally:
        os._exit(code)
