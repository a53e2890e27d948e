"""``replay``, one file: each transcript replayed on its own, a chat file walked, a recorded session in API units."""

from __future__ import annotations

import dataclasses
import functools
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from compactctl.config import InputOptions, RecordedOptions
from compactctl.errors import InputError
from compactctl.files.io import Job, opener, read_source, sniffed
from compactctl.formats import Format, Transcript, Walk, load_records, records_of
from compactctl.formats.records import Record, SkippedLine, kept_records, skip_list
from compactctl.model_input import model_input, owned_view
from compactctl.replay.copies import BilledKeys, billed_elsewhere, reverted_at
from compactctl.replay.prices import Prices, PriceTable
from compactctl.replay.results import FileReplay
from compactctl.replay.simulate import Walker, aggregate, replay_streamed, walk_in_step
from compactctl.replay.triggers import Scenario
from compactctl.strategies import StrategyOptions
from compactctl.summarizers import Summarizer
from compactctl.tokens import TokenCounter
from compactctl.transcript import Message

if TYPE_CHECKING:
    from compactctl.recorded import RecordedSession
    from compactctl.replay.fitted_thresholds import FittedThresholds
    from compactctl.replay.recorded import RecordedReplay


@dataclass(frozen=True)
class WholeFile:
    """A file replay reads whole: its format, transcripts, the records kept, and the usage it records."""

    fmt: Format
    transcripts: list[Transcript]
    records: list[Record]  # what the transcripts were read from (lines ``--on-error skip`` left out, out)
    skipped: list[SkippedLine] | None
    session: RecordedSession | None  # read where the format carries usage


@dataclass(frozen=True)
class Opened:
    """One input as replay's job reads it: its format told from its first records and, unless it is
    walked a line at a time, the whole file read (or the error that read raised, raised by the job)."""

    known: Format | None
    whole: WholeFile | None = None
    error: Exception | None = None


def read_whole(
    source: str,
    read: InputOptions,
    known: Format | None,
    billed_elsewhere: Mapping[str, str] | None = None,
    reverted: int | None = None,
) -> WholeFile:
    """``source`` parsed once, read as its format, and its recorded usage read when its format carries it
    (``billed_elsewhere``, ``reverted``: ``recorded.read_recorded``'s ``billed_elsewhere`` and ``reverted_at``)."""
    from compactctl.recorded import read_recorded

    skipped = skip_list(read.on_error)
    records = records_of(read_source(source), source, skipped)
    fmt, transcripts = load_records(records, source, read.format, skipped, known)
    records = kept_records(records, skipped)
    session = read_recorded(fmt.name, records, source, billed_elsewhere, reverted) if fmt.carries_usage else None
    return WholeFile(fmt, transcripts, records, skipped, session)


def read_ahead(source: str, read: InputOptions) -> Opened:
    """``source`` read before its job, for what the run needs of it first (the thresholds that fit it):
    sniffed, and read whole unless its first records tell it records no usage; its job then reads
    nothing again. An error is kept for the job to raise, where it is named with the file."""
    known = sniffed(source, read.format)
    if known is not None and not known.carries_usage:
        return Opened(known)  # told by its first lines: a file that records no usage is not read whole for it
    try:
        return Opened(known, read_whole(source, read, known))
    except (InputError, OSError) as error:
        return Opened(known, error=error)


@dataclass(frozen=True)
class FirstFit:
    """The thresholds fitted to the first input that reads (None: the defaults, and ``why``), and
    every input read ahead for them (their jobs replay what was read, or raise its error)."""

    fitted: FittedThresholds | None
    why: str  # where the thresholds come from: the fitted file, or why the defaults are used
    opened: dict[str, Opened]


