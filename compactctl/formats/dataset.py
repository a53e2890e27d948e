"""``dataset``: one transcript per line, ``{"messages": [...], ...}``; the line's other keys are kept."""

from __future__ import annotations

from compactctl.errors import InputError
from compactctl.formats.base import Transcript
from compactctl.formats.records import Record, check_message, dumps_line

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
        transcripts.append(Transcript(messages, f"line {record.line}", envelope=line))
    return transcripts


def write(transcripts: list[Transcript]) -> bytes:
    # Replacing the key in a copy keeps the line's key order.
    return b"".join(dumps_line({**(t.envelope or {}), "messages": t.messages}) for t in transcripts)
