"""Reading a file into JSON records with line numbers.

Every format reads records, never raw text, so errors name file, line and column
the same way everywhere.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import IO, Any, Literal

import orjson

from compactctl import jsonbytes
from compactctl.errors import InputError
from compactctl.transcript import ANNOTATION_KEY, ROLES, Message, annotations_of

Layout = Literal["jsonl", "json"]
BOM = b"\xef\xbb\xbf"  # UTF-8 text saved by Windows tools may start with it; it is not part of the JSON


@dataclass(frozen=True)
class Record:
    """One JSON record of a file and the line it starts on."""

    line: int  # 1-based line where the record starts
    value: Any
    raw: bytes | None = None  # the line as it was, so unchanged records are written back byte for byte


@dataclass(frozen=True)
class SkippedLine:
    """A line ``--on-error skip`` left out of its file, and what was wrong with it."""

    line: int
    problem: str
    file: str | None = None  # set when the line is another file's than the entry's (the AFTER of a pair)


def skip_list(on_error: str) -> list[SkippedLine] | None:
    """What a reader fills with the lines it leaves out under ``--on-error skip``; None fails a file on its first."""
    return [] if on_error == "skip" else None


def skipped_json(lines: Iterable[SkippedLine]) -> dict[str, Any]:
    """The lines left out, in order, as every command's ``--json`` lists them: ``skipped_lines`` their
    numbers, ``skipped`` each ``{line, problem}`` (with ``file`` when it is another file's than the entry's)."""
    ordered = sorted(set(lines), key=lambda s: (s.file or "", s.line))
    return {
        "skipped_lines": [s.line for s in ordered],
        "skipped": [{"line": s.line, "problem": s.problem, **({"file": s.file} if s.file else {})} for s in ordered],
    }


def kept_records(records: list[Record], skipped: Iterable[SkippedLine] | None) -> list[Record]:
    """The records a read kept: those of the lines it skipped left out (for what reads them again, as usage)."""
    left_out = {s.line for s in skipped or ()}
    return [record for record in records if record.line not in left_out] if left_out else records


SQLITE_MAGIC = b"SQLite format 3\x00"


@dataclass(frozen=True)
class Database:
    """The one record of a SQLite file: its bytes are the record's ``raw``, for the format to open."""


def database_records(data: bytes) -> list[Record] | None:
    """A SQLite file is one record, not JSON; None for anything else."""
    return [Record(1, Database(), data)] if data.startswith(SQLITE_MAGIC) else None


def _decode_error(error: orjson.JSONDecodeError, path: str, line: int | None, raw: bytes = b"") -> InputError:
    message = str(error.msg if hasattr(error, "msg") else error)
    if b"\x00" in raw:
        return InputError("NUL bytes, not JSON text", path, line)
    if "UTF-8" in message:
        return InputError("not UTF-8 text", path, line)
    column = getattr(error, "colno", None)
    return InputError(f"malformed JSON: {message}", path, line, column)


def check_text(data: bytes, path: str) -> None:
    """An empty file, or a binary one: NUL bytes up front and none of the first lines JSON.

    A NUL line among JSON lines (a session file whose writer died, a disk block of zeros) is a
    bad line like any other: its file is not binary, and ``--on-error skip`` leaves it out.
    """
    if b"\x00" in data[:8192] and not _some_line_parses(data):
        raise InputError("binary file, not a JSON transcript", path)
    if not data.strip():
        raise InputError("empty file: no transcript", path)


def _some_line_parses(data: bytes, lines: int = 20) -> bool:
    """Whether one of the first ``lines`` lines is JSON on its own (each line found without splitting the file)."""
    start = 0
    for _ in range(lines):
        end = data.find(b"\n", start)
        line = data[start:] if end < 0 else data[start:end]
        if line.strip() and b"\x00" not in line:
            try:
                orjson.loads(line)
            except orjson.JSONDecodeError:
                pass
            else:
                return True
        if end < 0:
            return False
        start = end + 1
    return False


