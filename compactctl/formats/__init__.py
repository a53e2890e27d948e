"""Formats: one reader/writer pair per module, registered here, told apart by ``detect``.

Adding a format is one new module with NAME, detect, read and write, and one line below.
A reader returns ``Transcript``s of canonical messages; when its writer must put unchanged
records back exactly, it also returns a frozen ``Native`` subclass of its own (``native``:
what each message was read from, as typed units, and the messages as read) and
``origins`` (per message, its unit). Nothing is added to the messages themselves.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType
from typing import NamedTuple

from compactctl.errors import InputError
from compactctl.formats import (
    agents_sqlite,
    ai_sdk,
    anthropic,
    chat,
    claude_code,
    codex,
    dataset,
    gemini,
    otel,
    responses,
    swe_agent,
    tau_bench,
)
from compactctl.formats.api_rules import RULES
from compactctl.formats.base import Native, Transcript, converted
from compactctl.formats.records import Record, SkippedLine, check_message, database_records, parse_records
from compactctl.formats.unknown import undetected
from compactctl.transcript import Violation

# Formats whose file holds several separate conversations; the others hold one.
# Formats read but never written (a trace is what a collector saw, not a file an app resumes from).
READ_ONLY = frozenset({otel.NAME})
MANY_PER_FILE = frozenset({dataset.NAME, tau_bench.NAME, agents_sqlite.NAME})
# Formats whose records are each one line that stands on its own: with --on-error skip, a line
# whose record is of the wrong shape is left out (and counted) like one that does not parse.
LINE_FORMATS = frozenset({chat.NAME, dataset.NAME, claude_code.NAME, codex.NAME})

__all__ = [
    "FORMATS",
    "Format",
    "Loaded",
    "Native",
    "Record",
    "Transcript",
    "detect",
    "dump",
    "load",
    "native_violation",
    "native_violations",
]


@dataclass(frozen=True)
class Format:
    name: str
    detect: Callable[[list[Record]], bool]
    read: Callable[[list[Record], str], list[Transcript]]
    write: Callable[[list[Transcript]], bytes]

    @classmethod
    def of(cls, module: ModuleType) -> Format:
        return cls(module.NAME, module.detect, module.read, module.write)


# Most specific first: detection takes the first format that claims the records.
FORMATS: dict[str, Format] = {
    fmt.name: fmt
    for fmt in map(
        Format.of,
        (
            agents_sqlite,
            otel,
            ai_sdk,
            swe_agent,
            tau_bench,
            codex,
            gemini,
            claude_code,
            anthropic,
            responses,
            dataset,
            chat,
        ),
    )
}


def detect(records: list[Record], path: str = "<input>") -> Format:
    for fmt in FORMATS.values():
        if fmt.detect(records):
            return fmt
    raise undetected(records, path, FORMATS)


def get_format(name: str) -> Format:
    try:
        return FORMATS[name]
    except KeyError:
        raise InputError(f"unknown format {name!r} (known: auto, {', '.join(FORMATS)})") from None


class Loaded(NamedTuple):
    """A file's format and its transcripts (several for a dataset or tau-bench file)."""

    format: Format
    transcripts: list[Transcript]


def load(data: bytes, path: str = "<input>", format: str = "auto", skipped: list[SkippedLine] | None = None) -> Loaded:
    """Parse a file's bytes into transcripts, detecting the format unless one is named.

    With a ``skipped`` list, JSON Lines lines that do not parse, or (in a ``LINE_FORMATS``
    file) whose record has the wrong shape, are left out and listed there.
    """
    return load_records(records_of(data, path, skipped), path, format, skipped)


def records_of(data: bytes, path: str = "<input>", skipped: list[SkippedLine] | None = None) -> list[Record]:
    """A file's records (JSON Lines, a JSON document, or a SQLite database's rows), not yet read as a format."""
    return database_records(data) or parse_records(data, path, skipped)[0]


