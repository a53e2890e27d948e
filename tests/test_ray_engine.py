"""--engine ray on a real local Ray (2 CPUs): the same outputs, byte for byte, and the same summary as --jobs 1."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from compactctl.errors import EXIT_INPUT, EXIT_OK
from tests.cli.conftest import Cli
from tests.needs import needs

pytestmark = pytest.mark.ray


def folder(root: Path, agent_messages: list[dict]) -> Path:
    for number in range(6):
        lines = [*agent_messages, {"role": "user", "content": f"run {number}"}, {"role": "assistant", "content": "ok"}]
        path = root / f"team{number % 2}" / f"session{number}.jsonl"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"".join(orjson.dumps(m) + b"\n" for m in lines))
    (root / "team0" / "broken.jsonl").write_bytes(b"\x00\x01 not a transcript")
    return root


def tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def without_timing(report: dict) -> dict:
    return {key: value for key, value in report.items() if key not in ("seconds", "elapsed")}


@pytest.fixture(scope="module")
def ray_local():
    ray = needs("ray")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, ignore_reinit_error=True)
    yield ray
    ray.shutdown()


@pytest.mark.parametrize("command", ["compact", "prune"])
def test_ray_writes_what_jobs_1_writes_and_reports_the_same(ray_local, command, tmp_path, agent_messages):
    source = folder(tmp_path / "in", agent_messages)
    cli = Cli()
    tolerate = ("--json", "--max-failed-files", "1", "--write-unchanged")  # the broken file fails, and is allowed to
    threads = cli(command, source, "-o", tmp_path / "threads", "--jobs", "1", *tolerate)
    ray = cli(command, source, "-o", tmp_path / "ray", "--engine", "ray", *tolerate)
    assert threads.exit_code == ray.exit_code == EXIT_OK, ray.output
    assert tree(tmp_path / "ray") == tree(tmp_path / "threads") and len(tree(tmp_path / "ray")) == 6
    same_outputs = ray.stdout.replace(str(tmp_path / "ray"), str(tmp_path / "threads"))  # each wrote its own folder
    assert without_timing(orjson.loads(same_outputs)) == without_timing(orjson.loads(threads.stdout))
    failed = orjson.loads(ray.stdout)["total"]["failed"]
    assert failed == 1  # the broken file came back as a failure row; the job went on


def test_ray_report_matches_and_a_bad_file_fails_the_run_as_with_threads(ray_local, tmp_path, agent_messages):
    source = folder(tmp_path / "in", agent_messages)
    cli = Cli()
    threads = cli("report", source, "--json")
    ray = cli("report", source, "--json", "--engine", "ray")
    assert threads.exit_code == ray.exit_code == EXIT_INPUT
    assert ray.stdout == threads.stdout
    (failed,) = orjson.loads(ray.stdout)["failed"]
    assert failed["file"].endswith("broken.jsonl") and "binary file" in failed["error"]


def test_without_ray_the_engine_says_how_to_install_it(monkeypatch, tmp_path, agent_messages):
    import sys

    monkeypatch.setitem(sys.modules, "ray", None)  # as if the extra were not installed
    source = folder(tmp_path / "in", agent_messages)
    done = Cli()("compact", source, "-o", tmp_path / "out", "--engine", "ray")
    assert done.exit_code == EXIT_INPUT
    assert "--engine ray needs Ray: pip install 'compactctl[ray]'" in done.stderr
    assert not (tmp_path / "out").exists()