def parse_records(data: bytes, path: str, skipped: list[SkippedLine] | None = None) -> tuple[list[Record], Layout]:
    """Parse JSON Lines, or one JSON document (an array's items become the records).

    With a ``skipped`` list (``--on-error skip``), a JSON Lines line that does not parse is
    left out and its number added to the list, instead of failing the file.
    """
    data = data.removeprefix(BOM)
    check_text(data, path)
    first_line = data.lstrip().split(b"\n", 1)[0]
    try:
        orjson.loads(first_line)
    except orjson.JSONDecodeError:
        if first_line[:1] in (b"[", b"{"):
            try:
                document = orjson.loads(data)
            except orjson.JSONDecodeError as error:
                # JSON Lines whose first line is bad: with --on-error skip, that line is skipped like any
                # other; without, the error names that line, not where the document reading gave up.
                if not _more_lines_parse(data):
                    raise _decode_error(error, path, getattr(error, "lineno", None)) from None
                if skipped is None:
                    _loads(first_line, path, data[: data.index(first_line)].count(b"\n") + 1)
            else:
                check_depth(document, data, path, None)
                return _document_records(document, data), "json"
    records = list(iter_jsonl_bytes(data, path, skipped))
    if not records:
        raise InputError(f"no readable line (skipped lines {listed([s.line for s in skipped or []])})", path)
    if len(records) == 1 and isinstance(records[0].value, list):
        return _document_records(records[0].value), "json"
    return records, "jsonl"


def _more_lines_parse(data: bytes) -> bool:
    """Whether a line after the first is JSON on its own: the file is JSON Lines, not one document."""
    for line in data.split(b"\n")[1:6]:
        if line.strip():
            try:
                orjson.loads(line)
            except orjson.JSONDecodeError:
                continue
            return True
    return False


def _document_records(document: Any, data: bytes | None = None) -> list[Record]:
    # A single object keeps its bytes (so it can be written back as it was); array items cannot.
    return [Record(1, item) for item in document] if isinstance(document, list) else [Record(1, document, data)]


def iter_jsonl_bytes(data: bytes, path: str, skipped: list[SkippedLine] | None = None) -> Iterator[Record]:
    lines = data.split(b"\n")
    for number, line in enumerate(lines, start=1):
        if line.strip():
            value = _loads(line, path, number, skipped, cut=number == len(lines))  # no newline after it
            if value is not _SKIPPED:
                yield Record(number, value, line)


def iter_jsonl_stream(stream: IO[bytes], path: str, skipped: list[SkippedLine] | None = None) -> Iterator[Record]:
    """JSON Lines from a binary stream, one line in memory at a time."""
    seen_any = False
    for number, line in enumerate(stream, start=1):
        if number == 1:
            if b"\x00" in line[:8192] and skipped is None:  # with --on-error skip, a bad line like any other
                raise InputError("binary file, not a JSON transcript", path)
            line = line.removeprefix(BOM)
        if line.strip():
            value = _loads(line, path, number, skipped, cut=not line.endswith(b"\n"))
            if value is not _SKIPPED:
                seen_any = True
                yield Record(number, value, line.removesuffix(b"\n"))
    if not seen_any:
        raise InputError("empty file: no transcript" if not skipped else "no readable line", path)


_SKIPPED = object()
# Past 64 bits (20 digits in a row), orjson reads an integer as a float. A line is looked at with
# its digits as 0, its brackets and braces as [ (what check_depth counts) and every other byte a
# space: two passes in C, where a search for \d{20} tries every position of the line (and most
# lines of a session hold 20 digits in all: ids, times).
_DIGIT_MASK = bytes(0x30 if 0x30 <= byte <= 0x39 else 0x5B if byte in b"[{" else 0x20 for byte in range(256))
_LONG_NUMBER = b"0" * 20


def _exact_numbers(line: bytes, value: Any) -> Any:
    """The record parsed again by the standard library, which keeps big integers exact."""
    import json

    try:
        return json.loads(line)
    except ValueError:
        return value


# A last line cut short is what a client leaves while it writes (or when killed): say how to read the rest.
CUT_LAST_LINE = "; the last line is cut short (a session still being written?): --on-error skip leaves it out"


