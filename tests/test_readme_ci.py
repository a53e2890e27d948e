"""The README's CI recipe, run as written over a folder of real sessions and broken files.

Both blocks (the GitHub Actions step's ``run:`` script and the plain shell step) are taken
from README.md and run by bash, so the recipe a team copies is the one that is tested.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from xml.etree import ElementTree

import jsonschema
import pytest

from compactctl.cli.outcome import SCHEMA
from tests.conftest import ROOT, SHARED_TRANSCRIPTS, needs_transcripts

README = (ROOT / "README.md").read_text()
# Real sessions from ../shared/transcripts (their licenses sit beside them there).
REAL = {
    "claude-code/viewer.jsonl": "claude-code/d-kimuson__claude-code-viewer/5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl",
    "claude-code/bastion.jsonl": "claude-code/bastion-agentique__bastion/claude-session.jsonl",
    "codex/pomodoro.jsonl": "codex/yoavf__ai-sessions/codex-pomodor-timer.jsonl",
}
TRUNCATED_FROM = "claude-code/kcosr__chat-to-html/claude.jsonl"


def block(marker: str) -> str:
    """The fenced block right after ``<!-- marker -->`` in the README."""
    found = re.search(rf"<!-- {re.escape(marker)} -->\n```\w*\n(.*?)```", README, re.S)
    assert found, f"README has no {marker} block"
    return found.group(1)


def github_run_script() -> str:
    """The ``run: |`` script of the GitHub step, dedented as the runner gives it to bash."""
    lines = block("ci-recipe:github").splitlines()
    start = next(i for i, line in enumerate(lines) if line.strip() == "run: |") + 1
    indent = len(lines[start]) - len(lines[start].lstrip())
    script = []
    for line in lines[start:]:
        if line.strip() and len(line) - len(line.lstrip()) < indent:
            break
        script.append(line[indent:])
    return "\n".join(script) + "\n"


def logs_folder(root: Path) -> None:
    """logs/: three real sessions, one truncated mid-line, one empty, one package.json, one pi session."""
    for name, source in REAL.items():
        (root / "logs" / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(SHARED_TRANSCRIPTS / source, root / "logs" / name)
    data = (SHARED_TRANSCRIPTS / TRUNCATED_FROM).read_bytes()
    (root / "logs" / "claude-code" / "truncated.jsonl").write_bytes(data[:20000])  # cut inside line 14
    (root / "logs" / "empty.jsonl").write_bytes(b"")
    (root / "logs" / "package.json").write_bytes(b'{"name": "app", "version": "1.0.0"}\n')
    (root / "logs" / "pi-session.jsonl").write_bytes(b'{"type":"session","version":3,"id":"1","cwd":"/w"}\n')


def run(script: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
        "PYTHONPATH": str(ROOT),
        "GITHUB_WORKSPACE": str(cwd),
    }
    return subprocess.run(["bash", "-e", "-c", script], cwd=cwd, env=env, capture_output=True, text=True, timeout=600)


def check_outcome(cwd: Path) -> dict:
    document = json.loads((cwd / "compactctl.json").read_text())
    jsonschema.validate(document, json.loads(SCHEMA.read_text()))
    by_file = {entry["file"]: entry for entry in document["files"]}
    for name in REAL:
        entry = by_file[f"logs/{name}"]
        assert entry["status"] in ("ok", "unchanged")
        # An unchanged session is not copied (--write-unchanged would): its output is null.
        assert (cwd / "compacted" / name).is_file() == (entry["status"] == "ok") == (entry["output"] is not None)
    assert by_file["logs/claude-code/truncated.jsonl"]["status"] == "skipped-lines"  # its cut last line
    for name in ("empty.jsonl", "package.json", "pi-session.jsonl"):
        assert by_file[f"logs/{name}"]["status"] == "failed"
    assert {k: document["total"][k] for k in ("inputs", "written", "failed")} == {
        "inputs": 7,
        "written": 3,
        "failed": 3,
    }
    (suite,) = ElementTree.parse(cwd / "compactctl.xml").getroot()
    assert suite.attrib["tests"] == str(7 + len(document["gates"])) and suite.attrib["errors"] == "3"
    return document


@pytest.mark.slow  # the README's CI step in a shell, on real transcripts
@needs_transcripts
def test_the_github_step_fails_on_the_bad_files_and_annotates_them(tmp_path):
    logs_folder(tmp_path)
    done = run(github_run_script(), tmp_path)
    assert done.returncode == 2, done.stderr  # the step fails: three files could not be read
    check_outcome(tmp_path)
    annotations = [line for line in done.stderr.splitlines() if line.startswith("::")]
    assert "::error file=logs/empty.jsonl,title=compactctl compact%3A file failed::" in "\n".join(annotations)
    assert any(a.startswith("::warning file=logs/claude-code/truncated.jsonl,line=14,") for a in annotations)


@pytest.mark.slow  # the README's CI step in a shell, on real transcripts
@needs_transcripts
def test_the_shell_step_says_what_failed_and_exits_with_compactctl_s_code(tmp_path):
    logs_folder(tmp_path)
    done = run(block("ci-recipe:shell"), tmp_path)
    assert done.returncode == 2, done.stderr
    assert "inputs 7, written 3, unchanged 1, failed 3, lines skipped 1" in done.stdout
    assert "error: cannot tell the format of logs/package.json (known: " in done.stderr
    check_outcome(tmp_path)
    # The run again over the same folder: the same outputs, byte for byte.
    first = {p: p.read_bytes() for p in sorted((tmp_path / "compacted").rglob("*")) if p.is_file()}
    assert run(block("ci-recipe:shell"), tmp_path).returncode == 2
    assert {p: p.read_bytes() for p in sorted((tmp_path / "compacted").rglob("*")) if p.is_file()} == first
