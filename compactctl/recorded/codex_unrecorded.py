"""Codex's model calls that no rollout records (memories, the terminal UI's thread titles): billed, in no file's bill;
named in replay's notes where a file shows them.

With ``[features] memories = true`` (off by default in 0.171; ``memories.generate_memories`` and
``memories.use_memories`` then default on), every root session's start runs a pipeline of its own (openai/codex,
``codex-rs/memories/write/src/start.rs``, ``phase1.rs``, ``phase2.rs``):

- **extraction**: one request per earlier thread of the user's (an IDE's or the terminal UI's, not ``codex exec``'s)
  idle ``memories.min_rollout_idle_hours`` at least, up to ``memories.max_rollouts_per_startup``, on
  ``memories.extract_model`` (default gpt-6-luna), sent the thread's rollout; its usage goes to metrics only.
- **consolidation**: where the memory folder changed, an agent on ``memories.consolidation_model`` (default
  gpt-6.1-terra) rewrites ``memory_summary.md``; its thread is ephemeral: no rollout.

Neither leaves usage in a file, so no bill holds them. A rollout shows the feature on where its instructions carry
the memory summary (a developer message of kind ``memories.instructions``, ``MEMORY_SUMMARY BEGINS``), and the
memories database in the client's home (``memories_v2_1.sqlite``, beside ``sessions/``) names the thread whose
start last ran each job (``jobs.worker_id``: one row per extracted thread and one for the consolidation, each
overwritten by the next run).

**Thread titles.** The terminal UI (``codex``, a rollout whose ``source`` is ``cli``; not ``codex exec``, not the app
server's clients) asks the model for a new thread's title after its first turn, on the session's model, in a thread
of its own that writes no rollout (turn metadata ``thread_source: "thread_title"``), sent the session's instructions
and tools: measured, 12,711 input tokens beside the 18,367 of the turn's own call. The title goes to the home's
``session_index.jsonl`` (``thread_name``; a user's rename writes there too). On by default.

Measured with the real 0.171.0 (tests/fakes/record_side_calls.py).
"""

from __future__ import annotations

import contextlib
import functools
import sqlite3
from pathlib import Path
from typing import Any

import orjson

SUMMARY_MARK = "MEMORY_SUMMARY BEGINS"
INSTRUCTIONS_KIND = "memories.instructions"


def carries_memories(item: dict[str, Any]) -> bool:
    """A developer message that injects the memory summary: the feature was on for the session."""
    if item.get("role") != "developer":
        return False
    passthrough = item.get("internal_chat_message_metadata_passthrough")
    kinds = passthrough.get("content_item_kinds") if isinstance(passthrough, dict) else None
    if isinstance(kinds, list) and INSTRUCTIONS_KIND in kinds:
        return True
    content = item.get("content")
    parts = content if isinstance(content, list) else []
    return any(isinstance(p, dict) and SUMMARY_MARK in str(p.get("text", "")) for p in parts)


def jobs_run_by(path: str, thread: str) -> tuple[int, bool]:
    """What the memories database of the home ``path`` (a rollout) is in names ``thread`` as the last to run: the
    threads it extracted a memory from, and whether it ran the consolidation; (0, False) where there is none."""
    home = _home(Path(path))
    extracted, consolidated = 0, False
    for database in sorted(home.glob("memories*.sqlite")) if home is not None else ():
        kinds = _jobs(database).get(thread, ())
        extracted += sum(1 for kind in kinds if kind == "memory_stage1")
        consolidated = consolidated or "memory_consolidate_global" in kinds
    return extracted, consolidated


def _jobs(database: Path) -> dict[str, tuple[str, ...]]:
    """The kinds of job each thread (``worker_id``) last ran, read once per version of the database: a folder run reads
    every rollout of the home (empty: not the client's, or another layout, which tells nothing)."""
    try:
        stat = database.stat()
    except OSError:
        return {}
    return _jobs_read(database, stat.st_mtime_ns, stat.st_size)


@functools.lru_cache(maxsize=8)
def _jobs_read(database: Path, mtime: int, size: int) -> dict[str, tuple[str, ...]]:
    try:
        with contextlib.closing(sqlite3.connect(f"{database.resolve().as_uri()}?mode=ro", uri=True)) as db:
            rows = db.execute("SELECT worker_id, kind FROM jobs").fetchall()
    except sqlite3.Error:
        return {}
    found: dict[str, tuple[str, ...]] = {}
    for worker, kind in rows:
        found[worker] = (*found.get(worker, ()), kind)
    return found


def memories_note(path: str, thread: str | None, in_use: bool) -> str | None:
    """Replay's note on the memory calls of the session at ``path``, where its instructions carry the memory summary
    (``in_use``) or the memories database names it; None where nothing shows them."""
    extracted, consolidated = jobs_run_by(path, thread) if thread else (0, False)
    ran = [f"the extraction of {extracted} earlier thread(s) (a call each)"] if extracted else []
    ran += ["the consolidation (an agent's calls)"] if consolidated else []
    if not ran and not in_use:
        return None
    shown = (
        f"the memories database beside sessions/ names this session's start the last to run {' and '.join(ran)}"
        if ran
        else "this session's instructions carry the memory summary, so the feature was on; the memories database "
        "beside sessions/ names no job of this session's"
    )
    return (
        "not in the bill: Codex's memories (features.memories), whose model calls at a session's start write no "
        "rollout and record their usage nowhere: extraction, a call per earlier idle thread (memories.extract_model, "
        f"default gpt-6-luna), and consolidation, an agent of its own (memories.consolidation_model); here {shown}"
    )


def title_note(path: str, thread: str | None, source: Any) -> str | None:
    """Replay's note on the terminal UI's title call for the thread at ``path``: where the rollout is the UI's
    (``source``) and the home's ``session_index.jsonl`` names the thread; None elsewhere."""
    home = _home(Path(path))
    if source != "cli" or thread is None or home is None:
        return None
    name = _thread_names(home / "session_index.jsonl").get(thread)
    if not isinstance(name, str):
        return None
    return (
        f"not in the bill: the terminal UI's title of this thread ({name!r} in session_index.jsonl, unless the "
        "user renamed it), a model call of its own on the session's model, sent its instructions and tools, which "
        "writes no rollout"
    )


def _thread_names(index: Path) -> dict[str, Any]:
    """Each thread's name in the home's index (its first entry), read once per version of the index: a folder run
    reads every rollout of the home."""
    try:
        stat = index.stat()
    except OSError:
        return {}
    return _names_read(index, stat.st_mtime_ns, stat.st_size)


@functools.lru_cache(maxsize=8)
def _names_read(index: Path, mtime: int, size: int) -> dict[str, Any]:
    try:
        lines = index.read_bytes().splitlines()
    except OSError:
        return {}
    names: dict[str, Any] = {}
    for entry in map(_json, lines):
        if isinstance(entry.get("id"), str):
            names.setdefault(entry["id"], entry.get("thread_name"))
    return names


def _json(line: bytes) -> dict[str, Any]:
    try:
        value = orjson.loads(line)
    except orjson.JSONDecodeError:
        return {}
    return value if isinstance(value, dict) else {}


def _home(rollout: Path) -> Path | None:
    """The client's home a rollout is in: ``<home>/sessions/YYYY/MM/DD/`` or ``<home>/archived_sessions/``."""
    parents = rollout.resolve().parents
    if len(parents) > 4 and parents[3].name == "sessions":
        return parents[4]
    if len(parents) > 1 and parents[0].name == "archived_sessions":
        return parents[1]
    return None
