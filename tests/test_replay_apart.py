"""Replay's settings walked apart in forked workers (``files.replay_apart``): the rows, the output
byte for byte and the errors are those of the walk in step (``--jobs 1``)."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import compactctl.forks
from bench.workloads import generate
from compactctl.cli.main import app
from compactctl.errors import InputError
from compactctl.files import replay_apart
from compactctl.files.replay_apart import walker_for
from compactctl.replay import replay, settings_grid
from compactctl.strategies import STRATEGIES, Strategy
from tests.conftest import SHARED_TRANSCRIPTS, needs_transcripts

CLAUDE = (
    SHARED_TRANSCRIPTS / "claude-code" / "d-kimuson__claude-code-viewer" / "fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl"
)
CODEX = next(iter(sorted((SHARED_TRANSCRIPTS / "codex" / "AcidicSoil__codex-session-view").glob("*.jsonl"))), Path())


@pytest.fixture
def forked(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Every walk forks after its first message (not only a long one), and the workers it forks are counted."""
    monkeypatch.setattr(replay_apart, "FORK_AFTER", 0.0)
    monkeypatch.setattr(replay_apart, "MIN_MESSAGES", 4)
    monkeypatch.setattr(replay_apart, "idle_cores", lambda: 2.0)  # whatever else the machine runs now
    made: list[int] = []
    real = compactctl.forks.Workers

    def counted(workers: int, *args: Any, **kwargs: Any) -> compactctl.forks.Workers:
        made.append(workers)
        return real(workers, *args, **kwargs)

    monkeypatch.setattr(compactctl.forks, "Workers", counted)
    return made


@pytest.mark.parametrize("steps", [["window"], ["prune"], ["mask-observations", "window"]])
def test_settings_walked_apart_give_the_rows_walked_in_step(forked: list[int], steps: list[str]) -> None:
    messages = generate("tool", 150)
    grid = settings_grid([2000, 4000, 8000, 16000], False, steps)
    in_step = replay(messages, grid, {"keep_recent": 4})
    apart = replay(messages, grid, {"keep_recent": 4}, walker=walker_for(3))
    assert forked == [2]  # three slots: the parent's own thread and two workers
    assert [dataclasses.asdict(row) for row in apart] == [dataclasses.asdict(row) for row in in_step]
    assert sum(row.compactions for row in in_step) > 5


def test_a_short_walk_is_not_forked(monkeypatch: pytest.MonkeyPatch) -> None:
    made: list[int] = []
    monkeypatch.setattr(compactctl.forks, "Workers", lambda *args, **kwargs: made.append(1))
    messages = generate("tool", 150)
    replay(messages, settings_grid([2000, 4000], False, ["window"]), {"keep_recent": 4}, walker=walker_for(2))
    assert made == []  # its settings take milliseconds: a fork would cost more than it spares


def test_no_fork_without_an_idle_core(forked: list[int], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(replay_apart, "idle_cores", lambda: 0.3)
    messages = generate("tool", 150)
    grid = settings_grid([2000, 4000, 8000], False, ["prune"])
    apart = replay(messages, grid, {"keep_recent": 4}, walker=walker_for(2))
    assert forked == []  # a worker would share this process's core: slower than the walk in step
    assert apart == replay(messages, grid, {"keep_recent": 4})


def run(args: list[str]) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, ["replay", *args])
    return result.exit_code, result.stdout, result.stderr


@needs_transcripts
@pytest.mark.parametrize(
    ("source", "steps"),
    [(CLAUDE, ["-s", "prune"]), (CLAUDE, ["-s", "window", "--keep-recent", "6"]), (CODEX, ["-s", "trim-tools"])],
)
def test_jobs_2_prints_what_jobs_1_prints_on_a_real_session(
    forked: list[int], source: Path, steps: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "160")
    args = [str(source), *steps, "-t", "20000,50000,80000"]
    for extra in ([], ["--json"]):
        one = run([*args, *extra, "--jobs", "1"])
        assert not forked
        two = run([*args, *extra, "--jobs", "2"])
        assert forked, "the settings were walked apart"
        assert two == one and one[0] == 0
        forked.clear()


def _failing_window(monkeypatch: pytest.MonkeyPatch, longest: int) -> None:
    """``window`` that fails on a context longer than ``longest`` messages, saying how long it was."""
    real = STRATEGIES["window"]

    def run_window(messages: list[Any], options: Any, context: Any) -> Any:
        if len(messages) > longest:
            raise InputError(f"window met a context of {len(messages)} messages")
        return real.run(messages, options, context)

    monkeypatch.setitem(STRATEGIES, "window", Strategy(real.name, run_window, real.options, real.summary))


@needs_transcripts
def test_an_error_in_a_worker_is_the_error_of_jobs_1(forked: list[int], monkeypatch: pytest.MonkeyPatch) -> None:
    _failing_window(monkeypatch, 60)
    args = [str(CLAUDE), "-s", "window", "--keep-recent", "4", "-t", "20000,40000,80000"]
    one = run([*args, "--jobs", "1"])
    assert not forked
    two = run([*args, "--jobs", "3"])
    assert forked
    assert one[0] != 0 and "window met a context of" in one[2]
    assert two == one


def test_an_error_in_a_worker_is_raised_as_the_walk_in_step_raises_it(
    forked: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    _failing_window(monkeypatch, 30)
    messages = generate("tool", 150)
    grid = settings_grid([1000, 4000, 8000], False, ["window"])
    with pytest.raises(InputError) as in_step:
        replay(messages, grid, {"keep_recent": 4})
    with pytest.raises(InputError) as apart:
        replay(messages, grid, {"keep_recent": 4}, walker=walker_for(3))
    assert forked == [2]
    assert str(apart.value) == str(in_step.value)
