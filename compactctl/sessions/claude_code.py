"""Claude Code's sessions: ``$CLAUDE_CONFIG_DIR`` (else ``~/.claude``) ``/projects/<cwd>/<session id>.jsonl``.

The project folder is the working directory with every character that is not a letter or
digit turned into ``-``; the file stem is the session id, repeated in each record's
``sessionId``. ``claude --resume ID`` looks the file up in the folder of the directory it is
started in, so the command to resume names that directory. Claude Code keeps no index of
sessions that ``--resume`` reads (``~/.claude.json`` and ``history.jsonl`` hold settings and
typed prompts) and no lock: a session being written shows as a recent write.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator, Mapping
from datetime import datetime
from pathlib import Path
from typing import Any

import orjson

from compactctl.formats.claude_code import COPIED_ID_PREFIX
from compactctl.formats.records import Record
from compactctl.sessions.live import Anchor
from compactctl.sessions.records import first_values, rewrite_values

NAME = "claude-code"  # its format\'s name, whose entry says RESUMABLE
PRIOR_RATIO = 1.2  # Claude's tokens per cl100k token where a session cannot tell (calibration's prior)
# The window Claude Code runs a Claude model on unless its catalog says it is natively 1M (opus-4-7 on; measured,
# ``replay.fitted_thresholds``) or the model id asks for 1M (``[1m]``).
WINDOW = 200_000


def roots(env: Mapping[str, str], home: Path) -> list[Path]:
    configured = env.get("CLAUDE_CONFIG_DIR")
    return [Path(configured) if configured else home / ".claude"]


def session_files(root: Path) -> Iterator[Path]:
    """Main session files only: subagent transcripts sit deeper, in ``<session>/subagents/``."""
    yield from (root / "projects").glob("*/*.jsonl")


def session_id(path: Path) -> str:
    return path.stem


def working_directory(path: Path) -> str | None:
    found = first_values(path, lambda value: isinstance(value.get("cwd"), str))
    return str(found[0]["cwd"]) if found else None


def model_of(values: list[dict[str, Any]]) -> str | None:
    for value in reversed(values):
        message = value.get("message") if value.get("type") == "assistant" else None
        model = message.get("model") if isinstance(message, dict) else None
        if isinstance(model, str) and model != "<synthetic>":
            return model
    return None


def window_of(model: str | None, values: list[dict[str, Any]]) -> int:
    from compactctl.replay.price_source import catalog_window

    return (catalog_window(model) if model else None) or WINDOW


def compacted(values: list[dict[str, Any]]) -> bool:
    """Claude Code's own compaction (or compactctl's, written the same way) left its marks."""
    return any(
        (v.get("type") == "system" and v.get("subtype") == "compact_boundary") or v.get("isCompactSummary")
        for v in values
    )


def new_session_id() -> str:
    return str(uuid.uuid4())


def new_path(original: Path, new_id: str, now: datetime) -> Path:
    return original.with_name(f"{new_id}.jsonl")


def with_session_id(data: bytes, old: str, new: str) -> bytes:
    """Every record's ``sessionId`` renamed; other bytes kept as they were. The new session's responses are the
    old one's, made and paid for there: each names that session in ``requestSessionId``, as 2.1.332's own copies
    (``--fork-session``) do, so replay bills only the turns the client adds to the new session, and the two
    together bill every response once (bench/client_shapes_seventh.py: alone, 9 calls for the 2 served)."""

    def renamed(value: dict[str, Any]) -> dict[str, Any] | None:
        if value.get("sessionId") != old:
            return None
        message = value.get("message")
        made_here = value.get("type") == "assistant" and isinstance(message, dict) and "usage" in message
        if made_here and not value.get("requestSessionId"):
            return {**value, "sessionId": new, "requestSessionId": old}
        return {**value, "sessionId": new}

    return rewrite_values(data, renamed)


def slim(data: bytes) -> bytes:
    """Only what ``--resume`` reads: the records from the last compact boundary on (the chain the
    client walks back from the leaf stops there), the messages a partial ``/compact`` kept verbatim
    before it (``compactMetadata.preservedSegment`` / ``preservedMessages``) with their tool results,
    and the last title records, for the picker."""
    lines = data.splitlines(keepends=True)
    values = [_value(line) for line in lines]
    boundaries = [
        n for n, v in enumerate(values) if v and v.get("type") == "system" and v.get("subtype") == "compact_boundary"
    ]
    if not boundaries:
        return data
    start = boundaries[-1]
    preserved = _preserved(values, values[start] or {})
    kept = []
    titles: dict[str, int] = {}
    for n, value in enumerate(values[:start]):
        if not value:
            continue
        if value.get("type") in ("ai-title", "custom-title"):
            titles[value["type"]] = n
        elif value.get("uuid") in preserved or value.get("sourceToolAssistantUUID") in preserved:
            kept.append(n)
    chosen = sorted({*kept, *titles.values()})
    out = [lines[n] for n in chosen] + lines[start:]
    return b"".join(line if line.endswith(b"\n") else line + b"\n" for line in out)


def _preserved(values: list[dict[str, Any] | None], boundary: dict[str, Any]) -> set[str]:
    """The uuids of the records a partial compaction kept where they were."""
    metadata = boundary.get("compactMetadata")
    if not isinstance(metadata, dict):
        return set()
    listed = metadata.get("preservedMessages")
    if isinstance(listed, dict) and isinstance(listed.get("uuids"), list):
        return {u for u in listed["uuids"] if isinstance(u, str)}
    segment = metadata.get("preservedSegment")
    if not isinstance(segment, dict):
        return set()
    parents = {v["uuid"]: v.get("parentUuid") for v in values if v and isinstance(v.get("uuid"), str)}
    found: set[str] = set()
    current = segment.get("tailUuid")
    while isinstance(current, str) and current in parents and current not in found:
        found.add(current)
        if current == segment.get("headUuid"):
            break
        current = parents[current]
    return found


def _value(line: bytes) -> dict[str, Any] | None:
    try:
        value = orjson.loads(line)
    except orjson.JSONDecodeError:
        return None
    return value if isinstance(value, dict) else None


def writer_active(root: Path, session: str) -> bool:
    """Claude Code holds no lock on a session; a live one shows as a recent write."""
    return False


def update_index(root: Path, original: str, new: str, new_file: Path) -> list[str]:
    return []  # no index: --resume finds the file by its name


def resume_command(new_id: str) -> list[str]:
    return ["claude", "--resume", new_id]


def copied_usage(value: dict[str, Any]) -> bool:
    """An assistant record compactctl copied after its boundary: its usage is the old call's, not this context's."""
    message = value.get("message")
    return isinstance(message, dict) and str(message.get("id", "")).startswith(COPIED_ID_PREFIX)


def anchors(records: list[Record]) -> list[Anchor]:
    """Each main-thread response's usage (input, cache reads and writes, output), at its last record."""
    by_id: dict[Any, Anchor] = {}
    for position, record in enumerate(records):
        value = record.value
        message = value.get("message") if isinstance(value, dict) and value.get("type") == "assistant" else None
        usage = message.get("usage") if isinstance(message, dict) else None
        if (
            not isinstance(usage, dict)
            or value.get("isSidechain")
            or value.get("isApiErrorMessage")
            or copied_usage(value)
        ):
            continue
        parts = ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens", "output_tokens")
        tokens = sum(int(usage.get(key) or 0) for key in parts)
        if tokens and isinstance(message, dict):
            by_id.pop(message.get("id"), None)  # the response's last record (its final output count) stands
            by_id[message.get("id")] = Anchor(position, tokens)
    return sorted(by_id.values(), key=lambda anchor: anchor.position)


def as_sent(messages: list[dict[str, Any]], records: list[Record]) -> list[dict[str, Any]]:
    return messages  # sent on resume as read
