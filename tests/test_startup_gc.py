"""The collector the command holds off through its start-up (``startup_gc``): off until the files' work,
then on again with start-up's objects frozen; a caller of ``main()`` that goes on keeps its own."""

from __future__ import annotations

import gc
import subprocess
import sys
from pathlib import Path

import pytest

import compactctl
from compactctl import startup_gc

ROOT = str(Path(compactctl.__file__).parent.parent)


@pytest.fixture
def collector():
    """The test's collector put back as it was, nothing left frozen."""
    was = gc.isenabled()
    yield
    gc.unfreeze()
    startup_gc._held = False
    (gc.enable if was else gc.disable)()


def test_held_until_released_then_frozen_and_on_again(collector):
    gc.enable()
    startup_gc.hold()
    assert not gc.isenabled()
    before = gc.get_freeze_count()
    made = [[] for _ in range(1000)]  # tracked objects alive at release
    startup_gc.release()
    assert gc.isenabled()
    assert gc.get_freeze_count() >= before + len(made)
    startup_gc.release()  # a second release changes nothing
    assert gc.isenabled()


def test_a_collector_already_off_stays_off(collector):
    gc.disable()
    startup_gc.hold()
    startup_gc.release()
    assert not gc.isenabled()
    assert gc.get_freeze_count() == 0


def test_main_called_by_a_caller_that_goes_on_leaves_its_collector_alone(collector, tmp_path, capsys):
    from compactctl.cli.main import main

    source = tmp_path / "in.jsonl"
    source.write_text('{"role": "user", "content": "hi"}\n')
    gc.enable()
    frozen = gc.get_freeze_count()
    with pytest.raises(SystemExit):
        sys_argv, sys.argv = sys.argv, ["compactctl", "compact", str(source), "-o", str(tmp_path / "out.jsonl"), "-q"]
        try:
            main()
        finally:
            sys.argv = sys_argv
    assert gc.isenabled()
    assert gc.get_freeze_count() == frozen


def test_the_program_runs_its_files_with_the_collector_on(tmp_path):
    # The command itself (python -m compactctl) holds it through start-up and lets it go for the work.
    code = (
        "import gc, sys, runpy\n"
        "import compactctl.files.jobs as jobs\n"
        "run = jobs.run_jobs\n"
        "def seen(*a, **k):\n"
        "    out = run(*a, **k)\n"
        "    sys.stderr.write(f'on={gc.isenabled()} frozen={gc.get_freeze_count() > 0}\\n')\n"
        "    return out\n"
        "jobs.run_jobs = seen\n"
        "import compactctl.cli.exit as exit_\n"
        "exit_.run_jobs = seen\n"
        "sys.argv = ['compactctl', 'compact', sys.argv[1], '-o', sys.argv[2], '-q']\n"
        "runpy.run_module('compactctl', run_name='__main__', alter_sys=True)\n"
    )
    source = tmp_path / "in.jsonl"
    source.write_text('{"role": "user", "content": "hi"}\n')
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": ROOT}
    done = subprocess.run(
        [sys.executable, "-c", code, str(source), str(tmp_path / "out.jsonl")], env=env, capture_output=True, text=True
    )
    assert "on=True frozen=True" in done.stderr, done.stderr


def test_a_replay_collects_its_youngest_generation_less_often_then_puts_the_threshold_back(collector):
    from compactctl.startup_gc import YOUNG_THRESHOLD, fewer_collections

    gc.enable()
    before = gc.get_threshold()
    seen = []
    with fewer_collections():
        seen.append(gc.get_threshold())
    assert seen == [(YOUNG_THRESHOLD, *before[1:])] and before[0] < YOUNG_THRESHOLD
    assert gc.get_threshold() == before
    gc.set_threshold(YOUNG_THRESHOLD * 2, *before[1:])  # a caller's rarer collections are its own
    try:
        with fewer_collections():
            assert gc.get_threshold()[0] == YOUNG_THRESHOLD * 2
    finally:
        gc.set_threshold(*before)
    gc.disable()
    with fewer_collections():  # a collector that is off is left alone
        assert gc.get_threshold() == before
