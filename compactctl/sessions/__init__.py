"""Sessions where the agent clients keep them: find, describe, and write one back beside the original.

One module per client (``claude_code``, ``codex``, ``gemini``), each with the same functions:
where its folders are (``roots``), its session files, the id and working directory of one,
its model and window (and ``PRIOR_RATIO``, its model's tokens per cl100k token where the session
cannot tell), whether the client compacted it, a new id and file name as the client
makes them, the id renamed inside a copy, the smaller form that keeps only what a resume
reads (``slim``), its writer lock, its index, and the command that resumes a session.
``CLIENTS`` maps a client's name (its format's) to it, for every format whose registry entry
says its files are resumable. ``live`` has the live-context figure; ``place`` the
writing (beside the original, or in place with a backup, and undo).
"""

from __future__ import annotations

import importlib
import os
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from types import ModuleType

from compactctl.errors import InputError
from compactctl.formats import resumable_formats

# A client per format whose entry says it is resumable (``RESUMABLE``), its module named as the format's reader.
CLIENTS: dict[str, ModuleType] = {
    name: importlib.import_module(f"compactctl.sessions.{module}") for name, module in resumable_formats().items()
}
LATEST = "latest"


@dataclass(frozen=True)
class SessionFile:
    """A session file as found on disk (nothing of its content read but the head)."""

    client: str
    session_id: str
    path: Path
    root: Path  # the client's folder it was found under (~/.claude, ~/.codex, ~/.gemini)
    modified: float  # seconds since the epoch: when the client last wrote it
    size: int

    @property
    def module(self) -> ModuleType:
        return CLIENTS[self.client]

    @property
    def cwd(self) -> str | None:
        return self.module.working_directory(self.path)  # type: ignore[no-any-return]

    def last_used(self) -> str:
        return datetime.fromtimestamp(self.modified, UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def client_roots(env: Mapping[str, str] | None = None, home: Path | None = None) -> dict[str, list[Path]]:
    """Each client's folders, as its own environment variables place them (they may not exist)."""
    env = os.environ if env is None else env
    home = Path(env.get("HOME") or Path.home()) if home is None else home
    return {name: module.roots(env, home) for name, module in CLIENTS.items()}


def check_client(client: str | None) -> None:
    if client is not None and client not in CLIENTS:
        raise InputError(f"unknown client {client!r} (known: {', '.join(CLIENTS)})")


def session_files(
    env: Mapping[str, str] | None = None, home: Path | None = None, client: str | None = None
) -> list[SessionFile]:
    """Every session of the clients found, newest first."""
    check_client(client)
    found = []
    for name, roots in client_roots(env, home).items():
        if client is not None and name != client:
            continue
        module = CLIENTS[name]
        for root in roots:
            for path in module.session_files(root):
                try:
                    status = path.stat()
                except OSError:
                    continue  # removed while the folder was listed
                found.append(SessionFile(name, module.session_id(path), path, root, status.st_mtime, status.st_size))
    return sorted(found, key=lambda s: (s.modified, s.path), reverse=True)


def existing_roots(env: Mapping[str, str] | None = None, home: Path | None = None) -> list[Path]:
    return [root for roots in client_roots(env, home).values() for root in roots if root.is_dir()]


def find_session(
    wanted: str, client: str | None = None, env: Mapping[str, str] | None = None, home: Path | None = None
) -> SessionFile:
    """The session with id ``wanted``, or the one whose id starts with it, or ``latest``; a clear error otherwise."""
    sessions = session_files(env, home, client)
    # Where it looked: the one client's folders with --client, as session_files searched.
    where = ", ".join(
        str(root) for name, roots in client_roots(env, home).items() if client in (None, name) for root in roots
    )
    if not sessions:
        raise InputError(f"no sessions found (looked in {where})")
    if wanted == LATEST:
        return sessions[0]
    exact = [s for s in sessions if s.session_id == wanted]
    matches = exact or [s for s in sessions if s.session_id.startswith(wanted)]
    if not matches:
        raise InputError(f"no session {wanted!r} (looked in {where}); `compactctl sessions` lists them")
    if len({(s.client, s.session_id) for s in matches}) > 1:
        listed = ", ".join(f"{s.client} {s.session_id}" for s in matches[:5])
        raise InputError(f"{wanted!r} names {len(matches)} sessions ({listed}): give more of the id, or `client`")
    # One id in two files: Gemini CLI starts a file of its own for a session it resumes, and may leave
    # it holding only the header. The conversation is in the larger one.
    return max(matches, key=lambda s: s.size)


def since_seconds(text: str, now: float | None = None) -> float:
    """``--since``: ``2h``, ``3d``, ``30m``, ``1w`` ago, or an ISO date; the epoch seconds it stands for."""
    now = time.time() if now is None else now
    units = {"m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}
    if text[-1:] in units and text[:-1].isdigit():
        return now - int(text[:-1]) * units[text[-1]]
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise InputError(f"`since` takes 30m, 2h, 3d, 1w or a date like 2026-12-01, not {text!r}") from None
    return (moment if moment.tzinfo else moment.replace(tzinfo=UTC)).timestamp()


def filtered(
    sessions: Iterable[SessionFile], project: str | None = None, since: float | None = None
) -> list[SessionFile]:
    """Sessions used since ``since`` whose working directory contains ``project``."""
    kept = []
    for session in sessions:
        if since is not None and session.modified < since:
            continue
        if project is not None and project not in (session.cwd or str(session.path.parent)):
            continue
        kept.append(session)
    return kept


def short_ids(ids: Iterable[str], shortest: int = 8) -> dict[str, str]:
    """Each id's shortest prefix (``shortest`` characters at least) that no other id starts with:
    what to type after ``--session``. (Codex's UUIDv7 ids of one minute share their first 8.)"""
    unique = sorted(set(ids))
    short = {}
    for n, current in enumerate(unique):
        neighbours = unique[max(0, n - 1) : n] + unique[n + 1 : n + 2]  # sorted: the closest share the most
        common = max((_shared(current, other) for other in neighbours), default=0)
        short[current] = current[: max(shortest, common + 1)]
    return short


def _shared(a: str, b: str) -> int:
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return n
