"""``compactctl compact``: run strategy steps over files and folders, write, report."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import orjson
import typer

from compactctl.batch import STDIO, plan, run_jobs, write_atomic
from compactctl.cli.common import (
    ConfigPath,
    Encoding,
    FailUnder,
    FormatOpt,
    Inputs,
    Jobs,
    JsonOut,
    OnError,
    Output,
    Quiet,
    Require,
    ToFormat,
    announce_written,
    emit,
    exit_code,
    handle_errors,
    progress_wanted,
    settings_for,
)
from compactctl.compact import check_steps, compact_file
from compactctl.formats import get_format
from compactctl.strategies import STRATEGIES
from compactctl.tokens import counter_for

STRATEGY_PANEL = "Strategies"
STRATEGY_HELP = "Strategy step, repeatable, run in order: " + ", ".join(STRATEGIES) + ".  [default: window]"


@handle_errors
def compact(
    inputs: Inputs,
    output: Output = None,
    strategy: Annotated[
        list[str] | None, typer.Option("--strategy", "-s", help=STRATEGY_HELP, rich_help_panel=STRATEGY_PANEL)
    ] = None,
    keep_recent: Annotated[
        int | None,
        typer.Option(help="window: messages kept at the end.  [default: 6]", min=0, rich_help_panel=STRATEGY_PANEL),
    ] = None,
    tool_max_tokens: Annotated[
        int | None,
        typer.Option(
            help="trim-tools: tool outputs over this are trimmed.  [default: 1000]",
            min=1,
            rich_help_panel=STRATEGY_PANEL,
        ),
    ] = None,
    head_lines: Annotated[
        int | None,
        typer.Option(help="trim-tools: first lines kept.  [default: 20]", min=0, rich_help_panel=STRATEGY_PANEL),
    ] = None,
    tail_lines: Annotated[
        int | None,
        typer.Option(help="trim-tools: last lines kept.  [default: 20]", min=0, rich_help_panel=STRATEGY_PANEL),
    ] = None,
    manifest: Annotated[
        Path | None,
        typer.Option(help="Write what became of every input message (JSON Lines).", rich_help_panel="Input and output"),
    ] = None,
    format: FormatOpt = None,
    to: ToFormat = None,
    encoding: Encoding = None,
    as_json: JsonOut = False,
    require: Require = None,
    fail_under: FailUnder = None,
    on_error: OnError = None,
    jobs: Jobs = None,
    quiet: Quiet = False,
    config: ConfigPath = None,
) -> None:
    """Compact transcripts with the given strategy steps, write them, and print a before/after report.

    The output goes to -o PATH, or NAME.compacted.jsonl beside the input; an input is never overwritten.
    """
    settings = settings_for(
        config,
        strategy=strategy,
        keep_recent=keep_recent,
        tool_max_tokens=tool_max_tokens,
        head_lines=head_lines,
        tail_lines=tail_lines,
        format=format,
        encoding=encoding,
        require=require,
        fail_under=fail_under,
        on_error=on_error,
        jobs=jobs,
    )
    steps = settings["strategy"]
    check_steps(steps)
    counter = counter_for(settings["encoding"])
    if to is not None:
        get_format(to)  # an unknown --to is bad usage, caught before any file is read
    jobs_planned = plan(inputs, output)
    results, failures = run_jobs(
        jobs_planned,
        lambda job: compact_file(job, steps, settings, counter, to=to),
        settings["jobs"],
        progress_wanted(quiet),
    )
    if manifest is not None:
        entries = [entry for result in results for entry in result.manifest]
        write_atomic(str(manifest), b"".join(orjson.dumps(entry) + b"\n" for entry in entries))
    reports = [result.report for result in results]
    to_stderr = any(job.target == STDIO for job in jobs_planned)
    emit(reports, failures, as_json, quiet, to_stderr)
    announce_written(jobs_planned, failures, quiet or as_json)
    raise typer.Exit(exit_code(reports, failures, settings["fail_under"], settings["on_error"]))
