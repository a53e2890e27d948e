"""Formats: one reader/writer pair per module, registered here, told apart by ``detect``.

Adding a format is one new module with NAME, detect, read and write, and one line below.
What else it can do (see ``Format``) it says in its module, by the names ``Format.of``
reads; a job asks the ``Format``, never its name. A reader returns ``Transcript``s of
canonical messages; when its writer must put unchanged records back exactly, it also
returns a frozen ``Native`` subclass of its own (``native``: what each message was read
from, as typed units, and the messages as read) and ``origins`` (per message, its unit).
Nothing is added to the messages themselves.
"""

from __future__ import annotations

import dataclasses
import importlib
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from types import ModuleType
from typing import IO, TYPE_CHECKING, Any, NamedTuple, Protocol

from compactctl.errors import InputError
from compactctl.formats.base import AutoCompact, Native, Opener, Signature, Transcript, converted
from compactctl.formats.records import Database, Record, SkippedLine, check_message, database_records, parse_records
from compactctl.transcript import Message, Violation

if TYPE_CHECKING:
    import sqlite3

__all__ = [
    "FORMATS",
    "SUFFIXES",
    "AutoCompact",
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
    "opens_on_user",
    "unique_call_ids",
]


class Walk(Protocol):
    """A file too large to hold, read a message at a time as often as asked (``chat.LineFile``)."""

    skipped: list[SkippedLine] | None

    def __call__(self) -> Iterator[tuple[Message, bytes]]: ...

    def line(self, message: Message, as_read: bytes | None) -> bytes: ...

    def declared_facts(self) -> list[str]: ...


