"""The batch runner of every command: each job run, in threads, forked processes or on Ray, its failure kept.

One bad file does not stop the others: its error is collected as a :class:`Failure` and named in
the summary. Forked workers inherit the work (never pickled), print through the parent, and hand
the outputs they staged to the parent's unit (``files.io.one_unit``) to rename with the rest.
With N processes the parent is one of them: it forks N - 1 workers and runs files itself too.
The workers are plain forks fed through pipes (``compactctl.forks``), not a ``ProcessPoolExecutor``.
"""

from __future__ import annotations

import contextlib
import gc
import os
import signal
import sys
import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from io import BytesIO, TextIOWrapper
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO, TypeVar

if TYPE_CHECKING:
    from concurrent.futures import Future

    from compactctl.forks import Workers
    from compactctl.progress import Progress

from compactctl import interrupts
from compactctl.errors import CompactctlError
from compactctl.files.io import STDIO, Job, current_unit

T = TypeVar("T")


@dataclass(frozen=True)
class Failure:
    """A file that failed: what went wrong, the exit code it counts for, and where (a dataclass without a
    docstring has one made from its signature by ``inspect``, which a plain run never loads otherwise)."""

    file: str  # the input as given (joined to its folder)
    error: str
    exit_code: int
    line: int | None = None  # where the error is, when it names a line


def cores() -> int:
    """The processors this process may run on (what ``--jobs 0``, the default, uses)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def run_jobs(
    jobs: list[Job], work: Callable[[Job], T], parallel: int = 1, progress: bool = False, engine: str = "threads"
) -> tuple[list[T], list[Failure]]:
    """Run ``work`` on every job, collecting failures: in ``parallel`` forked processes (engine
    ``processes``), in threads, or on Ray Data; ``parallel`` 0 is one per core there is.

    With ``progress``, a bar on a terminal, else a line every few seconds on stderr (``compactctl.progress``);
    it is told of each file in this process, as each result comes back.
    """
    from compactctl import startup_gc
    from compactctl.progress import progress_for, sizes

    startup_gc.release()  # the command's start-up is over: what it made is frozen, the collector on again
    parallel = parallel if parallel > 0 else cores()
    size = sizes([job.source for job in jobs])
    workers = max(1, min(parallel, len(jobs)))
    # Standard input and output are one stream each: files that read or write them run here.
    if engine == "processes" and workers > 1 and not any(STDIO in (job.source, job.target) for job in jobs):
        # N - 1 forked workers and the parent itself, in a thread of its own (its main thread waits on
        # them all, hands out the files and handles signals, as with threads): otherwise the parent
        # would sit idle while the workers run, after the start-up they cannot share.
        forked = _fork_workers(jobs, work, workers - 1)  # before the progress thread starts
        return _run_forked_jobs(jobs, work, forked, size, progress_for(len(jobs), sum(size), not progress, sys.stderr))
    reporter = progress_for(len(jobs), sum(size), not progress, sys.stderr)
    results: dict[int, T] = {}
    failures: dict[int, Failure] = {}
    if engine == "ray" and not any(job.source == STDIO or job.target == STDIO for job in jobs):
        from compactctl import ray_engine

        # The local instance gets --jobs CPUs when more than one is asked for; else Ray's default (all).
        done, failed = ray_engine.run(
            [job.source for job in jobs], lambda i: work(jobs[i]), parallel if parallel > 1 else None
        )
        failures = {i: Failure(jobs[i].source, error, code) for i, (error, code) in failed.items()}
        for i, job in enumerate(jobs):
            reporter.finished(job.source, size[i], i in failures)
        reporter.close()
        return [done[i] for i in sorted(done)], [failures[i] for i in sorted(failures)]
    if workers == 1:
        return _in_turn(jobs, work, reporter, size)
    # concurrent.futures imports logging (its regexes, traceback, string): 7 ms a run of one file spares
    from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait

    pool = ThreadPoolExecutor(workers)
    running: dict[Future[T | Failure], int] = {}
    started = 0

    def start_next() -> None:  # at most ``workers`` in flight, in the files' own order
        nonlocal started
        reporter.started(jobs[started].source)
        running[pool.submit(attempt, jobs[started], work)] = started
        started += 1

    interrupted = False
    try:
        while started < workers:
            start_next()
        while running:
            finished, _ = wait(running, return_when=FIRST_COMPLETED)
            for future in finished:  # results come back here, to the main thread, as each file ends
                index = running.pop(future)
                lost = _file_done(index, future.result(), results, failures)
                reporter.finished(jobs[index].source, size[index], lost)
                if started < len(jobs):
                    start_next()
    except KeyboardInterrupt:
        # Stop now: no new file is started, nothing more is renamed into place, and the
        # threads still working are not waited for (the CLI exits without joining them).
        interrupted = True
        interrupts.remove_temporaries()
        raise
    finally:
        pool.shutdown(wait=not interrupted, cancel_futures=interrupted)
        reporter.close()
    return [results[i] for i in sorted(results)], [failures[i] for i in sorted(failures)]


def _in_turn(
    jobs: list[Job], work: Callable[[Job], T], reporter: Progress, size: list[int]
) -> tuple[list[T], list[Failure]]:
    """Each file in turn in one worker thread, as a pool of one thread runs them: the main thread
    waits on it, so Ctrl-C, SIGTERM and SIGHUP reach it at once, and a stop does not wait for the
    file in flight (the thread is a daemon: the CLI exits without joining it)."""
    results: list[T] = []
    failures: list[Failure] = []
    try:
        for index, job in enumerate(jobs):
            reporter.started(job.source)
            done: list[Any] = []

            def run(job: Job = job, done: list[Any] = done) -> None:
                try:
                    done.append((attempt(job, work), None))
                except BaseException as error:  # handed to the main thread, as a future's result() raises it
                    done.append((None, error))

            thread = threading.Thread(target=run, daemon=True)
            thread.start()
            thread.join()
            outcome, raised = done[0]
            if raised is not None:
                raise raised
            if isinstance(outcome, Failure):
                failures.append(outcome)
            else:
                results.append(outcome)
            reporter.finished(job.source, size[index], isinstance(outcome, Failure))
    except KeyboardInterrupt:
        interrupts.remove_temporaries()  # nothing more is renamed into place; the thread is not waited for
        raise
    finally:
        reporter.close()
    return results, failures


def _file_done(index: int, outcome: T | Failure, results: dict[int, T], failures: dict[int, Failure]) -> bool:
    """File ``index``'s outcome put with the results or the failures; True if it failed."""
    if isinstance(outcome, Failure):
        failures[index] = outcome
        return True
    results[index] = outcome
    return False


