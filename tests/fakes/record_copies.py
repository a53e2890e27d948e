"""Record the fixtures of sessions a user copied, made by the real clients against the loopback fakes.

    python -m tests.fakes.record_copies [NAME...]

A copy is what a user makes, not the client: the session file the real client wrote, copied with ``cp`` as a
backup or under another name, so that a folder replay sees the same calls in several files. The fixtures go to
tests/recorded/data/ (README.md there says what each holds and what the fake served).
"""

from __future__ import annotations

import contextlib
import json
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import tests.fakes.anthropic as anthropic
from tests.fakes.anthropic import FakeAnthropic
from tests.fakes.clients import ClaudeCode, require_client
from tests.fakes.record_fixtures import ANSWER, _claude_print, _version
from tests.fakes.scenarios import project
from tests.fakes.server import Reply, ToolCall

RECORDED = Path(__file__).resolve().parents[1] / "recorded" / "data"


@contextlib.contextmanager
def _serving() -> Iterator[list[dict[str, Any]]]:
    """Every response the Anthropic fake streams while inside (its id, model and usage): what was billed."""
    served: list[dict[str, Any]] = []
    events = anthropic._sse_events

    def kept(message: dict[str, Any]) -> Any:
        served.append({"id": message["id"], "model": message["model"], "usage": message["usage"]})
        return events(message)

    anthropic._sse_events = kept  # type: ignore[assignment]
    try:
        yield served
    finally:
        anthropic._sse_events = events  # type: ignore[assignment]


def claude_code_copied_session_fixture(root: Path) -> list[Path]:
    """Claude Code 2.1.332 (the pinned client): a turn with a Read, the session file copied into a backup folder,
    a second turn (``--resume`` appends to the same file), the file copied again under another name, then
    ``--fork-session`` from its end and that fork's file copied too. The copies keep every record as it was (uuids,
    sessionId, message ids, usage): nothing in them says they are copies. The fake served 4 responses."""
    client = require_client("claude")
    with _serving() as served, FakeAnthropic() as fake:
        claude = ClaudeCode(client, root, project(root), fake)

        def run(prompt: str, *extra: str) -> str:
            return _claude_print(claude, prompt, "--allowedTools", "Bash Read Edit Write", *extra)

        notes = str(claude.cwd / "notes.txt")
        fake.enqueue(Reply(text="Reading.", tool_calls=(ToolCall("Read", {"file_path": notes}),)), ANSWER)
        session = run("What do the notes say?")
        early = claude.session_file(session).read_bytes()  # the backup taken after the first turn
        fake.enqueue("Keep the public interface.")
        run("And the second line?", "--resume", session)
        fake.enqueue("Forked: nothing else.")
        fork = run("Anything else?", "--resume", session, "--fork-session")
        assert not fake.errors and not fake.script, fake.errors
        files = {
            f"backup/{session}.jsonl": early,
            f"{session}.jsonl": claude.session_file(session).read_bytes(),
            "renamed-copy.jsonl": claude.session_file(session).read_bytes(),
            f"{fork}.jsonl": claude.session_file(fork).read_bytes(),
            "fork-copy.jsonl": claude.session_file(fork).read_bytes(),
        }
        folder = RECORDED / f"claude-code-{_version(client.version)}-copies"
        shutil.rmtree(folder, ignore_errors=True)
        written = []
        for name, data in files.items():
            target = folder / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data.replace(str(root).encode(), b"/home/user"))
            written.append(target)
        (folder.parent / f"{folder.name}.served.json").write_text(json.dumps(served, indent=1) + "\n")
    return written


if __name__ == "__main__":
    import sys

    every = (claude_code_copied_session_fixture,)
    named = set(sys.argv[1:])
    for record in [r for r in every if not named or r.__name__ in named]:
        with tempfile.TemporaryDirectory(prefix="fixture-") as root:
            print("wrote", record(Path(root)))
