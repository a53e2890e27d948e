"""The I/O layer: files and folders in, mirrored files out, and the per-file jobs.

Planning (which output each input goes to, refusing to overwrite an input), reading,
atomic writes, parallel runs, and one job per command: ``compact_file``,
``report_pair`` (with ``open_transcripts``), ``replay_file`` and the replay JSON.
Everything below this module takes messages and returns values; only this module
and the CLI read and write transcripts.

One bad file does not stop the others: its error is collected and named in the summary.
"""

from __future__ import annotations

import dataclasses
import functools
import os
import re
import stat
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO, TypeVar

import orjson

if TYPE_CHECKING:
    from rich.progress import Progress

    from compactctl.replay.recorded import RecordedReplay

from compactctl import interrupts
from compactctl.compaction import compact
from compactctl.errors import CompactctlError, InputError
from compactctl.evaluate import FileEvaluation, Judge, evaluate, merged
from compactctl.facts import declared_facts, fold, unique_facts
from compactctl.formats import agents_sqlite, chat, dataset, detect, load, load_records, records_of, write_as
from compactctl.formats.base import Transcript, converted
from compactctl.formats.records import (
    BOM,
    SQLITE_MAGIC,
    Record,
    SkippedLine,
    iter_jsonl_stream,
    parse_records,
)
from compactctl.replay.prices import Prices, PriceTable
from compactctl.replay.simulate import SettingResult, aggregate, replay_streamed
from compactctl.replay.triggers import Setting
from compactctl.reporting import (
    FileReport,
    Labelled,
    Measure,
    Measured,
    Measurer,
    check_facts_present,
    file_report,
    measure,
)
from compactctl.review import FileReview, TranscriptReview, recording, review_side
from compactctl.summarizers import Summarizer
from compactctl.tokens import TokenCounter
from compactctl.transcript import Message
from compactctl.usage import SummarizerUsage
from compactctl.walked import compact_walked, walkable

STDIO = "-"
TRANSCRIPT_SUFFIXES = (".jsonl", ".json", ".traj", ".ndjson")
OUTPUT_MARK = ".compacted"
PRUNED_MARK = ".pruned"
OUTPUT_MARKS = (OUTPUT_MARK, PRUNED_MARK)  # outputs of earlier runs, left out of folder inputs

T = TypeVar("T")


@dataclass(frozen=True)
class Job:
    source: str  # a path, or "-" for stdin
    target: str | None  # a path, "-" for stdout, or None when nothing is written
    name: str  # the path relative to the folder given, for reports and matching


@dataclass(frozen=True)
class Failure:
    file: str
    error: str
    exit_code: int


def find_transcripts(folder: Path) -> list[Path]:
    """Transcript files below ``folder``, sorted; outputs of an earlier run are left out."""
    return sorted(
        path
        for path in folder.rglob("*")
        if path.is_file()
        and path.suffix in TRANSCRIPT_SUFFIXES
        and not any(f"{mark}." in path.name for mark in OUTPUT_MARKS)
    )


def expand_inputs(inputs: Iterable[str]) -> Iterator[tuple[str, str, Path | None]]:
    """(source, name, folder it came from) for every file the inputs name."""
    for given in inputs:
        if given == STDIO:
            yield STDIO, "<stdin>", None
            continue
        path = Path(given)
        if path.is_dir():
            found = find_transcripts(path)
            if not found:
                raise InputError(f"no transcripts ({', '.join(TRANSCRIPT_SUFFIXES)} files) in this folder", given)
            for file in found:
                yield str(file), str(file.relative_to(path)), path
        elif path.is_file():
            yield given, path.name, None
        else:
            raise InputError("no such file or folder", given)


def default_target(source: str, mark: str = OUTPUT_MARK) -> str:
    """``name.compacted.jsonl`` beside ``name.jsonl``."""
    path = Path(source)
    return str(path.with_name(f"{path.stem}{mark}{path.suffix or '.jsonl'}"))


def plan(inputs: list[str], output: str | None, mark: str = OUTPUT_MARK) -> list[Job]:
    """Where each input's output goes; refuses plans that would overwrite an input."""
    found = list(expand_inputs(inputs))
    from_folder = any(folder is not None for _, _, folder in found)
    if output == STDIO and len(found) > 1:
        raise InputError("-o - writes one transcript to stdout; give one input file")
    if (from_folder or len(found) > 1) and output is None and any(s == STDIO for s, _, _ in found):
        raise InputError("stdin cannot be mixed with other inputs")
    if from_folder and output is None:
        raise InputError("a folder input needs -o DIR to mirror its tree into")
    jobs = []
    for source, name, folder in found:
        if output == STDIO or (output is None and source == STDIO):
            target = STDIO
        elif output is None:
            target = default_target(source, mark)
        elif from_folder or len(found) > 1 or Path(output).is_dir():
            if source == STDIO:
                raise InputError("stdin has no file name to write into this folder; give -o FILE", output)
            target = str(Path(output) / name)
            if folder is not None and _inside(Path(output), folder):
                raise InputError("the output folder is inside the input folder; choose a folder outside it", output)
        else:
            target = output
        if source != STDIO and target != STDIO and _same_file(source, target):
            raise InputError("the output would overwrite the input; inputs are never overwritten", target)
        if source == STDIO and target != STDIO and _stdin_is(target):
            raise InputError("stdin is this file: the output would overwrite the input", target)
        jobs.append(Job(source, target, name))
    _check_distinct_targets(jobs)
    return jobs