def _run_forked_jobs(
    jobs: list[Job], work: Callable[[Job], T], forked: Workers, size: list[int], reporter: Progress
) -> tuple[list[T], list[Failure]]:
    """Every job on the parent's own file thread (slot 0) or a forked worker (slots 1 to N - 1), the
    largest first (``_FileOrder``); what each printed is printed here whole as it ends, and results
    are put back in the files' order.

    While more files are left than there are slots, each slot is given its next file before it
    ends the one it runs (``AHEAD``): a worker would otherwise sit idle from the end of each file
    until the parent's main thread is woken, takes the interpreter's lock from the parent's own
    file thread (up to its switch interval, 5 ms), or gets a core at all on a busy machine, and
    answers (the parent's own thread likewise waits on the main thread). On bench/jobs_bench.py's
    40 files at a load of 12 on 2 cores, the worker sat idle between its files 0.64-0.83 s in all
    and the parent's thread 0.30-0.35 s; given their next file ahead, 0.06-0.10 s and 0.05 s.
    The last files are given one at a time, to whichever slot is free, so that the slots end together.
    """
    results: dict[int, T] = {}
    failures: dict[int, Failure] = {}
    order = _FileOrder(size)
    given: dict[int, deque[int]] = {slot: deque() for slot in range(min(forked.slots, len(jobs)))}
    last: dict[int, int] = {}  # slot -> the file it was given last (the next of the same size goes there)
    left = len(jobs)

    def give(slot: int) -> None:
        nonlocal left
        index = order.next(last.get(slot), (index for queue in given.values() for index in queue))
        if not given[slot]:
            reporter.started(jobs[index].source)  # it starts now; a file given ahead, when its slot reaches it
        forked.give(slot, index)
        given[slot].append(index)
        last[slot] = index
        left -= 1
        if not left:  # the workers leave after what they hold, while the last files run
            forked.give_no_more()

    def top_up(slot: int) -> None:
        while left and len(given[slot]) < (AHEAD if left > len(given) else 1):
            give(slot)

    interrupted = False
    apart = _printed_apart()
    apart.__enter__()  # left in ``finally``, after the stop below
    try:
        for slot in given:  # the parent's own slot first: the largest file
            give(slot)
        for slot in given:
            top_up(slot)
        while any(given.values()):
            for slot, (outcome, printed, warned, handed) in forked.finished():
                index = given[slot].popleft()
                _pass_on(printed, sys.stdout)  # what the file printed, printed here whole, where the run's output goes
                _pass_on(warned, sys.stderr)
                _take_over(handed)
                reporter.finished(jobs[index].source, size[index], _file_done(index, outcome, results, failures))
                if given[slot]:
                    reporter.started(jobs[given[slot][0]].source)
                top_up(slot)
    except BaseException as stop:
        # Stop now: no new file is started, nothing more is renamed into place, the parent's own
        # file thread is not waited for, and the workers are told to stop: each removes the
        # temporary file it was writing, and starts none of those it was given ahead. (On an
        # error, a worker that died, the others are stopped likewise, then waited for.)
        interrupted = isinstance(stop, KeyboardInterrupt)
        if interrupted:
            interrupts.remove_temporaries()
        forked.stop()
        raise
    finally:
        apart.__exit__(None, None, None)
        forked.close(wait=not interrupted)
        reporter.close()
    return [results[i] for i in sorted(results)], [failures[i] for i in sorted(failures)]


