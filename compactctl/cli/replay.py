"""``compactctl replay``: replay transcripts as if live and compare when (and how) to compact."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import orjson
import typer
from rich.console import Group
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from compactctl.batch import Job, expand_inputs, run_jobs
from compactctl.cli.common import (
    ConfigPath,
    Encoding,
    FormatOpt,
    Inputs,
    Jobs,
    JsonOut,
    OnError,
    Quiet,
    handle_errors,
    progress_wanted,
    settings_for,
    stderr,
)
from compactctl.cli.common import (
    console as common_console,
)
from compactctl.cli.options import (
    Api,
    BaseUrl,
    Cache,
    CacheDir,
    HeadLines,
    KeepPattern,
    KeepRecent,
    KeepTurns,
    Model,
    PromptFile,
    Redact,
    StrategySteps,
    SummarizerName,
    SummaryBackoff,
    SummaryInputMaxTokens,
    SummaryMaxTokens,
    SummaryRetries,
    SummaryRole,
    SummaryTimeout,
    TailLines,
    ToolMaxTokens,
    Window,
)
from compactctl.compact import check_steps
from compactctl.errors import EXIT_INPUT, EXIT_OK, EXIT_SUMMARIZER
from compactctl.replay import (
    FileReplay,
    Prices,
    SettingResult,
    aggregate,
    check_plot,
    load_prices,
    parse_thresholds,
    prices_for,
    replay_file,
    replay_json,
    settings_grid,
    stage_pattern,
    with_summarizer_prices,
    write_plot,
)
from compactctl.summarizers.build import make_summarizer
from compactctl.tokens import counter_for

TRIGGER_PANEL = "When to compact"
PRICE_PANEL = "Prices"
OUT_PANEL = "Output"
DEFAULT_THRESHOLDS = (8000, 16000, 32000)
SPARKS = "▁▂▃▄▅▆▇█"


@handle_errors
def replay(
    inputs: Inputs,
    threshold: Annotated[
        list[str] | None,
        typer.Option(
            "--threshold",
            "-t",
            help="Compact before the next call when the last call's context exceeded N tokens. "
            "Several values (8000,16000,32000 or repeated) are compared side by side.  \\[default: 8000,16000,32000 "
            "when no stage trigger is given]",
            metavar="N[,N...]",
            rich_help_panel=TRIGGER_PANEL,
        ),
    ] = None,
    stage_marker: Annotated[
        str | None,
        typer.Option(
            help="A message whose text matches REGEX ends a stage: compact before the next call.",
            metavar="REGEX",
            rich_help_panel=TRIGGER_PANEL,
        ),
    ] = None,
    stage: Annotated[
        bool,
        typer.Option(
            "--stage",
            help="Compact at compactctl.stage_end annotations (implied by --stage-marker).",
            rich_help_panel=TRIGGER_PANEL,
        ),
    ] = False,
    strategy: StrategySteps = None,
    keep_recent: KeepRecent = None,
    tool_max_tokens: ToolMaxTokens = None,
    head_lines: HeadLines = None,
    tail_lines: TailLines = None,
    keep_turns: KeepTurns = None,
    window: Window = None,
    keep_pattern: KeepPattern = None,
    summary_max_tokens: SummaryMaxTokens = None,
    summary_input_max_tokens: SummaryInputMaxTokens = None,
    summary_role: SummaryRole = None,
    summarizer: SummarizerName = None,
    model: Model = None,
    base_url: BaseUrl = None,
    api: Api = None,
    summary_timeout: SummaryTimeout = None,
    summary_retries: SummaryRetries = None,
    summary_backoff: SummaryBackoff = None,
    redact: Redact = None,
    cache: Cache = None,
    cache_dir: CacheDir = None,
    prompt_file: PromptFile = None,
    model_pricing: Annotated[
        str | None,
        typer.Option(
            "--model-pricing",
            help="Price as this model from the table.  \\[default: gpt-4o]",
            metavar="NAME",
            rich_help_panel=PRICE_PANEL,
        ),
    ] = None,
    prices_file: Annotated[
        Path | None,
        typer.Option(
            "--prices",
            help="Your own price table (JSON or TOML), laid over the shipped one.",
            metavar="FILE",
            rich_help_panel=PRICE_PANEL,
        ),
    ] = None,
    price_in: Annotated[
        float | None, typer.Option(help="USD per million input tokens.", min=0, rich_help_panel=PRICE_PANEL)
    ] = None,
    price_cached: Annotated[
        float | None,
        typer.Option(help="USD per million cached (cache-read) input tokens.", min=0, rich_help_panel=PRICE_PANEL),
    ] = None,
    price_write: Annotated[
        float | None,
        typer.Option(help="USD per million tokens written to the cache.", min=0, rich_help_panel=PRICE_PANEL),
    ] = None,
    price_out: Annotated[
        float | None, typer.Option(help="USD per million output tokens.", min=0, rich_help_panel=PRICE_PANEL)
    ] = None,
    cache_min_tokens: Annotated[
        int | None,
        typer.Option(
            help="Prompts shorter than this are not cached.  \\[default: the model's, e.g. 1024]",
            min=0,
            rich_help_panel=PRICE_PANEL,
        ),
    ] = None,
    plot: Annotated[
        Path | None,
        typer.Option(
            help="Write the context-size chart to FILE (.png or .svg; needs the plot extra).",
            metavar="FILE",
            rich_help_panel=OUT_PANEL,
        ),
    ] = None,
    format: FormatOpt = None,
    encoding: Encoding = None,
    as_json: JsonOut = False,
    on_error: OnError = None,
    jobs: Jobs = None,
    quiet: Quiet = False,
    config: ConfigPath = None,
) -> None:
    """Replay transcripts call by call and compare compaction settings with no compaction at all.

    Each assistant message is a model call whose input is the context held then (plus 3 tokens
    of reply priming). For each setting:
    calls, compactions, peak and mean context, input, cached and cache-write tokens, output tokens,
    summarizer use, estimated cost (prompt caching included) and facts lost.
    """
    settings = settings_for(
        config,
        strategy=strategy,
        keep_recent=keep_recent,
        tool_max_tokens=tool_max_tokens,
        head_lines=head_lines,
        tail_lines=tail_lines,
        keep_turns=keep_turns,
        window=window,
        keep_pattern=keep_pattern,
        summary_max_tokens=summary_max_tokens,
        summary_input_max_tokens=summary_input_max_tokens,
        summary_role=summary_role,
        summarizer=summarizer,
        model=model,
        base_url=base_url,
        api=api,
        summary_timeout=summary_timeout,
        summary_retries=summary_retries,
        summary_backoff=summary_backoff,
        redact=redact,
        cache=cache,
        cache_dir=cache_dir,
        prompt_file=prompt_file,
        format=format,
        encoding=encoding,
        on_error=on_error,
        jobs=jobs,
    )
    steps = settings["strategy"]
    check_steps(steps)
    marker = stage_pattern(stage_marker)
    use_stage = stage or marker is not None
    thresholds = parse_thresholds(threshold or [])
    if not thresholds and not use_stage:
        thresholds = list(DEFAULT_THRESHOLDS)
    table = load_prices(prices_file)
    prices = prices_for(
        table,
        model_pricing,
        input=price_in,
        cached_input=price_cached,
        cache_write=price_write,
        output=price_out,
        min_cached_tokens=cache_min_tokens,
    )
    prices = with_summarizer_prices(prices, table, settings)
    if plot is not None:
        check_plot(plot)
    grid = settings_grid(thresholds, use_stage, steps)
    counter = counter_for(settings["encoding"])
    summarizing = make_summarizer(settings, counter)
    found = [Job(source, None, name) for source, name, _ in expand_inputs(inputs)]
    results, failures = run_jobs(
        found,
        lambda job: replay_file(
            job.source,
            job.name,
            grid,
            settings,
            counter,
            prices,
            summarizing,
            marker,
            prices if model_pricing else None,
        ),
        settings["jobs"],
        progress_wanted(quiet) and not as_json,
    )
    label = inputs[0] if len(inputs) == 1 else ", ".join(inputs)
    per_file = len(found) > 1 or any(Path(given).is_dir() for given in inputs)
    if as_json:
        errors = [{"file": f.file, "error": f.error} for f in failures]
        sys.stdout.buffer.write(
            orjson.dumps(replay_json(label, results, errors, per_file), option=orjson.OPT_INDENT_2) + b"\n"
        )
    else:
        for failure in failures:
            stderr.print(f"[bold red]error:[/] {escape(failure.error)}", soft_wrap=True)
        if results and not quiet:
            render(results, label, prices)
    if plot is not None and results:
        write_plot(plot, _chart_source(results))
        if not as_json:
            stderr.print(f"chart written to {plot}")
    # A summarizer failure (exit 3) is never skipped: its figures would be missing, not zero.
    failed = any(f.exit_code == EXIT_SUMMARIZER or settings["on_error"] != "skip" for f in failures)
    raise typer.Exit(max(f.exit_code for f in failures) if failed else EXIT_OK if results else EXIT_INPUT)


def _chart_source(results: list[FileReplay]) -> FileReplay:
    """The file whose longest transcript has the most calls: the clearest picture of growth."""
    return max(results, key=lambda r: len(r.chart[0]) if r.chart else 0)


def render(results: list[FileReplay], label: str, prices: Prices) -> None:
    console = common_console()
    rows = aggregate([r.settings for r in results])
    transcripts = sum(r.transcripts for r in results)
    where = f"{results[0].file} ({results[0].format}" if len(results) == 1 else f"{label} ({len(results)} files"
    table = settings_table(rows, f"{where}, {transcripts} transcript(s))", prices, console.width)
    api = results[0].api if len(results) == 1 else None
    if api is not None:
        basis = ", ".join(f"{_setting_name(row)}: {kind}" for row, kind in zip(rows, api.basis, strict=True))
        calibration = api.calibration
        table.caption = (
            f"in API input tokens; priced per call by the model it names; {basis} (bill: from the reported "
            f"usage; estimate: calibrated: {calibration.encoding} x{calibration.ratio:g}, hidden prefix, "
            f"held-out per-call error median {calibration.held_out.median:.1%}, p90 {calibration.held_out.p90:.1%})"
        )
        for note in api.notes:
            stderr.print(f"[yellow]note:[/] {escape(note)}", soft_wrap=True)
    console.print(table)
    source = _chart_source(results)
    console.print(chart(source, console.width))


def _tokens(value: float) -> str:
    if value >= 1_000_000:
        return f"{value / 1_000_000:.2f}M"
    if value >= 100_000:
        return f"{value / 1000:.0f}k"
    return f"{value:,.0f}"


def _money(value: float, top: float) -> str:
    """Dollars with the same number of decimals down a row: cents for big bills, more for small ones."""
    return f"${value:,.2f}" if top >= 10 else f"${value:,.4f}"


def _setting_name(row: SettingResult) -> str:
    if row.threshold is None:
        return row.trigger
    return f"{row.trigger} {_tokens(row.threshold)}"


def _cells(row: SettingResult, base: SettingResult, top_cost: float) -> dict[str, str]:
    """The figures of one setting as table cells, cost also as a change against the baseline."""
    change = "" if row is base or not base.cost else f"{(row.cost / base.cost - 1) * 100:+.1f}%"
    return {
        "strategy": row.strategy,
        "calls": f"{row.calls:,}",
        "compactions": f"{row.compactions:,}",
        "over after": f"[yellow]{row.over_threshold_after_compaction:,}[/]"
        if row.over_threshold_after_compaction
        else "0",
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


def settings_table(rows: list[SettingResult], title: str, prices: Prices, width: int = 200) -> Table:
    """The settings side by side, the baseline first: one column each when they fit, else one row each."""
    priced = (
        f"priced as {prices.model}: ${prices.input:g}/M in, ${prices.cached_input:g}/M cached "
        f"({prices.cache_discount:.2g}x), ${prices.cache_write:g}/M cache write, ${prices.output:g}/M out"
    )
    table = Table(title=title, caption=priced, title_justify="left", caption_justify="left")
    top_cost = max((row.cost for row in rows), default=0.0)
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
