"""``compactctl compact``: run strategy steps over files and folders, write, report."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Annotated

import typer

from compactctl.batch import STDIO, check_side_files, plan, run_jobs
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
    check_output_format,
    finish_compaction,
    handle_errors,
    progress_wanted,
    settings_for,
)
from compactctl.compact import check_steps, compact_file
from compactctl.config import DEFAULT_STRATEGY
from compactctl.strategies import STRATEGIES
from compactctl.summarizers.build import make_summarizer
from compactctl.tokens import counter_for

STRATEGY_PANEL = "Strategies"
STRATEGY_HELP = f"Strategy step, repeatable, run in order: {', '.join(STRATEGIES)}.  \\[default: {DEFAULT_STRATEGY}]"
SUMMARY_PANEL = "Summaries"


@handle_errors
def compact(
    inputs: Inputs,
    output: Output = None,
    strategy: Annotated[
        list[str] | None, typer.Option("--strategy", "-s", help=STRATEGY_HELP, rich_help_panel=STRATEGY_PANEL)
    ] = None,
    keep_recent: Annotated[
        int | None,
        typer.Option(help="window: messages kept at the end.  \\[default: 6]", min=0, rich_help_panel=STRATEGY_PANEL),
    ] = None,
    tool_max_tokens: Annotated[
        int | None,
        typer.Option(
            help="trim-tools: tool outputs over this are trimmed.  \\[default: 1000]",
            min=1,
            rich_help_panel=STRATEGY_PANEL,
        ),
    ] = None,
    head_lines: Annotated[
        int | None,
        typer.Option(help="trim-tools: first lines kept.  \\[default: 20]", min=0, rich_help_panel=STRATEGY_PANEL),
    ] = None,
    tail_lines: Annotated[
        int | None,
        typer.Option(help="trim-tools: last lines kept.  \\[default: 20]", min=0, rich_help_panel=STRATEGY_PANEL),
    ] = None,
    threshold: Annotated[
        int | None,
        typer.Option(
            help="Summarizing strategies compact above this many tokens (0: always).  \\[default: 10000, structured 0]",
            min=0,
            rich_help_panel=SUMMARY_PANEL,
        ),
    ] = None,
    keep_turns: Annotated[
        int | None,
        typer.Option(
            help="structured: last turns kept (a user message and what follows).  \\[default: 2]",
            min=0,
            rich_help_panel=SUMMARY_PANEL,
        ),
    ] = None,
    window: Annotated[
        int | None,
        typer.Option(
            help="rolling: messages kept after each fold.  \\[default: 8]", min=0, rich_help_panel=SUMMARY_PANEL
        ),
    ] = None,
    keep_pattern: Annotated[
        list[str] | None,
        typer.Option(
            help="selective: messages matching REGEX stay verbatim (repeatable).",
            metavar="REGEX",
            rich_help_panel=SUMMARY_PANEL,
        ),
    ] = None,
    summary_max_tokens: Annotated[
        int | None,
        typer.Option(
            help="Summary size bound.  \\[default: summary 500, rolling 400, selective 200, structured 1000]",
            min=16,
            rich_help_panel=SUMMARY_PANEL,
        ),
    ] = None,
    summary_input_max_tokens: Annotated[
        int | None,
        typer.Option(
            help="Largest text one summarizer request takes; more is chunked and merged.  \\[default: 32000]",
            min=1,
            rich_help_panel=SUMMARY_PANEL,
        ),
    ] = None,
    summary_role: Annotated[
        str | None,
        typer.Option(
            help="Role of the summary message: system or user.  \\[default: system]", rich_help_panel=SUMMARY_PANEL
        ),
    ] = None,
    summarizer: Annotated[
        str | None,
        typer.Option(help="extractive (offline) or openai.  \\[default: extractive]", rich_help_panel=SUMMARY_PANEL),
    ] = None,
    model: Annotated[
        str | None, typer.Option(help="openai: model.  \\[default: gpt-4o-mini]", rich_help_panel=SUMMARY_PANEL)
    ] = None,
    base_url: Annotated[
        str | None,
        typer.Option(
            help="openai: any compatible server, e.g. http://127.0.0.1:8000/v1.", rich_help_panel=SUMMARY_PANEL
        ),
    ] = None,
    api: Annotated[
        str | None, typer.Option(help="openai: chat or responses.  \\[default: chat]", rich_help_panel=SUMMARY_PANEL)
    ] = None,
    summary_timeout: Annotated[
        float | None,
        typer.Option(help="openai: seconds per request.  \\[default: 60]", min=0.001, rich_help_panel=SUMMARY_PANEL),
    ] = None,
    summary_retries: Annotated[
        int | None,
        typer.Option(help="openai: retries on 429/5xx/timeouts.  \\[default: 4]", min=0, rich_help_panel=SUMMARY_PANEL),
    ] = None,
    summary_backoff: Annotated[
        float | None,
        typer.Option(
            help="openai: seconds before the first retry, doubled each time.  \\[default: 1]",
            min=0,
            rich_help_panel=SUMMARY_PANEL,
        ),
    ] = None,
    redact: Annotated[
        bool | None,
        typer.Option(
            "--redact/--no-redact",
            help="openai: redact secrets before sending.  \\[default: redact]",
            rich_help_panel=SUMMARY_PANEL,
        ),
    ] = None,
    cache: Annotated[
        bool | None,
        typer.Option(
            "--cache/--no-cache",
            help="openai: reuse summaries cached on disk.  \\[default: cache]",
            rich_help_panel=SUMMARY_PANEL,
        ),
    ] = None,
    cache_dir: Annotated[
        str | None,
        typer.Option(
            help="openai: cache folder.  \\[default: $COMPACTCTL_CACHE_DIR or the user cache dir]",
            rich_help_panel=SUMMARY_PANEL,
        ),
    ] = None,
    prompt_file: Annotated[
        list[str] | None,
        typer.Option(
            help="Replace the summary prompt: PATH, or STRATEGY=PATH (repeatable).", rich_help_panel=SUMMARY_PANEL
        ),
    ] = None,
    dry_run: Annotated[
        bool,
        typer.Option(
            "--dry-run",
            help="openai: print each request that would be sent; send and write nothing.",
            rich_help_panel=SUMMARY_PANEL,
        ),
    ] = False,
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
        threshold=threshold,
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
        dry_run=dry_run or None,
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
    check_output_format(to)
    jobs_planned = plan(inputs, output)
    check_side_files(jobs_planned, manifest=manifest)
    summarizer_used = make_summarizer(settings, counter)
    if settings["dry_run"]:
        # The requests go to stdout; nothing is sent, so nothing is written.
        jobs_planned = [dataclasses.replace(job, target=None) for job in jobs_planned]
    results, failures = run_jobs(
        jobs_planned,
        lambda job: compact_file(job, steps, settings, counter, summarizer_used, to=to),
        settings["jobs"],
        progress_wanted(quiet),
    )
    to_stderr = settings["dry_run"] or any(job.target == STDIO for job in jobs_planned)
    finish_compaction(
        jobs_planned, results, failures, settings, manifest=manifest, as_json=as_json, quiet=quiet, to_stderr=to_stderr
    )
