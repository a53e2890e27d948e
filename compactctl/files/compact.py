"""``compact`` and ``prune``, one file: read, compact each transcript, write atomically, report.

Four ways through a file: held whole, a dataset file a line (a transcript) at a time,
a chat JSON Lines file walked, an Agents SDK database replaced in place.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from compactctl.compaction import compact
from compactctl.config import DatabaseOptions, GateOptions, InputOptions, WriteOptions
from compactctl.errors import InputError
from compactctl.facts import declared_facts, unique_facts
from compactctl.files.io import STDIO, Job, opener, read_source, sniffed, write_atomic
from compactctl.formats import Format, Walk, get_format, load, write_as
from compactctl.formats.base import Transcript, converted
from compactctl.formats.records import SkippedLine, iter_jsonl_stream, skip_list
from compactctl.model_input import client_view, model_input
from compactctl.reporting import (
    FileReport,
    Measure,
    MeasureSum,
    check_facts_present,
    file_report,
    measure,
    unchanged_reason,
)
from compactctl.strategies import STRATEGIES, ClientView, StrategyOptions
from compactctl.summarizers import Summarizer
from compactctl.tokens import TokenCounter
from compactctl.transcript import Message
from compactctl.usage import SummarizerUsage

# --- compact: one file ---------------------------------------------------------------------


@dataclass(frozen=True)
class FileCompaction:
    """One file's compaction: its report, its manifest and, when asked, its archive."""

    report: FileReport
    manifest: list[dict[str, Any]]
    archive: list[dict[str, Any]] = field(default_factory=list)  # originals not kept verbatim, when asked