def check_side_files(jobs: list[Job], **files: Path | None) -> None:
    """A --manifest or --archive file must not be an input, an output, or the other side file."""
    taken: dict[Path, str] = {}
    for job in jobs:
        if job.source != STDIO:
            taken[Path(job.source).resolve()] = "an input"
        if job.target not in (None, STDIO):
            taken[Path(job.target).resolve()] = "an output"
    for flag, path in files.items():
        if path is None:
            continue
        key = path.resolve()
        if key in taken:
            raise InputError(f"--{flag} would overwrite {taken[key]}; choose another file", str(path))
        taken[key] = f"the --{flag} file"
        _check_writable(path, flag)


def _check_writable(path: Path, flag: str) -> None:
    """A side file that cannot be written fails the run before any output is, not after."""
    if path.is_dir():
        raise InputError(f"cannot write the --{flag} file: it is a folder; give a file", str(path))
    folder = path.parent
    while not folder.exists() and folder != folder.parent:  # write_atomic makes the missing folders
        folder = folder.parent
    if not folder.is_dir() or not os.access(folder, os.W_OK | os.X_OK):
        raise InputError(f"cannot write the --{flag} file: {folder} is not a writable folder", str(path))
    if path.exists() and not os.access(path, os.W_OK) and not os.access(folder, os.W_OK):
        raise InputError(f"cannot write the --{flag} file", str(path))


def _check_distinct_targets(jobs: list[Job]) -> None:
    """Two inputs written to one output would leave only the last: refuse before anything is read."""
    seen: dict[Path, str] = {}
    for job in jobs:
        if job.target is None or job.target == STDIO:
            continue
        key = Path(job.target).resolve()
        if key in seen:
            raise InputError(
                f"{seen[key]} and {job.source} would both be written here; give each input once, "
                "or folders whose files do not share relative paths",
                job.target,
            )
        seen[key] = job.source


def _inside(path: Path, folder: Path) -> bool:
    return path.resolve().is_relative_to(folder.resolve())


def _same_file(a: str, b: str) -> bool:
    if Path(a).resolve() == Path(b).resolve():
        return True
    try:  # a hard link is the same file under another name
        return os.path.samefile(a, b)
    except OSError:
        return False


def _stdin_is(target: str) -> bool:
    """``compact - -o in.jsonl < in.jsonl``: stdin is the very file the output would replace."""
    try:
        given, there = os.fstat(sys.stdin.fileno()), os.stat(target)
    except (OSError, ValueError, AttributeError):  # no real stdin (a test runner's), or no such target yet
        return False
    return stat.S_ISREG(given.st_mode) and (given.st_dev, given.st_ino) == (there.st_dev, there.st_ino)


def read_source(source: str) -> bytes:
    if source == STDIO:
        return sys.stdin.buffer.read()
    try:
        data = Path(source).read_bytes()
    except OSError as error:
        raise InputError(f"cannot read: {error.strerror}", source) from None
    return _database_snapshot(source) if data.startswith(SQLITE_MAGIC) else data


def _database_snapshot(source: str) -> bytes:
    """A SQLite file as SQLite reads it: with what its write-ahead log (``-wal``) holds that the file does not yet."""
    import sqlite3
    from contextlib import closing

    try:
        with closing(sqlite3.connect(f"file:{Path(source).resolve()}?mode=ro", uri=True)) as connection:
            return connection.serialize()
    except sqlite3.Error as error:
        raise InputError(f"unreadable SQLite database: {error}", source) from None


def _read_umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


# Read once, at import (os.umask can only be read by setting it, which threads must not race on).
_UMASK = _read_umask()


def _is_special(path: Path) -> bool:
    try:
        mode = path.stat().st_mode
    except OSError:
        return False
    return stat.S_ISCHR(mode) or stat.S_ISFIFO(mode) or stat.S_ISBLK(mode)


