"""Writing a compacted session where its client reads it: as a new session beside the original, or in
place of it with a backup kept, and putting the backup back (undo).

Nothing half-written ever sits in a client's folder: every file goes to a temporary name the
clients do not read (``.<name>.compactctl-<pid>-<hex>.tmp``) and is renamed over its target.
A backup is named ``<file>.<UTC time>.compactctl-backup`` beside the original: no client reads
it (Claude Code takes ``*.jsonl``, Codex ``rollout-*.jsonl``, Gemini CLI ``session-*.json[l]``).
A session the client is writing now (written in the last ``LIVE_SECONDS``, or its writer lock
held) is not rewritten without ``force``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from compactctl.errors import InputError
from compactctl.files.io import write_atomic
from compactctl.sessions import SessionFile

LIVE_SECONDS = 60  # a client writes a session at every message: a minute's quiet means no turn is running
BACKUP_MARK = ".compactctl-backup"
UNDONE_MARK = ".compactctl-undone"


@dataclass(frozen=True)
class Placed:
    session_id: str  # the session to resume: the new one, or the original's (in place)
    path: Path
    backup: Path | None  # in place: the original as it was
    notes: tuple[str, ...] = ()


def check_not_live(session: SessionFile, force: bool = False, now: float | None = None) -> None:
    """Refuse a session its client is writing now, unless forced."""
    if force:
        return
    now = time.time() if now is None else now
    if session.module.writer_active(session.root, session.session_id):
        raise InputError(
            f"{session.client} holds this session's writer lock: it is running (`force` overrides)", str(session.path)
        )
    age = now - session.modified
    if age < LIVE_SECONDS:
        raise InputError(
            f"written {age:.0f}s ago: {session.client} may be running it; wait until it is idle (under "
            f"{LIVE_SECONDS}s counts as live) or pass `force`",
            str(session.path),
        )


def _stamp(now: datetime) -> str:
    return f"{now.astimezone(UTC):%Y%m%dT%H%M%S}Z"


def _unchanged_since(session: SessionFile) -> None:
    """The client did not write the file while it was compacted."""
    try:
        status = session.path.stat()
    except OSError as error:
        raise InputError(f"cannot read: {error.strerror}", str(session.path)) from None
    if status.st_mtime != session.modified or status.st_size != session.size:
        raise InputError(
            "the client wrote this session while it was compacted: nothing replaced; run again", str(session.path)
        )


def write_new(session: SessionFile, compacted: bytes, slim: bool = False, now: datetime | None = None) -> Placed:
    """The compacted session as a new one beside the original (a new id, the client's naming, its index)."""
    module = session.module
    now = datetime.now(UTC) if now is None else now
    new_id = module.new_session_id()
    data = module.with_session_id(compacted, session.session_id, new_id)
    if slim:
        data = module.slim(data)
    target = module.new_path(session.path, new_id, now)
    if target.exists():
        raise InputError("a session of that name exists already; run again", str(target))
    write_atomic(str(target), data)
    notes = module.update_index(session.root, session.session_id, new_id, target)
    return Placed(new_id, target, None, tuple(notes))


def write_in_place(session: SessionFile, compacted: bytes, slim: bool = False, now: datetime | None = None) -> Placed:
    """The compacted session over the original, the original first copied to a named backup beside it."""
    module = session.module
    now = datetime.now(UTC) if now is None else now
    data = module.slim(compacted) if slim else compacted
    original = session.path.read_bytes()
    _unchanged_since(session)
    backup = session.path.with_name(f"{session.path.name}.{_stamp(now)}{BACKUP_MARK}")
    write_atomic(str(backup), original)
    _unchanged_since(session)
    write_atomic(str(session.path), data)
    return Placed(session.session_id, session.path, backup)


def backups_of(path: Path) -> list[Path]:
    """The backups ``--in-place`` kept of a session file, oldest first."""
    return sorted(path.parent.glob(f"{path.name}.*{BACKUP_MARK}"))


def undo(session: SessionFile, now: datetime | None = None) -> Placed:
    """The newest backup put back; what it replaces is kept beside it (``.compactctl-undone``)."""
    now = datetime.now(UTC) if now is None else now
    found = backups_of(session.path)
    if not found:
        raise InputError("no backup of this session: only `in_place` keeps one", str(session.path))
    latest = found[-1]
    current = session.path.read_bytes()
    _unchanged_since(session)
    kept = session.path.with_name(f"{session.path.name}.{_stamp(now)}{UNDONE_MARK}")
    write_atomic(str(kept), current)
    write_atomic(str(session.path), latest.read_bytes())
    latest.unlink()
    return Placed(session.session_id, session.path, kept)
