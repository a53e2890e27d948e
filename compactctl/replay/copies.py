"""Each billed call once across the files of one run, where a producer copies calls into another file unmarked.

Claude Code 1.x's ``--resume`` writes a NEW session file that opens with a copy of the session it resumes (new
uuids and session id, the same ``message.id``s and usage) and goes on; 2.1.332 appends to the same file, and its
forks name the session a copied call is from (``requestSessionId``). Measured with the real 1.0.69 against the
loopback fake (tests/recorded/data/claude-code-1.0.69-resume): 3 requests served, 5 responses in the two files.
A user's copy of a file (a backup folder, a renamed copy) keeps every record as it was, uuids included: 2.1.332's
files copied twice, a fork's too (tests/recorded/data/claude-code-2.1.332-copies): 4 served, 10 in the five files.

Each call held by several files of a run (its ``RecordedCall.copy_key``) belongs to one of them: the one that wrote
it first (a resume writes its copy after the call was made), then the one holding fewer calls (the origin of a
chain of resumes holds the fewest), then the one named first. The others replay it as a fork's copy: history
their calls were sent with, billed in that file. A file replayed without the file that made its copies bills them.

Codex 0.171's ``thread/revert`` writes no copy: the turns it dropped stay in the rollout, and the thread's next
rollout names how much of that one it keeps (``history_base``, recorded/codex.py). A run holding both replays the
first with the calls past that point off the live thread; a rollout replayed alone cannot know, and is as it reads.
A copy of the thread's rollouts (plain ``compact``'s output of them) drops the same turns: those copied calls are
billed in the original, off its live thread, and not again (``billed_apart.calls_apart`` skips copied calls).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class BilledKeys:
    """The calls one file of a run bills, as ``RecordedSession.copy_keys`` gives them."""

    name: str
    keys: Mapping[str, float | None]  # copy_key -> when the file first wrote it (None: no timestamp)
    calls: int  # every call the file bills
    thread: str | None = None  # the history its lines are of (Codex's rollout id: recorded.codex_copies.history_id)
    continues: tuple[str, int] | None = None  # the rollout it goes on from, the thread's 0-based line it keeps to


def billed_elsewhere(files: Sequence[BilledKeys]) -> list[dict[str, str]]:
    """Per file, the keys of its calls another file of the run made, each with that file's name."""
    owner: dict[str, tuple[tuple[bool, float, int, int], int]] = {}
    for n, file in enumerate(files):
        for key, written in file.keys.items():
            rank = (written is None, written or 0.0, file.calls, n)
            if key not in owner or rank < owner[key][0]:
                owner[key] = (rank, n)
    return [{key: files[owner[key][1]].name for key in file.keys if owner[key][1] != n} for n, file in enumerate(files)]


def reverted_at(files: Sequence[BilledKeys]) -> list[int | None]:
    """Per file, the line from which another file of the run, a later rollout of the same thread, no longer keeps it
    (a revert dropped the turns from there). A rollout's lines are counted along the thread: from the line the one
    it goes on from is kept up to (0 for the thread's first), so a second revert's cut is its base's line less that
    base's own start. Where several rollouts go on from one, the last of the run (files are named by when they were
    written) is the live thread."""
    cuts: dict[str, int] = {}
    for file in files:
        if file.continues is not None:
            cuts[file.continues[0]] = file.continues[1]
    starts = [file.continues[1] if file.continues is not None else 0 for file in files]
    return [
        cuts[file.thread] - start if file.thread in cuts else None for file, start in zip(files, starts, strict=True)
    ]
