"""Codex's sessions: ``$CODEX_HOME`` (else ``~/.codex``) ``/sessions/YYYY/MM/DD/rollout-<time>-<thread id>.jsonl``.

The first line is ``session_meta`` whose ``id`` is the thread id (a UUIDv7). Codex 0.171
also indexes threads in ``state_<n>.sqlite`` (table ``threads``: id, rollout_path, title,
timestamps, ...); ``codex resume ID`` finds a rollout the index lacks by scanning the folder
and adds it (seen with the real client), and the interactive picker lists from the index,
so a new session gets a row copied from the original's. A Codex process writing a thread
holds an exclusive ``flock`` on ``thread-writer-locks/<thread id>.lock`` (deleted on a clean
exit; a killed process leaves the file, unlocked).
"""

from __future__ import annotations

import contextlib
import os
import re
import sqlite3
import time
import uuid
from collections.abc import Iterator, Mapping
from datetime import datetime
from pathlib import Path
from typing import Any

from compactctl import lazyre
from compactctl.formats.records import Record
from compactctl.sessions.live import Anchor
from compactctl.sessions.records import rewrite_values

NAME = "codex"  # its format\'s name, whose entry says RESUMABLE
PRIOR_RATIO = 1.0  # its model's tokens per cl100k token where a session cannot tell
# Codex's own figure for the GPT-5 family when a rollout records none (codex-rs model family info).
DEFAULT_WINDOW = 272_000
_THREAD_ID = lazyre.compile(r"([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.jsonl$")


def roots(env: Mapping[str, str], home: Path) -> list[Path]:
    configured = env.get("CODEX_HOME")
    return [Path(configured) if configured else home / ".codex"]


def session_files(root: Path) -> Iterator[Path]:
    """Each thread a user started; a subagent's (its ``session_meta`` names the thread that spawned it) is part of
    that thread's session, whose replay bills its calls (``recorded.codex_agents``), as Claude Code's are."""
    from compactctl.recorded.codex_agents import parent_of

    yield from (path for path in (root / "sessions").glob("**/rollout-*.jsonl") if parent_of(_meta(path)) is None)


def _meta(path: Path) -> dict[str, Any]:
    from compactctl.recorded.codex_agents import first_meta  # read once per version of the file, for all who ask

    return first_meta(path)


def session_id(path: Path) -> str:
    meta_id = _meta(path).get("id")
    if isinstance(meta_id, str) and meta_id:
        return meta_id
    named = _THREAD_ID.search(path.name)
    return named.group(1) if named else path.stem


def working_directory(path: Path) -> str | None:
    cwd = _meta(path).get("cwd")
    return cwd if isinstance(cwd, str) else None


def model_of(values: list[dict[str, Any]]) -> str | None:
    for value in reversed(values):
        payload = value.get("payload")
        if value.get("type") == "turn_context" and isinstance(payload, dict) and isinstance(payload.get("model"), str):
            return str(payload["model"])
    return None


def window_of(model: str | None, values: list[dict[str, Any]]) -> int:
    """The window Codex itself recorded (``task_started`` / ``token_count``), else its GPT-5 default."""
    for value in reversed(values):
        payload = value.get("payload")
        if value.get("type") != "event_msg" or not isinstance(payload, dict):
            continue
        info = payload.get("info") if payload.get("type") == "token_count" else payload
        window = info.get("model_context_window") if isinstance(info, dict) else None
        if isinstance(window, int) and window > 0:
            return window
    return DEFAULT_WINDOW


def compacted(values: list[dict[str, Any]]) -> bool:
    return any(v.get("type") == "compacted" for v in values)


def new_session_id() -> str:
    """A UUIDv7, as Codex makes thread ids: milliseconds since the epoch, then random bits."""
    millis = int(time.time() * 1000) & ((1 << 48) - 1)
    rand = int.from_bytes(os.urandom(10), "big")
    value = (millis << 80) | (0x7 << 76) | (((rand >> 62) & 0xFFF) << 64) | (0b10 << 62) | (rand & ((1 << 62) - 1))
    return str(uuid.UUID(int=value))


def new_path(original: Path, new_id: str, now: datetime) -> Path:
    """Today's folder under ``sessions/``, named as Codex names a rollout (local time)."""
    sessions = next((p for p in original.parents if p.name == "sessions"), original.parent)
    local = now.astimezone()
    day = sessions / f"{local:%Y}" / f"{local:%m}" / f"{local:%d}"
    return day / f"rollout-{local:%Y-%m-%dT%H-%M-%S}-{new_id}.jsonl"


