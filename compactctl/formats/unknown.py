"""What to say about a file no format claims: the one error every command gives for it.

``cannot tell the format of FILE (known: ...)``, then either the producer it looks like
when compactctl knows that producer and does not read it (pi, Antigravity), or the
closest known format and why it did not match, from the keys the file's first records hold.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from compactctl.errors import InputError
from compactctl.formats.base import Signature
from compactctl.formats.records import Database, Record

if TYPE_CHECKING:
    from compactctl.formats import Format

SAMPLE = 20  # the first records are what detection looks at too
PRODUCER_SAMPLE = 3


@dataclass(frozen=True)
class Producer:
    """A producer whose files compactctl recognises and does not read, and why not."""

    name: str
    needs: tuple[tuple[str, Any], ...]  # (key, value or None for "present") the first record carries
    why: str


UNSUPPORTED: tuple[Producer, ...] = (
    Producer(
        "a pi coding-agent session",
        (("type", "session"), ("cwd", None), ("id", None)),
        "its JSONL schema (pi-mono docs/session.md) has changed three times, v1 to v3, and no client here resumes one",
    ),
    Producer(
        "an Antigravity log",
        (("type", None), ("source", None), ("status", None), ("created_at", None)),
        "Antigravity keeps its conversations as protobuf with no published schema; this log is a partial copy",
    ),
    Producer(
        "an Antigravity prompt history",
        (("display", None), ("timestamp", None), ("workspace", None)),
        "it holds the prompts only, not the conversation",
    ),
)


class UnknownFormat(InputError):
    """No format claims the file; the message names the file itself."""

    def __str__(self) -> str:
        return self.message


def undetected(records: Sequence[Record], path: str, known: Mapping[str, Format]) -> UnknownFormat:
    """The error for records no format claims: the same words from every command. Each format's
    ``signature`` (its module's ``SIGNATURE``) is what the closest is chosen by."""
    head = f"cannot tell the format of {path} (known: {', '.join(known)})"
    signatures = [(name, fmt.signature) for name, fmt in known.items() if fmt.signature is not None]
    why, guessable = diagnosis(records, signatures)
    return UnknownFormat(f"{head}; {why}" + ("; pass `format` if you know it" if guessable else ""), path)


def diagnosis(records: Sequence[Record], signatures: Sequence[tuple[str, Signature]]) -> tuple[str, bool]:
    """The producer the records look like, or the closest format and what it lacks; and whether
    naming a format could help (not for a producer compactctl knows it does not read)."""
    sample = [record.value for record in records[:SAMPLE]]
    objects = [value for value in sample if isinstance(value, dict)]
    if not objects:
        kinds = sorted({_kind(value) for value in sample}) or ["nothing"]
        return f"its records are {' and '.join(kinds)}, not JSON objects", True
    first = objects[0]
    for producer in UNSUPPORTED:
        # Among the first few records: some builds write a line (a title) before the session header.
        for value in objects[:PRODUCER_SAMPLE]:
            if all(key in value and (want is None or value[key] == want) for key, want in producer.needs):
                return f"it looks like {producer.name}, which is not supported: {producer.why}", False
    keys = {key for value in objects for key in value}
    name, best = max(signatures, key=lambda named: named[1].met(keys) / len(named[1].needs))
    shown = ", ".join(repr(key) for key in sorted(first)[:8]) + (", ..." if len(first) > 8 else "")
    if not best.met(keys):
        return f"no record has a key a known format looks for (the first has {shown or 'no keys'})", True
    lacking = " nor ".join(best.missing(keys))
    if not lacking:  # the keys are there, their values are not the format's
        return f"closest: {name} ({best.what}), but the values do not fit it (the first has {shown})", True
    return f"closest: {name} ({best.what}), but no record has {lacking} (the first has {shown})", True


def _kind(value: Any) -> str:
    if isinstance(value, Database):
        return "a SQLite database without an Agents SDK session table"
    if isinstance(value, bool):
        return "booleans"
    if isinstance(value, int | float):
        return "numbers"
    if isinstance(value, str):
        return "strings"
    if isinstance(value, list):
        return "arrays"
    return "nulls" if value is None else type(value).__name__
