"""Codex's subagents: the rollouts of the agents a thread spawned, found beside its own.

With multi-agent on (0.171's ``multi_agent_v2``, the default of gpt-6.2-sol), ``spawn_agent`` starts a
thread of its own that writes its own rollout, in the same ``sessions/YYYY/MM/DD`` tree, named by when it
started. Its ``session_meta`` names the thread that spawned it (``parent_thread_id``, and again in
``source.subagent.thread_spawn``); the parent's rollout keeps only the calls and the messages between the
agents (``agent_message`` items). The child's calls are billed with the session: the parent's reader reads
them, as Claude Code's reads ``<session>/subagents/``, and a run given both files reads the child once, with
its parent (``read_by_parent``). Measured with the real 0.171.0 (tests/fakes/record_subagents.py).

Codex's own subagents are joined the same way, their ``source`` naming their kind (``kind_of``): the approvals
reviewer (``approvals_reviewer = "auto_review"``, or ``codex exec --approve-for-me``) reviews each approval request
in a thread of its own, ``source: {"subagent": {"other": "guardian"}}``, whose rollout names the reviewed thread as
its parent and records its own usage; the reviewed thread's totals leave it out. One such thread a process; after a
compaction it opens on the reviewed thread's ``compaction`` item (0.171's ``guardian_reuse_parent_compaction``).
``codex review``'s thread is ``{"subagent": "review"}``. Measured with the real 0.171.0
(tests/fakes/record_side_calls.py).
"""

from __future__ import annotations

import dataclasses
import functools
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import orjson

from compactctl import lazyre
from compactctl.recorded import SUBAGENT, RecordedSession

# rollout-2026-12-04T21-08-46-<uuid>.jsonl: when the thread started, then its id.
_NAME = lazyre.compile(r"^rollout-(\d{4})-(\d{2})-(\d{2})T[\d-]+-([0-9a-f-]{36})\.jsonl$")
MAX_DAYS = 31  # day folders looked in after the parent's first: a thread runs for hours, not months


def first_meta(path: Path) -> dict[str, Any]:
    """The ``session_meta`` payload a rollout opens with; {} where it opens with none or does not read."""
    try:
        return _first_meta(str(path), path.stat().st_mtime_ns)
    except OSError:
        return {}


@functools.lru_cache(maxsize=4096)
def _first_meta(path: str, modified: int) -> dict[str, Any]:
    """``first_meta``, read once per version of the file (``modified``: the key's): a folder run asks it of every
    rollout of a day for each subagent's rollout given."""
    try:
        with open(path, "rb") as file:
            line = file.readline()
        value = orjson.loads(line)
    except (OSError, orjson.JSONDecodeError):
        return {}
    payload = value.get("payload") if isinstance(value, dict) and value.get("type") == "session_meta" else None
    return payload if isinstance(payload, dict) else {}


def parent_of(meta: dict[str, Any]) -> str | None:
    """The thread that spawned this one, where its ``session_meta`` says it is a subagent's."""
    named = meta.get("parent_thread_id")
    if isinstance(named, str):
        return named
    source = meta.get("source")
    spawn = source.get("subagent") if isinstance(source, dict) else None
    spawn = spawn.get("thread_spawn") if isinstance(spawn, dict) else None
    parent = spawn.get("parent_thread_id") if isinstance(spawn, dict) else None
    return parent if isinstance(parent, str) else None


# What replay says of the calls of Codex's own subagents, by kind (``kind_of``): what they are, how switched on.
KINDS = {
    "guardian": 'Codex\'s approvals reviewer (approvals_reviewer = "auto_review", or exec --approve-for-me: the '
    "guardian subagent, a model call per approval request reviewed)",
    "review": "the code review the thread asked for (codex review: a review subagent's thread)",
    "memory_consolidation": "Codex's memory consolidation agent (features.memories)",
}


def kind_of(meta: dict[str, Any]) -> str | None:
    """The kind of Codex's own subagent a rollout is ("guardian", "review", "memory_consolidation"), from its
    ``source`` (``{"subagent": {"other": "guardian"}}``, ``{"subagent": "review"}``); None for an agent the model
    spawned (``thread_spawn``, named by its ``agent_path``) and for a thread of the user's."""
    source = meta.get("source")
    subagent = source.get("subagent") if isinstance(source, dict) else None
    if isinstance(subagent, dict):
        subagent = subagent.get("other")
    return subagent if isinstance(subagent, str) and subagent != "thread_spawn" else None


