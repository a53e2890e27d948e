"""``replay``, one file: each transcript replayed on its own, a chat file walked, a recorded session in API units."""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING

from compactctl.config import InputOptions, RecordedOptions
from compactctl.errors import InputError
from compactctl.files.io import STDIO, opener, read_source, sniffed
from compactctl.formats import Format, Walk, load_records, records_of
from compactctl.formats.records import Record, SkippedLine, kept_records, skip_list
from compactctl.replay.prices import Prices, PriceTable
from compactctl.replay.results import FileReplay
from compactctl.replay.simulate import aggregate, replay_streamed
from compactctl.replay.triggers import Scenario
from compactctl.strategies import StrategyOptions
from compactctl.summarizers import Summarizer
from compactctl.tokens import TokenCounter
from compactctl.transcript import Message

if TYPE_CHECKING:
    from compactctl.replay.fitted_thresholds import FileEvidence
    from compactctl.replay.recorded import RecordedReplay


def replay_file(
    source: str,
    name: str,
    grid: Sequence[Scenario],
    strategies: StrategyOptions,
    counter: TokenCounter,
    prices: Prices,
    summarizer: Summarizer | None = None,
    stage_marker: re.Pattern[str] | None = None,
    fallback_prices: Prices | None = None,
    price_table: PriceTable | None = None,
    *,
    read: InputOptions = InputOptions(),
    recorded_options: RecordedOptions = RecordedOptions(),
) -> FileReplay:
    """Read one file and replay each transcript in it on its own (a tau-bench file holds 200 runs).

    A Claude Code or Codex file that records its usage is replayed in the API's units instead
    (``replay.recorded``): calibrated on that usage, each call priced by the model it names
    (``fallback_prices``, from ``--model-pricing``, for a model the table lacks).
    """
    replay_of = functools.partial(
        replay_streamed, settings=grid, options=strategies, counter=counter, prices=prices,
        summarizer=summarizer, stage_marker=stage_marker,
    )  # fmt: skip
    known = sniffed(source, read.format)
    if known is not None and known.walk is not None:
        # One transcript a line at a time: memory is the contexts replayed, not the file.
        skipped_lines: list[SkippedLine] = []
        lines = known.walk(opener(source), source, read.on_error == "skip")
        try:
            rows = replay_of(_walk_messages(lines, skipped_lines), facts=lines.declared_facts())
        except _NothingStreamed:
            pass
        else:
            chart = [row.context_per_call for row in rows]
            return FileReplay(name, known.name, 1, aggregate([rows]), "", chart, skipped_lines=tuple(skipped_lines))
    skipped = skip_list(read.on_error)
    records = records_of(read_source(source), source, skipped)
    fmt, transcripts = load_records(records, source, read.format, skipped, known)
    records = kept_records(records, skipped)  # what the transcripts were read from, for the recorded usage too
    recorded = _recorded_replay(
        records, source, fmt, grid, strategies, price_table, fallback_prices, summarizer, stage_marker,
        recorded_options.claude_tokens,
    )  # fmt: skip
    if recorded is not None:
        chart = [row.context_per_call for row in recorded.settings]
        return FileReplay(name, fmt.name, 1, recorded.settings, "", chart, recorded, tuple(skipped or ()))
    from compactctl.model_input import model_input

    # What the model is sent when the producer's client resumes each (model_input), as compact and report count.
    runs = [replay_of(functools.partial(iter, model_input(t))) for t in transcripts]
    longest = max(range(len(runs)), key=lambda i: runs[i][0].calls, default=0)
    label = transcripts[longest].label if transcripts else ""
    chart = [row.context_per_call for row in runs[longest]] if runs else []
    return FileReplay(
        name, fmt.name, len(transcripts), aggregate(runs), label, chart, skipped_lines=tuple(skipped or ())
    )


class _NothingStreamed(Exception):
    """A chat file whose walk gave no message: read whole instead, so its error (or empty result) is the usual one."""


def _walk_messages(lines: Walk, skipped: list[SkippedLine]) -> Callable[[], Iterator[Message]]:
    """A walked file's messages a line at a time, as its format's ``read`` gives them;
    ``skipped`` lists the lines ``--on-error skip`` left out, as a whole read lists them.
    A walk that gives no message raises ``_NothingStreamed``: such a file is read whole,
    for the usual error or result."""

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
    fmt: Format,
    grid: Sequence[Scenario],
    strategies: StrategyOptions,
    table: PriceTable | None,
    fallback: Prices | None,
    summarizer: Summarizer | None,
    stage_marker: re.Pattern[str] | None,
    claude_tokens: str,
) -> RecordedReplay | None:
    from compactctl.recorded import read_recorded
    from compactctl.replay.prices import shipped_prices
    from compactctl.replay.recorded import replay_recorded

    if not fmt.carries_usage:
        return None
    session = read_recorded(fmt.name, records, source)
    if session is None or not session.has_usage:
        return None
    return replay_recorded(
        session, fmt.name, grid, strategies, table or shipped_prices(), fallback, summarizer, stage_marker,
        claude_tokens=claude_tokens,
    )  # fmt: skip


def producer_and_model(source: str, format_name: str | None = None) -> tuple[str, str | None, FileEvidence] | None:
    """(producer, the model its first call names, what it shows of its window and trigger) of a
    Claude Code or Codex file that records its usage."""
    from compactctl.recorded import read_recorded
    from compactctl.replay.fitted_thresholds import file_evidence

    if source == STDIO:
        return None
    try:
        known = sniffed(source, format_name or "auto")
        if known is not None and not known.carries_usage:
            return None  # told by its first lines: a file that records no usage is not read whole for it
        records = records_of(read_source(source), source, None)
        fmt, _ = load_records(records, source, format_name or "auto", None, known)
    except (InputError, OSError):
        return None  # the replay itself says what is wrong with it
    if not fmt.carries_usage:
        return None
    session = read_recorded(fmt.name, records, source)
    if session is None or not session.has_usage:
        return None
    model = next((c.model for context in session.contexts for c in context.calls if c.model), None)
    return fmt.name, model, file_evidence(session)
