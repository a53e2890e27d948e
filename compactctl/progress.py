"""Progress of a batch run, on stderr: a bar in a terminal; nothing when stderr is piped or with -q (SPEC).

The runner reports to a :class:`Progress` from the parent process only (threads, processes
or Ray hand their results back to it), so every reporter here is single-threaded.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from typing import IO, TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from rich.progress import Progress as RichProgress

MB = 1_000_000


class Progress(Protocol):
    def started(self, name: str) -> None: ...  # a file begins (its name as given)
    def finished(self, name: str, size: int, failed: bool) -> None: ...  # a file is done, its input size
    def close(self) -> None: ...


class NoProgress:
    """``-q``, one file, or stderr not a terminal (piped, a CI log): nothing."""

    def started(self, name: str) -> None:
        pass

    def finished(self, name: str, size: int, failed: bool) -> None:
        pass

    def close(self) -> None:
        pass


class Counts:
    """Files done of total, bytes read, failures so far, and the rate since the start."""

    def __init__(self, total: int, total_bytes: int, clock: Callable[[], float]) -> None:
        self.total, self.total_bytes, self.clock = total, total_bytes, clock
        self.done = self.failed = self.bytes = 0
        self.start = clock()

    def add(self, size: int, failed: bool) -> None:
        self.done += 1
        self.bytes += size
        self.failed += failed


class BarProgress:
    """A terminal: rich's bar with files done of total, failures, MB/s and the file being read."""

    def __init__(self, total: int, total_bytes: int, clock: Callable[[], float] = time.monotonic) -> None:
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        self.counts = Counts(total, total_bytes, clock)
        self.bar: RichProgress = Progress(
            TextColumn("[bold]files"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[failed]}"),
            TextColumn("{task.fields[rate]}"),
            TimeElapsedColumn(),
            TextColumn("{task.fields[current]}"),
            console=Console(stderr=True),
            transient=True,
        )
        self.task = self.bar.add_task("files", total=total, failed="", rate="", current="")
        self.current: list[str] = []
        self.bar.start()

    def started(self, name: str) -> None:
        self.current.append(name)
        self.bar.update(self.task, current=name)

    def finished(self, name: str, size: int, failed: bool) -> None:
        self.counts.add(size, failed)
        if name in self.current:
            self.current.remove(name)
        elapsed = max(self.counts.clock() - self.counts.start, 1e-9)
        self.bar.update(
            self.task,
            advance=1,
            failed=f"[red]{self.counts.failed} failed[/]" if self.counts.failed else "",
            rate=f"{self.counts.bytes / MB / elapsed:.1f} MB/s",
            current=self.current[-1] if self.current else "",
        )

    def close(self) -> None:
        self.bar.stop()


def sizes(sources: Sequence[str]) -> list[int]:
    """Each input's size in bytes (0 for stdin or a file that is gone: its error comes later)."""
    result = []
    for source in sources:
        try:
            result.append(os.stat(source).st_size if source != "-" else 0)
        except OSError:
            result.append(0)
    return result


def progress_for(total: int, total_bytes: int, quiet: bool, stream: IO[str]) -> Progress:
    """The bar on a terminal; nothing with ``-q``, for a single file, or when ``stream`` is piped
    (SPEC: "a progress bar on a terminal, none when piped or with --quiet")."""
    if quiet or total < 2 or not stream.isatty():
        return NoProgress()
    return BarProgress(total, total_bytes)