def compact_file(
    job: Job,
    steps: Sequence[str],
    strategies: StrategyOptions,
    counter: TokenCounter,
    summarizer: Summarizer | None = None,
    *,
    read: InputOptions = InputOptions(),
    gates: GateOptions = GateOptions(),
    database: DatabaseOptions = DatabaseOptions(),
    written: WriteOptions = WriteOptions(),
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
    known = sniffed(job.source, read.format)  # sniffed once: the way through and the whole read both take it
    if known is not None:
        database.check_session(known, job.source)
    if known is not None and to in (None, known.name):
        if known.walk is not None and not archive and not keep_manifest and _walkable(steps) and not database.in_place:
            return _compact_walked(job, known, steps, strategies, counter, read, gates, written.write_unchanged)
        if known.one_per_line:
            return _compact_lines(
                job, known, steps, strategies, counter, summarizer, archive, to, read, gates, written.write_unchanged
            )
    skipped = skip_list(read.on_error)
    fmt, transcripts = load(read_source(job.source), job.source, read.format, skipped, known)
    database.check_session(fmt, job.source)
    transcripts = fmt.session_of(transcripts, database.session, job.source)
    written_as = fmt if to is None else get_format(to)
    if written_as.opens_on_user:
        # A writer that writes every new summary as the user's turn (Claude Code's isCompactSummary) opens
        # the conversation with it: there only a cut with no summary (window) keeps the request before its tail.
        summarizing = "summary_role" if written_as.summary_opens_on_user else None
        strategies = strategies.replaced_unless(summarizing, {"open_on_user": True})
    # Every fact is looked for from the first message on, wherever it is declared.
    messages = (m for t in transcripts for m in t.messages)
    tally = _Tally(job, strategies, gates, counter, messages, archive, fmt.name, to, written.write_unchanged)
    tally.keep_manifest = keep_manifest
    # The after-figures are those of the file as written, read back (model_input): what the
    # producer's client sends on resume, and what ``report IN OUT`` gives on the output.
    tally.after_from_written = not database.in_place and written_as.replace_sessions is None
    tally.client = client_view(fmt, written_as)
    compacted = [tally.compact(t, steps, summarizer) for t in transcripts]
    tally.check_facts(fmt.name)
    if job.target is not None and database.in_place:
        replace_in_database(job.source, fmt, compacted)
        return tally.result(fmt.name, skipped or ())
    data = write_as(compacted, fmt, to, job.source) if tally.after_from_written or job.target else b""
    if tally.after_from_written:
        read_back = tally.read_written(data, to or fmt.name, compacted)
        if to in (None, fmt.name) and tally.keep_where_larger(transcripts, compacted, read_back):
            data = write_as(compacted, fmt, to, job.source)
            read_back = tally.read_written(data, to or fmt.name, compacted)
        for transcript in read_back:
            tally.after.add(transcript)
    same = all(a.messages == b.messages for a, b in zip(compacted, transcripts, strict=True))
    if to in (None, fmt.name) and not skipped and same:  # a skipped line makes the output differ
        reasons = [unchanged_reason(t.messages, counter, _thresholds(steps, strategies)) for t in transcripts[:1]]
        tally.unchanged = _first_few(tally.kept_whole) or "; ".join(reasons)
    if job.target is not None and _writes(job, tally.unchanged, written.write_unchanged):
        write_atomic(job.target, data, [job.source])
    return tally.result(fmt.name, skipped or ())


def _walkable(steps: Sequence[str]) -> bool:
    from compactctl.walked import walkable  # asked of a file its format walks (chat JSON Lines) only

    return walkable(steps)


def _thresholds(steps: Sequence[str], strategies: StrategyOptions) -> dict[str, int]:
    """The token threshold of each step that compacts only above one, by step name."""
    found = {step: getattr(strategies.of(step), "threshold", None) for step in steps if step in STRATEGIES}
    return {step: limit for step, limit in found.items() if isinstance(limit, int)}


def _first_few(reasons: list[str], shown: int = 3) -> str:
    """The first reasons, and how many more: one line, however many transcripts a file holds."""
    more = f"; and {len(reasons) - shown:,} more" if len(reasons) > shown else ""
    return "; ".join(reasons[:shown]) + more


def _writes(job: Job, unchanged: str | None, write_unchanged: bool) -> bool:
    """An unchanged file is not copied (a byte-identical copy says nothing) unless asked, or to stdout."""
    return unchanged is None or write_unchanged or job.target == STDIO


class _Tally:
    """What a file's compaction reports, added up a transcript at a time: the figures before and
    after, the manifest and archive entries, summarizer usage and notes."""

    def __init__(
        self,
        job: Job,
        strategies: StrategyOptions,
        gates: GateOptions,
        counter: TokenCounter,
        messages: Iterable[Message],
        archive: bool,
        format_name: str,
        to: str | None,
        write_unchanged: bool = False,
    ) -> None:
        self.write_unchanged = write_unchanged
        self.job, self.strategies, self.counter, self.archive = job, strategies, counter, archive
        self.to, self.converted = to, to not in (None, format_name)  # written in another format
        self.strict_facts = gates.strict_facts
        self.required = list(gates.require)
        self.facts = declared_facts(messages, self.required)
        self.before, self.after = MeasureSum(counter, self.facts), MeasureSum(counter, self.facts)
        # Per transcript, in order: a transcript kept whole after all has its entries replaced.
        self.manifests: list[list[dict[str, Any]]] = []
        self.archives: list[list[dict[str, Any]]] = []
        self.client = ClientView()  # how the output's client sees the result (``client_view``)
        self.kept_whole: list[str] = []  # why a compacted transcript was written as it came
        self.usage = SummarizerUsage()
        self.notes: list[str] = []
        self.after_from_written = False  # measure the output as written and read back, not in memory
        self.keep_manifest = True  # False: nobody reads the manifest, so its entries are not made
        self.unchanged: str | None = None  # why no step changed anything

    def read_written(self, data: bytes, format_name: str, compacted: list[Transcript]) -> list[Transcript]:
        """The written bytes read back as ``format_name`` (``report``'s view of the output), for the after-figures."""
        _, written = load(data, "<written>", format_name)
        return written if len(written) == len(compacted) else compacted

    def keep_where_larger(
        self, transcripts: list[Transcript], compacted: list[Transcript], written: list[Transcript]
    ) -> bool:
        """Put back (in ``compacted``) each transcript whose written compaction the resuming client would
        be sent more tokens of than of the input (``model_input`` of both); True if any was.

        A step judges its own saving in memory; the writer can add what the step did not count
        (a producer's summary preamble, context its client writes again on resume). A compaction
        is never larger for the client than what it replaces.
        """
        if len(written) != len(compacted):
            return False
        kept = False
        for n, (before, after) in enumerate(zip(transcripts, written, strict=True)):
            if compacted[n].messages != before.messages and self._larger(before, after):
                compacted[n] = before
                self._kept_as_it_came(n, before)
                kept = True
        return kept

    def _larger(self, before: Transcript, after: Transcript) -> bool:
        """``after`` sends the resuming client more tokens than ``before`` (noted in ``kept_whole``)."""
        counted = self.counter.messages
        tokens_before, tokens_after = counted(model_input(before)), counted(model_input(after))
        if tokens_after <= tokens_before:
            return False
        where = f"{before.label}: " if before.label else ""
        self.kept_whole.append(
            f"{where}unchanged: the compaction would be larger for the client that resumes it "
            f"({tokens_before:,} -> {tokens_after:,} tokens); kept as it came"
        )
        return True

    def _kept_as_it_came(self, n: int, transcript: Transcript) -> None:
        """The manifest of transcript ``n`` says every message was kept; nothing of it is archived."""
        self.archives[n] = []
        if not self.keep_manifest:
            return
        where = {"file": self.job.name, "transcript": transcript.label}
        kept = compact(transcript.messages, [], counter=self.counter).manifest
        self.manifests[n] = [{**where, **dataclasses.asdict(entry)} for entry in kept]

    def compact(self, transcript: Transcript, steps: Sequence[str], summarizer: Summarizer | None) -> Transcript:
        result = compact(
            transcript.messages,
            steps,
            self.strategies,
            counter=self.counter,
            summarizer=summarizer,
            client=self.client,
            hashed=self.keep_manifest,
        )
        compacted = transcript.rewritten(result.messages, result.origins)
        # Transcripts, not bare messages: a Responses or Anthropic file is also held to its own API's rules.
        self.before.add(transcript)
        self.usage = self.usage + result.usage
        self.notes.extend(result.notes)
        where = {"file": self.job.name, "transcript": transcript.label}
        self.manifests.append(
            [{**where, **dataclasses.asdict(entry)} for entry in result.manifest] if self.keep_manifest else []
        )
        self.archives.append([])
        if self.archive:
            self.archives[-1].extend(
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
        if self.after_from_written:
            return compacted  # measured as written, read back (``keep_where_larger``)
        # Measured in memory (a dataset a line at a time: no preamble, nothing sent again on resume):
        # a compaction larger than its input is not kept either.
        changed = not self.converted and compacted.messages != transcript.messages
        if changed and self._larger(transcript, compacted):
            compacted = transcript
            self._kept_as_it_came(len(self.manifests) - 1, transcript)
        # Converted output is held to the rules of the format written (thinking does not travel).
        written = dataclasses.replace(converted(compacted), read_as=str(self.to)) if self.converted else compacted
        self.after.add(written)
        return compacted

    def check_facts(self, format_name: str, before: Measure | None = None) -> None:
        """--strict-facts: a fact the input does not hold fails the file before anything is written."""
        if self.strict_facts:
            measured = before or self.before.result()
            check_facts_present(file_report(self.job.name, format_name, measured, None, self.required), self.job.source)

    def result(self, format_name: str, skipped: Iterable[SkippedLine] = ()) -> FileCompaction:
        before, after = self.before.result(), self.after.result()
        notes = dict.fromkeys(self.notes)
        if self.unchanged is None and self.kept_whole:  # the file changed; some of its transcripts did not
            notes[_first_few(self.kept_whole)] = None
        if self.unchanged is not None and not self.write_unchanged:
            notes[f"{self.unchanged}; no copy written (--write-unchanged writes one)"] = None
        report = file_report(self.job.name, format_name, before, after, self.required, self.usage, notes, skipped)
        report = dataclasses.replace(report, unchanged_reason=self.unchanged)
        manifest = [entry for entries in self.manifests for entry in entries]
        return FileCompaction(report, manifest, [entry for entries in self.archives for entry in entries])


def _compact_lines(
    job: Job,
    fmt: Format,
    steps: Sequence[str],
    strategies: StrategyOptions,
    counter: TokenCounter,
    summarizer: Summarizer | None,
    archive: bool,
    to: str | None,
    read: InputOptions,
    gates: GateOptions,
    write_unchanged: bool,
) -> FileCompaction:
    """``compact_file`` for a file whose every line is a transcript (a dataset): read, compact and write
    one line at a time."""

    skip = read.on_error == "skip"
    skipped: list[SkippedLine] = []  # by the last pass, as ``load`` lists them (unparsed, then misshapen)

    def transcripts() -> Iterator[Transcript]:
        unparsed: list[SkippedLine] | None = [] if skip else None
        misshapen: list[SkippedLine] = []
        read_any = False
        with open(job.source, "rb") as file:
            for record in iter_jsonl_stream(file, job.source, unparsed):
                try:
                    (transcript,) = fmt.read([record], job.source)
                except InputError as error:
                    if unparsed is None or error.line is None:
                        raise
                    misshapen.append(SkippedLine(error.line, error.message))
                    continue
                read_any = True
                yield dataclasses.replace(transcript, read_as=fmt.name)  # as ``load`` marks it
        if unparsed is not None:
            skipped[:] = [*unparsed, *misshapen]
            if not read_any and misshapen:  # nothing left to read: the file fails, on its last bad line
                raise InputError(misshapen[-1].problem, job.source, misshapen[-1].line)

    messages = (m for t in transcripts() for m in t.messages)
    tally = _Tally(job, strategies, gates, counter, messages, archive, fmt.name, to, write_unchanged)
    if gates.strict_facts:  # the input's figures first: a missing fact writes nothing
        tally.check_facts(fmt.name, measure(transcripts(), counter, tally.facts))

    changed: list[bool] = []
    first: list[list[Message]] = []

    def lines() -> Iterator[bytes]:
        for transcript in transcripts():
            compacted = tally.compact(transcript, steps, summarizer)
            changed.append(compacted.messages != transcript.messages)
            first[:] = first or [transcript.messages]
            yield fmt.write([compacted])

    def unchanged() -> bool:
        return not any(changed) and not skipped

    def fill(file: Any) -> None:
        file.writelines(lines())
        if unchanged() and not write_unchanged and job.target != STDIO:
            raise _NothingChanged

    if job.target is None:  # --dry-run
        for _ in lines():
            pass
    else:
        with contextlib.suppress(_NothingChanged):
            write_atomic(job.target, fill, [job.source])
    if unchanged() and first:
        if tally.kept_whole:
            tally.unchanged = tally.kept_whole[0]
        else:
            tally.unchanged = unchanged_reason(first[0], counter, _thresholds(steps, strategies))
    return tally.result(fmt.name, skipped)


def _compact_walked(
    job: Job,
    fmt: Format,
    steps: Sequence[str],
    strategies: StrategyOptions,
    counter: TokenCounter,
    read: InputOptions,
    gates: GateOptions,
    write_unchanged: bool,
) -> FileCompaction:
    """``compact_file`` for a file its format walks (chat JSON Lines), read a line at a time, as often as needed."""
    from compactctl.walked import compact_walked

    assert fmt.walk is not None
    lines = fmt.walk(opener(job.source), job.source, read.on_error == "skip")
    required = list(gates.require)
    facts = unique_facts([*required, *lines.declared_facts()])
    if gates.strict_facts:  # the input's figures first: a missing fact writes nothing
        before = measure([("", (message for message, _ in lines()))], counter, facts)
        check_facts_present(file_report(job.name, fmt.name, before, None, required), job.source)
    measured: list[tuple[Measure, Measure]] = []
    changed: list[bool] = []

    def run(write: Callable[[Message, bytes | None], object]) -> None:
        def noted(message: Message, line: bytes | None) -> object:
            if line is None:  # a message a step made or changed (an unchanged one keeps its line)
                changed.append(True)
            return write(message, line)

        measured.append(compact_walked(lines, steps, strategies, counter, facts, noted))

    def unchanged() -> bool:
        before, after = measured[0]
        # A line --on-error skip left out makes the output differ from the input: it is written.
        same = not changed and not lines.skipped
        return same and (before.tokens, before.messages) == (after.tokens, after.messages)

    if job.target is None:  # --dry-run: the figures, nothing written
        run(lambda message, line: None)
    else:
        # Nothing changed: the temporary copy is dropped, and the target keeps what it had.
        with contextlib.suppress(_NothingChanged):
            write_atomic(
                job.target,
                lambda file: _walk_unless_unchanged(run, file, lines, unchanged, job, write_unchanged),
                [job.source],
            )
    before, after = measured[0]
    report = file_report(job.name, fmt.name, before, after, required, SummarizerUsage(), {}, lines.skipped or ())
    if unchanged():
        reason = unchanged_reason([m for m, _ in lines()], counter, _thresholds(steps, strategies))
        notes = (
            report.notes
            if write_unchanged
            else [*report.notes, f"{reason}; no copy written (--write-unchanged writes one)"]
        )
        report = dataclasses.replace(report, unchanged_reason=reason, notes=notes)
    return FileCompaction(report, [], [])


class _NothingChanged(Exception):
    """A walked compaction changed nothing: its temporary copy is dropped, not renamed over the target."""


def _walk_unless_unchanged(
    run: Callable[[Callable[[Message, bytes | None], object]], None],
    file: Any,
    lines: Walk,
    unchanged: Callable[[], bool],
    job: Job,
    write_unchanged: bool,
) -> None:
    run(lambda message, line: file.write(lines.line(message, line)))
    if unchanged() and not write_unchanged and job.target != STDIO:
        raise _NothingChanged


def replace_in_database(source: str, fmt: Format, transcripts: list[Transcript]) -> None:
    """``--in-place``: the compacted sessions replace theirs in one transaction; a failure changes nothing."""
    import sqlite3
    from contextlib import closing

    if fmt.replace_sessions is None:
        raise InputError(
            f"`in_place` replaces sessions in an Agents SDK database; this file reads as {fmt.name}", source
        )
    try:
        with closing(sqlite3.connect(source, isolation_level=None)) as connection:
            connection.execute("BEGIN IMMEDIATE")  # the write lock first: the app's own writes wait for us
            try:
                fmt.replace_sessions(connection, transcripts, source)
            except BaseException:
                connection.execute("ROLLBACK")
                raise
            connection.execute("COMMIT")
    except sqlite3.Error as error:
        raise InputError(f"cannot update the database: {error}", source) from None