def write_atomic(target: str, data: bytes | Callable[[BinaryIO], object]) -> None:
    """Write to a temporary file beside the target, then rename: readers never see half a file.

    ``data`` is the bytes, or a function writing them into the file it is given (an output
    made one line at a time is never held whole).
    """
    fill = data if callable(data) else lambda file: file.write(data)
    if target == STDIO:
        fill(sys.stdout.buffer)
        sys.stdout.buffer.flush()
        return
    path = Path(target)
    if _is_special(path):  # /dev/null, a named pipe: a rename would replace the device with a plain file
        with open(path, "wb") as file:
            fill(file)
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    interrupts.remove_stale(path)  # left by a run killed outright; never one still running
    with interrupts.temporary_beside(path) as temporary:
        # O_EXCL: the name is this process's own; the mode is what any new file would get.
        handle = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666 & ~_UMASK)
        with os.fdopen(handle, "wb") as file:
            fill(file)
            file.flush()
            os.fsync(file.fileno())
        if interrupts.stopping.is_set():  # stopped while writing: the target keeps what it had
            raise KeyboardInterrupt
        os.replace(temporary, path)


def run_jobs(
    jobs: list[Job], work: Callable[[Job], T], parallel: int = 1, progress: bool = False, engine: str = "threads"
) -> tuple[list[T], list[Failure]]:
    """Run ``work`` on every job (in threads when ``parallel`` > 1, or on Ray Data), collecting failures."""
    results: dict[int, T] = {}
    failures: dict[int, Failure] = {}
    if engine == "ray" and not any(job.source == STDIO or job.target == STDIO for job in jobs):
        from compactctl import ray_engine

        # The local instance gets --jobs CPUs when more than one is asked for; else Ray's default (all).
        done, failed = ray_engine.run(
            [job.source for job in jobs], lambda i: work(jobs[i]), parallel if parallel > 1 else None
        )
        failures = {i: Failure(jobs[i].source, error, code) for i, (error, code) in failed.items()}
        return [done[i] for i in sorted(done)], [failures[i] for i in sorted(failures)]

    def attempt(index: int) -> None:
        job = jobs[index]
        try:
            results[index] = work(job)
        except CompactctlError as error:
            failures[index] = Failure(job.source, str(error), error.exit_code)
        except OSError as error:
            failures[index] = Failure(job.source, f"{error.filename or job.source}: {error.strerror or error}", 2)
        except Exception as error:  # a bug met on one file must not cost the batch its summary
            what = f"{type(error).__name__}: {str(error)[:200]}"
            failures[index] = Failure(job.source, f"{job.source}: cannot process this file ({what})", 2)

    pool = ThreadPoolExecutor(max(1, parallel))
    interrupted = False
    try:
        with _progress(len(jobs), progress) as advance:
            for _ in pool.map(attempt, range(len(jobs))):
                advance()
    except KeyboardInterrupt:
        # Stop now: no new file is started, nothing more is renamed into place, and the
        # threads still working are not waited for (the CLI exits without joining them).
        interrupted = True
        interrupts.remove_temporaries()
        raise
    finally:
        pool.shutdown(wait=not interrupted, cancel_futures=interrupted)
    return [results[i] for i in sorted(results)], [failures[i] for i in sorted(failures)]


class _progress:
    """A rich progress bar on stderr when asked for; otherwise nothing at all."""

    def __init__(self, total: int, enabled: bool) -> None:
        self.total, self.enabled = total, enabled and total > 1
        self.bar: Progress | None = None

    def __enter__(self) -> Callable[[], None]:
        if not self.enabled:
            return lambda: None
        from rich.console import Console
        from rich.progress import Progress

        bar = self.bar = Progress(console=Console(stderr=True), transient=True)
        bar.start()
        task = bar.add_task("files", total=self.total)
        return lambda: bar.advance(task)

    def __exit__(self, *exc: object) -> None:
        if self.bar:
            self.bar.stop()


# --- compact: one file ---------------------------------------------------------------------

# Formats whose API rejects a conversation that does not open on the user's turn: window keeps
# the request before a tail that would open on the model's.
OPENS_ON_USER = frozenset({"anthropic"})


@dataclass(frozen=True)
class FileCompaction:
    report: FileReport
    manifest: list[dict[str, Any]]
    archive: list[dict[str, Any]] = field(default_factory=list)  # originals not kept verbatim, when asked