def fit_first(inputs: Iterable[tuple[str, str]], read: InputOptions, several: bool) -> FirstFit:
    """The thresholds that fit the first input that can be read. One that cannot is passed over (its
    job names the error), so a stray file first on the line does not give the whole run the defaults."""
    opened: dict[str, Opened] = {}
    for source, name in inputs:
        one = opened[source] = read_ahead(source, read)
        if one.error is not None:
            continue
        fitted = fitted_to(one)
        if fitted is not None:
            return FirstFit(fitted, fitted.said(name if several else None), opened)
        fmt = one.whole.fmt if one.whole is not None else one.known
        if fmt is not None and fmt.auto_compact is None:
            why = f"{name} is {fmt.name}, whose producer has no auto-compact point"
        else:
            why = f"{name} records no usage to fit them to"
        return FirstFit(None, defaults_said(why), opened)
    return FirstFit(None, defaults_said("no input could be read to fit them to" if opened else "no input"), opened)


def defaults_said(why: str) -> str:
    from compactctl.replay.options import DEFAULT_THRESHOLDS

    return f"thresholds {', '.join(f'{t:,}' for t in DEFAULT_THRESHOLDS)}, the defaults: {why} (-t to choose)"


def fitted_to(opened: Opened) -> FittedThresholds | None:
    """The thresholds that fit a file that records its usage: its producer's own auto-compact point
    on the window of the model its first call names, and what the file shows of both."""
    from compactctl.replay.fitted_thresholds import file_evidence, fitted_thresholds

    whole = opened.whole
    session = whole.session if whole is not None else None
    if whole is None or session is None or not session.has_usage:
        return None
    model = next((c.model for context in session.contexts for c in context.calls if c.model), None)
    return fitted_thresholds(whole.fmt, model, file_evidence(session))


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
    opened: Opened | None = None,
    walker: Walker | None = None,
    billed_elsewhere: Mapping[str, str] | None = None,
    reverted: int | None = None,
) -> FileReplay:
    """Read one file and replay each transcript in it on its own (a tau-bench file holds 200 runs).

    A Claude Code or Codex file that records its usage is replayed in the API's units instead
    (``replay.recorded``): calibrated on that usage, each call priced by the model it names
    (``fallback_prices``, from ``--model-pricing``, for a model the table lacks). ``opened``: the
    file as ``read_ahead`` read it already (so it is sniffed and parsed once), else read here.
    ``walker``: how the settings of a file read whole walk its messages (``files.replay_apart``: in
    forked workers, where it pays); a file walked a line at a time is walked in step. ``billed_elsewhere``: the
    calls another file of the run made, replayed here as copies (``replay.copies``); ``reverted``: the line a later
    rollout of the file's thread keeps it up to, the calls past it off the live thread (``replay.copies``).
    """
    replay_of = functools.partial(
        replay_streamed, settings=grid, options=strategies, counter=counter, prices=prices,
        summarizer=summarizer, stage_marker=stage_marker,
    )  # fmt: skip
    if opened is None:
        opened = Opened(sniffed(source, read.format))
    if opened.error is not None:
        raise opened.error
    known = opened.known
    if opened.whole is None and known is not None and known.walk is not None:
        # One transcript a line at a time: memory is the contexts replayed, not the file.
        skipped_lines: list[SkippedLine] = []
        lines = known.walk(opener(source), source, read.on_error == "skip")
        try:
            rows = replay_of(
                _walk_messages(lines, skipped_lines), facts=lines.declared_facts(), client=owned_view(known)
            )
        except _NothingStreamed:
            pass
        else:
            chart = [row.context_per_call for row in rows]
            return FileReplay(name, known.name, 1, aggregate([rows]), "", chart, skipped_lines=tuple(skipped_lines))
    if billed_elsewhere or reverted is not None:
        whole = read_whole(source, read, known, billed_elsewhere, reverted)
    else:
        whole = opened.whole if opened.whole is not None else read_whole(source, read, known)
    fmt, transcripts, skipped = whole.fmt, whole.transcripts, whole.skipped
    recorded = _recorded_replay(
        whole, grid, strategies, price_table, fallback_prices, summarizer, stage_marker, recorded_options.claude_tokens,
        walker,
    )  # fmt: skip
    if recorded is not None:
        assert whole.session is not None
        chart = [row.context_per_call for row in recorded.settings]
        session = whole.session
        billed = BilledKeys(name, session.copy_keys(), session.calls, session.thread, session.continues)
        return FileReplay(
            name, fmt.name, 1, recorded.settings, "", chart, recorded, tuple(skipped or ()), billed=billed,
            shared_calls=whole.session.shared_calls,
        )  # fmt: skip
    named = named_prices(whole, price_table, prices)
    if named is not prices:
        replay_of = functools.partial(replay_of, prices=named)
    # What the model is sent when the producer's client resumes each (model_input), as compact and report count;
    # a simulated compaction too (its client's own context, Codex's, never folded and sent again: ``owned_view``).
    # The messages, not an iterator over them: a walker that forks needs them all (they are in memory anyway).
    runs = [
        replay_of(functools.partial(_same, model_input(t)), client=owned_view(fmt), walker=walker) for t in transcripts
    ]
    longest = max(range(len(runs)), key=lambda i: runs[i][0].calls, default=0)
    label = transcripts[longest].label if transcripts else ""
    chart = [row.context_per_call for row in runs[longest]] if runs else []
    return FileReplay(
        name, fmt.name, len(transcripts), aggregate(runs), label, chart, skipped_lines=tuple(skipped or ()),
        prices=named if named is not prices else None,
    )  # fmt: skip


