"""``chat``: one Chat Completions message per line (a bare JSON array of messages reads too)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import IO

from compactctl.formats.records import (
    Record,
    Transcript,
    check_message,
    document_layout,
    dumps_document,
    dumps_line,
    iter_jsonl_stream,
)
from compactctl.transcript import Message

NAME = "chat"


def detect(records: list[Record]) -> bool:
    first = records[0].value if records else None
    return isinstance(first, dict)  # the fallback: the reader names what is wrong with a message


def read(records: list[Record], path: str) -> list[Transcript]:
    messages = [check_message(record.value, path, record.line) for record in records]
    return [Transcript(messages, extra={"layout": document_layout(records)})]


def write(transcripts: list[Transcript]) -> bytes:
    if any(transcript.extra.get("layout") == "json" for transcript in transcripts):
        return dumps_document([message for transcript in transcripts for message in transcript.messages])
    return b"".join(dumps_line(message) for transcript in transcripts for message in transcript.messages)


def stream(file: IO[bytes], path: str, skipped: list[int] | None = None) -> Iterator[Message]:
    """Messages one at a time, for reports on files larger than memory should hold."""
    for record in iter_jsonl_stream(file, path, skipped):
        yield check_message(record.value, path, record.line)