def load_records(
    records: list[Record], path: str = "<input>", format: str = "auto", skipped: list[SkippedLine] | None = None
) -> Loaded:
    """``load`` for records already parsed, so a caller that also reads them another way parses once."""
    fmt = detect(records, path) if format == "auto" else get_format(format)
    transcripts = _read_skipping(fmt, records, path, skipped)
    if format != "auto" and not any(t.messages for t in transcripts):
        # A forced format that finds no message where another format would is the wrong one.
        try:
            detected = detect(records, path).name
        except InputError:
            detected = fmt.name
        if detected != fmt.name:
            raise InputError(f"no {fmt.name} message in this file; it reads as {detected}: drop `format`", path)
    # Marked with the format read in, so a writer of another format gets plain messages.
    return Loaded(fmt, [dataclasses.replace(t, read_as=fmt.name) for t in transcripts])


def _read_skipping(
    fmt: Format, records: list[Record], path: str, skipped: list[SkippedLine] | None
) -> list[Transcript]:
    """``fmt.read``; with a ``skipped`` list, a line-per-record file's bad lines are left out instead."""
    if skipped is None or fmt.name not in LINE_FORMATS or any(record.raw is None for record in records):
        return fmt.read(records, path)
    if fmt.name == chat.NAME:  # one pass: a chat line is bad on its own
        records = [record for record in records if _message_or_skip(record, path, skipped)]
        if not records:  # nothing left to read: the file fails, on its last bad line
            raise InputError(skipped[-1].problem, path, skipped[-1].line)
    while True:
        try:
            return fmt.read(records, path)
        except InputError as error:
            # The error names its line: leave that record out and read the rest again.
            bad = next((n for n, record in enumerate(records) if record.line == error.line), None)
            if bad is None or error.line is None or len(records) == 1:
                raise
            skipped.append(SkippedLine(error.line, error.message))
            records = records[:bad] + records[bad + 1 :]


def _message_or_skip(record: Record, path: str, skipped: list[SkippedLine]) -> bool:
    try:
        check_message(record.value, path, record.line)
    except InputError as error:
        skipped.append(SkippedLine(record.line, error.message))
        return False
    return True


def dump(transcripts: list[Transcript], format: str) -> bytes:
    """Write transcripts in ``format``; ones read in another format are converted."""
    target = get_format(format)
    if any(t.read_as not in ("", target.name) for t in transcripts):
        _check_fits(transcripts, target)
    return target.write([t if t.read_as in ("", target.name) else converted(t) for t in transcripts])


def write_as(transcripts: list[Transcript], read_as: Format, to: str | None = None, path: str | None = None) -> bytes:
    """Write in the format the transcripts were read in, or convert them to format ``to``."""
    target = read_as if to is None or to == read_as.name else get_format(to)
    if target is not read_as:
        _check_fits(transcripts, target, path)
        transcripts = [converted(t) for t in transcripts]
    return target.write(transcripts)


def _check_fits(transcripts: list[Transcript], target: Format, path: str | None = None) -> None:
    """Converting several conversations into a one-conversation format would run them together."""
    if len(transcripts) > 1 and target.name not in MANY_PER_FILE:
        raise InputError(
            f"holds {len(transcripts)} transcripts and a {target.name} file holds one; "
            f"convert with `to` {' or `to` '.join(sorted(MANY_PER_FILE))}",
            path,
        )


def native_violation(transcript: Transcript) -> Violation | None:
    """The first rule of its own API that a Responses or Anthropic transcript breaks, as its writer
    would send it back (unchanged records as read); None when it keeps them or its format has none."""
    return next(iter(native_violations(transcript)), None)


def native_violations(transcript: Transcript) -> list[Violation]:
    """Every rule of its own API that a Responses or Anthropic transcript breaks, in order."""
    check = RULES.get(transcript.read_as)
    if check is None:
        return []
    written = FORMATS[transcript.read_as].write([transcript])
    if not written.strip():
        return []
    return check([record.value for record in parse_records(written, "<written>")[0]])
