"""``report``, one file or a before/after pair: its figures, and its recorded usage calibrated."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, NamedTuple

from compactctl.config import DatabaseOptions, GateOptions, InputOptions, RecordedOptions
from compactctl.errors import InputError
from compactctl.facts import fold
from compactctl.files.io import STDIO, UNWRITTEN, read_source, sniffed
from compactctl.formats import Format, load_records, records_of
from compactctl.formats.records import Record, SkippedLine, kept_records, skip_list
from compactctl.reporting import FileReport, Labelled, MessageSource, check_facts_present, file_report, measure
from compactctl.tokens import TokenCounter

# Said of a subagent's file reported with its session's (``report_pair``'s ``billed_with_session``).
WITH_SESSION = "a subagent's file: its calls are billed, and calibrated, in its session's report (its api_calibration)"


class Opened(NamedTuple):
    """A file as ``report`` reads it: its format, a way to walk its (label, messages) pairs as often
    as needed, and its records when it was read whole (None when streamed)."""

    format: Format
    walk: Callable[[], Iterator[MessageSource]]
    records: list[Record] | None


def open_transcripts(
    source: str,
    format: str = "auto",
    skipped: list[SkippedLine] | None = None,
    database: DatabaseOptions = DatabaseOptions(),
    compacted: bool = False,
) -> Opened:
    """The file sniffed once and read once: a file its format streams (chat JSON Lines) a line at
    a time, so memory stays bounded by the largest line; other layouts whole. With a ``skipped``
    list, unreadable lines are left out and listed there. With a ``database.session``, only that session
    of a database (``compacted``: its compacted copy where the database holds one, as ``compact
    -o`` writes it beside the original).
    """
    known = sniffed(source, format)
    if known is not None:
        database.check_session(known, source)
    stream = known.stream if known is not None else None
    if known is not None and stream is not None:

        def streamed() -> Iterator[Labelled]:
            with open(source, "rb") as file:
                yield "", stream(file, source, skipped)

        return Opened(known, streamed, None)
    records = records_of(read_source(source), source, skipped)
    fmt, transcripts = load_records(records, source, format, skipped, known)
    database.check_session(fmt, source)
    transcripts = fmt.session_of(transcripts, database.session, source, compacted)
    # What the transcripts were read from (the lines --on-error skip left out, out), for the recorded usage too.
    return Opened(fmt, lambda: iter(transcripts), kept_records(records, skipped))


def report_pair(
    name: str,
    before: str,
    after: str | None,
    counter: TokenCounter,
    *,
    read: InputOptions = InputOptions(),
    gates: GateOptions = GateOptions(),
    recorded: RecordedOptions = RecordedOptions(),
    database: DatabaseOptions = DatabaseOptions(),
    billed_with_session: bool = False,
) -> FileReport:
    """Report one existing file, or a before/after pair of files (of a database, the session named);
    ``billed_with_session``: a subagent's file whose session is reported too, which calibrates its calls."""
    required, format = list(gates.require), read.format
    skipped = skip_list(read.on_error)
    opened = open_transcripts(before, format, skipped, database)
    format_name, walk_before = opened.format.name, opened.walk
    measured_before = measure(walk_before(), counter, required)
    skipped_before = list(skipped or ())
    facts = [*required, *measured_before.facts_declared]
    if not {fold(fact) for fact in facts} <= measured_before.facts_found:
        # A fact may be declared after the message that holds its text: look once more.
        again = measure(walk_before(), counter, facts)
        measured_before = dataclasses.replace(measured_before, facts_found=again.facts_found)
    measured_after = None
    if after is not None:
        if after != STDIO and not Path(after).exists():
            raise InputError(f"no such file ({UNWRITTEN})", after)
        skipped_after = skip_list(read.on_error)
        measured_after = measure(
            open_transcripts(after, format, skipped_after, database, compacted=True).walk(), counter, facts
        )
        skipped_before += [dataclasses.replace(s, file=after) for s in skipped_after or ()]
    report = file_report(name, format_name, measured_before, measured_after, required, skipped_lines=skipped_before)
    if gates.strict_facts:
        check_facts_present(report, before)
    if billed_with_session:
        return dataclasses.replace(report, notes=[*report.notes, WITH_SESSION])
    calibrated = recorded_report(before, opened, recorded.claude_tokens)
    if calibrated is None:
        return report
    # The calibration's warnings (a held-out error over 5 %, an unexplained gap) are said with the report.
    warned = [f"calibration: {w}" for w in calibrated.get("calibration", {}).get("warnings", [])]
    return dataclasses.replace(report, api_calibration=calibrated, notes=[*report.notes, *warned])


def recorded_report(source: str, opened: Opened, claude_tokens: str = "fitted") -> dict[str, Any] | None:
    """The calibrated figures of a producer's session that records its usage; None for other files."""
    from compactctl.calibration import session_report
    from compactctl.recorded import read_recorded

    fmt = opened.format
    if not fmt.carries_usage or source == STDIO:
        return None
    # The records the report was read from: the recorded calls are read from the same parse.
    records = opened.records if opened.records is not None else records_of(read_source(source), source)
    session = read_recorded(fmt.name, records, source)
    if session is None or not session.calls:
        return None
    return session_report(session, fmt.name, claude_tokens)