def compact_file(
    job: Job,
    steps: Sequence[str],
    settings: Mapping[str, Any],
    counter: TokenCounter,
    summarizer: Summarizer | None = None,
    to: str | None = None,
    archive: bool = False,
    keep_manifest: bool = True,
) -> FileCompaction:
    """Read one file, compact each transcript in it, write the result atomically, report.

    The output is written in the input's format, or converted to format ``to``. With
    ``archive``, every input message that was not kept verbatim comes back too, with its
    index and fate, so output plus archive give back the input. Without ``keep_manifest``
    (nobody asked for it) a chat JSON Lines file compacted by steps that can walk it
    (``walked.walkable``) is walked rather than held, and the manifest left empty.
    """
    if not archive and not keep_manifest and _walkable(job, steps, settings, to):
        return _compact_walked(job, steps, settings, counter)
    if _lines_are_transcripts(job, settings, to):
        return _compact_lines(job, steps, settings, counter, summarizer, archive, to)
    skipped: list[SkippedLine] | None = [] if settings.get("on_error") == "skip" else None
    fmt, transcripts = load(read_source(job.source), job.source, settings.get("format", "auto"), skipped)
    if fmt.name == agents_sqlite.NAME:
        transcripts = agents_sqlite.selected(transcripts, settings.get("session"), job.source)
    if (to or fmt.name) in OPENS_ON_USER:
        settings = {**settings, "open_on_user": True}
    # Every fact is looked for from the first message on, wherever it is declared.
    tally = _Tally(job, settings, counter, (m for t in transcripts for m in t.messages), archive, fmt.name, to)
    compacted = [tally.compact(t, steps, summarizer) for t in transcripts]
    tally.check_facts(fmt.name)
    if job.target is not None and settings.get("in_place"):
        replace_in_database(job.source, fmt.name, compacted)
    elif job.target is not None:
        write_atomic(job.target, write_as(compacted, fmt, to, job.source))
    return tally.result(fmt.name, skipped or ())


class _Tally:
    """What a file's compaction reports, added up a transcript at a time: the figures before and
    after, the manifest and archive entries, summarizer usage and notes."""

    def __init__(
        self,
        job: Job,
        settings: Mapping[str, Any],
        counter: TokenCounter,
        messages: Iterable[Message],
        archive: bool,
        format_name: str,
        to: str | None,
    ) -> None:
        self.job, self.settings, self.counter, self.archive = job, settings, counter, archive
        self.to, self.converted = to, to not in (None, format_name)  # written in another format
        self.required = list(settings.get("require") or ())
        self.facts = declared_facts(messages, self.required)
        self.before, self.after = Measurer(counter, self.facts), Measurer(counter, self.facts)
        self.manifest: list[dict[str, Any]] = []
        self.archived: list[dict[str, Any]] = []
        self.usage = SummarizerUsage()
        self.notes: list[str] = []

    def compact(self, transcript: Transcript, steps: Sequence[str], summarizer: Summarizer | None) -> Transcript:
        result = compact(transcript.messages, steps, self.settings, counter=self.counter, summarizer=summarizer)
        compacted = transcript.rewritten(result.messages, result.origins)
        # Transcripts, not bare messages: a Responses or Anthropic file is also held to its own API's rules.
        self.before.add(transcript)
        # Converted output is held to the rules of the format written (thinking does not travel).
        written = dataclasses.replace(converted(compacted), read_as=str(self.to)) if self.converted else compacted
        self.after.add(written)
        self.usage = self.usage + result.usage
        self.notes.extend(result.notes)
        where = {"file": self.job.name, "transcript": transcript.label}
        self.manifest.extend({**where, **dataclasses.asdict(entry)} for entry in result.manifest)
        if self.archive:
            self.archived.extend(
                {
                    **where,
                    "index": entry.index,
                    "action": entry.action,
                    "reason": entry.reason,
                    "message": transcript.messages[entry.index],
                }
                for entry in result.manifest
                if entry.action in ("elided", "removed", "summarized")
            )
        return compacted

    def check_facts(self, format_name: str, before: Measure | None = None) -> None:
        """--strict-facts: a fact the input does not hold fails the file before anything is written."""
        if self.settings.get("strict_facts"):
            measured = before or self.before.result()
            check_facts_present(file_report(self.job.name, format_name, measured, None, self.required), self.job.source)

    def result(self, format_name: str, skipped: Iterable[SkippedLine] = ()) -> FileCompaction:
        before, after = self.before.result(), self.after.result()
        notes = dict.fromkeys(self.notes)
        report = file_report(self.job.name, format_name, before, after, self.required, self.usage, notes, skipped)
        return FileCompaction(report, self.manifest, self.archived)


def _lines_are_transcripts(job: Job, settings: Mapping[str, Any], to: str | None) -> bool:
    """A dataset file (one transcript per line) is compacted a line at a time, never held whole."""
    return (
        _readable_twice(job)
        and to in (None, dataset.NAME)
        and settings.get("format", "auto") in ("auto", dataset.NAME)
        and _first_lines_format(job.source, layout_too=True) == dataset.NAME
    )


