"""Record sessions compactctl wrote (``compactctl compact --session ID``: a new session beside the original) that the
real client then continued, with what the fake served across both runs (``<fixture>.served.json``): the bill.

    PATH=<.ci/cache/npm/node_modules/.bin>:$PATH python -m tests.fakes.record_compactctl_sessions [CLIENT ...]

CLIENT: claude-code, codex, gemini, claude-code-plain or codex-plain (plain ``compact``'s output resumed); all when
none is named.

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
from typing import Any

from tests.fakes.anthropic import FakeAnthropic
from tests.fakes.clients import ClaudeCode, Codex, Gemini, require_client
from tests.fakes.gemini import FakeGemini
from tests.fakes.record_copies import RECORDED, _serving
from tests.fakes.record_fixtures import ANSWER, _claude_print, _version
from tests.fakes.responses import FakeResponses
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


def claude_run(claude: ClaudeCode, prompt: str, *extra: str) -> str:
    return _claude_print(
        claude, prompt, "--allowedTools", "Bash Read Edit Write", "--model", "claude-sonnet-4-6", *extra
    )


def claude_code_original(claude: ClaudeCode) -> str:
    """The original session (a turn reading the notes and an 800-line build log, three short turns): its id. The
    fake served 5 responses."""
    log = claude.cwd / "build.log"
    log.write_text("".join(f"{n:04d} step ok, results stay in CSV\n" for n in range(800)))
    notes = str(claude.cwd / "notes.txt")
    reads = (ToolCall("Read", {"file_path": notes}), ToolCall("Read", {"file_path": str(log)}))
    claude.fake.enqueue(Reply(text="Reading.", tool_calls=reads), ANSWER)
    session = claude_run(claude, "What do the notes and the build log say?")
    for n, prompt in enumerate(("And the interface?", "Anything else?", "In one word?"), start=1):
        claude.fake.enqueue(f"Answer {n}: the interface stays, in CSV.")
        claude_run(claude, prompt, "--resume", session)
    return session


def claude_code_compacted(claude: ClaudeCode) -> tuple[str, str]:
    """``claude_code_original``, then ``compactctl compact --session`` of it: the two sessions' ids."""
    session = claude_code_original(claude)
    return session, compact_session(claude.env(), claude.cwd, session, "claude-code")


def codex_original(codex: Codex) -> str:
    """The original thread (a turn running ``seq 1 3000``, three short turns): its id. The fake served 5 responses."""
    codex.fake.enqueue(Reply(thinking="List it.", tool_calls=(ToolCall("exec_command", {"cmd": "seq 1 3000"}),)),
                       "It counts to 3000.")  # fmt: skip
    codex.run("Print the numbers to 3000.")
    (rollout,) = codex.rollouts()
    thread = rollout.name[-42:-6]
    for n, prompt in enumerate(("And the notes?", "Anything else?", "In one word?"), start=1):
        codex.fake.enqueue(f"Answer {n}: CSV.")
        codex.run(prompt, resume=thread)
    return thread


def codex_compacted(codex: Codex) -> tuple[str, str]:
    """``codex_original``, then ``compactctl compact --session`` of it: the two threads' ids."""
    thread = codex_original(codex)
    return thread, compact_session(codex.env(), codex.cwd, thread, "codex")


