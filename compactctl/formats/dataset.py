"""``dataset``: one transcript per line, ``{"messages": [...], ...}``; the line's other keys are kept."""

from __future__ import annotations

from dataclasses import dataclass

from compactctl.errors import InputError
from compactctl.formats.base import Native, Signature, Transcript, is_unchanged, native_of
from compactctl.formats.records import Record, check_message, line_of

NAME = "dataset"
SIGNATURE = Signature((("messages",),), "lines of {'messages': [...]}")
MANY_PER_FILE = True
LINE_RECORDS = True
ONE_PER_LINE = True  # a line is a whole transcript: compacted a line at a time, never held
SUFFIXES = (".jsonl", ".ndjson")


@dataclass(frozen=True)
class DatasetNative(Native[None]):
    """What a dataset line was read from: the line itself."""

    raw: bytes | None = None  # the line as read


def detect(records: list[Record]) -> bool:
    first = records[0].value if records else None
    return isinstance(first, dict) and isinstance(first.get("messages"), list)


def read(records: list[Record], path: str) -> list[Transcript]:
    transcripts = []
    for record in records:
        line = record.value
        if not isinstance(line, dict) or not isinstance(line.get("messages"), list):
            raise InputError("expected an object with a 'messages' list", path, record.line)
        messages = [
            check_message(message, path, record.line, f"messages[{i}]") for i, message in enumerate(line["messages"])
        ]
        native = DatasetNative(originals=tuple(messages), raw=record.raw)
        transcripts.append(Transcript(messages, f"line {record.line}", envelope=line, native=native))
    return transcripts


def write(transcripts: list[Transcript]) -> bytes:
    # Replacing the key in a copy keeps the line's key order.
    return b"".join(line_of({**(t.envelope or {}), "messages": t.messages}, _as_read(t)) for t in transcripts)


def _as_read(transcript: Transcript) -> bytes | None:
    """The line as read when its messages are still those read from it: back byte for byte."""
    native = native_of(transcript, DatasetNative)
    return native.raw if native is not None and is_unchanged(transcript, native) else None
