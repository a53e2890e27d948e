"""The command's own process, ended as soon as its work is done, without the interpreter's tear-down.

A plain ``compact FILE -o OUT -q`` (a line ``cli.direct`` reads) spends about 3 % of its
instructions after it has written everything (callgrind, kcosr's real session): Python's
finalization frees every module, class and message one by one and runs a last full collection,
for a process about to give all its memory back at once. When ``cli.main`` is the program
itself (the console script pip writes, ``python -m compactctl``), the end it would take is taken
here: the exit functions run (the build cache is written, Ray is shut down, temporary folders
go), standard output and error are flushed, and the process exits with the same code. Anything
that would make that end differ from the interpreter's own falls back to it: a non-daemon thread
still running (the interpreter waits for it), a flush that fails (a closed pipe is reported as
it always was), an exit code that is not a number (printed by the interpreter). A caller that
runs ``main()`` and goes on afterwards (a test, ``python -c``) is never ended here.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable
from typing import Any


def runs_the_process(main: Callable[[], Any]) -> bool:
    """Whether ``main`` was called as the program: ``python -m compactctl``, or a script named
    ``compactctl`` that imported it (what pip writes for the console script), nothing after it."""
    entry = sys.modules.get("__main__")
    spec = getattr(entry, "__spec__", None)
    if spec is not None:
        return bool(spec.name == "compactctl.__main__")
    script = getattr(entry, "__file__", None)
    if not isinstance(script, str) or getattr(entry, "main", None) is not main:
        return False
    return os.path.splitext(os.path.basename(script))[0] in ("compactctl", "compactctl-script")


def end_now(code: object) -> None:
    """Exit with ``code`` as ``sys.exit(code)`` would, skipping the interpreter's finalization;
    returns (doing nothing more) where that end could differ from the interpreter's."""
    if code is None:
        code = 0
    if not isinstance(code, int) or isinstance(code, bool) or not 0 <= code <= 255:
        return
    current = threading.current_thread()
    if any(thread is not current and not thread.daemon and thread.is_alive() for thread in threading.enumerate()):
        return
    import atexit

    # What the interpreter runs at exit before tearing itself down, here in the same order:
    # the functions registered with atexit (last first), then the flush of the standard streams.
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None:
                stream.flush()
        except Exception:  # the interpreter reports it and picks the code (120)
            return
    os._exit(code)
