"""``compactctl replay``: replay transcripts as if live and compare when (and how) to compact."""

from __future__ import annotations

import itertools
import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Group
from rich.table import Table
from rich.text import Text

from compactctl.cli.exit import build_document, finish, handle_errors
from compactctl.cli.markup import escape
from compactctl.cli.options import (
    ConfigPath,
    Inputs,
    JsonOut,
    Quiet,
    Takes,
    command_settings,
    settings_for,
    strategy_takes,
)
from compactctl.cli.plot import check_plot, write_plot
from compactctl.cli.render import console as common_console
from compactctl.cli.render import fitted, progress_wanted, say_failures, stderr, write_json
from compactctl.compaction import check_steps
from compactctl.config import (
    BatchOptions,
    CountOptions,
    InputOptions,
    OutcomeOptions,
    RecordedOptions,
    StepsOptions,
)
from compactctl.files.io import STDIO, Job, expand_inputs, read_with_its_session
from compactctl.files.jobs import cores, run_jobs
from compactctl.files.replay import Opened, each_call_once, fit_first, replay_file
from compactctl.files.replay_apart import walker_for
from compactctl.replay.options import DEFAULT_THRESHOLDS, ReplayOptions
from compactctl.replay.price_source import source_label
from compactctl.replay.prices import Prices, load_prices, prices_for, with_summarizer_prices
from compactctl.replay.results import FileReplay, line_up, replay_json
from compactctl.replay.simulate import ScenarioResult, aggregate
from compactctl.replay.triggers import parse_thresholds, settings_grid, stage_pattern
from compactctl.settings import SettingDecl
from compactctl.summarizers.build import make_summarizer
from compactctl.summarizers.options import SummarizerOptions
from compactctl.tokens import counter_for

if TYPE_CHECKING:
    from compactctl.replay.fitted_thresholds import FittedThresholds

SPARKS = "▁▂▃▄▅▆▇█"


def takes() -> list[Takes]:
    """The groups of settings replay takes (a strategy's, only when it is a step)."""
    return [
        Takes(ReplayOptions),
        Takes(StepsOptions),
        Takes(InputOptions),
        Takes(CountOptions),
        Takes(RecordedOptions),
        Takes(BatchOptions),
        Takes(OutcomeOptions),
        # The trigger sets each strategy's threshold; prune's --mode was never offered here (it stubs).
        *strategy_takes(omit=("threshold", "mode")),
        Takes(SummarizerOptions),
    ]


def declared_settings() -> dict[str, SettingDecl]:
    """Replay's own, how files are read, every strategy's and the summarizer's."""
    return command_settings(takes())


