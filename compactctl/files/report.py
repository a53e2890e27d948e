"""``report``, one file or a before/after pair: its figures, and its recorded usage calibrated."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator
from typing import Any

from compactctl.config import GateOptions, InputOptions, RecordedOptions
from compactctl.facts import fold
from compactctl.files.io import STDIO, first_line_is_chat, read_source
from compactctl.formats import chat, load
from compactctl.formats.records import SkippedLine, parse_records
from compactctl.reporting import FileReport, Labelled, MessageSource, check_facts_present, file_report, measure
from compactctl.tokens import TokenCounter


def open_transcripts(
    source: str, format: str = "auto", skipped: list[SkippedLine] | None = None
) -> tuple[str, Callable[[], Iterator[MessageSource]]]:
    """The file's format, and a way to walk its (label, messages) pairs, as often as needed.

    Chat JSON Lines files are streamed a line at a time, so memory stays bounded by
    the largest line; other layouts are read whole. With a ``skipped`` list, unreadable
    lines are left out and listed there.
    """
    if source != STDIO and format in ("auto", chat.NAME) and first_line_is_chat(source):

        def stream() -> Iterator[Labelled]:
            with open(source, "rb") as file:
                yield "", chat.stream(file, source, skipped)

        return chat.NAME, stream
    fmt, transcripts = load(read_source(source), source, format, skipped)
    return fmt.name, lambda: iter(transcripts)


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
    skipped: list[SkippedLine] | None = [] if read.on_error == "skip" else None
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
    if gates.strict_facts:
        check_facts_present(report, before)
    calibrated = recorded_report(before, format_name, recorded.claude_tokens)
    if calibrated is None:
        return report
    # The calibration's warnings (a held-out error over 5 %, an unexplained gap) are said with the report.
    warned = [f"calibration: {w}" for w in calibrated.get("calibration", {}).get("warnings", [])]
    return dataclasses.replace(report, api_calibration=calibrated, notes=[*report.notes, *warned])


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