def _compact_lines(
    job: Job,
    steps: Sequence[str],
    settings: Mapping[str, Any],
    counter: TokenCounter,
    summarizer: Summarizer | None,
    archive: bool,
    to: str | None,
) -> FileCompaction:
    """``compact_file`` for a dataset file: read, compact and write one line (one transcript) at a time."""

    skip = settings.get("on_error") == "skip"
    skipped: list[SkippedLine] = []  # by the last pass, as ``load`` lists them (unparsed, then misshapen)

    def transcripts() -> Iterator[Transcript]:
        unparsed: list[SkippedLine] | None = [] if skip else None
        misshapen: list[SkippedLine] = []
        read_any = False
        with open(job.source, "rb") as file:
            for record in iter_jsonl_stream(file, job.source, unparsed):
                try:
                    (transcript,) = dataset.read([record], job.source)
                except InputError as error:
                    if unparsed is None or error.line is None:
                        raise
                    misshapen.append(SkippedLine(error.line, error.message))
                    continue
                read_any = True
                yield dataclasses.replace(transcript, read_as=dataset.NAME)  # as ``load`` marks it
        if unparsed is not None:
            skipped[:] = [*unparsed, *misshapen]
            if not read_any and misshapen:  # nothing left to read: the file fails, on its last bad line
                raise InputError(misshapen[-1].problem, job.source, misshapen[-1].line)

    messages = (m for t in transcripts() for m in t.messages)
    tally = _Tally(job, settings, counter, messages, archive, dataset.NAME, to)
    if settings.get("strict_facts"):  # the input's figures first: a missing fact writes nothing
        tally.check_facts(dataset.NAME, measure(transcripts(), counter, tally.facts))

    def lines() -> Iterator[bytes]:
        for transcript in transcripts():
            yield dataset.write([tally.compact(transcript, steps, summarizer)])

    if job.target is None:  # --dry-run
        for _ in lines():
            pass
    else:
        write_atomic(job.target, lambda file: file.writelines(lines()))
    return tally.result(dataset.NAME, skipped)


def _walkable(job: Job, steps: Sequence[str], settings: Mapping[str, Any], to: str | None) -> bool:
    """Whether this compaction can walk the file rather than hold it (docs/memory.md says when not)."""
    return (
        _readable_twice(job)
        and walkable(steps)
        and to in (None, chat.NAME)
        and settings.get("format", "auto") in ("auto", chat.NAME)
        and not settings.get("in_place")
        and _first_lines_format(job.source, layout_too=True) == chat.NAME
    )


def _readable_twice(job: Job) -> bool:
    """A file that can be read again (stdin and pipes cannot) and is not being replaced in place."""
    return job.source != STDIO and Path(job.source).is_file()


def _compact_walked(
    job: Job, steps: Sequence[str], settings: Mapping[str, Any], counter: TokenCounter
) -> FileCompaction:
    """``compact_file`` for one chat JSON Lines file, read a line at a time, as often as needed."""
    lines = chat.LineFile(job.source, skip=settings.get("on_error") == "skip")
    required = list(settings.get("require") or ())
    facts = unique_facts([*required, *chat.declared_facts_in(job.source)])
    if settings.get("strict_facts"):  # the input's figures first: a missing fact writes nothing
        before = measure([("", (message for message, _ in lines()))], counter, facts)
        check_facts_present(file_report(job.name, chat.NAME, before, None, required), job.source)
    measured: list[tuple[Measure, Measure]] = []

    def run(write: Callable[[Message, bytes | None], object]) -> None:
        measured.append(compact_walked(lines, steps, settings, counter, facts, write))

    if job.target is None:  # --dry-run: the figures, nothing written
        run(lambda message, line: None)
    else:
        write_atomic(job.target, lambda file: run(lambda message, line: file.write(lines.line(message, line))))
    before, after = measured[0]
    report = file_report(job.name, chat.NAME, before, after, required, SummarizerUsage(), {}, lines.skipped or ())
    return FileCompaction(report, [], [])


def replace_in_database(source: str, format_name: str, transcripts: list[Transcript]) -> None:
    """``--in-place``: the compacted sessions replace theirs in one transaction; a failure changes nothing."""
    import sqlite3
    from contextlib import closing

    if format_name != agents_sqlite.NAME:
        raise InputError(
            f"--in-place replaces sessions in an Agents SDK database; this file reads as {format_name}", source
        )
    try:
        with closing(sqlite3.connect(source, isolation_level=None)) as connection:
            connection.execute("BEGIN IMMEDIATE")  # the write lock first: the app's own writes wait for us
            try:
                agents_sqlite.replace_sessions(connection, transcripts, source)
            except BaseException:
                connection.execute("ROLLBACK")
                raise
            connection.execute("COMMIT")
    except sqlite3.Error as error:
        raise InputError(f"cannot update the database: {error}", source) from None


# --- report: one file or a before/after pair ----------------------------------------------


def open_transcripts(
    source: str, format: str = "auto", skipped: list[SkippedLine] | None = None
) -> tuple[str, Callable[[], Iterator[Measured]]]:
    """The file's format, and a way to walk its (label, messages) pairs, as often as needed.

    Chat JSON Lines files are streamed a line at a time, so memory stays bounded by
    the largest line; other layouts are read whole. With a ``skipped`` list, unreadable
    lines are left out and listed there.
    """
    if source != STDIO and format in ("auto", chat.NAME) and _first_line_is_chat(source):

        def stream() -> Iterator[Labelled]:
            with open(source, "rb") as file:
                yield "", chat.stream(file, source, skipped)

        return chat.NAME, stream
    fmt, transcripts = load(read_source(source), source, format, skipped)
    return fmt.name, lambda: iter(transcripts)


