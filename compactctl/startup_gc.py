"""The cyclic collector held off while the command starts, and what start-up made kept out of its reach.

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
