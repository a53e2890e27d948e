"""``chat``: one Chat Completions message per line (a bare JSON array of messages reads too).

mini-swe-agent saves its run as such an array, with each observation a ``user`` message
``<returncode>N</returncode><output>...</output>`` answering the assistant's fenced
command: those read as ``compactctl.kind: "observation"`` (tool output for prune, trim and
masking) and are written back without that mark.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import IO

import orjson

from compactctl import jsonbytes, lazyre
from compactctl.errors import InputError
from compactctl.formats.base import Native, Opener, Signature, Transcript, native_of, sources
from compactctl.formats.records import (
    BOM,
    Layout,
    Record,
    SkippedLine,
    check_message,
    document_layout,
    dumps_document,
    iter_jsonl_stream,
    line_of,
)
from compactctl.transcript import ANNOTATION_KEY, OBSERVATION_KIND, Message, facts_of

NAME = "chat"
SIGNATURE = Signature((("role",),), "one message a line, each with a 'role'")
LINE_RECORDS = True
SUFFIXES = (".jsonl", ".ndjson")


@dataclass(frozen=True)
class ChatNative(Native[bytes | None]):
    """Units are the lines as read, kept only where writing the message afresh would differ
    (another writer's spacing or escapes), so an unchanged message comes back byte for byte
    and an orjson-written file costs nothing."""

    layout: Layout = "jsonl"  # a bare JSON array of messages is written back as one
    observations: bool = False  # the reader marked observations (the writer takes the mark off)


OBSERVATION = lazyre.compile(r"\s*<returncode>-?\d+</returncode>")
_MARK = {"kind": OBSERVATION_KIND}


def detect(records: list[Record]) -> bool:
    # The fallback, for lines that look like messages: the reader names what is wrong with one.
    # An object with no 'role' in any first line ({"foo": 1}, a package.json) is no chat file.
    return any(isinstance(record.value, dict) and "role" in record.value for record in records[:20])


def read(records: list[Record], path: str) -> list[Transcript]:
    messages = [check_message(record.value, path, record.line) for record in records]
    lines = tuple(
        record.raw if record.raw and jsonbytes.dumps(message) != record.raw.rstrip(b"\r") else None
        for message, record in zip(messages, records, strict=True)
    )
    marked = False
    for i, message in enumerate(messages):
        if i and _is_observation(message, messages[i - 1]):
            messages[i] = {**message, ANNOTATION_KEY: dict(_MARK)}
            marked = True
    layout = document_layout(records)
    if not any(lines):  # written as orjson writes: nothing to keep, no origins to follow
        return [Transcript(messages, native=ChatNative(layout=layout, observations=marked))]
    native = ChatNative(lines, tuple(messages), layout=layout, observations=marked)
    return [Transcript(messages, native=native, origins=tuple(range(len(messages))))]


def _is_observation(message: Message, previous: Message) -> bool:
    """A mini-swe-agent observation: a user message ``<returncode>N</returncode>...`` answering the assistant."""
    content = message.get("content")
    return (
        message.get("role") == "user"
        and ANNOTATION_KEY not in message
        and previous.get("role") == "assistant"
        and isinstance(content, str)
        and OBSERVATION.match(content) is not None
    )


def _layout(transcript: Transcript) -> Layout:
    native = native_of(transcript, ChatNative)
    return native.layout if native is not None else "jsonl"


def _unmarked(message: Message, native: ChatNative | None) -> Message:
    return _without_mark(message) if native is not None and native.observations else message


def _without_mark(message: Message) -> Message:
    if message.get(ANNOTATION_KEY) != _MARK:
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
    for message, _ in streamed_messages(file, path, skipped):
        yield message


def streamed_messages(
    file: IO[bytes], path: str, skipped: list[SkippedLine] | None = None
) -> Iterator[tuple[Message, Record]]:
    """Each message of a chat JSON Lines stream with its record, as ``read`` checks them.

    With a ``skipped`` list, a line that does not parse or is not a message is left out and
    listed there; a file none of whose lines is a message fails, on its last bad line.
    """
    given = False
    for record in iter_jsonl_stream(file, path, skipped):
        try:
            message = check_message(record.value, path, record.line)
        except InputError as error:
            if skipped is None:
                raise
            skipped.append(SkippedLine(record.line, error.message))
            continue
        given = True
        yield message, record
    if skipped and not given:  # nothing left to read: the file fails, on its last bad line
        last = max(skipped, key=lambda s: s.line)
        raise InputError(last.problem, path, last.line)


class LineFile:
    """A chat JSON Lines file read a message at a time, as often as asked, and its lines written
    back the way ``write`` writes them, one at a time: for a file too large to hold (a chat file
    is one transcript, so nothing smaller can be read on its own).

    Calling it walks the file once more: (message as ``read`` gives it, the line it was read
    from). ``observations`` is known once a walk has been completed.
    """

    def __init__(self, opener: Opener, path: str, skip: bool = False) -> None:
        self.opener, self.path = opener, path  # ``path`` names the file in errors; it is never opened
        # With ``skip`` (--on-error skip): the lines the last walk left out, as ``load`` lists them
        # (those that do not parse, then those that are not a message).
        self.skipped: list[SkippedLine] | None = [] if skip else None
        self.observations = False  # some message was read as an observation (its mark comes off on writing)

    def __call__(self) -> Iterator[tuple[Message, bytes]]:
        previous: Message | None = None
        skipped: list[SkippedLine] | None = [] if self.skipped is not None else None
        with self.opener() as file:
            for message, record in streamed_messages(file, self.path, skipped):
                if previous is not None and _is_observation(message, previous):
                    message = {**message, ANNOTATION_KEY: dict(_MARK)}
                    self.observations = True
                previous = message
                yield message, record.raw or b""
        self.skipped = skipped

    def declared_facts(self) -> list[str]:
        """The facts the file's messages declare, in file order, found without reading every
        line as a message.

        Only a line that spells ``facts`` (or escapes a character, which a key could hide it
        behind) is parsed; a line that does not read as a message declares nothing here, as a
        whole read (which fails on it, or skips it) declares nothing from it either.
        """
        found: list[str] = []
        with self.opener() as file:
            for number, line in enumerate(file, start=1):
                if b"facts" not in line and b"\\u" not in line:
                    continue
                try:
                    value = orjson.loads(line.removeprefix(BOM) if number == 1 else line)
                    message = check_message(value, self.path, number)
                except (orjson.JSONDecodeError, InputError):
                    continue
                found += facts_of(message)
        return found

    def line(self, message: Message, as_read: bytes | None) -> bytes:
        """The output line of ``message``; ``as_read`` is the line it was read from when it is unchanged."""
        if as_read is not None and jsonbytes.dumps(message) != as_read.rstrip(b"\r"):
            return line_of(message, as_read)  # another writer's spacing: back byte for byte
        return line_of(_without_mark(message) if self.observations else message, None)


walk = LineFile  # what ``Format.walk`` is for chat: the file read a message at a time
