"""Resuming a session file with the real client and catching what it sends.

The file in the client's session folder is swapped for the one under test, the client
resumes it with one prompt against a fresh fake, and the original bytes are put back, so
one recorded session serves every variant (original, compacted, pruned, ...).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.fakes.anthropic import FakeAnthropic, repeated_blocks
from tests.fakes.clients import ClaudeCode, Client, Codex
from tests.fakes.responses import FakeResponses, repeated_items
from tests.fakes.scenarios import Recorded

RESUME_PROMPT = "Carry on: what is left to do?"


@dataclass(frozen=True)
class Resumed:
    """The first model call a client made after resuming a session."""

    body: dict[str, Any]
    rejected: list[str]  # requests the fake refused, as the real API would have

    @property
    def conversation(self) -> list[dict[str, Any]]:
        """Anthropic ``messages`` or Responses ``input``: the part compaction changes."""
        return list(self.body.get("messages", self.body.get("input", [])))

    @property
    def size(self) -> int:
        """Bytes of the conversation as sent (system prompt and tool definitions excluded: compaction cannot change them)."""
        return len(json.dumps(self.conversation, ensure_ascii=False).encode())

    @property
    def history_size(self) -> int:
        """Bytes of the resumed history alone: without what the client adds on every resume
        (its ``system`` messages and ``<system-reminder>`` texts, the new prompt, cache marks)."""
        return len(json.dumps(history(self.conversation), ensure_ascii=False).encode())

    @property
    def repeated(self) -> list[Any]:
        if "messages" in self.body:
            return repeated_blocks(self.conversation)
        return repeated_items(self.conversation)


def _harness(block: Any) -> bool:
    text = block if isinstance(block, str) else block.get("text") if isinstance(block, dict) else None
    return isinstance(text, str) and (text.lstrip().startswith("<system-reminder>") or text == RESUME_PROMPT)


def history(conversation: list[dict[str, Any]]) -> list[Any]:
    """The blocks (Anthropic) or items (Responses) of the resumed history, harness additions left out."""
    kept: list[Any] = []
    for entry in conversation:
        if entry.get("role") in ("system", "developer"):
            continue
        content = entry.get("content")
        if "role" in entry and isinstance(content, (str, list)):
            blocks = [content] if isinstance(content, str) else content
            kept.extend(
                {k: v for k, v in b.items() if k != "cache_control"} if isinstance(b, dict) else b
                for b in blocks
                if not _harness(b) and not (isinstance(b, dict) and b.get("type") == "input_text" and _harness(b))
            )
        else:
            kept.append(entry)
    return kept


@contextmanager
def swapped(path: Path, data: bytes) -> Iterator[None]:
    saved = path.read_bytes()
    path.write_bytes(data)
    try:
        yield
    finally:
        path.write_bytes(saved)


def resume_claude_code(client: Client, recorded: Recorded, data: bytes, prompt: str = RESUME_PROMPT) -> Resumed:
    with swapped(recorded.path, data), FakeAnthropic() as fake:
        ClaudeCode(client, recorded.home, recorded.cwd, fake).run(prompt, resume=recorded.session)
        calls = fake.model_calls()
        assert calls, f"Claude Code made no model call; rejected: {fake.errors}"
        return Resumed(calls[0], fake.errors)


def resume_codex(client: Client, recorded: Recorded, data: bytes, prompt: str = RESUME_PROMPT) -> Resumed:
    with swapped(recorded.path, data), FakeResponses() as fake:
        Codex(client, recorded.home, recorded.cwd, fake).run(prompt, resume=recorded.session)
        calls = fake.model_calls()
        assert calls, f"Codex made no model call; rejected: {fake.errors}"
        return Resumed(calls[0], fake.errors)


@dataclass(frozen=True)
class Compacted:
    data: bytes  # the file compactctl wrote
    report: dict[str, Any]  # its --json report for the file


def run_compactctl(source: Path, out: Path, args: list[str]) -> Compacted:
    """``compactctl <args> SOURCE -o OUT --json`` as a user runs it, through the console script's module."""
    import subprocess
    import sys

    command = [sys.executable, "-m", "compactctl", args[0], str(source), "-o", str(out), "--json", *args[1:]]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, f"{' '.join(command)} exited {done.returncode}: {done.stderr[-2000:]}"
    (report,) = json.loads(done.stdout)["files"]
    return Compacted(out.read_bytes(), report)


# What each case runs: the default compact, each summarizing strategy, prune in both modes.
CASES = {
    "compact": ["compact"],
    "summary": ["compact", "-s", "summary", "--threshold", "1000", "--keep-recent", "6"],
    "rolling": ["compact", "-s", "rolling", "--threshold", "1000", "--window", "6"],
    "selective": ["compact", "-s", "selective", "--threshold", "1000", "--keep-recent", "6"],
    "trim-tools": ["compact", "-s", "trim-tools"],
    "prune-stub": ["prune", "--mode", "stub"],
    "prune-drop": ["prune", "--mode", "drop"],
}
SUMMARIZING = {"compact", "summary", "rolling", "selective"}


def sent_reduction(original: Resumed, compacted: Resumed) -> float:
    """How much smaller the resumed history is than the original's, in bytes sent."""
    return 1 - compacted.history_size / original.history_size
