"""The small native transcripts under ``data/``, written from docs/formats.md, and ways to load them."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import orjson

from compactctl.formats import Format, Transcript, load

DATA = Path(__file__).parent / "data"
FILES = {
    "claude-code": DATA / "claude-code.jsonl",
    "codex": DATA / "codex.jsonl",
    "responses": DATA / "responses.jsonl",
    "anthropic": DATA / "anthropic.jsonl",
    # Written by Gemini CLI itself (tests/fakes/record_fixtures.py).
    "gemini": DATA / "real-clients" / "gemini-cli-0.61.0.jsonl",
}


def read(name: str) -> tuple[bytes, Format, Transcript]:
    data = FILES[name].read_bytes()
    fmt, transcripts = load(data, str(FILES[name]))
    (transcript,) = transcripts
    return data, fmt, transcript


def lines(data: bytes) -> list[Any]:
    return [orjson.loads(line) for line in data.splitlines() if line.strip()]


def rewritten(
    fmt: Format, transcript: Transcript, messages: list[dict[str, Any]], origins: Sequence[int | None] | None = None
) -> bytes:
    """``messages`` written in ``fmt``; ``origins`` say which message each came from (default: same places)."""
    return fmt.write([transcript.rewritten(messages, range(len(messages)) if origins is None else origins)])


def shape(messages: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    """What a model sees of each message: role, text, tool call ids and names, answered id."""
    from compactctl.transcript import content_text

    return [
        (
            m.get("role"),
            content_text(m),
            tuple((c["id"], c["function"]["name"], c["function"]["arguments"]) for c in m.get("tool_calls") or []),
            m.get("tool_call_id"),
        )
        for m in messages
    ]


def codex_initial_context(message: dict[str, Any]) -> bool:
    """A message holding Codex's initial context, which a compacted rollout without world_state leaves out."""
    from compactctl.formats.codex import INITIAL_CONTEXT
    from compactctl.transcript import content_text

    return message.get("role") in ("user", "developer") and content_text(message).lstrip().startswith(INITIAL_CONTEXT)
