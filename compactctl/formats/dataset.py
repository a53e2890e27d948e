"""``dataset``: one transcript per line, ``{"messages": [...], ...}``; the line's other keys are kept."""

from __future__ import annotations

from compactctl.errors import InputError
from compactctl.formats.records import Record, Transcript, check_message, line_of

NAME = "dataset"


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
        extra = {"line": (list(messages), record.raw)} if record.raw else {}
        transcripts.append(Transcript(messages, f"line {record.line}", envelope=line, extra=extra))
    return transcripts


def write(transcripts: list[Transcript]) -> bytes:
    # Replacing the key in a copy keeps the line's key order.
    return b"".join(line_of({**(t.envelope or {}), "messages": t.messages}, _unchanged_line(t)) for t in transcripts)


def _unchanged_line(transcript: Transcript) -> bytes | None:
    """The line as read when every message is still the one read from it, in order."""
    read_as, line = transcript.extra.get("line", ((), None))
    same = len(read_as) == len(transcript.messages) and all(
        a is b for a, b in zip(read_as, transcript.messages, strict=True)
    )
    return line if same else None