def _loads(line: bytes, path: str, number: int, skipped: list[SkippedLine] | None = None, cut: bool = False) -> Any:
    try:
        value = orjson.loads(line)
        masked = line.translate(_DIGIT_MASK)
        if _LONG_NUMBER in masked:
            value = _exact_numbers(line, value)
    except orjson.JSONDecodeError as error:
        if skipped is not None:
            skipped.append(SkippedLine(number, _decode_error(error, path, number, line).message))
            return _SKIPPED
        failed = _decode_error(error, path, number, line)
        if cut and failed.message.endswith("unexpected end of data"):
            failed = InputError(failed.message + CUT_LAST_LINE, path, number, failed.column)
        raise failed from None
    _check_nesting(value, masked.count(b"["), path, number)  # the line's [ and { in one count
    return value


# orjson reads JSON nested up to 1024 levels but writes only up to this many.
MAX_DEPTH = 254


def check_depth(value: Any, raw: bytes, path: str, line: int | None) -> None:
    """A record nested deeper than can be written back is bad input, found before any work is done."""
    _check_nesting(value, raw.count(b"[") + raw.count(b"{"), path, line)


def _check_nesting(value: Any, openings: int, path: str, line: int | None) -> None:
    """``check_depth`` of a value whose text opens ``openings`` lists and objects."""
    if openings <= MAX_DEPTH:  # cannot be that deep: the common case costs a count
        return
    if _depth(value) > MAX_DEPTH:
        raise InputError(f"JSON nested more than {MAX_DEPTH} levels deep", path, line)


def _depth(value: Any) -> int:
    """How deeply lists and objects nest in ``value`` (counted without recursion)."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            item = list(item.values())
        if isinstance(item, list):
            deepest = max(deepest, depth)
            stack.extend((child, depth + 1) for child in item if isinstance(child, (dict, list)))
    return deepest


# --- fields of a known shape ---------------------------------------------------------------------
# A producer's record holds fields whose type its reader relies on (a model name is hashed, a
# token count is added). One of another type is bad input: said with the file, the line and the
# field, not met later as a TypeError.

FIELD_KINDS: dict[str, tuple[str, Callable[[Any], bool]]] = {
    "text": ("a string", lambda v: isinstance(v, str)),
    "count": ("a whole number", lambda v: isinstance(v, int) and not isinstance(v, bool)),
    "object": ("an object", lambda v: isinstance(v, dict)),
    "list": ("a list", lambda v: isinstance(v, list)),
}
_ABSENT = object()
_STEPS: dict[str, tuple[str, ...]] = {}  # a dotted field's steps, split once (a reader checks each record's)


def _field(value: Any, dotted: str) -> Any:
    steps = _STEPS.get(dotted)
    if steps is None:
        steps = _STEPS[dotted] = tuple(dotted.split("."))
    for step in steps:
        if not isinstance(value, dict) or step not in value:
            return _ABSENT
        value = value[step]
    return value


def shape_of(value: Any) -> str:
    """How an error names a value's type: ``a list``, ``the string 'tool'``, ``the number -1``."""
    if isinstance(value, str):
        return f"the string {value[:40]!r}"
    if isinstance(value, bool) or value is None:
        return json.dumps(value)
    if isinstance(value, (int, float)):
        return f"the number {str(value)[:40]}"
    return {"dict": "an object", "list": "a list"}.get(type(value).__name__, type(value).__name__)


# A list of dotted fields as a tree of their steps: step -> (the checks of the field ending there, the
# steps under it). "message.usage.input_tokens" and its neighbours look "message" up once a record.
_FieldTree = dict[str, tuple[tuple[Callable[[Any], bool], ...], "_FieldTree"]]
_TREES: dict[tuple[tuple[str, str], ...], _FieldTree] = {}


def _field_tree(fields: tuple[tuple[str, str], ...]) -> _FieldTree:
    tree = _TREES.get(fields)
    if tree is None:
        tree = {}
        for dotted, kind in fields:
            *parents, last = dotted.split(".")
            node = tree
            for step in parents:
                node = node.setdefault(step, ((), {}))[1]
            checks, under = node.get(last, ((), {}))
            node[last] = ((*checks, FIELD_KINDS[kind][1]), under)
        _TREES[fields] = tree
    return tree


def _fields_fit(value: dict[str, Any], tree: _FieldTree) -> bool:
    """Whether every field of ``tree`` present and not null in ``value`` is of its kind, as ``_field``
    finds each: walked once (a step under a value that is not an object is absent, as there)."""
    for step, (checks, under) in tree.items():
        if step not in value:
            continue
        found = value[step]
        if found is None:
            continue
        for fits in checks:
            if not fits(found):
                return False
        if under and isinstance(found, dict) and not _fields_fit(found, under):
            return False
    return True