AHEAD = 2  # files given to a slot at a time while many are left: the one it runs, and its next


class _FileOrder:
    """Which file a worker runs next: the largest left (so that no worker is left with a big one
    at the end), and, for a worker that has just finished one, another of the same size if one is
    left. Files of one size are most likely copies (a session and its backup, a folder copied
    twice): on one worker the second finds its messages in the memos the first filled (redacted
    text, facts), as in one process, where split between workers each would start cold. Likewise
    a file is not started beside a running one of its size while a file of another size is left.
    Without sizes (all 0: threads), the files' own order.
    """

    def __init__(self, size: list[int]) -> None:
        self.size = size
        self.left: dict[int, deque[int]] = {}  # by size, largest first (the dict keeps that order)
        for index in sorted(range(len(size)), key=lambda index: -size[index]):
            self.left.setdefault(size[index], deque()).append(index)

    def next(self, freed_by: int | None, running: Iterable[int]) -> int:
        wanted = self.size[freed_by] if freed_by is not None else None
        if wanted not in self.left:
            busy = {self.size[index] for index in running}
            wanted = next((size for size in self.left if size not in busy), next(iter(self.left)))
        same = self.left[wanted]
        index = same.popleft()
        if not same:
            del self.left[wanted]
        return index


def _fork_workers(jobs: list[Job], work: Callable[[Job], T], workers: int) -> Workers:
    """``workers`` processes forked now, holding the work; only each file's result comes back.

    The tables of the run's counters are loaded first, once, so that no worker builds them again.
    Any other table is loaded by a process when a file needs it (o200k for a Codex rollout's
    calibration in ``report`` and ``replay``; ``compact`` never counts in it): built here, it
    would delay every worker, where a process that needs it builds it beside the others (two
    processes building one table at once cost the run no more time than the parent building it
    before the fork, and one that never needs it, nothing).
    """
    from compactctl.forks import Workers
    from compactctl.tokens import load_counters

    load_counters()
    # What the parent built so far (modules, tables, the run's settings) is moved out of the
    # collector's reach: a worker's collections then never touch it, so its pages stay shared
    # with the parent instead of being copied into every worker (a quarter fewer page faults).
    gc.freeze()
    return Workers(
        workers,
        forked=lambda index: _run_forked(jobs[index], work),
        here=lambda index: _run_here(jobs[index], work),
        started=_child_started,
    )