@handle_errors
def replay(
    inputs: Inputs,
    as_json: JsonOut = False,
    quiet: Quiet = False,
    config: ConfigPath = None,
    **given: Any,
) -> None:
    """Replay transcripts call by call and compare compaction settings with no compaction at all.

    Each assistant message is a model call whose input is the context held then (plus 3 tokens
    of reply priming). For each setting:
    calls, compactions, peak and mean context, input, cached and cache-write tokens, output tokens,
    summarizer use, estimated cost (prompt caching included) and facts lost.
    """
    settings = settings_for(config, given, takes())
    steps = settings.of(StepsOptions).strategy
    check_steps(steps)
    replaying, summarizer = settings.of(ReplayOptions), settings.of(SummarizerOptions)
    marker = stage_pattern(replaying.stage_marker)
    use_stage = replaying.stage or marker is not None
    thresholds = parse_thresholds(list(replaying.thresholds))
    read = settings.of(InputOptions)
    fitted: FittedThresholds | None = None
    thresholds_said: str | None = None
    read_first: dict[str, Opened] = {}
    if not thresholds and not use_stage:
        # Thresholds that fit the first file that reads: its producer's own auto-compact point on the model's
        # window. That file is read now, once: its job replays what was read (standard input too: it is read
        # whole anyway).
        listed = [(source, name) for source, name, _ in expand_inputs(inputs)]
        first = fit_first(listed, read, several=len(listed) > 1)
        fitted, thresholds_said, read_first = first.fitted, first.why, first.opened
        thresholds = fitted.thresholds if fitted is not None else list(DEFAULT_THRESHOLDS)
    table = load_prices(replaying.prices)
    prices = prices_for(
        table,
        replaying.model_pricing,
        input=replaying.price_in,
        cached_input=replaying.price_cached,
        cache_write=replaying.price_write,
        output=replaying.price_out,
        min_cached_tokens=replaying.cache_min_tokens,
    )
    prices = with_summarizer_prices(prices, table, summarizer.summarizer, summarizer.model)
    plot = Path(replaying.plot) if replaying.plot is not None else None
    if plot is not None:
        check_plot(plot)
    grid = settings_grid(thresholds, use_stage, list(steps))
    counter = counter_for(settings.of(CountOptions).encoding)
    summarizing = make_summarizer(summarizer, counter)
    recorded, strategies = settings.of(RecordedOptions), settings.strategies()
    # A file named twice (a folder and a file in it, or twice on the line) is replayed, and billed, once.
    distinct: dict[str, tuple[str, str]] = {}
    for source, name, _ in expand_inputs(inputs):
        distinct.setdefault(source if source == STDIO else os.path.realpath(source), (source, name))
    expanded = list(distinct.values())
    sources = {source for source, _ in expanded}
    # A subagent's calls are billed and replayed with its session (recorded/claude_code.py): not twice.
    found = [Job(source, None, name) for source, name in expanded if not read_with_its_session(source, sources)]
    # --jobs runs files at once; a single file's settings are walked in that many processes instead
    # (0: one per core). Several files at once each walk theirs in one: the two are never nested.
    jobs = settings.of(BatchOptions).jobs

    def replayed(
        job: Job, billed_elsewhere: Mapping[str, str] | None = None, reverted: int | None = None
    ) -> FileReplay:
        return replay_file(
            job.source,
            job.name,
            grid,
            strategies,
            counter,
            prices,
            summarizing,
            marker,
            prices if replaying.model_pricing else None,
            table,
            read=read,
            recorded_options=recorded,
            opened=read_first.pop(job.source, None),
            walker=walker_for((jobs or cores()) if len(found) == 1 else 1),
            billed_elsewhere=billed_elsewhere,
            reverted=reverted,
        )

    done, failures = run_jobs(found, lambda job: (job, replayed(job)), jobs, progress_wanted(quiet))
    # A call two files hold (a Claude Code 1.x resume copies the session it resumes) is billed in one of them; a turn
    # a Codex revert dropped (a later rollout of the thread keeps its file only up to it) is off the live thread.
    results = each_call_once(done, replayed)
    label = inputs[0] if len(inputs) == 1 else ", ".join(inputs)
    body = replay_json(results)
    body["total"]["thresholds_from"] = thresholds_said if fitted is not None else None
    outcome = settings.of(OutcomeOptions)
    doc = build_document("replay", found, body["files"], failures, outcome, total=body["total"])
    say_failures(entry for entry in doc["files"] if entry["status"] == "failed")
    unread = recorded.unread_note((r.format, r.api is not None) for r in results)
    for note in [*unused_flags(results, replaying, settings.of(CountOptions).encoding, "encoding" in settings.flagged),
                 *([unread] if unread and results else [])]:  # fmt: skip
        stderr.print(f"[yellow]note:[/] {escape(note)}", soft_wrap=True)
    if as_json:
        write_json(doc)
    else:
        if results and not quiet:
            if thresholds_said is not None:
                common_console().print(f"note: {escape(thresholds_said)}", soft_wrap=True)
            render(results, label, prices, replaying.prices)
    if plot is not None and results:
        write_plot(plot, _chart_source(results))
        if not as_json:
            stderr.print(f"chart written to {plot}")
    finish(doc, outcome)


# The price figures a run overrides: read where a file's calls are priced at the run's model, not at their own.
PRICE_FLAGS = {
    "price_in": "--price-in", "price_cached": "--price-cached", "price_write": "--price-write",
    "price_out": "--price-out", "cache_min_tokens": "--cache-min-tokens",
}  # fmt: skip