def side_calls_said(
    session: RecordedSession, children: list[tuple[str, RecordedSession, str | None]], meta: dict[str, Any]
) -> RecordedSession:
    """``session`` (its subagents' calls billed in it) with what replay says of the calls Codex's own subagents made
    for it (``children``: name, session, ``kind_of``), and, for a rollout of one of theirs (``meta``: its
    ``session_meta``), whose it is. A spawned agent's own such notes are kept, named by the agent."""
    notes: list[str] = []
    total = _billed_calls(session)
    by_kind: dict[str, list[int]] = {}
    for name, child, kind in children:
        if kind in KINDS:
            by_kind.setdefault(kind, []).append(_billed_calls(child))
        elif kind is None:
            notes += [f"subagent {name}: {note}" for note in child.in_bill]
    for kind, calls in by_kind.items():
        labels = ", ".join(c.label for c in session.contexts if c.label.startswith(f"{SUBAGENT} {kind}"))
        notes.insert(
            0,
            f"{sum(calls)} of the {total} billed calls are {KINDS[kind]}, read from {len(calls)} rollout(s) of its "
            f"own beside this one (context {labels}): billed with this session, the one it worked for",
        )
    kind, parent = kind_of(meta), parent_of(meta)
    if kind in KINDS and parent is not None:
        notes.append(
            f"this rollout is {KINDS[kind]} for session {parent}: that session's rollout, beside this one under the "
            "client's names, reads and bills it (a run given both reads it there, not on its own)"
        )
    return dataclasses.replace(session, in_bill=(*notes, *session.in_bill)) if notes else session


def _billed_calls(session: RecordedSession) -> int:
    """The calls a session's own rollout bills: its calls less those copied from another, its compactions' own, and
    those off the live thread."""
    off_thread = sum(not call.copied for call in session.off_thread)
    return session.calls - session.copied_calls + session.compaction_calls + off_thread


def child_rollouts(path: str, thread: str, last_day: date | None = None) -> list[Path]:
    """The rollouts of the agents ``thread`` (the rollout at ``path``) spawned, in the order they started: in its
    folder and, in a ``YYYY/MM/DD`` tree, the day folders up to ``last_day`` (its last line's)."""
    own = Path(path).resolve()
    named = _NAME.match(own.name)
    if named is None:
        return []
    folders = [own.parent]
    first = _day(named)
    if first is not None and _is_day_folder(own.parent, first) and last_day is not None:
        sessions = own.parent.parent.parent.parent
        # The folders are named by the local day, the lines' timestamps in UTC: one day more.
        for n in range(1, min((last_day - first).days + 1, MAX_DAYS) + 1):
            day = first + timedelta(days=n)
            folders.append(sessions / f"{day.year:04d}" / f"{day.month:02d}" / f"{day.day:02d}")
    started = own.name[: own.name.rfind(named.group(4))]
    found = []
    for folder in folders:
        for candidate in sorted(folder.glob("rollout-*.jsonl")) if folder.is_dir() else ():
            # A child starts after its parent: an earlier name is not one.
            if candidate.name[: len(started)] < started or candidate.name == own.name:
                continue
            if parent_of(first_meta(candidate)) == thread:
                found.append(candidate)
    return found


def read_by_parent(source: str, sources: set[str]) -> bool:
    """A subagent's rollout whose parent's rollout is among ``sources`` and finds it: read with its parent."""
    path = Path(source)
    if _NAME.match(path.name) is None:
        return False
    parent = parent_of(first_meta(path))
    if parent is None:
        return False
    resolved = path.resolve()
    for other in sources:
        if other.endswith(f"{parent}.jsonl") and resolved in child_rollouts(other, parent, _last_day(Path(other))):
            return True
    return False


def _last_day(path: Path) -> date | None:
    """The day of a rollout's last line (its ``timestamp``), read from the file's end."""
    try:
        with open(path, "rb") as file:
            file.seek(0, 2)
            file.seek(max(0, file.tell() - 65_536))
            tail = file.read().splitlines()
        value = orjson.loads(tail[-1]) if tail else None
    except (OSError, orjson.JSONDecodeError):
        return None
    stamp = value.get("timestamp") if isinstance(value, dict) else None
    try:
        return date.fromisoformat(stamp[:10]) if isinstance(stamp, str) else None
    except ValueError:
        return None


def _day(named: Any) -> date | None:
    try:
        return date(int(named.group(1)), int(named.group(2)), int(named.group(3)))
    except ValueError:
        return None


def _is_day_folder(folder: Path, day: date) -> bool:
    parts = folder.parts[-3:]
    return parts == (f"{day.year:04d}", f"{day.month:02d}", f"{day.day:02d}")
