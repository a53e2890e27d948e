"""``report``, one file or a before/after pair: its figures, and its recorded usage calibrated."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator
from typing import Any

from compactctl.config import GateOptions, InputOptions, RecordedOptions
from compactctl.facts import fold
from compactctl.files.io import STDIO, first_line_is_chat, read_source
from compactctl.formats import chat, load_records, records_of
from compactctl.formats.records import Record, SkippedLine, kept_records, skip_list
from compactctl.reporting import FileReport, Labelled, Measured, check_facts_present, file_report, measure
from compactctl.tokens import TokenCounter


def open_transcripts(
    source: str, format: str = "auto", skipped: list[SkippedLine] | None = None
) -> tuple[str, Callable[[], Iterator[Measured]], list[Record]]:
    """The file's format, a way to walk its (label, messages) pairs as often as needed, and the
    records they were read from (none for a chat file streamed).

    Chat JSON Lines files are streamed a line at a time, so memory stays bounded by
    the largest line; other layouts are read whole. With a ``skipped`` list, unreadable
    lines are left out and listed there, and out of the records.
    """
    if source != STDIO and format in ("auto", chat.NAME) and first_line_is_chat(source):

        def stream() -> Iterator[Labelled]:
            with open(source, "rb") as file:
                yield "", chat.stream(file, source, skipped)

        return chat.NAME, stream, []
    records = records_of(read_source(source), source, skipped)
    fmt, transcripts = load_records(records, source, format, skipped)
    return fmt.name, lambda: iter(transcripts), kept_records(records, skipped)


def report_pair(
    name: str,
    before: str,
    after: str | None,
    counter: TokenCounter,
    *,
    read: InputOptions = InputOptions(),
    gates: GateOptions = GateOptions(),
    recorded: RecordedOptions = RecordedOptions(),
) -> FileReport:
    """Report one existing file, or a before/after pair of files."""
    required, format = list(gates.require), read.format
    skipped = skip_list(read.on_error)
    format_name, walk_before, records = open_transcripts(before, format, skipped)
    measured_before = measure(walk_before(), counter, required)
    skipped_before = list(skipped or ())
    facts = [*required, *measured_before.facts_declared]
    if not {fold(fact) for fact in facts} <= measured_before.facts_found:
        # A fact may be declared after the message that holds its text: look once more.
        again = measure(walk_before(), counter, facts)
        measured_before = dataclasses.replace(measured_before, facts_found=again.facts_found)
    measured_after = None
    if after is not None:
        skipped_after = skip_list(read.on_error)
        _, walk_after, _ = open_transcripts(after, format, skipped_after)
        measured_after = measure(walk_after(), counter, facts)
        skipped_before += [dataclasses.replace(s, file=after) for s in skipped_after or ()]
    report = file_report(name, format_name, measured_before, measured_after, required, skipped_lines=skipped_before)
    if gates.strict_facts:
        check_facts_present(report, before)
    calibrated = recorded_report(before, format_name, records, recorded.claude_tokens)
    if calibrated is None:
        return report
    # The calibration's warnings (a held-out error over 5 %, an unexplained gap) are said with the report.
    warned = [f"calibration: {w}" for w in calibrated.get("calibration", {}).get("warnings", [])]
    return dataclasses.replace(report, api_calibration=calibrated, notes=[*report.notes, *warned])


def recorded_report(
    source: str, format_name: str, records: list[Record], claude_tokens: str = "fitted"
) -> dict[str, Any] | None:
    """The calibrated figures of a producer's session that records its usage; None for other files.

    Read from the records the transcript was read from (without the lines ``--on-error skip`` left out).
    """
    from compactctl.calibration import session_report
    from compactctl.recorded import read_recorded

    if format_name not in ("claude-code", "codex") or source == STDIO:
        return None
    session = read_recorded(format_name, records, source)
    if session is None or not session.calls:
        return None
    return session_report(session, format_name, claude_tokens)
