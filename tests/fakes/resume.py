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

import pytest

import compactctl
from compactctl.tokens import TokenCounter
from compactctl.transcript import Message, content_text
from tests.fakes.anthropic import FakeAnthropic, repeated_blocks
from tests.fakes.clients import ClaudeCode, Client, Codex, Gemini
from tests.fakes.gemini import FakeGemini, repeated_parts
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
        """Anthropic ``messages``, Responses ``input`` or Gemini ``contents``: the part compaction changes."""
        return list(self.body.get("messages", self.body.get("input", self.body.get("contents", []))))

    @property
    def size(self) -> int:
        """Bytes of the conversation as sent (not the system prompt or tools: compaction never changes them)."""
        return len(json.dumps(self.conversation, ensure_ascii=False).encode())

    @property
    def history_tokens(self) -> int:
        """Tokens (cl100k_base) of the resumed history's text, without what the client regenerates."""
        return sum(COUNTER(text) for text in texts(history(self.conversation)))

    @property
    def repeated(self) -> list[Any]:
        if "messages" in self.body:
            return repeated_blocks(self.conversation)
        if "contents" in self.body:
            return repeated_parts(self.conversation)
        return repeated_items(self.conversation)


COUNTER = TokenCounter()


def _harness(part: Any) -> bool:
    """Context the client writes itself on every resume or after a compaction, never the history's own:
    Claude Code's ``<system-reminder>`` texts, Codex's ``<environment_context>`` and other tagged context,
    and the resume prompt."""
    text = part if isinstance(part, str) else part.get("text") if isinstance(part, dict) else None
    return isinstance(text, str) and (text.lstrip().startswith("<") or text == RESUME_PROMPT)


def _clean(part: Any) -> Any:
    return {k: v for k, v in part.items() if k != "cache_control"} if isinstance(part, dict) else part


def history(conversation: list[dict[str, Any]]) -> list[Any]:
    """The resumed history, the client's additions left out: messages (Anthropic) or items (Responses)."""
    kept: list[Any] = []
    responses: set[str] = set()
    for entry in conversation:
        if entry.get("role") in ("system", "developer"):  # Claude Code's attachments; Codex's instructions
            continue
        if isinstance(entry.get("parts"), list):  # Gemini: thoughts are not sent back; each response once
            parts = []
            for part in entry["parts"]:
                response = part.get("functionResponse") if isinstance(part, dict) else None
                if isinstance(response, dict) and response.get("id") in responses:
                    continue
                if isinstance(response, dict):
                    responses.add(response.get("id"))
                if not _harness(part) and not part.get("thought"):
                    parts.append(part)
            if parts:
                kept.append({"role": entry["role"], "parts": parts})
            continue
        content = entry.get("content")
        if isinstance(content, str):
            content = [{"type": "text", "text": content}]
        if "role" in entry and isinstance(content, list):
            parts = [_clean(part) for part in content if not _harness(part)]
            if parts:
                kept.append({"role": entry["role"], "content": parts})
        else:
            kept.append(entry)  # Responses calls, outputs, reasoning
    return kept


def texts(items: list[Any]) -> list[str]:
    """The texts a history holds (prompts, answers, thinking, tool calls and results), ids and markup left out."""
    found: list[str] = []
    for item in items:
        kind = item.get("type") if isinstance(item, dict) else None
        if "content" in item and "role" in item:
            found.extend(texts(item["content"]))
        elif "parts" in item and "role" in item:
            found.extend(texts(item["parts"]))
        elif kind is None and isinstance(item.get("text"), str):  # a Gemini part
            found.append(item["text"])
        elif kind is None and isinstance(item.get("functionCall"), dict):
            found.extend([item["functionCall"]["name"], json.dumps(item["functionCall"].get("args") or {})])
        elif kind is None and isinstance(item.get("functionResponse"), dict):
            body = item["functionResponse"].get("response")
            only = list(body.values()) if isinstance(body, dict) and len(body) == 1 else []
            found.append(only[0] if only and isinstance(only[0], str) else json.dumps(body))
        elif kind in ("text", "input_text", "output_text", "summary_text"):
            found.append(item["text"])
        elif kind == "thinking":
            found.append(item["thinking"])
        elif kind == "tool_use":
            found.extend([item["name"], json.dumps(item["input"], ensure_ascii=False)])
        elif kind in ("tool_result", "function_call_output", "custom_tool_call_output"):
            output = item.get("content", item.get("output"))
            found.extend([output] if isinstance(output, str) else texts(output or []))
        elif kind == "function_call":
            found.extend([item["name"], item["arguments"]])
        elif kind == "custom_tool_call":
            found.extend([item["name"], item["input"]])
        elif kind == "reasoning":
            found.extend(texts(item.get("summary") or []))
    return found


def file_history(data: bytes) -> list[Message]:
    """compactctl's reading of a session file, restricted as :func:`history` restricts a request."""
    _, transcripts = compactctl.load(data, "session.jsonl")
    return [
        m
        for m in transcripts[0].messages
        if m.get("role") not in ("system", "developer") and not (m.get("role") == "user" and _harness(content_text(m)))
    ]


