"""``chat``: one Chat Completions message per line (a bare JSON array of messages reads too).

mini-swe-agent saves its run as such an array, with each observation a ``user`` message
``<returncode>N</returncode><output>...</output>`` answering the assistant's fenced
command: those read as ``compactctl.kind: "observation"`` (tool output for prune, trim and
masking) and are written back without that mark.
"""

from __future__ import annotations

import re
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
from compactctl.transcript import ANNOTATION_KEY, OBSERVATION_KIND, Message

NAME = "chat"


@dataclass(frozen=True)
class ChatNative(Native[None]):
    layout: Layout = "jsonl"  # a bare JSON array of messages is written back as one
    observations: bool = False  # the reader marked observations (the writer takes the mark off)


OBSERVATION = re.compile(r"\s*<returncode>-?\d+</returncode>")
_MARK = {"kind": OBSERVATION_KIND}


def detect(records: list[Record]) -> bool:
    first = records[0].value if records else None
    return isinstance(first, dict)  # the fallback: the reader names what is wrong with a message


def read(records: list[Record], path: str) -> list[Transcript]:
    messages = [check_message(record.value, path, record.line) for record in records]
    marked = False
    for i, message in enumerate(messages):
        content = message.get("content")
        if (
            i
            and message.get("role") == "user"
            and ANNOTATION_KEY not in message
            and messages[i - 1].get("role") == "assistant"
            and isinstance(content, str)
            and OBSERVATION.match(content)
        ):
            messages[i] = {**message, ANNOTATION_KEY: dict(_MARK)}
            marked = True
    return [Transcript(messages, native=ChatNative(layout=document_layout(records), observations=marked))]


def _layout(transcript: Transcript) -> Layout:
    native = native_of(transcript, ChatNative)
    return native.layout if native is not None else "jsonl"


def _written(transcript: Transcript) -> list[Message]:
    native = native_of(transcript, ChatNative)
    if native is None or not native.observations:
        return transcript.messages
    return [
        {k: v for k, v in m.items() if k != ANNOTATION_KEY} if m.get(ANNOTATION_KEY) == _MARK else m
        for m in transcript.messages
    ]


def write(transcripts: list[Transcript]) -> bytes:
    messages = [message for transcript in transcripts for message in _written(transcript)]
    if any(_layout(transcript) == "json" for transcript in transcripts):
        return dumps_document(messages)
    return b"".join(dumps_line(message) for message in messages)


def stream(file: IO[bytes], path: str, skipped: list[int] | None = None) -> Iterator[Message]:
    """Messages one at a time, for reports on files larger than memory should hold."""
    for record in iter_jsonl_stream(file, path, skipped):
        yield check_message(record.value, path, record.line)
