"""The cyclic collector held off while the command starts, and what start-up made kept out of its reach; and
kept off what a replay's memos hold (``old_objects_frozen``, ``fewer_collections``).

Start-up (imports, the settings, the option parse) makes some hundred thousand objects and no
garbage: the collector still runs twenty-odd times over them, 3-4 ms of CPU of a compact run on
a small session (a run is 85-120 ms). The command (``cli.main``) holds it off from its first line;
the batch runner (``files.jobs.run_jobs``) lets it go when the files' work starts, first freezing
what is there (``gc.freeze``: never collected, nor walked by a later collection), as a forked
worker's start does already. A library caller's collector, and that of a caller running ``main()`` and going on
(a test), is never touched: only the program itself holds it (``quick_exit.runs_the_process``).
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

_held = False


def hold() -> None:
    """No collection until ``release``, unless the collector is off already (then nothing changes)."""
    global _held
    if gc.isenabled():
        gc.disable()
        _held = True


def release() -> None:
    """What is alive now frozen out of the collector's reach, and the collector on again, if ``hold`` held it."""
    global _held
    if _held:
        _held = False
        gc.freeze()
        gc.enable()


@contextmanager
def old_objects_frozen() -> Iterator[None]:
    """Everything the process holds when the block opens (the transcript, the modules) kept out of the
    collector's reach until it closes (``gc.freeze``), unless something froze objects already (a fork's
    parent: ``files.jobs``, ``files.replay_apart``; their own unfreeze stays theirs).

    A replay allocates many small containers and the memo keeps most of them, so the collector runs
    often; a full collection walks every object the process holds, the transcript too, which none of
    them is garbage. The 2,000-turn tool agent, structured + extractive, 3 thresholds: the collector
    took 17 ms of a 335 ms replay (one full collection 10 ms of it), 7 ms with the old objects frozen."""
    if gc.get_freeze_count() or not gc.isenabled():
        yield
        return
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


# The youngest generation's threshold while a replay runs: the memos keep most of what a replay allocates
# (some 45,000 containers for the 2,000-turn tool agent), so at Python's 700 the collector runs some 60
# times, over objects that are all alive. Cycles are rare here; the older generations' thresholds are
# left as they are.
YOUNG_THRESHOLD = 100_000


@contextmanager
def fewer_collections() -> Iterator[None]:
    """The youngest generation collected every ``YOUNG_THRESHOLD`` allocations (not 700) until the block
    ends, unless it is already rarer. The 2,000-turn tool agent, structured + extractive, 3 thresholds:
    the collector took 5 ms of a 280 ms replay (63 collections), none past the threshold."""
    young, *older = gc.get_threshold()
    if not gc.isenabled() or young == 0 or young >= YOUNG_THRESHOLD:
        yield
        return
    gc.set_threshold(YOUNG_THRESHOLD, *older)
    try:
        yield
    finally:
        gc.set_threshold(young, *older)
