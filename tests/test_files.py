"""Writing outputs: atomic for files, straight through for devices and pipes."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from compactctl.files.io import write_atomic


def test_a_named_pipe_output_is_written_through_not_replaced(tmp_path):
    # -o /dev/null, or a FIFO: renaming a temporary file onto it would replace the device (as root, /dev/null).
    fifo = tmp_path / "out.fifo"
    os.mkfifo(fifo)
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    try:
        write_atomic(str(fifo), b'{"role":"user","content":"hi"}\n')
        assert stat.S_ISFIFO(fifo.stat().st_mode)
        assert os.read(reader, 1024) == b'{"role":"user","content":"hi"}\n'
    finally:
        os.close(reader)


def test_a_regular_file_is_still_replaced_atomically(tmp_path):
    out = tmp_path / "out.jsonl"
    out.write_bytes(b"old\n")
    write_atomic(str(out), b"new\n")
    assert out.read_bytes() == b"new\n"
    assert [p.name for p in tmp_path.iterdir()] == ["out.jsonl"]


def test_two_inputs_mapped_to_one_output_are_refused_before_anything_is_written(tmp_path):
    import pytest

    from compactctl.errors import InputError
    from compactctl.files.io import plan

    for folder in ("d1", "d2"):
        (tmp_path / folder / "x").mkdir(parents=True)
        (tmp_path / folder / "x" / "a.jsonl").write_text('{"role":"user","content":"hi"}\n')
    out = tmp_path / "out"
    with pytest.raises(InputError, match="would both be written here"):
        plan([str(tmp_path / "d1"), str(tmp_path / "d2")], str(out))
    with pytest.raises(InputError, match="would both be written here"):
        plan([str(tmp_path / "d1" / "x" / "a.jsonl")] * 2, str(out))
    assert not out.exists()
    assert len(plan([str(tmp_path / "d1"), str(tmp_path / "d2" / "x" / "a.jsonl")], str(out))) == 2


def test_stdin_into_an_existing_folder_is_refused_not_written_as_a_file_named_stdin(tmp_path):
    import pytest

    from compactctl.errors import InputError
    from compactctl.files.io import plan

    with pytest.raises(InputError, match="stdin has no file name"):
        plan(["-"], str(tmp_path))
    assert list(tmp_path.iterdir()) == []


def test_jobs_run_in_the_parent_and_forked_workers_with_results_failures_and_what_they_print(capfd):
    import sys

    from compactctl.errors import InputError
    from compactctl.files.io import Job
    from compactctl.files.jobs import run_jobs

    def work(job: Job) -> tuple[str, int]:
        if job.source.endswith("3"):
            raise InputError(f"{job.source}:1: not a transcript")
        print(f"warning about {job.source}", file=sys.stderr)
        return job.source, os.getpid()

    jobs = [Job(f"file{i}", None, f"file{i}") for i in range(6)]
    results, failures = run_jobs(jobs, work, parallel=2, engine="processes")
    assert [source for source, _ in results] == ["file0", "file1", "file2", "file4", "file5"]
    # Two processes: the parent ran files itself beside its one forked worker.
    pids = {pid for _, pid in results}
    assert os.getpid() in pids and len(pids) == 2
    assert [(f.file, f.error, f.exit_code) for f in failures] == [("file3", "file3:1: not a transcript", 2)]
    printed = capfd.readouterr().err.splitlines()
    assert sorted(printed) == [f"warning about file{i}" for i in (0, 1, 2, 4, 5)]
    # The same in threads, for comparison: same results, same failures.
    in_threads = run_jobs(jobs, lambda job: work(job)[0], parallel=2, engine="threads")
    assert in_threads == ([source for source, _ in results], failures)


def test_jobs_default_to_one_process_per_core(monkeypatch):
    from compactctl.files import jobs as batch
    from compactctl.files.io import Job

    monkeypatch.setattr(batch.os, "sched_getaffinity", lambda pid: {0, 1, 2}, raising=False)
    assert batch.cores() == 3
    from compactctl import forks

    pools = []
    real = forks.Workers

    def recorded(workers, **options):
        pools.append(workers)
        return real(workers, **options)

    monkeypatch.setattr(forks, "Workers", recorded)  # imported where files are forked
    jobs = [Job(f"f{i}", None, f"f{i}") for i in range(5)]
    assert batch.run_jobs(jobs, lambda job: job.name, parallel=0, engine="processes") == ([j.name for j in jobs], [])
    assert pools == [2]  # forked workers: one per core, the parent being one of them


def test_forking_builds_only_the_counters_tables_a_codex_rollout_s_is_built_where_it_is_needed():
    # o200k (a Codex model's) counts only calibration in report and replay, never compact: built
    # before the fork, it delayed every worker by its 50 ms for nothing.
    import subprocess
    import sys
    from pathlib import Path

    rollout = Path(__file__).parent / "formats" / "data" / "codex.jsonl"
    code = (
        "import os, sys\n"
        "from compactctl import encodings\n"
        "from compactctl.files.io import Job\n"
        "from compactctl.files.jobs import run_jobs\n"
        "from compactctl.tokens import counter_for\n"
        "counter_for()\n"
        "jobs = [Job(sys.argv[1], None, 'a'), Job(sys.argv[1], None, 'b')]\n"
        "tables = lambda job: (sorted(encodings._ENCODERS), os.getpid())\n"
        "done, _ = run_jobs(jobs, tables, parallel=2, engine='processes')\n"
        "assert len({pid for _, pid in done}) == 2, done\n"
        "print(sorted({tuple(tables) for tables, _ in done}))\n"
    )
    done = subprocess.run([sys.executable, "-c", code, str(rollout)], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[('cl100k_base',)]"


def test_a_codex_homes_own_json_lines_are_no_transcripts(tmp_path: Path):
    # ~/.codex keeps the threads' names (the terminal UI's generated titles) and the prompt history beside sessions/.
    from compactctl.files.io import find_transcripts

    home = tmp_path / ".codex"
    rollout = home / "sessions" / "2026" / "12" / "06" / "rollout-2026-12-06T00-57-05-x.jsonl"
    rollout.parent.mkdir(parents=True)
    for path in (rollout, home / "session_index.jsonl", home / "history.jsonl"):
        path.write_text('{"id": "x"}\n')
    assert find_transcripts(home) == [rollout]
    elsewhere = tmp_path / "notes" / "session_index.jsonl"  # a file of that name elsewhere is read as given
    elsewhere.parent.mkdir()
    elsewhere.write_text('{"id": "x"}\n')
    assert find_transcripts(elsewhere.parent) == [elsewhere]