def unused_flags(results: list[FileReplay], replaying: ReplayOptions, encoding: str, encoding_given: bool) -> list[str]:
    """Flags given that no file of the run read, said rather than ignored: a file that records its usage prices
    each call by the model it names (the price figures are for files that record none, --model-pricing for a model
    no source knows) and counts in the API's units (its own calibrated encoding, not --encoding)."""
    recorded = [r for r in results if r.api is not None]
    apis = [r.api for r in recorded if r.api is not None]
    if not recorded or len(recorded) < len(results):
        return []  # a file that records no usage reads them all
    notes = []
    # A recorded file reads --model-pricing (and the figures over it) only for a model no price source knows.
    fallback_used = replaying.model_pricing is not None and any(
        "(--model-pricing)" in note for api in apis for note in api.notes
    )
    flags = [flag for name, flag in PRICE_FLAGS.items() if getattr(replaying, name) is not None]
    if replaying.model_pricing is not None:
        flags.insert(0, "--model-pricing")
    if flags and not fallback_used:
        which = recorded[0].file if len(recorded) == 1 else f"each of the {len(recorded)} files"
        flags_said = ", ".join(flags)
        notes.append(
            f"{flags_said} not used: {which} records its usage, and each call is priced by the model it names "
            f"({source_label()}); --model-pricing prices only a model no source knows, and --prices FILE lays "
            "your own row over a listed one"
        )
    encodings = sorted({api.calibration.encoding for api in apis})
    if encoding_given and encoding not in encodings:
        notes.append(
            f"--encoding {encoding} not used: a file that records its usage is counted in the API's units, "
            f"calibrated on {', '.join(encodings)}"
        )
    return notes


def _chart_source(results: list[FileReplay]) -> FileReplay:
    """The file whose longest transcript has the most calls: the clearest picture of growth."""
    return max(results, key=lambda r: len(r.chart[0]) if r.chart else 0)


def render(results: list[FileReplay], label: str, prices: Prices, own_table: str | None = None) -> None:
    """The table, its caption, notes and chart; ``own_table``: the --prices FILE laid over the list prices."""
    console = common_console()
    rows = aggregate(line_up([r.settings for r in results]))
    transcripts = sum(r.transcripts for r in results)
    where = f"{results[0].file} ({results[0].format}" if len(results) == 1 else f"{label} ({len(results)} files"
    shown = results[0].prices if len(results) == 1 and results[0].prices is not None else prices  # the model named
    table = settings_table(rows, f"{where}, {transcripts} transcript(s))", shown, console.width)
    unpriced = sorted({m for r in results if r.api is not None for m in r.api.unpriced_models})
    if unpriced:  # before the table, where it is read: why the cost cells say "unpriced"
        from compactctl.replay.price_source import unpriced_note

        console.print(f"[yellow]note:[/] {escape(unpriced_note(unpriced, None))}", soft_wrap=True)
    api = results[0].api if len(results) == 1 else None
    if api is not None:
        basis = ", ".join(f"{_setting_name(row)}: {kind}" for row, kind in zip(rows, api.basis, strict=True))
        from compactctl.cli.render import held_out_error

        calibration = api.calibration
        table.caption = (
            f"in API input tokens; priced per call by the model it names ({source_label()}"
            f"{f', your rows from --prices {own_table} over it' if own_table else ''}); {basis} "
            f"(bill: from the reported usage; estimate: calibrated: {calibration.encoding} "
            f"x{calibration.ratio:g}, hidden prefix, "
            f"{held_out_error(calibration.held_out.calls, calibration.held_out.median, calibration.held_out.p90)})"
        )
        for note in api.notes:
            if not unpriced or not note.startswith("model "):
                stderr.print(f"[yellow]note:[/] {escape(note)}", soft_wrap=True)
    elif any(r.api is not None for r in results):
        recorded = sum(r.api is not None for r in results)
        table.caption = (
            f"{recorded} of {len(results)} files record their usage: replayed in API input tokens, each call "
            f"priced by the model it names (their recorded row is the bill, where the producer did not compact "
            f"also none; other rows are calibrated estimates); the others priced as {prices.model}. Per file: --json"
        )
    # The caption (what the rows are in, how they are priced) is said under the table at the console's width,
    # not wrapped inside the table's: a narrow table made a long footnote of short lines whatever COLUMNS was.
    caption, table.caption = table.caption, None
    console.print(fitted(table, console))
    if caption:
        console.print(Text.from_markup(str(caption)))
    shared = [r for r in results if r.shared_calls] if len(results) > 1 else []
    if shared:  # said where it is known: the file that made the copied calls is in the run (replay.copies)
        names = escape(", ".join(r.file for r in shared))
        stderr.print(
            f"[yellow]note:[/] {sum(r.shared_calls for r in shared)} billed call(s) of {names} are copies of another "
            "file's (a user's copy of a session, or Claude Code 1.x's --resume in a new file): each is billed once, "
            "in the file that made it; per file: --json",
            soft_wrap=True,
        )
    off = [r.api for r in results if r.api is not None and r.api.off_thread is not None and r.api.off_thread.calls]
    if len(results) > 1 and off:  # each file's note is in --json; the run's is said here
        stderr.print(f"[yellow]note:[/] {escape(off_thread_note(results))}", soft_wrap=True)
    why = non_monotonic_note(rows)
    if why:
        console.print(f"note: {why}", soft_wrap=True)
    source = _chart_source(results)
    console.print(chart(source, console.width))


