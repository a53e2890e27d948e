"""One row of ``compactctl sessions``: a session's figures, read from its file."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from compactctl.sessions import CLIENTS, SessionFile
from compactctl.sessions.live import LiveContext, live_context
from compactctl.sessions.records import values_of

# Where ``compact --session`` brings a session's live context: at most this share of the
# model's window. Gemini CLI keeps the newest 30 % of its history when it compresses; on
# Claude's 200k window it is 60k, about Claude Code's own budget after /compact (summary plus
# re-read files); and it leaves every client more than half its window before it compacts again.
TARGET_SHARE = 0.30


@dataclass(frozen=True)
class SessionRow:
    session: SessionFile
    cwd: str | None
    model: str | None
    window: int
    live: LiveContext
    compacted: bool

    @property
    def full(self) -> float:
        return self.live.tokens / self.window if self.window else 0.0

    @property
    def over_window(self) -> bool:
        """The stuck session: its client cannot send it, so cannot resume or compact it either."""
        return self.live.tokens > self.window

    @property
    def target(self) -> int:
        return int(self.window * TARGET_SHARE)


def read_values(path: Path, data: bytes) -> list[dict[str, Any]]:
    if path.suffix == ".json":  # Gemini CLI's older one-document chat
        try:
            value = json.loads(data)
        except ValueError:
            return []
        return [value] if isinstance(value, dict) else []
    return values_of(data)


def describe(session: SessionFile, window: int | None = None, data: bytes | None = None) -> SessionRow:
    """The session's figures; ``window`` overrides the model's (a proxy, a local model)."""
    module = session.module
    data = session.path.read_bytes() if data is None else data
    values = read_values(session.path, data)
    model = module.model_of(values)
    live = live_context(module.NAME, data, str(session.path), module.anchors, module.as_sent, module.PRIOR_RATIO)
    return SessionRow(
        session,
        session.cwd,
        model,
        window or module.window_of(model, values),
        live,
        module.compacted(values),
    )


def resume_line(client: str, session_id: str, cwd: str | None) -> str:
    """The one command that resumes a session, from the directory the client looks it up in."""
    import shlex

    command = shlex.join(CLIENTS[client].resume_command(session_id))
    return f"cd {shlex.quote(cwd)} && {command}" if cwd else command


def row_json(row: SessionRow) -> dict[str, Any]:
    session = row.session
    return {
        "client": session.client,
        "id": session.session_id,
        "cwd": row.cwd,
        "path": str(session.path),
        "last_used": session.last_used(),
        "size": session.size,
        "model": row.model,
        "live_tokens": row.live.tokens,
        "live_basis": row.live.basis,
        "live_messages": row.live.messages,
        "window": row.window,
        "full": round(row.full, 4),
        "over_window": row.over_window,
        "compacted": row.compacted,
        "resume": resume_line(session.client, session.session_id, row.cwd),
    }
