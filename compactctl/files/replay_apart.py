"""Replay's compacting settings walked apart, in forked workers, when the walk is big enough to pay for it.

Given the messages and their figures, each setting's run is independent of the others: its own
context, compactions and sums. So the settings walk in step here until their work proves long
(``FORK_AFTER``); then the parent works out the rest's figures once (the tokenizing all settings
share) and forks (``compactctl.forks``: plain forks fed task numbers
through pipes, the parent's own thread one of the slots); each task walks one compacting
setting (or, the last, every setting that never compacts: the baseline, the recorded row) over
those figures and sends back only its rows (``ScenarioResult``, a few figures and one int per
call), which are put back in the settings' order. The figures are the same as walked in step:
the memos (``message_memo``) only spare work, they never change a result.

An error is the one the walk in step would raise: each task says at which message and setting
it failed, the earliest is chosen (the order the walk in step meets them), and one met in a
worker is raised again here by walking that task's runs, untouched in this process, to it.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import gc
import os
import signal
import time
from collections.abc import Iterable, Sequence
from typing import Any

from compactctl.message_memo import remembering
from compactctl.replay.simulate import FigureCounter, Figures, ScenarioResult, ScenarioRun, Walker, walk_in_step
from compactctl.transcript import Message

# A fork pays only when the settings' own work is long, which the messages' count does not tell (it
# is the strategy's work, and it grows as contexts do: prune at 500 turns spends 1 % of its time in the
# first quarter of the messages). So the messages are walked in step here, the settings' part timed
# apart from the figures they share, until that part has taken FORK_AFTER seconds: only then is the
# rest walked apart (it takes at least as long, as contexts grow). Measured on 2 cores (load 1-3),
# bench/workloads.py's tool agent, 3 thresholds, wall, jobs 1 against 2 forked from the start: window
# at 2000 turns 0.19 s against 0.25 s (most of it is the tokenizing all settings share: forking, the
# figures worked out first and the rows sent back cost more than the rest spares), and it never gets
# here; prune at 2000 turns 79-82 s against 38-58 s.
FORK_AFTER = 0.25
MIN_MESSAGES = 64  # left to walk: fewer are walked here


def idle_cores() -> float:
    """The cores this process may run on that nothing else runs on now (1-minute load average; this
    process counts in it). A worker pays only on a core of its own: on the 2 cores here with another
    session's job on one (load about 2), prune at 700 turns took 6.5-7.3 s in step and 6.9-7.1 s apart
    (4.5 s of CPU here, 3.0 s in the worker: they shared the one core), at 1000 turns 13.8 s against
    19.0 s; the same at 2000 turns with the load below 2, 79-82 s against 38-58 s."""
    try:
        return len(os.sched_getaffinity(0)) - os.getloadavg()[0]
    except (AttributeError, OSError):
        return 0.0


def summarizing(runs: Sequence[ScenarioRun]) -> bool:
    """Whether a setting summarizes (its strategy has a ``threshold`` of its own: ``simulate.triggered``).
    Such a setting is never walked apart: most of its work is each message's facts and redaction, worked
    out once for every setting in one process (``message_memo``) and again in each process apart. The
    2000-turn tool agent, structured + extractive: 0.54-0.70 s in step, 0.71-0.85 s apart; at 5000 turns
    1.38-1.43 s against 1.80-1.99 s."""
    for run in runs:
        for _, options in run.steps:
            if hasattr(options, "threshold"):
                return True
    return False


def fork_safe(runs: Sequence[ScenarioRun]) -> bool:
    """Only the offline summarizer (or none) is run in a fork: a client's open connections, a local
    model's threads or a cache another process writes are not to be shared with a copy of this one."""
    from compactctl.summarizers.extractive import ExtractiveSummarizer

    summarizers = {id(run.step_context.summarizer): run.step_context.summarizer for run in runs}
    return all(s is None or type(s) is ExtractiveSummarizer for s in summarizers.values())