def off_thread_note(results: list[FileReplay]) -> str:
    """How many of a run's billed calls, and how much of its bill, were off the live thread, and in which files."""
    apis = [r.api for r in results if r.api is not None]
    off = [(r.file, r.api.off_thread) for r in results if r.api is not None and r.api.off_thread is not None]
    off = [(file, apart) for file, apart in off if apart.calls]
    calls, billed = sum(apart.calls for _, apart in off), sum(api.bill.calls for api in apis)
    costs: list[float] = [apart.cost for _, apart in off if apart.cost is not None]
    bills: list[float] = [api.bill.cost for api in apis if api.bill.cost is not None]
    cost, bill = sum(costs, 0.0), sum(bills, 0.0)
    # Any file unpriced: no share said.
    share = (
        f" (${cost:.4f}, {cost / bill:.1%} of the bill)"
        if len(costs) == len(off) and len(bills) == len(apis) and bill
        else ""
    )
    return (
        f"{calls} of {billed} billed calls{share} were off the live thread, in {', '.join(f for f, _ in off)} "
        "(branches a rewind, a revert or an edited prompt left): every row carries them as billed; the rows simulate "
        "the live thread; per file: --json"
    )


def non_monotonic_note(rows: list[ScenarioResult]) -> str | None:
    """Why a higher threshold can compact more often than a lower one, said where it happens."""
    by_threshold = sorted((r for r in rows if r.trigger == "threshold" and r.threshold), key=lambda r: r.threshold or 0)
    pairs = [(a, b) for a, b in itertools.pairwise(by_threshold) if b.compactions > a.compactions]
    if not pairs:
        return None
    low, high = pairs[0]
    return (
        f"compactions are not monotonic in the threshold ({low.compactions:,} at {_tokens(low.threshold or 0)}, "
        f"{high.compactions:,} at {_tokens(high.threshold or 0)}): after each compaction the context grows again "
        "from what the strategy kept, and a compaction that leaves it over the threshold ('over after') fires "
        "again at the next call, so a threshold near the kept size compacts at almost every call while a lower "
        "one that cuts deeper waits longer before the next; 'calls over' counts the calls spent above each threshold"
    )


def _tokens(value: float) -> str:
    if value >= 1_000_000:
        return f"{value / 1_000_000:.2f}M"
    if value >= 100_000:
        return f"{value / 1000:.0f}k"
    return f"{value:,.0f}"


def _money(value: float | None, top: float) -> str:
    """Dollars with the same number of decimals down a row: cents for big bills, more for small ones."""
    if value is None:
        return "[yellow]unpriced[/]"  # a model no price source knows: never shown as $0
    return f"${value:,.2f}" if top >= 10 else f"${value:,.4f}"


def _setting_name(row: ScenarioResult) -> str:
    if row.threshold is None:
        return row.trigger
    return f"{row.trigger} {_tokens(row.threshold)}"


