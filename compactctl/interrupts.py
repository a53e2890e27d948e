"""Ctrl-C, SIGTERM and SIGHUP stop a run at once and leave nothing half-written behind.

Outputs are written to a temporary file beside the target, then renamed (``files``). The
temporary file's name says whose it is, ``.<target name>.compactctl-<pid>-<random>.tmp``,
so that:

- every live one is removed when the run is stopped (``remove_temporaries``), and a
  rename never happens once a stop was asked for (``stopping``);
- one left by a run that was killed outright (SIGKILL, a power cut) is found and removed
  by the next run that writes the same target, but only when its process is gone
  (``remove_stale``): a run still writing there is never touched, and a stale file never
  blocks a write.

The CLI turns a stop into exit 128 + the signal (130 for Ctrl-C) without waiting for
worker threads: a strategy or a summarizer request in flight cannot hold the exit up.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from types import FrameType

from compactctl import lazyre

MARK = ".compactctl-"
SUFFIX = ".tmp"
_live: set[Path] = set()
_lock = threading.Lock()
stopping = threading.Event()


class Stopped(KeyboardInterrupt):
    """SIGTERM or SIGHUP, raised in the main thread like Ctrl-C's KeyboardInterrupt."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


def exit_code(interrupt: KeyboardInterrupt) -> int:
    return 128 + (interrupt.signum if isinstance(interrupt, Stopped) else signal.SIGINT)


def _raise_stopped(signum: int, frame: FrameType | None) -> None:
    stopping.set()
    raise Stopped(signum)


def install() -> None:
    """SIGTERM and SIGHUP stop the run the way Ctrl-C does (main thread only)."""
    for name in ("SIGTERM", "SIGHUP"):
        if hasattr(signal, name):
            signal.signal(getattr(signal, name), _raise_stopped)


# A file name may have 255 bytes; the temporary adds "." + MARK + pid + "-" + 8 hex + SUFFIX
# (at most 33). A longer target's name is shortened in the temporary to fit, keeping a digest
# of the whole so two long names sharing a start still get temporaries of their own.
NAME_MAX = 255
_ROOM = NAME_MAX - 1 - len(MARK) - 7 - 1 - 8 - len(SUFFIX)


def _short(name: str) -> str:
    if len(name.encode()) <= _ROOM:
        return name
    import hashlib

    digest = hashlib.sha1(name.encode("utf-8", "surrogateescape")).hexdigest()[:10]
    head = name.encode("utf-8", "surrogateescape")[: _ROOM - 11].decode("utf-8", "ignore")
    return f"{head}~{digest}"


def temporary_name(target: Path) -> Path:
    return target.with_name(f".{_short(target.name)}{MARK}{os.getpid()}-{os.urandom(4).hex()}{SUFFIX}")


# What follows a target's own head in its temporaries' names: the pid of the run that wrote one, and its tag.
# One pattern for every target (compiled once, from the build cache), not one compiled per file written.
_STALE_TAIL = lazyre.compile(r"(\d+)-[0-9a-f]{8}" + re.escape(SUFFIX))


def _stale_pid(name: str, head: str) -> int | None:
    """The pid in a temporary's name ``head`` + pid + tag + SUFFIX, else None (another file)."""
    match = _STALE_TAIL.fullmatch(name, len(head)) if name.startswith(head) else None
    return int(match.group(1)) if match else None


def register(path: Path) -> None:
    """A temporary this process writes and renames later (a staged output): removed if the run is stopped."""
    if stopping.is_set():
        raise KeyboardInterrupt
    with _lock:
        _live.add(path)


def unregister(path: Path) -> None:
    with _lock:
        _live.discard(path)


@contextlib.contextmanager
def temporary_beside(target: Path) -> Iterator[Path]:
    """A fresh temporary path beside ``target``, registered until the block ends (then removed if left)."""
    if stopping.is_set():
        raise KeyboardInterrupt
    path = temporary_name(target)
    with _lock:
        _live.add(path)
    try:
        yield path
    finally:
        with _lock:
            _live.discard(path)
        path.unlink(missing_ok=True)


def remove_temporaries() -> int:
    """Remove every temporary file this process has open for writing; how many were there."""
    stopping.set()
    with _lock:
        paths = list(_live)
    removed = 0
    for path in paths:
        with contextlib.suppress(OSError):
            path.unlink()
            removed += 1
    return removed


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process: alive
        return True
    return True


def remove_stale(target: Path) -> list[Path]:
    """Temporary files of ``target`` left by runs whose process is gone, removed; the ones removed."""
    head = f".{_short(target.name)}{MARK}"
    removed = []
    try:
        candidates = list(target.parent.iterdir()) if target.parent.is_dir() else []
    except OSError:
        return []
    for path in candidates:
        pid = _stale_pid(path.name, head)
        if pid is not None and not _alive(pid):
            with contextlib.suppress(OSError):
                path.unlink()
                removed.append(path)
    return removed


def stop_now(interrupt: KeyboardInterrupt) -> None:
    """Remove this run's temporary files and exit with 128 + the signal, not waiting for worker threads."""
    remove_temporaries()
    name = "interrupted" if not isinstance(interrupt, Stopped) else f"stopped by {interrupt}"
    with contextlib.suppress(Exception):
        sys.stdout.flush()
    with contextlib.suppress(Exception):
        sys.stderr.write(f"{name}: nothing more was written\n")
        sys.stderr.flush()
    os._exit(exit_code(interrupt))