def claimed_reduction(before: bytes, after: bytes) -> float:
    """The reduction ``report`` gives for the part of the history the client sends back as it was."""
    return compactctl.report(file_history(before), file_history(after)).reduction


@contextmanager
def swapped(path: Path, data: bytes) -> Iterator[None]:
    saved = path.read_bytes()
    path.write_bytes(data)
    try:
        yield
    finally:
        path.write_bytes(saved)


def _resume(driver: Any, fake_type: Any, client: Client, recorded: Recorded, data: bytes, prompt: str) -> Resumed:
    with swapped(recorded.path, data), fake_type() as fake:
        driver(client, recorded.home, recorded.cwd, fake).run(prompt, resume=recorded.session)
        calls = fake.model_calls()
        assert calls, f"{client.command} made no model call; rejected: {fake.errors}"
        return Resumed(calls[0], fake.errors)


def resume_claude_code(client: Client, recorded: Recorded, data: bytes, prompt: str = RESUME_PROMPT) -> Resumed:
    return _resume(ClaudeCode, FakeAnthropic, client, recorded, data, prompt)


def resume_codex(client: Client, recorded: Recorded, data: bytes, prompt: str = RESUME_PROMPT) -> Resumed:
    return _resume(Codex, FakeResponses, client, recorded, data, prompt)


def resume_gemini(client: Client, recorded: Recorded, data: bytes, prompt: str = RESUME_PROMPT) -> Resumed:
    """``gemini --resume <session> -p``; the first main call is kept even when refused (the client then
    exits non-zero), since Gemini CLI 0.61 sends its own sessions with every tool response twice."""
    with swapped(recorded.path, data), FakeGemini() as fake:
        try:
            Gemini(client, recorded.home, recorded.cwd, fake).run(prompt, resume=recorded.session)
        except AssertionError:
            if not fake.errors:
                raise
        calls = fake.model_calls(rejected=True)
        assert calls, f"gemini made no model call; rejected: {fake.errors}"
        return Resumed(calls[0], fake.errors)


@dataclass(frozen=True)
class Compacted:
    data: bytes  # the file compactctl wrote
    report: dict[str, Any]  # its --json report for the file


def run_compactctl(source: Path, out: Path, args: list[str]) -> Compacted:
    """``compactctl <args> SOURCE -o OUT --json`` as a user runs it, through the console script's module."""
    import subprocess
    import sys

    # --write-unchanged: what the client resumes is the output, also where no step changed anything.
    command = [sys.executable, "-m", "compactctl", args[0], str(source), "-o", str(out), "--json", "--write-unchanged"]
    command += args[1:]
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
    # A window that drops the head without a summary: what it keeps may open on the model's turn.
    "window": ["compact", "-s", "window", "--keep-recent", "2"],
    "prune-stub": ["prune", "--mode", "stub"],
    "prune-drop": ["prune", "--mode", "drop"],
}
SUMMARIZING = {"compact", "summary", "rolling", "selective"}


def sent_reduction(original: Resumed, compacted: Resumed) -> float:
    """How much smaller the resumed history is than the original's, in tokens sent."""
    return 1 - compacted.history_tokens / original.history_tokens


def expected_shape(data: bytes) -> list[tuple[str, str]]:
    """Assistant texts and call / result ids as compactctl reads a session file: what a resume must send."""
    _, transcripts = compactctl.load(data, "session.jsonl")
    found = []
    for message in transcripts[0].messages:
        if message.get("role") == "assistant" and content_text(message):
            found.append(("text", content_text(message)))
        found.extend(("call", call["id"]) for call in message.get("tool_calls") or [])
        if message.get("role") == "tool":
            found.append(("result", message["tool_call_id"]))
    return found


def check_reduction(source: bytes, compacted: Compacted, resumed: Resumed, original: Resumed) -> None:
    """The resumed request is smaller than the original's by about what ``report`` claims.

    What the client regenerates on resume (its context, reminders, the new prompt) is left
    out of both sides.
    """
    claimed = claimed_reduction(source, compacted.data)
    sent = sent_reduction(original, resumed)
    if claimed > 0.05:  # a summary of an already small history may outweigh what it replaces
        assert resumed.size < original.size
    print(f"{resumed.size} vs {original.size} bytes sent; history tokens sent -{sent:.1%}, report -{claimed:.1%}")
    # Within 3 points. report also counts each message's framing (3-4 tokens) that a count of the
    # sent texts leaves out: on a history of a few dozen tokens (the rest in an encrypted
    # compaction item) that alone is a large fraction, so there the bound is 60 tokens.
    assert sent == pytest.approx(claimed, abs=max(0.03, 60 / original.history_tokens))


def cut_after_last_call(data: bytes, call_type: str) -> bytes:
    """The session as a snapshot taken mid-turn: it ends on a call (``tool_use``, ``function_call``) unanswered."""
    lines = data.splitlines(keepends=True)
    marker = f'"type":"{call_type}"'.encode()
    last = max(n for n, line in enumerate(lines) if marker in line.replace(b" ", b""))
    return b"".join(lines[: last + 1])
