"""Record sessions compactctl wrote (``compactctl compact --session ID``: a new session beside the original) that the
real client then continued, with what the fake served across both runs (``<fixture>.served.json``): the bill.

    PATH=<.ci/cache/npm/node_modules/.bin>:$PATH python -m tests.fakes.record_compactctl_sessions

The fixtures go to tests/recorded/data/ (README.md there says what each holds).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from tests.fakes.anthropic import FakeAnthropic
from tests.fakes.clients import ClaudeCode, require_client
from tests.fakes.record_copies import RECORDED, _serving
from tests.fakes.record_fixtures import ANSWER, _claude_print, _version
from tests.fakes.scenarios import project
from tests.fakes.server import Reply, ToolCall

ROOT = Path(__file__).resolve().parents[2]


def compact_session(env: dict[str, str], cwd: Path, session: str, client: str) -> str:
    """``compactctl compact --session ID`` in the client's home (its default strategy): the new session's id.
    ``--force``: the client has exited; a user would have waited the minute compactctl asks for."""
    args = [sys.executable, "-m", "compactctl", "compact", "--session", session, "--client", client, "--json"]
    done = subprocess.run(
        [*args, "--force"], capture_output=True, text=True, timeout=600, cwd=cwd,
        env={**env, "PYTHONPATH": str(ROOT), "COLUMNS": "200", "PATH": os.environ.get("PATH", "/usr/bin:/bin")},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    return str(json.loads(done.stdout)["session"]["new_id"])


def claude_code_compactctl_session_fixture(root: Path) -> list[Path]:
    """Claude Code 2.1.332 on claude-sonnet-4-6: a turn reading the notes and an 800-line build log, three short
    turns (``--resume``), then ``compactctl compact --session`` (structured: the first two turns summarized, the
    last two copied after its boundary) and two turns of the new session (``--resume NEW``). The fake served 7
    responses: 5 in the original session, 2 in the new one."""
    client = require_client("claude")
    with _serving() as served, FakeAnthropic() as fake:
        claude = ClaudeCode(client, root, project(root), fake)

        def run(prompt: str, *extra: str) -> str:
            return _claude_print(claude, prompt, "--allowedTools", "Bash Read Edit Write", "--model",
                                 "claude-sonnet-4-6", *extra)  # fmt: skip

        log = claude.cwd / "build.log"
        log.write_text("".join(f"{n:04d} step ok, results stay in CSV\n" for n in range(800)))
        notes = str(claude.cwd / "notes.txt")
        reads = (ToolCall("Read", {"file_path": notes}), ToolCall("Read", {"file_path": str(log)}))
        fake.enqueue(Reply(text="Reading.", tool_calls=reads), ANSWER)
        session = run("What do the notes and the build log say?")
        for n, prompt in enumerate(("And the interface?", "Anything else?", "In one word?"), start=1):
            fake.enqueue(f"Answer {n}: the interface stays, in CSV.")
            run(prompt, "--resume", session)
        new = compact_session(claude.env(), claude.cwd, session, "claude-code")
        fake.enqueue("After compactctl: CSV.", "Still CSV.")
        run("Still CSV?", "--resume", new)
        run("Sure?", "--resume", new)
        assert not fake.errors and not fake.script, fake.errors
        folder = RECORDED / f"claude-code-{_version(client.version)}-compactctl-session"
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
        written = []
        for name in (session, new):
            target = folder / f"{name}.jsonl"
            target.write_bytes(claude.session_file(name).read_bytes().replace(str(root).encode(), b"/home/user"))
            written.append(target)
        which = json.dumps({"original": session, "new": new}, indent=1)
        (folder.parent / f"{folder.name}.sessions.json").write_text(which + "\n")
        (folder.parent / f"{folder.name}.served.json").write_text(json.dumps(served, indent=1) + "\n")
    return written


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as home:
        for path in claude_code_compactctl_session_fixture(Path(home)):
            print(path)
