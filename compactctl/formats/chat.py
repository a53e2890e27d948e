"""``chat``: one Chat Completions message per line (a bare JSON array of messages reads too)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import IO

from compactctl import jsonbytes
from compactctl.formats.records import (
    Record,
    Transcript,
    check_message,
    document_layout,
    dumps_document,
    iter_jsonl_stream,
    line_of,
)
from compactctl.transcript import Message

NAME = "chat"


def detect(records: list[Record]) -> bool:
    first = records[0].value if records else None
    return isinstance(first, dict)  # the fallback: the reader names what is wrong with a message


def read(records: list[Record], path: str) -> list[Transcript]:
    messages = [check_message(record.value, path, record.line) for record in records]
    # Each message's line as it was: one left unchanged is written back byte for byte, whatever
    # spacing or escapes its writer used (Python's json.dumps is not orjson's).
    # Kept only where writing the message afresh would differ, so an orjson-written file costs nothing.
    lines = [
        (message, record.raw)
        for message, record in zip(messages, records, strict=True)
        if record.raw and jsonbytes.dumps(message) != record.raw.rstrip(b"\r")
    ]
    return [Transcript(messages, extra={"layout": document_layout(records), "lines": lines})]


def write(transcripts: list[Transcript]) -> bytes:
    if any(transcript.extra.get("layout") == "json" for transcript in transcripts):
        return dumps_document([message for transcript in transcripts for message in transcript.messages])
    return b"".join(
        line_of(message, as_read) for transcript in transcripts for message, as_read in _with_lines(transcript)
    )


def _with_lines(transcript: Transcript) -> Iterator[tuple[Message, bytes | None]]:
    # By identity: the pairs keep the originals alive, so an id is never reused by another dict.
    read_as = {id(message): line for message, line in transcript.extra.get("lines", ())}
    for message in transcript.messages:
        yield message, read_as.get(id(message))


def stream(file: IO[bytes], path: str, skipped: list[int] | None = None) -> Iterator[Message]:
    """Messages one at a time, for reports on files larger than memory should hold."""
    for record in iter_jsonl_stream(file, path, skipped):
        yield check_message(record.value, path, record.line)