def _first_line_is_chat(source: str) -> bool:
    """Whether the file's first lines detect as chat (other formats also have a ``role`` up front)."""
    return _first_lines_format(source) == chat.NAME


def _first_lines_format(source: str, sample: int = 20, layout_too: bool = False) -> str | None:
    """The format the file's first lines detect as (None when they do not parse); with
    ``layout_too``, None unless the file is JSON Lines of objects (not one JSON document)."""
    records: list[Record] = []
    with open(source, "rb") as file:
        for number, line in enumerate(file, start=1):
            if line.strip():
                try:
                    records.append(Record(number, orjson.loads(line.removeprefix(BOM) if number == 1 else line)))
                except orjson.JSONDecodeError:
                    if not records:  # a first line that does not parse may begin a JSON document
                        return None
                    continue  # a bad line further on is the reader's to name (or skip)
                if len(records) == sample:
                    break
    if not records or (layout_too and not isinstance(records[0].value, dict)):
        return None
    try:
        return detect(records, source).name
    except CompactctlError:
        return None


def report_pair(
    name: str,
    before: str,
    after: str | None,
    counter: TokenCounter,
    format: str = "auto",
    required: Iterable[str] = (),
    skip_bad_lines: bool = False,
    strict_facts: bool = False,
    claude_tokens: str = "fitted",
) -> FileReport:
    """Report one existing file, or a before/after pair of files."""
    required = list(required)
    skipped: list[SkippedLine] | None = [] if skip_bad_lines else None
    format_name, walk_before = open_transcripts(before, format, skipped)
    measured_before = measure(walk_before(), counter, required)
    skipped_before = list(skipped or ())
    facts = [*required, *measured_before.facts_declared]
    if not {fold(fact) for fact in facts} <= measured_before.facts_found:
        # A fact may be declared after the message that holds its text: look once more.
        again = measure(walk_before(), counter, facts)
        measured_before = dataclasses.replace(measured_before, facts_found=again.facts_found)
    measured_after = None
    if after is not None:
        measured_after = measure(open_transcripts(after, format, skipped)[1](), counter, facts)
    report = file_report(name, format_name, measured_before, measured_after, required, skipped_lines=skipped_before)
    if strict_facts:
        check_facts_present(report, before)
    recorded = recorded_report(before, format_name, claude_tokens)
    return dataclasses.replace(report, api_calibration=recorded) if recorded is not None else report


def recorded_report(source: str, format_name: str, claude_tokens: str = "fitted") -> dict[str, Any] | None:
    """The calibrated figures of a producer's session that records its usage; None for other files."""
    from compactctl.calibration import session_report
    from compactctl.recorded import read_recorded

    if format_name not in ("claude-code", "codex") or source == STDIO:
        return None
    session = read_recorded(format_name, parse_records(read_source(source), source)[0], source)
    if session is None or not session.calls:
        return None
    return session_report(session, format_name, claude_tokens)


# --- eval: one before/after pair ------------------------------------------------------------


def eval_pair(name: str, before: str, after: str, format: str = "auto", judge: Judge | None = None) -> FileEvaluation:
    """Probe one file's history and score its compacted counterpart (transcripts paired in order)."""
    fmt, originals = load(read_source(before), before, format)
    _, compacted = load(read_source(after), after, format)
    if len(originals) != len(compacted):
        raise InputError(f"holds {len(compacted)} transcript(s), BEFORE holds {len(originals)}", after)
    scored = [evaluate(o.messages, c.messages, judge) for o, c in zip(originals, compacted, strict=True)]
    return FileEvaluation(name, fmt.name, merged(scored))


# --- review: one file, one or two compactions of it -------------------------------------------

REVIEW_SUFFIX = ".review.html"


@dataclass(frozen=True)
class ReviewSide:
    """One compaction a review shows: side A, or side B beside it."""

    name: str  # "A" or "B"
    description: str  # what it ran, in one line
    settings: Mapping[str, Any]
    summarizer: Summarizer | None


def review_targets(inputs: list[str], output: str | None) -> tuple[list[Job], str | None]:
    """Each input's page, and the index page when there are several: one file gives NAME.review.html beside it."""
    found = list(expand_inputs(inputs))
    if any(source == STDIO for source, _, _ in found):
        raise InputError("review reads files, not stdin; give a file or folder")
    single = len(found) == 1 and found[0][2] is None
    if single and (output is None or not Path(output).is_dir()):
        source, name, _ = found[0]
        target = output or str(Path(source).with_name(Path(source).name + REVIEW_SUFFIX))
        if _same_file(source, target):
            raise InputError("the page would overwrite the input; inputs are never overwritten", target)
        return [Job(source, target, name)], None
    if output is None:
        raise InputError("several inputs or a folder need -o DIR for their pages and index.html")
    folder = Path(output)
    if folder.exists() and not folder.is_dir():
        raise InputError("several inputs or a folder need -o DIR, and this is a file", output)
    jobs = [Job(source, str(folder / (name.replace("/", "__") + REVIEW_SUFFIX)), name) for source, name, _ in found]
    _check_distinct_targets(jobs)
    return jobs, str(folder / "index.html")