@dataclass(frozen=True)
class Format:
    """A format's reader and writer, and what else it can do: each job asks these, never the name.

    ``Format.of(module)`` reads them from the module, where a name left out means the default:
    ``WRITES``, ``MANY_PER_FILE``, ``LINE_RECORDS``, ``ONE_PER_LINE``, ``OPENS_ON_USER``, ``UNIQUE_CALL_IDS``,
    ``SUFFIXES``, ``CARRIED_PARTS``, ``CARRIES_USAGE``, ``RESUMABLE``, ``AUTO_COMPACT``,
    ``SIGNATURE``, and the functions ``violations``, ``stream``, ``walk``, ``selected`` and ``replace_sessions``.
    """

    name: str
    detect: Callable[[list[Record]], bool]
    read: Callable[[list[Record], str], list[Transcript]]
    write: Callable[[list[Transcript]], bytes]
    # False: read, never written (a trace is what a collector saw, not a file an app resumes from).
    writes: bool = True
    many_per_file: bool = False  # a file holds several separate conversations
    # Each record one line that stands on its own: with --on-error skip, a line whose record is of
    # the wrong shape is left out (and counted) like one that does not parse.
    line_records: bool = False
    one_per_line: bool = False  # each line a whole transcript: compacted a line at a time, never held
    # Its API rejects a conversation that does not open on the user's turn: window keeps the
    # request before a tail that would open on the model's.
    opens_on_user: bool = False
    # Its API refuses a request in which two tool calls share an id (the Messages API, not Chat Completions).
    unique_call_ids: bool = False
    suffixes: tuple[str, ...] = (".jsonl", ".json")  # the file names a folder input picks up
    # Content part types its reader leaves in the canonical messages as they came, by role: not
    # Chat Completions parts, but blocks the producer's own API accepts (its ``violations`` check them).
    carried_parts: Mapping[str, frozenset[str]] = dataclasses.field(default_factory=dict)
    # Every rule of its own API the records as written break, in order.
    violations: Callable[[list[Any]], list[Violation]] | None = None
    # Its files record each API call's usage: ``compactctl.recorded`` reads them, for calibration and replay.
    carries_usage: bool = False
    # Its producer's client resumes its files: ``compactctl.sessions`` finds them, by the module of the
    # same name as its reader (``sessions/<module>.py``: where they live, the lock, the resume command).
    resumable: bool = False
    auto_compact: AutoCompact | None = None  # where its producer compacts on its own (replay's default thresholds)
    signature: Signature | None = None  # what its detection looks for, said of a file no format claims
    # Messages a line at a time from an open file, for a report on a file larger than memory.
    stream: Callable[[IO[bytes], str, list[SkippedLine] | None], Iterator[Message]] | None = None
    # The file walked a message at a time, and its lines written back one at a time.
    walk: Callable[[Opener, str, bool], Walk] | None = None
    # A database of sessions: the one --session names, and --in-place replacing them in a transaction.
    selected: Callable[[list[Transcript], str | None, str], list[Transcript]] | None = None
    replace_sessions: Callable[[sqlite3.Connection, list[Transcript], str], object] | None = None
    # Its client's own context among the messages (Codex's initial context): a summary never folds it.
    client_context: Callable[[Message], bool] | None = None
    # A new summary message as its writer writes it (behind its producer's summary preamble).
    written_summary: Callable[[Message], Message] | None = None

    @property
    def summary_opens_on_user(self) -> bool:
        """Its writer writes every new summary as the user's turn (Claude Code's ``isCompactSummary``)."""
        if self.written_summary is None:
            return False
        return self.written_summary({"role": "system", "content": ""}).get("role") == "user"

    def check_session(self, session: str | None, source: str) -> None:
        """``--session`` with an input file picks a session inside a database: on any other file it
        would be silently ignored (every conversation of the file compacted or reported), so it is refused."""
        if session is not None and self.selected is None:
            raise InputError(
                f"`session` picks a session inside an Agents SDK database; this file reads as {self.name} "
                "(for a Claude Code, Codex or Gemini CLI session, give `session` and no input files)",
                source,
            )

    def session_of(
        self, transcripts: list[Transcript], session: str | None, source: str, compacted: bool = False
    ) -> list[Transcript]:
        """The transcripts ``--session`` names in a database (all of them with none named, or in any other
        file); ``compacted``: in a database ``compact -o`` wrote, each session's compacted copy (``ID-compacted``,
        beside the original it copies) in the original's place where there is one, as compact measured it."""
        if self.selected is None:
            return transcripts
        if compacted:
            from compactctl.formats.agents_sqlite import COMPACTED_SUFFIX  # the one format with sessions

            by_label = {t.label: t for t in transcripts}
            if session is not None:
                copy = session + COMPACTED_SUFFIX
                session = copy if f"session {copy}" in by_label else session
            else:

                def is_copy(label: str) -> bool:
                    return label.endswith(COMPACTED_SUFFIX) and label.removesuffix(COMPACTED_SUFFIX) in by_label

                transcripts = [by_label.get(t.label + COMPACTED_SUFFIX, t) for t in transcripts if not is_copy(t.label)]
        return self.selected(transcripts, session, source)

    @classmethod
    def of(cls, module: ModuleType) -> Format:
        given = {name: getattr(module, name.upper()) for name in _DECLARED if hasattr(module, name.upper())}
        given |= {name: getattr(module, name) for name in _FUNCTIONS if hasattr(module, name)}
        return cls(module.NAME, module.detect, module.read, module.write, **given)


# What a format module may declare (in capitals), and the functions it may have, for ``Format.of``.
_DECLARED: tuple[str, ...] = ("writes", "many_per_file", "line_records", "one_per_line", "opens_on_user")
_DECLARED += ("unique_call_ids", "suffixes", "carried_parts", "carries_usage", "resumable", "auto_compact", "signature")
_FUNCTIONS = ("violations", "stream", "walk", "selected", "replace_sessions", "client_context", "written_summary")


def _values(records: list[Record], first: int) -> list[Any]:
    return [record.value for record in records[:first]]


def _has_key(records: list[Record], first: int, *keys: str) -> bool:
    """Some one of the first records is an object with one of these keys."""
    return any(isinstance(value, dict) and any(key in value for key in keys) for value in _values(records, first))