def walk_apart(
    messages: Iterable[Message], runs: Sequence[ScenarioRun], counts: FigureCounter, *, jobs: int
) -> list[ScenarioResult]:
    """``walk_in_step``'s rows, the compacting runs walked in up to ``jobs`` processes."""
    heavy = [index for index, run in enumerate(runs) if run.compacting]
    light = [index for index, run in enumerate(runs) if not run.compacting]
    tasks = [[index] for index in heavy] + ([light] if light else [])
    slots = min(jobs, len(tasks))
    walked = messages if isinstance(messages, Sequence) else None  # a file read a line at a time stays so
    few = len(heavy) < 2 or slots < 2 or walked is None or len(walked) < 2 * MIN_MESSAGES
    if few or walked is None or summarizing(runs) or not fork_safe(runs):
        return walk_in_step(messages, runs, counts)
    spent, position = 0.0, 0
    for position, message in enumerate(walked, start=1):  # noqa: B007 (in step, as walk_in_step, until long)
        figure = counts.figures(message)
        start = time.thread_time()
        for run in runs:
            run.add(message, figure)
        spent += time.thread_time() - start
        if spent >= FORK_AFTER:
            break
    walked = walked[position:]
    slots = min(slots, 1 + round(idle_cores()))
    if len(walked) < MIN_MESSAGES or slots < 2:  # walked whole (or nearly), or no core to walk apart on
        return walk_in_step(walked, runs, counts)
    try:
        figures = [counts.figures(message) for message in walked]  # the work every setting shares, once
    except Exception:
        return walk_in_step(walked, runs, counts)  # nothing of the rest walked yet: it raises what it raises in step
    answers = _run_tasks(walked, figures, runs, tasks, slots)
    failed = [(answer[1], answer[2], task) for task, answer in enumerate(answers) if answer[0] == "failed"]
    if failed:
        _, _, task = min(failed)
        error = answers[task][3]
        if error is None:  # met in a worker: this process's copies of its runs were never walked
            _feed(walked, figures, [runs[index] for index in tasks[task]])
            raise RuntimeError("a replay worker failed where this process does not")  # pragma: no cover
        raise error
    rows: dict[int, ScenarioResult] = {}
    for task, answer in enumerate(answers):
        rows.update(zip(tasks[task], answer[1], strict=True))
    return [rows[index] for index in range(len(runs))]


def _feed(messages: Sequence[Message], figures: list[Figures], runs: list[ScenarioRun]) -> list[ScenarioResult]:
    """``runs`` walked over the rest here: what a worker met, raised again in this process."""
    with remembering():
        for message, figure in zip(messages, figures, strict=True):
            for run in runs:
                run.add(message, figure)
        return [run.result() for run in runs]


def _attempt(
    messages: Sequence[Message], figures: list[Figures], runs: list[ScenarioRun], keep_error: bool
) -> tuple[Any, ...]:
    """("rows", rows), or ("failed", message position, run's place in ``runs``, error or None) where
    the task stopped: the walk in step would stop at the earliest of these. A worker keeps no error
    (it may not pickle): the parent raises it again by walking its own copies of the runs."""
    with remembering():
        for position, (message, figure) in enumerate(zip(messages, figures, strict=True)):
            for at, run in enumerate(runs):
                try:
                    run.add(message, figure)
                except Exception as error:
                    return ("failed", position, at, error if keep_error else None)
        done = []
        for at, run in enumerate(runs):
            try:
                done.append(run.result())
            except Exception as error:
                return ("failed", len(messages), at, error if keep_error else None)
        return ("rows", done)


def _run_tasks(
    messages: Sequence[Message], figures: list[Figures], runs: Sequence[ScenarioRun], tasks: list[list[int]], slots: int
) -> list[tuple[Any, ...]]:
    from compactctl.forks import Workers

    def of(task: int, keep_error: bool) -> tuple[Any, ...]:
        answer = _attempt(messages, figures, [runs[index] for index in tasks[task]], keep_error)
        if answer[0] == "failed":  # the run's own index, to compare with the others' failures
            return ("failed", answer[1], tasks[task][answer[2]], answer[3])
        return answer

    # What is built so far is moved out of the collector's reach while the workers are forked: their
    # collections then leave its pages shared with the parent (``files.jobs`` does the same).
    parent = os.getpid()
    memo = contextvars.copy_context()  # the parent's own thread goes on with the memos the walk filled so far
    gc.freeze()
    try:
        workers = Workers(
            slots - 1,
            forked=lambda task: of(task, False),
            here=lambda task: memo.run(of, task, True),
            started=lambda: _child_started(parent),
        )
    finally:
        gc.unfreeze()
    answers: dict[int, tuple[Any, ...]] = {}
    running: dict[int, int] = {}
    given = 0
    try:
        for slot in range(slots):
            workers.give(slot, given)
            running[slot], given = given, given + 1
        while running:
            for slot, answer in workers.finished():
                answers[running.pop(slot)] = answer
                if given < len(tasks):
                    workers.give(slot, given)
                    running[slot], given = given, given + 1
    except BaseException:
        workers.stop()  # Ctrl-C, SIGTERM, a worker that died: the others are stopped, not waited on
        workers.close(wait=False)
        raise
    workers.close()
    return [answers[task] for task in range(len(tasks))]


def _stop_child(signum: int, frame: object) -> None:
    os._exit(128 + signum)


def _child_started(parent: int) -> None:
    # A worker writes nothing: any stop ends it at once, without a traceback. Ctrl-C reaches it with
    # the parent's group; the parent's stop (SIGTERM, SIGHUP: the CLI exits without unwinding the
    # thread that forked) reaches it as the parent's death signal.
    for name in ("SIGINT", "SIGTERM", "SIGHUP"):
        signal.signal(getattr(signal, name), _stop_child)
    with contextlib.suppress(Exception):
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG (Linux)
        if os.getppid() != parent:  # it went before the call: no signal will come
            os._exit(128 + signal.SIGTERM)


def walker_for(jobs: int) -> Walker | None:
    """How a replay given ``jobs`` walks its settings: apart in that many processes, or in step (None) for one."""
    return functools.partial(walk_apart, jobs=jobs) if jobs > 1 else None