def _take_over(handed: list[tuple[Path, Path]]) -> None:
    """A worker's staged outputs, joined to this run's unit (or renamed now when there is none)."""
    staged = current_unit()
    for temporary, target in handed:
        if staged is not None:
            staged.add(temporary, target)
        else:
            os.replace(temporary, target)


def _run_forked(job: Job, work: Callable[[Job], Any]) -> tuple[Any, bytes, bytes, list[tuple[Path, Path]]]:
    """One file in a worker, what it prints kept, to be printed by the parent."""
    out, err = _captured(), _captured()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        outcome = attempt(job, work)
    # What this worker staged (a copy of the parent's unit) is handed to the parent's unit to rename.
    handed: list[tuple[Path, Path]] = []
    staged = current_unit()
    if staged is not None:
        with staged.lock:
            handed, staged.files = staged.files, []
        for temporary, _ in handed:
            interrupts.unregister(temporary)
    return outcome, out.buffer.getvalue(), err.buffer.getvalue(), handed  # type: ignore[attr-defined]


# In the parent's own file thread, while it runs a file: where what it prints goes (``_Routed``).
_kept = threading.local()


class _Routed:
    """``sys.stdout`` or ``sys.stderr`` while the parent runs files beside its workers: what its
    file thread prints is kept, to be printed whole when the file ends, as a worker's is (two
    threads writing one stream would mix their lines); any other thread's goes through."""

    def __init__(self, through: TextIO, name: str) -> None:
        self.through, self.name = through, name

    def _stream(self) -> TextIO:
        kept: TextIO | None = getattr(_kept, self.name, None)
        return self.through if kept is None else kept

    def write(self, text: str) -> int:
        return self._stream().write(text)

    def flush(self) -> None:
        self._stream().flush()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream(), name)


@contextlib.contextmanager
def _printed_apart() -> Iterator[None]:
    out, err = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = _Routed(out, "out"), _Routed(err, "err")  # type: ignore[assignment]
    try:
        yield
    finally:
        sys.stdout, sys.stderr = out, err


def _run_here(job: Job, work: Callable[[Job], Any]) -> tuple[Any, bytes, bytes, list[tuple[Path, Path]]]:
    """One file in the parent's own thread, what it prints kept, as a worker's is (its outputs
    are staged in the parent's unit already: nothing to hand over)."""
    out, err = _captured(), _captured()
    _kept.out, _kept.err = out, err
    try:
        outcome = attempt(job, work)
    finally:
        _kept.out = _kept.err = None
    return outcome, out.buffer.getvalue(), err.buffer.getvalue(), []  # type: ignore[attr-defined]


def _captured() -> TextIO:
    return TextIOWrapper(BytesIO(), encoding="utf-8", errors="surrogateescape", write_through=True)


def _pass_on(printed: bytes, stream: TextIO) -> None:
    if printed:
        stream.flush()
        buffer = getattr(stream, "buffer", None)
        if buffer is not None:
            buffer.write(printed)
            buffer.flush()
        else:
            stream.write(printed.decode("utf-8", "surrogateescape"))


def _stop_child(signum: int, frame: object) -> None:
    interrupts.remove_temporaries()  # the temporary file this worker was writing
    os._exit(128 + signum)


def _child_started() -> None:
    # Ctrl-C reaches every process of the group: the parent alone decides, and stops the workers
    # with SIGTERM, on which a worker removes its temporary file and leaves without a traceback.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    for name in ("SIGTERM", "SIGHUP"):
        signal.signal(getattr(signal, name), _stop_child)


def attempt(job: Job, work: Callable[[Job], T]) -> T | Failure:
    """One job's result, or its failure as a value: one bad file never stops the batch."""
    try:
        return work(job)
    except CompactctlError as error:
        return Failure(job.source, str(error), error.exit_code, getattr(error, "line", None))
    except OSError as error:
        return Failure(job.source, f"{error.filename or job.source}: {error.strerror or error}", 2)
    except Exception as error:  # a bug met on one file must not cost the batch its summary
        what = f"{type(error).__name__}: {str(error)[:200]}"
        return Failure(job.source, f"{job.source}: cannot process this file ({what})", 2)