def _cells(row: ScenarioResult, base: ScenarioResult, top_cost: float) -> dict[str, str]:
    """The figures of one setting as table cells, cost also as a change against the baseline."""
    change = "" if row is base or not base.cost or row.cost is None else f"{(row.cost / base.cost - 1) * 100:+.1f}%"
    return {
        "strategy": row.strategy,
        "calls": f"{row.calls:,}",
        "compactions": f"{row.compactions:,}",
        "over after": f"[yellow]{row.over_threshold_after_compaction:,}[/]"
        if row.over_threshold_after_compaction
        else "0",
        "calls over": f"{row.calls_over_threshold:,}" if row.threshold is not None else "-",
        "peak ctx": _tokens(row.peak_context),
        "mean ctx": _tokens(row.mean_context),
        "input": _tokens(row.input_tokens),
        "cached": _tokens(row.cached_tokens),
        "cache write": _tokens(row.cache_write_tokens),
        "output": _tokens(row.output_tokens),
        "summarizer": f"{row.summarizer_calls} / {_tokens(row.summarizer_tokens)}" if row.summarizer_calls else "-",
        "cost": _money(row.cost, top_cost),
        "vs none": change,
        "facts lost": f"[red]{row.facts_lost}[/]" if row.facts_lost else "0",
    }


def settings_table(rows: list[ScenarioResult], title: str, prices: Prices, width: int = 200) -> Table:
    """The settings side by side, the baseline first: one column each when they fit, else one row each."""
    priced = (
        f"priced as {prices.model}: ${prices.input:g}/M in, ${prices.cached_input:g}/M cached "
        f"({prices.cache_discount:.2g}x), ${prices.cache_write:g}/M cache write, ${prices.output:g}/M out "
        f"({prices.source or source_label()})"
    )
    table = Table(title=title, caption=priced, title_justify="left", caption_justify="left")
    top_cost = max((row.cost for row in rows if row.cost is not None), default=0.0)
    cells = [_cells(row, rows[0], top_cost) for row in rows]
    metrics = list(cells[0]) if cells else []
    if 14 + 13 * len(rows) <= width:  # settings as columns: reads as "side by side with no compaction"
        table.add_column("")
        for row in rows:
            table.add_column(_setting_name(row), justify="right")
        for metric in metrics:
            table.add_row(metric, *(cell[metric] for cell in cells))
        return table
    table.add_column("trigger")
    for metric in metrics:
        table.add_column(metric, justify="left" if metric == "strategy" else "right")
    for row, cell in zip(rows, cells, strict=True):
        table.add_row(_setting_name(row), *cell.values())
    return table


def sparkline(values: list[int], width: int, top: int, threshold: int | None = None) -> Text:
    """Context size per call in ``width`` cells (each the max of its calls); cells over the threshold in red."""
    text = Text()
    if not values or width <= 0:
        return text
    cells = min(width, len(values))
    for cell in range(cells):
        bucket = values[cell * len(values) // cells : (cell + 1) * len(values) // cells] or [0]
        peak = max(bucket)
        level = min(len(SPARKS) - 1, peak * len(SPARKS) // (top + 1)) if top else 0
        over = threshold is not None and peak > threshold
        text.append(SPARKS[level], style="red" if over else "cyan")
    return text


def chart(source: FileReplay, console_width: int) -> Group:
    """A sparkline per setting, on one scale, for the transcript with the most calls."""
    names = [
        f"{_setting_name(row)} {row.strategy if row.strategy != 'none' else ''}".strip() for row in source.settings
    ]
    pad = max(map(len, names), default=0)
    top = max((max(series, default=0) for series in source.chart), default=0)
    width = max(10, console_width - pad - 16)
    which = f" in {source.chart_label}" if source.chart_label else ""
    lines: list[Text] = [
        Text(f"context per call{which} of {source.file} (one scale, max {top:,} tokens; red: over the threshold)")
    ]
    for name, row, series in zip(names, source.settings, source.chart, strict=True):
        line = Text(name.ljust(pad) + "  ")
        line.append_text(sparkline(series, width, top, row.threshold))
        line.append(f"  peak {_tokens(max(series, default=0))}")
        lines.append(line)
    return Group(*lines)