# Each format by name: its module, the file names a folder input picks up from it (its SUFFIXES),
# whether it writes (its WRITES), and a sniff. The module is imported only when the format is
# used or its sniff passes: a run imports the reader of its file, not all twelve. A sniff is a
# cheap test every file its ``detect`` claims passes (keys ``detect`` looks for), never the
# other way round; tests/formats/test_registry.py holds each row to its module.
class _Row(NamedTuple):
    module: str
    suffixes: tuple[str, ...] = (".jsonl", ".json")
    writes: bool = True
    sniff: Callable[[list[Record]], bool] | None = None  # None: no sniff, ``detect`` decides
    resumable: bool = False  # its RESUMABLE: its client's sessions are found by ``sessions/<module>.py``


# Most specific first: detection takes the first format that claims the records.
_ROWS: dict[str, _Row] = {
    "agents-sqlite": _Row(
        "agents_sqlite", (), sniff=lambda records: len(records) == 1 and isinstance(records[0].value, Database)
    ),
    "otel": _Row(
        "otel", writes=False, sniff=lambda records: _has_key(records, 20, "resourceSpans", "spanId", "context")
    ),
    "ai-sdk": _Row("ai_sdk", sniff=lambda records: bool(records) and _has_key(records, 1, "parts")),
    "swe-agent": _Row(
        "swe_agent", (".traj", ".json"), sniff=lambda records: len(records) == 1 and _has_key(records, 1, "history")
    ),
    "tau-bench": _Row("tau_bench", sniff=lambda records: _has_key(records, 1, "traj")),
    "codex": _Row("codex", sniff=lambda records: _has_key(records, 5, "payload"), resumable=True),
    "gemini": _Row(
        "gemini",
        sniff=lambda records: (
            _has_key(records, 5, "projectHash", "$rewindTo", "$set")
            or any(isinstance(value, dict) and value.get("type") == "gemini" for value in _values(records, 5))
        ),
        resumable=True,
    ),
    "claude-code": _Row(
        "claude_code",
        sniff=lambda records: _has_key(records, 20, "sessionId", "uuid", "leafUuid", "messageId"),
        resumable=True,
    ),
    "anthropic": _Row("anthropic"),
    "responses": _Row("responses"),
    "dataset": _Row("dataset", (".jsonl", ".ndjson")),
    "chat": _Row("chat", (".jsonl", ".ndjson")),
}


class _Formats(Mapping[str, Format]):
    """The registry, by name in detection order; a format's module is imported when it is first looked up."""

    def __init__(self) -> None:
        self._loaded: dict[str, Format] = {}

    def __getitem__(self, name: str) -> Format:
        found = self._loaded.get(name)
        if found is None:
            row = _ROWS[name]  # KeyError for a name not registered, as a dict
            found = self._loaded[name] = Format.of(importlib.import_module(f"compactctl.formats.{row.module}"))
        return found

    def __iter__(self) -> Iterator[str]:
        return iter(_ROWS)

    def __len__(self) -> int:
        return len(_ROWS)

    def __contains__(self, name: object) -> bool:
        return name in _ROWS

    def __setitem__(self, name: str, fmt: Format) -> None:
        # Lets a caller (a test's monkeypatch.setitem) swap one registered format's entry, as on a dict.
        if name not in _ROWS:
            raise KeyError(name)
        self._loaded[name] = fmt


FORMATS: Mapping[str, Format] = _Formats()

# The file names a folder input picks up: every format's, in the order formats are detected.
SUFFIXES: tuple[str, ...] = tuple(dict.fromkeys(suffix for row in _ROWS.values() for suffix in row.suffixes))


def writing_formats() -> list[str]:
    """The formats a transcript can be written in (``--to``), by name, without importing them."""
    return [name for name, row in _ROWS.items() if row.writes]


def resumable_formats() -> dict[str, str]:
    """The formats whose producer's client resumes their files, by name: the module of each, without importing it."""
    return {name: row.module for name, row in _ROWS.items() if row.resumable}


def many_per_file() -> list[str]:
    """The formats whose file holds several conversations, by name."""
    return sorted(fmt.name for fmt in FORMATS.values() if fmt.many_per_file)


def carried_parts(format_name: str | None) -> Mapping[str, frozenset[str]]:
    """The part types a file read as ``format_name`` may hold beyond Chat Completions', by role."""
    fmt = FORMATS.get(format_name or "")
    return fmt.carried_parts if fmt is not None else {}


