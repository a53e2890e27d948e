"""Progress on stderr: the bar in a terminal; nothing when piped (a CI log) or with -q, as SPEC says."""

from __future__ import annotations

import io

from compactctl.progress import BarProgress, NoProgress, progress_for, sizes


class Clock:
    """A clock the test moves by hand, so the lines come when the test says."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


class Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_quiet_a_single_file_or_a_pipe_shows_nothing_a_terminal_the_bar():
    assert isinstance(progress_for(5, 10, quiet=True, stream=Tty()), NoProgress)
    assert isinstance(progress_for(1, 10, quiet=False, stream=Tty()), NoProgress)
    assert isinstance(progress_for(5, 10, quiet=False, stream=io.StringIO()), NoProgress)  # piped: none
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