def plain_compact_in_place(original: Path, root: Path) -> None:
    """Plain ``compactctl compact FILE -o OUT`` (no ``--session``; its default strategy), OUT moved over FILE: what a
    user who keeps the session's id would do."""
    out = root / "compacted.jsonl"
    done = subprocess.run(
        [sys.executable, "-m", "compactctl", "compact", str(original), "-o", str(out), "-q"],
        capture_output=True, text=True, timeout=600, env={**os.environ, "PYTHONPATH": str(ROOT)},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    shutil.move(out, original)


def claude_code_compactctl_session_fixture(root: Path) -> list[Path]:
    """Claude Code 2.1.332 on claude-sonnet-4-6: a turn reading the notes and an 800-line build log, three short
    turns (``--resume``), then ``compactctl compact --session`` (structured: the first two turns summarized, the
    last two copied after its boundary) and two turns of the new session (``--resume NEW``). The fake served 7
    responses: 5 in the original session, 2 in the new one."""
    client = require_client("claude")
    with _serving() as served, FakeAnthropic() as fake:
        claude = ClaudeCode(client, root, project(root), fake)
        session, new = claude_code_compacted(claude)
        fake.enqueue("After compactctl: CSV.", "Still CSV.")
        claude_run(claude, "Still CSV?", "--resume", new)
        claude_run(claude, "Sure?", "--resume", new)
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


def claude_code_plain_output_resumed_fixture(root: Path) -> list[Path]:
    """Claude Code 2.1.332 on claude-sonnet-4-6: ``claude_code_original`` (5 responses), then
    plain ``compactctl compact FILE -o OUT`` (not ``--session``), OUT moved over the session's file (as a user who
    keeps the session id would), and two turns of the session resumed (``--resume ID``). The file then holds the
    original's calls, compactctl's boundary, the responses it copied after it, and the two new calls: the fake served
    7 responses."""
    client = require_client("claude")
    with _serving() as served, FakeAnthropic() as fake:
        claude = ClaudeCode(client, root, project(root), fake)
        session = claude_code_original(claude)
        original = claude.session_file(session)
        plain_compact_in_place(original, root)
        fake.enqueue("After compactctl: CSV.", "Still CSV.")
        claude_run(claude, "Still CSV?", "--resume", session)
        claude_run(claude, "Sure?", "--resume", session)
        assert not fake.errors and not fake.script, fake.errors
        folder = RECORDED / f"claude-code-{_version(client.version)}-plain-output-resumed"
        return _kept(folder, {f"{session}.jsonl": original.read_bytes()}, root, {"session": session}, served)


def codex_plain_output_resumed_fixture(root: Path) -> list[Path]:
    """Codex 0.171.0 on gpt-5.5: ``codex_original`` (5 responses), then plain ``compact`` of the rollout moved over
    it, and two turns of the thread resumed (``codex exec resume ID``): the fake served 7 responses."""
    client = require_client("codex")
    with _serving() as served, FakeResponses() as fake:
        codex = Codex(client, root, project(root), fake, model="gpt-5.5")
        thread = codex_original(codex)
        (original,) = codex.rollouts()
        plain_compact_in_place(original, root)
        files = _two_turns_more(codex, fake, thread)
        assert len(files) == 1, files
        folder = RECORDED / f"codex-{_version(client.version)}-plain-output-resumed"
        return _kept(folder, files, root, {"session": thread}, served)


def _two_turns_more(codex: Codex, fake: FakeResponses, thread: str) -> dict[str, bytes]:
    """Two short turns of ``thread`` resumed: every rollout of the home, by name."""
    fake.enqueue("After compactctl: CSV.", "Still CSV.")
    for prompt in ("Still CSV?", "Sure?"):
        done = codex.run(prompt, resume=thread)
        assert done.returncode == 0, done.stderr[-2000:]
    assert not fake.errors and not fake.script, fake.errors
    return {path.name: path.read_bytes() for path in codex.rollouts()}


def _kept(folder: Path, files: dict[str, bytes], root: Path, sessions: dict[str, str], served: list[Any]) -> list[Path]:
    """The files as ``folder/<name>`` (the home's path as /home/user), which is which, and what the fake served."""
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    written = []
    for name, data in files.items():
        target = folder / name
        target.write_bytes(data.replace(str(root).encode(), b"/home/user"))
        written.append(target)
    (folder.parent / f"{folder.name}.sessions.json").write_text(json.dumps(sessions, indent=1) + "\n")
    (folder.parent / f"{folder.name}.served.json").write_text(json.dumps(served, indent=1) + "\n")
    return written


def codex_compactctl_session_fixture(root: Path) -> list[Path]:
    """Codex 0.171.0 on gpt-5.5: a turn running ``seq 1 3000`` (reasoning, the command, an answer), three short
    turns (``codex exec resume``), then ``compactctl compact --session`` (structured: a ``compacted`` line after a
    copy of the original's lines) and two turns of the new thread (``codex exec resume NEW``). The fake served 7
    responses: 5 in the original rollout, 2 in the new one."""
    client = require_client("codex")
    with _serving() as served, FakeResponses() as fake:
        codex = Codex(client, root, project(root), fake, model="gpt-5.5")
        thread, new = codex_compacted(codex)
        files = _two_turns_more(codex, fake, new)
        assert len(files) == 2, files
        folder = RECORDED / f"codex-{_version(client.version)}-compactctl-session"
        return _kept(folder, files, root, {"original": thread, "new": new}, served)


def gemini_compactctl_session_fixture(root: Path) -> list[Path]:
    """Gemini CLI 0.61.0 on gemini-3.1-pro-preview (named: no router call): two long answers and two short ones
    (``--resume``; no tool call, which gemini-cli#29365 refuses in a resumed chat), then ``compactctl compact
    --session`` and two turns of the new session (``--resume NEW``). The fake served 6 responses: 4 in the original
    session, 2 in the new one."""
    client = require_client("gemini")
    with _serving() as served, FakeGemini() as fake:
        gemini = Gemini(client, root, project(root), fake, {"model": {"name": "gemini-3.1-pro-preview"}})
        long = " ".join(f"Row {n} stays in CSV." for n in range(600))
        fake.enqueue(f"The notes: {long}", f"The interface: {long}", "Answer 3: CSV.", "Answer 4: CSV.")
        session = gemini.run("What do the notes say? From memory, at length.")
        for prompt in ("And the interface, at length?", "Anything else?", "In one word?"):
            gemini.run(prompt, resume=session)
        new = compact_session(gemini.env(), gemini.cwd, session, "gemini")
        fake.enqueue("After compactctl: CSV.", "Still CSV.")
        for prompt in ("Still CSV?", "Sure?"):
            assert gemini.run(prompt, resume=new) == new
        assert not fake.errors and not fake.script, fake.errors
        files = {gemini.chat(name).name: gemini.chat(name).read_bytes() for name in (session, new)}
        folder = RECORDED / f"gemini-cli-{_version(client.version)}-compactctl-session"
        return _kept(folder, files, root, {"original": session, "new": new}, served)


FIXTURES = {
    "claude-code": claude_code_compactctl_session_fixture,
    "codex": codex_compactctl_session_fixture,
    "gemini": gemini_compactctl_session_fixture,
    "claude-code-plain": claude_code_plain_output_resumed_fixture,
    "codex-plain": codex_plain_output_resumed_fixture,
}


if __name__ == "__main__":
    wanted = sys.argv[1:] or list(FIXTURES)
    with tempfile.TemporaryDirectory() as home:
        for name in wanted:
            for path in FIXTURES[name](Path(home) / name):
                print(path)