def review_file(job: Job, sides: Sequence[ReviewSide], counter: TokenCounter) -> FileReview:
    """Read one file and compact each transcript once per side, recording what each summarizer was sent."""
    first = sides[0].settings
    redact_secrets = bool(first.get("redact", True))
    skipped: list[SkippedLine] | None = [] if first.get("on_error") == "skip" else None
    fmt, transcripts = load(read_source(job.source), job.source, str(first.get("format") or "auto"), skipped)
    reviewed = []
    for transcript in transcripts:
        side_reviews = []
        for side in sides:
            recorder = recording(side.summarizer) if side.summarizer is not None else None
            steps = list(side.settings["strategy"])
            result = compact(transcript.messages, steps, side.settings, counter=counter, summarizer=recorder)
            sent = recorder.sent(redact_secrets) if recorder is not None else []
            side_reviews.append(review_side(side.name, side.description, transcript.messages, result, counter, sent))
        reviewed.append(TranscriptReview(transcript.label, transcript.messages, side_reviews))
    return FileReview(job.name, fmt.name, reviewed, redact_secrets)


# --- replay: one file, and the replay JSON -------------------------------------------------


@dataclass(frozen=True)
class FileReplay:
    """One file's replay: settings summed over its transcripts, and the longest one for charts."""

    file: str
    format: str
    transcripts: int
    settings: list[SettingResult]
    chart_label: str  # which transcript the chart shows
    chart: list[list[int]]  # per setting: its context size per call in that transcript
    api: RecordedReplay | None = None  # the rows in API units, where the file records its usage
    skipped_lines: tuple[SkippedLine, ...] = ()  # lines left out by --on-error skip


def replay_file(
    source: str,
    name: str,
    settings: Sequence[Setting],
    options: Mapping[str, Any],
    counter: TokenCounter,
    prices: Prices,
    summarizer: Summarizer | None = None,
    stage_marker: re.Pattern[str] | None = None,
    fallback_prices: Prices | None = None,
    price_table: PriceTable | None = None,
) -> FileReplay:
    """Read one file and replay each transcript in it on its own (a tau-bench file holds 200 runs).

    A Claude Code or Codex file that records its usage is replayed in the API's units instead
    (``replay.recorded``): calibrated on that usage, each call priced by the model it names
    (``fallback_prices``, from ``--model-pricing``, for a model the table lacks).
    """
    replay_of = functools.partial(
        replay_streamed, settings=settings, options=options, counter=counter, prices=prices,
        summarizer=summarizer, stage_marker=stage_marker,
    )  # fmt: skip
    if source != STDIO and options.get("format") in (None, "auto", chat.NAME) and _first_line_is_chat(source):
        # One transcript a line at a time: memory is the contexts replayed, not the file.
        skipped_lines: list[SkippedLine] = []
        walk = _chat_walk(source, skipped_lines, options.get("on_error") == "skip")
        try:
            rows = replay_of(walk, facts=chat.declared_facts_in(source))
        except _NothingStreamed:
            pass
        else:
            chart = [row.context_per_call for row in rows]
            return FileReplay(name, chat.NAME, 1, aggregate([rows]), "", chart, skipped_lines=tuple(skipped_lines))
    skipped: list[SkippedLine] | None = [] if options.get("on_error") == "skip" else None
    records = records_of(read_source(source), source, skipped)
    fmt, transcripts = load_records(records, source, str(options.get("format") or "auto"), skipped)
    if skipped:  # what the transcripts were read from, for the recorded usage too
        left_out = {s.line for s in skipped}
        records = [record for record in records if record.line not in left_out]
    recorded = _recorded_replay(
        records, source, fmt.name, settings, options, price_table, fallback_prices, summarizer, stage_marker
    )
    if recorded is not None:
        chart = [row.context_per_call for row in recorded.settings]
        return FileReplay(name, fmt.name, 1, recorded.settings, "", chart, recorded, tuple(skipped or ()))
    runs = [replay_of(functools.partial(iter, t.messages)) for t in transcripts]
    longest = max(range(len(runs)), key=lambda i: runs[i][0].calls, default=0)
    label = transcripts[longest].label if transcripts else ""
    chart = [row.context_per_call for row in runs[longest]] if runs else []
    return FileReplay(
        name, fmt.name, len(transcripts), aggregate(runs), label, chart, skipped_lines=tuple(skipped or ())
    )


class _NothingStreamed(Exception):
    """A chat file whose walk gave no message: read whole instead, so its error (or empty result) is the usual one."""


