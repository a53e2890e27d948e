"""Record Claude Code sessions that the client compacts more than once, or compacts after compactctl did, with what
the fake served (``<fixture>.served.json``): the bill (issue 20's shapes nobody here had seen).

    PATH=<.ci/cache/npm/node_modules/.bin>:$PATH python -m tests.fakes.record_compactions [NAME ...]

NAME: compacted-twice, compactctl-session-compacted, continued or mcp; all when none is named. The fixtures go to
tests/recorded/data/ (README.md there says what each holds).
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

from tests.fakes.anthropic import FakeAnthropic
from tests.fakes.clients import ClaudeCode, require_client
from tests.fakes.record_compactctl_sessions import _kept, claude_code_compacted, claude_code_original, claude_run
from tests.fakes.record_copies import RECORDED, _serving
from tests.fakes.record_fixtures import ANSWER, _claude_print, _version
from tests.fakes.scenarios import project
from tests.fakes.server import Reply, ToolCall


def claude_code_compacted_twice_fixture(root: Path) -> list[Path]:
    """Claude Code 2.1.332 on claude-sonnet-4-6: ``claude_code_original`` (5 responses), its own ``/compact`` (the
    summary's response), two turns, ``/compact`` again, one turn, all ``--resume`` of the one session (one file):
    the fake served 10 responses."""
    client = require_client("claude")
    with _serving() as served, FakeAnthropic() as fake:
        claude = ClaudeCode(client, root, project(root), fake)
        session = claude_code_original(claude)
        claude_run(claude, "/compact", "--resume", session)
        fake.enqueue("After the first compaction: CSV.", "Still CSV.")
        claude_run(claude, "Still CSV?", "--resume", session)
        claude_run(claude, "Sure?", "--resume", session)
        claude_run(claude, "/compact", "--resume", session)
        fake.enqueue("After the second compaction: CSV.")
        claude_run(claude, "And now?", "--resume", session)
        assert not fake.errors and not fake.script, fake.errors
        data = claude.session_file(session).read_bytes()
        folder = RECORDED / f"claude-code-{_version(client.version)}-compacted-twice"
        return _kept(folder, {f"{session}.jsonl": data}, root, {"session": session}, served)


def claude_code_compactctl_session_compacted_fixture(root: Path) -> list[Path]:
    """Claude Code 2.1.332 on claude-sonnet-4-6: ``claude_code_compacted`` (the original's 5 responses, then
    ``compactctl compact --session``), a turn of the new session, the client's own ``/compact`` of it (the summary's
    response), and a turn after: the fake served 8 responses, 3 of them in the new session."""
    client = require_client("claude")
    with _serving() as served, FakeAnthropic() as fake:
        claude = ClaudeCode(client, root, project(root), fake)
        session, new = claude_code_compacted(claude)
        fake.enqueue("After compactctl: CSV.")
        claude_run(claude, "Still CSV?", "--resume", new)
        claude_run(claude, "/compact", "--resume", new)
        fake.enqueue("After the client's compaction: CSV.")
        claude_run(claude, "And now?", "--resume", new)
        assert not fake.errors and not fake.script, fake.errors
        files = {f"{name}.jsonl": claude.session_file(name).read_bytes() for name in (session, new)}
        folder = RECORDED / f"claude-code-{_version(client.version)}-compactctl-session-compacted"
        return _kept(folder, files, root, {"original": session, "new": new}, served)


def claude_code_continued_fixture(root: Path) -> list[Path]:
    """Claude Code 2.1.332 on claude-sonnet-4-6: a turn reading the notes (2 responses), then ``claude -p --continue``
    four times (the project's latest session, no id named): a turn, ``/compact`` (the summary's response), two
    turns. Every session file of the project is kept: the fake served 6 responses."""
    client = require_client("claude")
    with _serving() as served, FakeAnthropic() as fake:
        claude = ClaudeCode(client, root, project(root), fake)
        notes = str(claude.cwd / "notes.txt")
        fake.enqueue(Reply(text="Reading.", tool_calls=(ToolCall("Read", {"file_path": notes}),)), ANSWER)
        first = claude_run(claude, "What do the notes say?")
        fake.enqueue("Continued: CSV.")
        ids = [first, claude_run(claude, "And the interface?", "--continue")]
        ids.append(claude_run(claude, "/compact", "--continue"))
        fake.enqueue("After the compaction: CSV.", "Still CSV.")
        ids += [claude_run(claude, prompt, "--continue") for prompt in ("Anything else?", "In one word?")]
        assert not fake.errors and not fake.script, fake.errors
        files = {path.name: path.read_bytes() for path in claude.projects.glob("*/*.jsonl")}
        folder = RECORDED / f"claude-code-{_version(client.version)}-continued"
        return _kept(folder, files, root, {"sessions": ids}, served)


def claude_code_mcp_fixture(root: Path) -> list[Path]:
    """Claude Code 2.1.332 on claude-sonnet-4-6 with a stdio MCP server (bench/mcp_notes_server.py, its ``read_note``
    tool): a turn per topic (a line, ``everything``: a note over the client's MCP output limit, ``picture``: an
    image), each the tool call and an answer (``--resume``), then ``/compact`` and a turn: the fake served 8
    responses."""
    client = require_client("claude")
    server = Path(__file__).resolve().parents[2] / "bench" / "mcp_notes_server.py"
    config = json.dumps({"mcpServers": {"notes": {"command": sys.executable, "args": [str(server)]}}})
    mcp = ("--mcp-config", config, "--allowedTools", "Bash Read Edit Write mcp__notes__read_note")
    with _serving() as served, FakeAnthropic() as fake:
        claude = ClaudeCode(client, root, project(root), fake)
        session = None
        for topic in ("format", "everything", "picture"):
            call = ToolCall("mcp__notes__read_note", {"topic": topic})
            fake.enqueue(Reply(text="Asking the notes server.", tool_calls=(call,)), f"The {topic} note: CSV.")
            resumed = ("--resume", session) if session else ()
            session = _claude_print(claude, f"What does the notes server say on {topic}?", *mcp, *resumed)
        assert session is not None
        _claude_print(claude, "/compact", *mcp, "--resume", session)
        fake.enqueue("After the compaction: CSV.")
        _claude_print(claude, "And now?", *mcp, "--resume", session)
        assert not fake.errors and not fake.script, fake.errors
        data = claude.session_file(session).read_bytes()
        assert b"mcp__notes__read_note" in data, "the client did not call the MCP tool"
        folder = RECORDED / f"claude-code-{_version(client.version)}-mcp"
        return _kept(folder, {f"{session}.jsonl": data}, root, {"session": session}, served)


FIXTURES = {
    "compacted-twice": claude_code_compacted_twice_fixture,
    "compactctl-session-compacted": claude_code_compactctl_session_compacted_fixture,
    "continued": claude_code_continued_fixture,
    "mcp": claude_code_mcp_fixture,
}


if __name__ == "__main__":
    wanted = sys.argv[1:] or list(FIXTURES)
    with tempfile.TemporaryDirectory() as home:
        for name in wanted:
            for path in FIXTURES[name](Path(home) / name):
                print(path)
