"""Progress on stderr: a line every few seconds in a log, the bar in a terminal, nothing with -q."""

from __future__ import annotations

import io
import re

from compactctl.progress import BarProgress, LogProgress, NoProgress, progress_for, sizes


class Clock:
    """A clock the test moves by hand, so the lines come when the test says."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


class Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_log_gets_a_line_every_few_seconds_with_counts_rate_and_failures():
    clock, out = Clock(), io.StringIO()
    progress = LogProgress(4, 8_000_000, out, every=5.0, clock=clock)
    progress.started("logs/a.jsonl")
    clock.now += 1
    progress.finished("logs/a.jsonl", 2_000_000, failed=False)
    assert out.getvalue() == ""  # under 5 s: nothing yet
    clock.now += 4
    progress.finished("logs/b.jsonl", 2_000_000, failed=True)
    assert out.getvalue() == "compactctl: 2/4 files, 4.0/8.0 MB, 0.8 MB/s, 1 failed, 5s\n"
    clock.now += 1
    progress.finished("logs/c.jsonl", 2_000_000, failed=False)
    assert out.getvalue().count("\n") == 1  # the next line waits for the next 5 s
    clock.now += 1
    progress.finished("logs/d.jsonl", 2_000_000, failed=False)
    progress.close()  # the last line, always
    last = out.getvalue().splitlines()[-1]
    assert last == "compactctl: 4/4 files, 8.0/8.0 MB, 1.1 MB/s, 1 failed, 7s"


def test_a_long_file_still_shows_the_run_is_alive_when_the_next_one_starts():
    clock, out = Clock(), io.StringIO()
    progress = LogProgress(3, 0, out, every=5.0, clock=clock)
    clock.now += 6
    progress.started("logs/b.jsonl")
    assert re.fullmatch(r"compactctl: 0/3 files, 0\.0/0\.0 MB, 0\.0 MB/s, 6s\n", out.getvalue())


def test_quiet_or_a_single_file_shows_nothing_a_terminal_the_bar_a_log_the_lines():
    assert isinstance(progress_for(5, 10, quiet=True, stream=io.StringIO()), NoProgress)
    assert isinstance(progress_for(1, 10, quiet=False, stream=io.StringIO()), NoProgress)
    assert isinstance(progress_for(5, 10, quiet=False, stream=io.StringIO()), LogProgress)
    bar = progress_for(5, 10, quiet=False, stream=Tty())
    try:
        assert isinstance(bar, BarProgress)
    finally:
        bar.close()


def test_the_bar_counts_files_failures_and_names_the_current_file():
    clock = Clock()
    bar = BarProgress(3, 3_000_000, clock=clock)
    try:
        bar.started("logs/a.jsonl")
        bar.started("logs/b.jsonl")
        task = bar.bar.tasks[0]
        assert task.fields["current"] == "logs/b.jsonl"
        clock.now += 2
        bar.finished("logs/b.jsonl", 1_000_000, failed=True)
        assert (task.completed, task.total) == (1, 3)
        assert task.fields["current"] == "logs/a.jsonl"  # still being read
        assert "1 failed" in task.fields["failed"] and task.fields["rate"] == "0.5 MB/s"
    finally:
        bar.close()


def test_sizes_are_zero_for_stdin_and_missing_files(tmp_path):
    (tmp_path / "a.jsonl").write_bytes(b"x" * 7)
    assert sizes([str(tmp_path / "a.jsonl"), "-", str(tmp_path / "gone.jsonl")]) == [7, 0, 0]
