"""Ctrl-C, SIGTERM and SIGHUP against the real console script: quick exit, 128 + N, nothing half-written.

The runs are made slow by a loopback summarizer server that never answers, so the
signal always arrives while work is in flight; a temporary file is planted the way a
killed run leaves one, to show that the next run finds it and removes it.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from compactctl import interrupts
from tests.summarizers.openai_server import Behaviour


def start_compact(server, source: Path, out: Path, *more: str) -> subprocess.Popen:
    args = [
        sys.executable, "-m", "compactctl", "compact", str(source), "-o", str(out), "--summarizer", "openai",
        "--base-url", server.url, "--keep-turns", "1", "--no-cache", "--summary-timeout", "60", *more,
    ]  # fmt: skip
    env = {**os.environ, "OPENAI_API_KEY": "sk-test-loopback"}
    return subprocess.Popen(
        args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, preexec_fn=_ctrl_c_as_in_a_terminal
    )


def _ctrl_c_as_in_a_terminal() -> None:
    # A shell's background job (``.ci/run &``) starts with SIGINT ignored, and its children inherit that (Python then
    # installs no KeyboardInterrupt): the run is started as from a terminal, where Ctrl-C reaches it.
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def wait_for_request(server, seconds: float = 20, count: int = 1) -> None:
    deadline = time.monotonic() + seconds
    while len(server.requests) < count:
        assert time.monotonic() < deadline, "the run never reached the summarizer"
        time.sleep(0.05)


def stopped_at_once(run: subprocess.Popen, signum: int, code: int) -> None:
    """``run`` signalled: it exits with ``code`` within a second, saying so, without a traceback."""
    sent = time.monotonic()
    run.send_signal(signum)
    _, stderr = run.communicate(timeout=10)
    took = time.monotonic() - sent
    assert run.returncode == code, stderr
    assert took < 1.0, f"{took:.2f} s to stop"
    assert "Traceback" not in stderr and "nothing more was written" in stderr


@pytest.mark.slow  # a console script, signalled mid-run
@pytest.mark.parametrize(("signum", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143), (signal.SIGHUP, 129)])
def test_a_signal_stops_the_run_within_a_second_and_writes_nothing(
    openai_server, tmp_path, agent_messages, signum, code
):
    source = tmp_path / "in.jsonl"
    source.write_text("".join(json.dumps(m) + "\n" for m in agent_messages))
    out = tmp_path / "out.jsonl"
    openai_server.enqueue(Behaviour("hang", seconds=60))
    run = start_compact(openai_server, source, out)
    wait_for_request(openai_server)
    stopped_at_once(run, signum, code)
    assert not out.exists() and list(tmp_path.glob(".*.tmp")) == []


@pytest.mark.slow  # a console script, signalled mid-run
@pytest.mark.parametrize(("signum", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
@pytest.mark.parametrize("files", [2, 6])
def test_a_signal_stops_a_folder_run_in_the_parent_and_its_worker(
    openai_server, tmp_path, agent_messages, signum, code, files
):
    # --jobs 2: one file in the parent itself, one in its forked worker, both waiting on the summarizer;
    # with 6 files, each process also holds the file it was given ahead, which it must never start.
    folder, out = tmp_path / "in", tmp_path / "out"
    folder.mkdir()
    for n in range(files):  # sizes of their own: one a process, none kept back for a copy
        (folder / f"{n}.jsonl").write_text(
            "".join(json.dumps(m) + "\n" for m in agent_messages[: len(agent_messages) - n])
        )
    openai_server.enqueue(Behaviour("hang", seconds=60), Behaviour("hang", seconds=60))
    run = start_compact(openai_server, folder, out, "--jobs", "2", "--engine", "processes")
    wait_for_request(openai_server, count=2)
    stopped_at_once(run, signum, code)
    time.sleep(0.3)  # a file started after the stop would have asked the server by now
    assert len(openai_server.requests) == 2
    assert not out.exists() or [p for p in out.rglob("*") if p.is_file()] == []
    assert list(tmp_path.rglob(".*.tmp")) == []


@pytest.mark.slow  # a console script, killed mid-run
def test_a_temporary_file_left_by_a_killed_run_is_removed_by_the_next(cli_run, tmp_path, agent_messages):
    source = tmp_path / "in.jsonl"
    source.write_text("".join(json.dumps(m) + "\n" for m in agent_messages))
    out = tmp_path / "out.jsonl"
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    stale = out.with_name(f".{out.name}{interrupts.MARK}{dead.stdout.strip()}-0123abcd{interrupts.SUFFIX}")
    stale.write_bytes(b'{"role": "user", "content": "half a')  # what SIGKILL mid-write leaves
    live = out.with_name(f".{out.name}{interrupts.MARK}{os.getpid()}-89abcdef{interrupts.SUFFIX}")
    live.write_bytes(b"a run still writing")  # this process is alive: its file is not touched
    other = tmp_path / ".notes.tmp"
    other.write_bytes(b"not ours")
    result = cli_run("prune", source, "-o", out, "--write-unchanged")
    assert result.returncode == 0, result.stderr
    assert not stale.exists() and live.exists() and other.exists() and out.exists()


def test_temporary_files_are_removed_when_the_run_is_stopped(tmp_path):
    target = tmp_path / "out.jsonl"
    script = (
        "import sys, time\n"
        "from pathlib import Path\n"
        "from compactctl import interrupts\n"
        "interrupts.install()\n"
        "try:\n"
        "    with interrupts.temporary_beside(Path(sys.argv[1])) as temporary:\n"
        "        temporary.write_bytes(b'x' * 1000)\n"
        "        print(temporary, flush=True)\n"
        "        time.sleep(30)\n"
        "except KeyboardInterrupt as stop:\n"
        "    interrupts.stop_now(stop)\n"
    )
    run = subprocess.Popen([sys.executable, "-c", script, str(target)], stdout=subprocess.PIPE, text=True)
    temporary = Path(run.stdout.readline().strip())
    assert temporary.exists() and interrupts.MARK in temporary.name
    run.send_signal(signal.SIGTERM)
    assert run.wait(timeout=5) == 143
    assert not temporary.exists() and not target.exists()


@pytest.fixture
def cli_run():
    def run(*args):
        command = [sys.executable, "-m", "compactctl", *map(str, args)]
        return subprocess.run(command, capture_output=True, text=True, timeout=120)

    return run
