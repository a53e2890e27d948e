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

from compactctl import jsonbytes
from compactctl.errors import InputError
from compactctl.formats.base import Native, Transcript, native_of, sources
from compactctl.formats.records import (
    Layout,
    Record,
    SkippedLine,
    check_message,
    document_layout,
    dumps_document,
    iter_jsonl_stream,
    line_of,
)
from compactctl.transcript import ANNOTATION_KEY, OBSERVATION_KIND, Message

NAME = "chat"


@dataclass(frozen=True)
class ChatNative(Native[bytes | None]):
    """Units are the lines as read, kept only where writing the message afresh would differ
    (another writer's spacing or escapes), so an unchanged message comes back byte for byte
    and an orjson-written file costs nothing."""

    layout: Layout = "jsonl"  # a bare JSON array of messages is written back as one
    observations: bool = False  # the reader marked observations (the writer takes the mark off)


OBSERVATION = re.compile(r"\s*<returncode>-?\d+</returncode>")
_MARK = {"kind": OBSERVATION_KIND}


def detect(records: list[Record]) -> bool:
    first = records[0].value if records else None
    return isinstance(first, dict)  # the fallback: the reader names what is wrong with a message


def read(records: list[Record], path: str) -> list[Transcript]:
    messages = [check_message(record.value, path, record.line) for record in records]
    lines = tuple(
        record.raw if record.raw and jsonbytes.dumps(message) != record.raw.rstrip(b"\r") else None
        for message, record in zip(messages, records, strict=True)
    )
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
    layout = document_layout(records)
    if not any(lines):  # written as orjson writes: nothing to keep, no origins to follow
        return [Transcript(messages, native=ChatNative(layout=layout, observations=marked))]
    native = ChatNative(lines, tuple(messages), layout=layout, observations=marked)
    return [Transcript(messages, native=native, origins=tuple(range(len(messages))))]


def _layout(transcript: Transcript) -> Layout:
    native = native_of(transcript, ChatNative)
    return native.layout if native is not None else "jsonl"


def _unmarked(message: Message, native: ChatNative | None) -> Message:
    if native is None or not native.observations or message.get(ANNOTATION_KEY) != _MARK:
        return message
    return {k: v for k, v in message.items() if k != ANNOTATION_KEY}


def write(transcripts: list[Transcript]) -> bytes:
    if any(_layout(transcript) == "json" for transcript in transcripts):
        return dumps_document(
            [
                _unmarked(message, native_of(transcript, ChatNative))
                for transcript in transcripts
                for message in transcript.messages
            ]
        )
    return b"".join(
        line_of(_unmarked(message, native), line if same else None)
        for transcript in transcripts
        for native in [native_of(transcript, ChatNative)]
        for message, line, same in sources(transcript, native)
    )


def stream(file: IO[bytes], path: str, skipped: list[SkippedLine] | None = None) -> Iterator[Message]:
    """Messages one at a time, for reports on files larger than memory should hold.

    With a ``skipped`` list, a line that does not parse or is not a message is left out and listed there.
    """
    for record in iter_jsonl_stream(file, path, skipped):
        try:
            yield check_message(record.value, path, record.line)
        except InputError as error:
            if skipped is None:
                raise
            skipped.append(SkippedLine(record.line, error.message))
