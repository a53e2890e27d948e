"""``chat``: one Chat Completions message per line (a bare JSON array of messages reads too)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import IO

from compactctl.formats.base import Native, Transcript, native_of
from compactctl.formats.records import (
    Layout,
    Record,
    check_message,
    document_layout,
    dumps_document,
    dumps_line,
    iter_jsonl_stream,
)
from compactctl.transcript import Message

NAME = "chat"


@dataclass(frozen=True)
class ChatNative(Native[None]):
    layout: Layout = "jsonl"  # a bare JSON array of messages is written back as one


def detect(records: list[Record]) -> bool:
    first = records[0].value if records else None
    return isinstance(first, dict)  # the fallback: the reader names what is wrong with a message


def read(records: list[Record], path: str) -> list[Transcript]:
    messages = [check_message(record.value, path, record.line) for record in records]
    return [Transcript(messages, native=ChatNative(layout=document_layout(records)))]


def _layout(transcript: Transcript) -> Layout:
    native = native_of(transcript, ChatNative)
    return native.layout if native is not None else "jsonl"


def write(transcripts: list[Transcript]) -> bytes:
    if any(_layout(transcript) == "json" for transcript in transcripts):
        return dumps_document([message for transcript in transcripts for message in transcript.messages])
    return b"".join(dumps_line(message) for transcript in transcripts for message in transcript.messages)


def stream(file: IO[bytes], path: str, skipped: list[int] | None = None) -> Iterator[Message]:
    """Messages one at a time, for reports on files larger than memory should hold."""
    for record in iter_jsonl_stream(file, path, skipped):
        yield check_message(record.value, path, record.line)
