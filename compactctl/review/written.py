"""A compaction as it was written: the input, the compacted transcript read back, and the fate of each input message.

``review --compacted AFTER`` reviews what ``compact`` (or a CI job) wrote without compacting
again, and ``review`` itself reviews the file its own ``compact`` run wrote: one path for both.
Fates come from the manifest where one was written (``--manifest``), checked against the input
by each message's hash; else they are read off the output (``matched_fates``).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence

from compactctl import jsonbytes
from compactctl.compaction import Compaction, ManifestEntry, message_hash
from compactctl.errors import InputError
from compactctl.transcript import Message, annotations_of, content_text, is_compactctl_summary, tool_calls_of
from compactctl.usage import SummarizerUsage

ACTIONS_IN_OUTPUT = frozenset({"kept", "elided", "restored"})


def is_written_summary(message: Message) -> bool:
    """A summary a compaction wrote, as a format reads it back."""
    if annotations_of(message).get("kind") == "summary":
        return True
    return is_compactctl_summary(message)


def _key(message: Message) -> str:
    """What makes two messages the same message, whatever a format's reader adds or orders differently."""
    calls = [
        (c.get("id"), (c.get("function") or {}).get("name"), (c.get("function") or {}).get("arguments"))
        for c in tool_calls_of(message)
        if isinstance(c, dict)
    ]
    key = [message.get("role"), message.get("tool_call_id"), content_text(message).strip(), calls]
    return hashlib.sha256(jsonbytes.dumps(key)).hexdigest()


def manifest_fates(
    before: Sequence[Message], entries: Sequence[Mapping[str, object]], where: str
) -> list[ManifestEntry]:
    """The manifest's entries for one transcript, in input order, each checked against the input message."""
    ordered = sorted(entries, key=lambda e: int(str(e.get("index"))))
    if [int(str(e.get("index"))) for e in ordered] != list(range(len(before))):
        raise InputError(
            f"the manifest lists {len(ordered)} message(s) for this transcript, the input holds {len(before)}", where
        )
    fates = []
    for entry, message in zip(ordered, before, strict=True):
        index, digest = int(str(entry["index"])), message_hash(message)
        if entry.get("sha256") != digest:
            raise InputError(f"the manifest does not describe this input: message {index} differs", where)
        role, action, reason = (str(entry.get(key, "")) for key in ("role", "action", "reason"))
        fates.append(ManifestEntry(index, role, action, reason, digest))
    return fates


def _same_place(a: Message, b: Message) -> bool:
    """``b`` can be ``a`` rewritten in place (a tool output trimmed, a call's arguments masked)."""
    if a.get("role") != b.get("role"):
        return False
    if a.get("tool_call_id") or b.get("tool_call_id"):
        return a.get("tool_call_id") == b.get("tool_call_id")
    ids = lambda m: [c.get("id") for c in m.get("tool_calls") or () if isinstance(c, dict)]  # noqa: E731
    return bool(ids(a)) and ids(a) == ids(b)


def matched_fates(before: Sequence[Message], after: Sequence[Message]) -> list[ManifestEntry]:
    """Each input message's fate read off the output, when no manifest was written.

    In order: an output message equal to the input one is ``kept``; one in its place but
    rewritten (the same tool call or result, trimmed) is ``elided``; the rest went into the
    summary (``summarized``) when the output holds one, else were ``removed``.
    """
    written = [m for m in after if not is_written_summary(m)]
    summarized = len(written) < len(after)
    hashes = [_key(m) for m in written]
    later: dict[str, list[int]] = {}
    for position, digest in enumerate(hashes):
        later.setdefault(digest, []).append(position)
    fates, at = [], 0
    for index, message in enumerate(before):
        digest = message_hash(message)
        spots = [p for p in later.get(_key(message), ()) if p >= at]
        if spots:
            at = spots[0] + 1
            fates.append(ManifestEntry(index, str(message.get("role")), "kept", "", digest))
        elif at < len(written) and _same_place(message, written[at]):
            at += 1
            fates.append(ManifestEntry(index, str(message.get("role")), "elided", "rewritten in place", digest))
        else:
            action = "summarized" if summarized else "removed"
            fates.append(ManifestEntry(index, str(message.get("role")), action, "not in the output", digest))
    return fates


def written_compaction(
    before: Sequence[Message], after: list[Message], fates: list[ManifestEntry], usage: SummarizerUsage
) -> Compaction:
    """The values a review reads, for a compaction known only by its output and the fates of its input."""
    queue = [f.index for f in fates if f.action in ACTIONS_IN_OUTPUT]
    origins: list[int | None] = []
    for message in after:
        if is_written_summary(message):
            origins.append(None)
        else:
            origins.append(queue.pop(0) if queue else len(before))
    return Compaction(after, origins, fates, (), usage)
