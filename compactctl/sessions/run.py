"""``compact --session`` / ``prune --session``: compact a client's session and write it where the client resumes it.

The session is compacted with the usual steps and settings into a private temporary folder
(never the client's), its live context measured as ``sessions`` measures it, and the result
written as a new session beside the original (``place.write_new``) or, asked, over it with a
backup (``place.write_in_place``). The aim is the target of ``listing.TARGET_SHARE`` (30 % of
the window): when the first pass leaves more, the pass is run again with a shorter kept tail
and tighter tool outputs (``keep_recent``, ``keep_turns``, ``tool_max_tokens`` halved, those the
user did not set), up to ``TIGHTER_ROUNDS`` times. A result still over the window is not
written: the client could not resume it either.
"""

from __future__ import annotations

import dataclasses
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from compactctl.files.compact import FileCompaction
from compactctl.files.io import Job
from compactctl.formats.records import parse_records
from compactctl.sessions import SessionFile
from compactctl.sessions.listing import SessionRow, describe, resume_line
from compactctl.sessions.live import LiveContext, live_context, live_messages
from compactctl.sessions.place import Placed, check_not_live, write_in_place, write_new

TIGHTER_ROUNDS = 3
# Compact ``job.source`` into ``job.target`` with the command's steps and settings, as tighter pass
# ``round`` (0: as given) has them: the command knows its settings, this module the session.
CompactInto = Callable[[Job, int], FileCompaction]


@dataclass(frozen=True)
class SessionCompaction:
    session: SessionFile
    result: FileCompaction
    before: SessionRow
    after: LiveContext
    size_after: int  # bytes of the file as written (or as it would be)
    rounds: int  # tighter passes that were needed
    placed: Placed | None  # None: not written (still over the window)

    @property
    def fits(self) -> bool:
        return self.after.tokens <= self.before.window

    @property
    def resume(self) -> str | None:
        if self.placed is None:
            return None
        return resume_line(self.session.client, self.placed.session_id, self.before.cwd)

    def json(self) -> dict[str, Any]:
        placed = self.placed
        return {
            "client": self.session.client,
            "id": self.session.session_id,
            "path": str(self.session.path),
            "new_id": placed.session_id if placed else None,
            "written": str(placed.path) if placed else None,
            "backup": str(placed.backup) if placed and placed.backup else None,
            "resume": self.resume,
            "size_before": self.session.size,
            "size_after": self.size_after,
            "live_before": self.before.live.tokens,
            "live_after": self.after.tokens,
            "live_basis": self.before.live.basis,
            "window": self.before.window,
            "target": self.before.target,
            "tighter_rounds": self.rounds,
            "notes": list(placed.notes) if placed else [],
        }


def _compacted(session: SessionFile, compact_into: CompactInto, round_number: int) -> tuple[bytes, FileCompaction]:
    with tempfile.TemporaryDirectory(prefix="compactctl-session-") as folder:
        target = Path(folder) / session.path.name
        result = compact_into(Job(str(session.path), str(target), session.path.name), round_number)
        # Nothing to change: no output is written, and the session stays as it was.
        return (target.read_bytes() if target.exists() else session.path.read_bytes()), result


def _same_live_thread(format_name: str, full: bytes, slim: bytes, path: str) -> bool:
    def thread(data: bytes) -> list[Any]:
        return live_messages(format_name, parse_records(data, path)[0], path)

    return thread(full) == thread(slim)


def compact_session(
    session: SessionFile,
    compact_into: CompactInto,
    *,
    tighter_rounds: int = TIGHTER_ROUNDS,
    in_place: bool = False,
    slim: bool = False,
    force: bool = False,
    window: int | None = None,
    write: bool = True,
) -> SessionCompaction:
    module = session.module
    check_not_live(session, force)
    before = describe(session, window)
    rounds = 0
    while True:
        data, result = _compacted(session, compact_into, rounds)
        after = live_context(module.NAME, data, str(session.path), module.anchors, module.as_sent, module.PRIOR_RATIO)
        if after.tokens <= before.target or rounds >= tighter_rounds:
            break
        rounds += 1
    written = module.slim(data) if slim else data
    notes = []
    if slim and not _same_live_thread(module.NAME, data, written, str(session.path)):
        # Never a smaller file that resumes differently: this layout is not one slim knows.
        slim, written = False, data
        notes.append("the smaller form would not resume the same conversation: written in full")
    placed = None
    if write and after.tokens <= before.window:
        placed = write_in_place(session, data, slim) if in_place else write_new(session, data, slim)
        placed = dataclasses.replace(placed, notes=(*placed.notes, *notes))
    return SessionCompaction(session, result, before, after, len(written), rounds, placed)