def with_session_id(data: bytes, old: str, new: str) -> bytes:
    """The thread id renamed where Codex keeps it: ``session_meta`` (``id``, ``session_id``) and the
    ``thread_id`` of events. The new rollout's items are the original's, its responses made and paid for there:
    they are marked as Codex 0.171 marks the items a thread copies from another (a subagent spawned with the
    parent's turns): the first ``session_meta`` names the thread in ``forked_from_id``, each item's ``metadata``
    says ``inherited_user_message``. So replay bills only the turns the client adds, and the two rollouts together
    every response once (bench/client_shapes_seventh.py: alone, 7 calls for the 2 served); the real client resumes
    it (tests/recorded/test_compactctl_sessions.py)."""
    first_meta = True

    def renamed(value: dict[str, Any]) -> dict[str, Any] | None:
        nonlocal first_meta
        payload = value.get("payload")
        if not isinstance(payload, dict):
            return None
        if value.get("type") == "response_item":
            metadata = value.get("metadata")
            marked = {**(metadata if isinstance(metadata, dict) else {}), "inherited_user_message": True}
            return {**value, "metadata": marked}
        keys = [k for k in ("id", "session_id", "thread_id") if payload.get(k) == old]
        if value.get("type") != "session_meta":
            keys = [k for k in keys if k == "thread_id"]
        changed: dict[str, Any] = dict.fromkeys(keys, new)
        if value.get("type") == "session_meta" and first_meta:
            first_meta = False
            if payload.get("id") == old and not payload.get("forked_from_id"):
                changed["forked_from_id"] = old
        return {**value, "payload": {**payload, **changed}} if changed else None

    return rewrite_values(data, renamed)


def slim(data: bytes) -> bytes:
    """Only what ``codex resume`` reads: ``session_meta``, then the last ``compacted`` line (its
    ``replacement_history`` replaces everything before it) and what follows it."""
    lines = data.splitlines(keepends=True)
    marks = [n for n, line in enumerate(lines) if b'"type":"compacted"' in line.replace(b" ", b"")]
    if not marks or marks[-1] == 0:
        return data
    return b"".join([lines[0], *lines[marks[-1] :]])


def writer_active(root: Path, session: str) -> bool:
    """Whether a Codex process holds the thread's writer lock now (tried without waiting, let go at once)."""
    import fcntl

    lock = root / "thread-writer-locks" / f"{session}.lock"
    try:
        handle = os.open(lock, os.O_RDONLY)
    except OSError:
        return False
    try:
        fcntl.flock(handle, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except OSError:
        return True
    finally:
        os.close(handle)  # closing lets go of a lock taken here
    return False


def state_databases(root: Path) -> list[Path]:
    def number(path: Path) -> int:
        found = re.search(r"state_(\d+)\.sqlite$", path.name)
        return int(found.group(1)) if found else -1

    return sorted(root.glob("state_*.sqlite"), key=number, reverse=True)


def update_index(root: Path, original: str, new: str, new_file: Path) -> list[str]:
    """The new thread's row in Codex's thread index, copied from the original's (so whatever columns
    this version has are filled as Codex filled them), with its own id, path and times."""
    notes: list[str] = []
    for database in state_databases(root)[:1]:
        try:
            with contextlib.closing(sqlite3.connect(database, timeout=5)) as connection:
                columns = [row[1] for row in connection.execute("PRAGMA table_info(threads)")]
                if not {"id", "rollout_path"} <= set(columns):
                    return notes
                row = connection.execute("SELECT * FROM threads WHERE id = ?", (original,)).fetchone()
                if row is None:
                    return [f"{database.name} has no row for {original}: codex adds the new one when it resumes it"]
                values = dict(zip(columns, row, strict=True))
                now = time.time()
                values.update(id=new, rollout_path=str(new_file))
                for key in ("updated_at", "recency_at"):
                    if key in values:
                        values[key] = int(now)
                for key in ("updated_at_ms", "recency_at_ms"):
                    if key in values:
                        values[key] = int(now * 1000)
                names = ", ".join(f'"{c}"' for c in columns)
                marks = ", ".join("?" for _ in columns)
                with connection:
                    connection.execute(
                        f"INSERT OR REPLACE INTO threads ({names}) VALUES ({marks})", [values[c] for c in columns]
                    )
                notes.append(f"added thread {new} to {database}")
        except sqlite3.Error as error:
            notes.append(f"{database} not updated ({error}): codex adds the thread when it resumes it")
    return notes


def resume_command(new_id: str) -> list[str]:
    return ["codex", "resume", new_id]


MODEL_OUTPUT = frozenset({"message", "reasoning", "function_call", "custom_tool_call", "local_shell_call"})


def _call_end(records: list[Record], event: int) -> int:
    """The last line of the response a ``token_count`` event reports on: Codex may write the output of
    a tool the response called (the next call's input) before the event."""
    for position in range(event - 1, -1, -1):
        value = records[position].value
        payload = value.get("payload") if isinstance(value, dict) and value.get("type") == "response_item" else None
        output = isinstance(payload, dict) and payload.get("type") in MODEL_OUTPUT
        if output and (payload.get("type") != "message" or payload.get("role") == "assistant"):  # type: ignore[union-attr]
            return position
    return event


def anchors(records: list[Record]) -> list[Anchor]:
    """Each ``token_count`` event's ``last_token_usage`` (input plus output), at the end of its response."""
    found: list[Anchor] = []
    for position, record in enumerate(records):
        value = record.value
        payload = value.get("payload") if isinstance(value, dict) and value.get("type") == "event_msg" else None
        info = payload.get("info") if isinstance(payload, dict) and payload.get("type") == "token_count" else None
        usage = info.get("last_token_usage") if isinstance(info, dict) else None
        if isinstance(usage, dict):
            tokens = int(usage.get("input_tokens") or 0) + int(usage.get("output_tokens") or 0)
            end = _call_end(records, position)
            if tokens and not (found and found[-1].position == end):  # (some versions write each event twice)
                found.append(Anchor(end, tokens))
    return found


def as_sent(messages: list[dict[str, Any]], records: list[Record]) -> list[dict[str, Any]]:
    return messages  # sent on resume as read