def _chat_walk(source: str, skipped: list[SkippedLine], skip: bool) -> Callable[[], Iterator[Message]]:
    """A chat JSON Lines file's messages a line at a time, as ``chat.read`` gives them;
    ``skipped`` lists the lines ``--on-error skip`` left out, as a whole read lists them.
    A walk that gives no message raises ``_NothingStreamed``: such a file is read whole,
    for the usual error or result."""
    lines = chat.LineFile(source, skip=skip)

    def walk() -> Iterator[Message]:
        given = 0
        try:
            for message, _ in lines():
                given += 1
                yield message
        except InputError:
            if not given:
                raise _NothingStreamed from None
            raise
        if not given:
            raise _NothingStreamed
        skipped[:] = lines.skipped or ()

    return walk


def _recorded_replay(
    records: list[Record],
    source: str,
    format_name: str,
    settings: Sequence[Setting],
    options: Mapping[str, Any],
    table: PriceTable | None,
    fallback: Prices | None,
    summarizer: Summarizer | None,
    stage_marker: re.Pattern[str] | None,
) -> RecordedReplay | None:
    from compactctl.recorded import read_recorded
    from compactctl.replay.prices import shipped_prices
    from compactctl.replay.recorded import replay_recorded

    if format_name not in ("claude-code", "codex"):
        return None
    session = read_recorded(format_name, records, source)
    if session is None or not session.has_usage:
        return None
    return replay_recorded(
        session, format_name, settings, options, table or shipped_prices(), fallback, summarizer, stage_marker
    )


def aligned(per_file: Sequence[Sequence[SettingResult]]) -> list[list[SettingResult]]:
    """The files' rows made to line up: where some file has a ``recorded`` row (its producer
    compacted), a file without one gets its baseline there, which is what its producer did."""
    rows = [list(settings) for settings in per_file]
    if any(len(r) > 1 and r[1].trigger == "recorded" for r in rows):
        for r in rows:
            if r and (len(r) < 2 or r[1].trigger != "recorded"):
                r.insert(1, dataclasses.replace(r[0], trigger="recorded", strategy="producer"))
    return rows


def setting_json(row: SettingResult, basis: str | None = None) -> dict[str, Any]:
    data = dataclasses.asdict(row)
    if basis is not None:
        data["basis"] = basis  # "bill": from the usage the API reported; "estimate": calibrated
    return data


def api_json(api: RecordedReplay) -> dict[str, Any]:
    """The calibration behind a replay in API units, the check against the bill, and the producer's compactions."""
    from compactctl.calibration import calibration_json

    return {
        "calibration": calibration_json(api.calibration),
        "bill_cost": api.bill.cost,
        "unpaired_cost": api.unpaired_cost,  # of the bill: calls the log holds no message for
        "bill_input_tokens": api.bill.input_tokens,
        # What the producer did (its own compactions, or none) replayed with calibrated counts:
        # how far the estimates are from the bill.
        "recorded_estimate_cost": api.recorded_estimate.cost,
        "recorded_estimate_input_tokens": api.recorded_estimate.input_tokens,
        "baseline_estimate_cost": api.baseline_estimate.cost,
        "baseline_estimate_input_tokens": api.baseline_estimate.input_tokens,
        "producer_compactions": api.compactions,
        "history_before_last_compaction": api.history_before_last_compaction,
        "pre_tokens_check": [
            {"call": call, "pre_tokens": pre, "recorded_context": seen} for call, pre, seen in api.pre_tokens_check
        ],
        "notes": list(api.notes),
        "unpriced_models": list(api.unpriced_models),
    }


def _file_replay_json(f: FileReplay) -> dict[str, Any]:
    bases: Sequence[str | None] = f.api.basis if f.api is not None else [None] * len(f.settings)
    entry: dict[str, Any] = {
        "file": f.file,
        "format": f.format,
        "transcripts": f.transcripts,
        "skipped_lines": [s.line for s in f.skipped_lines],
        "skipped": [dataclasses.asdict(s) for s in f.skipped_lines],
        "settings": [setting_json(r, basis) for r, basis in zip(f.settings, bases, strict=True)],
    }
    if f.api is not None:
        entry["api"] = api_json(f.api)
    return entry


def replay_json(files: Sequence[FileReplay], errors: Sequence[Mapping[str, Any]] = ()) -> dict[str, Any]:
    """The replay's ``files`` (each with its settings), ``failed`` and ``total`` (settings summed over the files)."""
    from compactctl.replay.price_source import source_label

    return {
        "files": [_file_replay_json(f) for f in files],
        "failed": list(errors),
        "total": {
            "files": len(files),
            "transcripts": sum(f.transcripts for f in files),
            "failed": len(errors),
            "skipped_lines": sum(len(f.skipped_lines) for f in files),
            "settings": [setting_json(row) for row in aggregate(aligned([f.settings for f in files]))],
            "prices": source_label(),  # which list prices priced the run (besides a --prices table)
        },
    }