def check_fields(record: Record, path: str, fields: Iterable[tuple[str, str]]) -> None:
    """Each ``(dotted field, kind)`` present and not null in the record is of its kind, else InputError."""
    listed_fields = tuple(fields)
    # Every record of a reader's file is checked: the fields are walked as a tree, and only a record
    # that fails is checked field by field, in order, so the error names the first field that fails.
    if isinstance(record.value, dict) and _fields_fit(record.value, _field_tree(listed_fields)):
        return
    for dotted, kind in listed_fields:
        found = _field(record.value, dotted)
        if found is _ABSENT or found is None:
            continue
        expected, fits = FIELD_KINDS[kind]
        if not fits(found):
            raise InputError(f"{dotted} is {shape_of(found)}, expected {expected}", path, record.line)


def listed(numbers: list[int]) -> str:
    """Line numbers for a message: the first ten, then an ellipsis."""
    return ", ".join(map(str, numbers[:10])) + (", ..." if len(numbers) > 10 else "")


def collapse_text(parts: list[Any]) -> Any:
    """One text part becomes a plain string, as Chat Completions writes it; anything else stays parts."""
    if len(parts) == 1 and isinstance(parts[0], dict) and parts[0].get("type") == "text":
        return parts[0]["text"]
    return parts


def check_message(value: Any, path: str, line: int | None, where: str = "") -> Message:
    """A message must be an object with a known role and string/list/null content."""
    prefix = f"{where}: " if where else ""
    if not isinstance(value, dict):
        raise InputError(f"{prefix}expected a message object, got {type(value).__name__}", path, line)
    role = value.get("role")
    if role is None:
        raise InputError(f"{prefix}message has no 'role'", path, line)
    if not isinstance(role, str) or role not in ROLES:
        shown = repr(role) if len(repr(role)) <= 60 else repr(role)[:57] + "..."
        raise InputError(f"{prefix}unknown role {shown} (expected one of {', '.join(sorted(ROLES))})", path, line)
    content = value.get("content")
    if content is not None and not isinstance(content, (str, list)):
        raise InputError(
            f"{prefix}{role} 'content' is {type(content).__name__}; expected a string, a list of parts or null",
            path,
            line,
        )
    note = value.get(ANNOTATION_KEY)
    if note is not None and not isinstance(note, dict):
        raise InputError(f"{prefix}'{ANNOTATION_KEY}' annotation is {type(note).__name__}, not an object", path, line)
    return value


def dumps_line(value: Any) -> bytes:
    return jsonbytes.dumps(value) + b"\n"


def line_of(value: Any, as_read: bytes | None) -> bytes:
    """The line as it was read when there is one (unchanged records come back byte for byte), else ``value``."""
    return as_read.rstrip(b"\r") + b"\n" if as_read is not None else dumps_line(value)


def dumps_document(value: Any, like: bytes | None = None) -> bytes:
    """A whole-file JSON document the way the Python producers write it (``json.dump(..., indent=N)``).

    tau-bench, SWE-agent and mini-swe-agent all save this way, so an unchanged file comes
    back byte for byte (up to the final newline) and a compacted one looks like theirs.
    The indent is taken from ``like`` (the original file) when given, else 2.
    """
    import json

    indent = 2
    if like is not None:
        second = like.lstrip().split(b"\n", 2)[1:2]
        if second and second[0].strip():
            indent = len(second[0]) - len(second[0].lstrip(b" ")) or 2
    return json.dumps(value, indent=indent).encode() + b"\n"


def document_layout(records: list[Record]) -> Layout:
    """``json`` when the records came from one JSON document rather than from lines."""
    return "json" if records and all(record.raw is None for record in records) else "jsonl"


def raw_line(record: Record) -> bytes:
    return (record.raw if record.raw is not None else jsonbytes.dumps(record.value)) + b"\n"


def annotate(message: Message, **annotations: Any) -> Message:
    """Add compactctl annotations a reader found (``kind: "harness"``) to a message it built."""
    if annotations:
        message[ANNOTATION_KEY] = {**annotations_of(message), **annotations}
    return message