def each_call_once(
    done: Sequence[tuple[Job, FileReplay]], again: Callable[[Job, Mapping[str, str], int | None], FileReplay]
) -> list[FileReplay]:
    """The files' replays with each billed call in one of them: a file holding calls another file of the run
    made (a Claude Code 1.x resume's copy, ``replay.copies``) replayed ``again`` with those as copies, and a rollout
    a later one of its thread keeps only part of (a Codex revert) with the calls past that part off the live thread."""
    billed = [(n, replayed.billed) for n, (_, replayed) in enumerate(done) if replayed.billed is not None]
    results = [replayed for _, replayed in done]
    keys = [keys for _, keys in billed]
    for (n, _), elsewhere, cut in zip(billed, billed_elsewhere(keys), reverted_at(keys), strict=True):
        if elsewhere or cut is not None:
            results[n] = again(done[n][0], elsewhere, cut)
    return results


def named_prices(whole: WholeFile, table: PriceTable | None, prices: Prices) -> Prices:
    """A file that records no usage but names its model (Codex's turn_context, Claude Code's responses) is
    priced at that model, as a recorded session's calls are; the run's ``prices`` where no source knows
    the model, or where the run overrode a figure."""
    from compactctl.replay.prices import shipped_prices
    from compactctl.tokens import provider_of

    session = whole.session
    model = next((c.model for x in session.contexts for c in x.calls if c.model), None) if session else None
    if model is None or prices.model.endswith("(overridden)"):
        return prices
    found = (table or shipped_prices()).find(model, provider_of(model))
    return prices if found is None else dataclasses.replace(found, summarizer=prices.summarizer)


def _same(messages: list[Message]) -> list[Message]:
    return messages


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
    whole: WholeFile,
    grid: Sequence[Scenario],
    strategies: StrategyOptions,
    table: PriceTable | None,
    fallback: Prices | None,
    summarizer: Summarizer | None,
    stage_marker: re.Pattern[str] | None,
    claude_tokens: str,
    walker: Walker | None = None,
) -> RecordedReplay | None:
    from compactctl.replay.prices import shipped_prices
    from compactctl.replay.recorded import replay_recorded

    session = whole.session
    if session is None or not session.has_usage:
        return None
    return replay_recorded(
        session, whole.fmt.name, grid, strategies, table or shipped_prices(), fallback, summarizer, stage_marker,
        claude_tokens=claude_tokens, walker=walker or walk_in_step,
    )  # fmt: skip