def unique_call_ids(format_name: str | None) -> bool:
    """Whether a file read as ``format_name`` is refused by its API when two of its tool calls share an id."""
    fmt = FORMATS.get(format_name or "")
    return fmt.unique_call_ids if fmt is not None else False


def opens_on_user(format_name: str | None) -> bool:
    """Whether a file read as ``format_name`` is refused by its API when it opens on the model's turn."""
    fmt = FORMATS.get(format_name or "")
    return fmt.opens_on_user if fmt is not None else False


def detect(records: list[Record], path: str = "<input>") -> Format:
    for name, row in _ROWS.items():
        if row.sniff is not None and not row.sniff(records):
            continue  # cannot be this format: its module is not imported to ask
        fmt = FORMATS[name]
        if fmt.detect(records):
            return fmt
    from compactctl.formats.unknown import undetected  # what to say of a file no format claims: only then

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


def load(
    data: bytes,
    path: str = "<input>",
    format: str = "auto",
    skipped: list[SkippedLine] | None = None,
    detected: Format | None = None,
) -> Loaded:
    """Parse a file's bytes into transcripts, detecting the format unless one is named.

    With a ``skipped`` list, JSON Lines lines that do not parse, or (in a ``line_records``
    format's file) whose record has the wrong shape, are left out and listed there. A format
    ``detected`` already (the file sniffed by its first records) is not detected again.
    """
    return load_records(records_of(data, path, skipped), path, format, skipped, detected)


def records_of(data: bytes, path: str = "<input>", skipped: list[SkippedLine] | None = None) -> list[Record]:
    """A file's records (JSON Lines, a JSON document, or a SQLite database's rows), not yet read as a format."""
    return database_records(data) or parse_records(data, path, skipped)[0]


def load_records(
    records: list[Record],
    path: str = "<input>",
    format: str = "auto",
    skipped: list[SkippedLine] | None = None,
    detected: Format | None = None,
) -> Loaded:
    """``load`` for records already parsed, so a caller that also reads them another way parses once."""
    if detected is not None and format in ("auto", detected.name):
        fmt = detected
    else:
        fmt = detect(records, path) if format == "auto" else get_format(format)
    transcripts = _read_skipping(fmt, records, path, skipped)
    if format != "auto" and not any(t.messages for t in transcripts):
        # A forced format that finds no message where another format would is the wrong one.
        try:
            reads_as = detect(records, path).name
        except InputError:
            reads_as = fmt.name
        if reads_as != fmt.name:
            raise InputError(f"no {fmt.name} message in this file; it reads as {reads_as}: drop `format`", path)
    # Marked with the format read in, so a writer of another format gets plain messages.
    return Loaded(fmt, [dataclasses.replace(t, read_as=fmt.name) for t in transcripts])


def _read_skipping(
    fmt: Format, records: list[Record], path: str, skipped: list[SkippedLine] | None
) -> list[Transcript]:
    """``fmt.read``; with a ``skipped`` list, a line-per-record file's bad lines are left out instead."""
    if skipped is None or not fmt.line_records or any(record.raw is None for record in records):
        return fmt.read(records, path)
    if fmt.name == "chat":  # one pass: a chat line is bad on its own
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
    if len(transcripts) > 1 and not target.many_per_file:
        raise InputError(
            f"holds {len(transcripts)} transcripts and a {target.name} file holds one; "
            f"convert with `to` {' or `to` '.join(many_per_file())}",
            path,
        )


def native_violation(transcript: Transcript) -> Violation | None:
    """The first rule of its own API that a Responses or Anthropic transcript breaks, as its writer
    would send it back (unchanged records as read); None when it keeps them or its format has none."""
    return next(iter(native_violations(transcript)), None)


def native_violations(transcript: Transcript) -> list[Violation]:
    """Every rule of its own API that a Responses or Anthropic transcript breaks, in order."""
    fmt = FORMATS.get(transcript.read_as)
    if fmt is None or fmt.violations is None:
        return []
    written = fmt.write([transcript])
    if not written.strip():
        return []
    return fmt.violations([record.value for record in parse_records(written, "<written>")[0]])
