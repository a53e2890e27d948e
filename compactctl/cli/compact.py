"""``compactctl compact``: run strategy steps over files and folders, write, report."""

from __future__ import annotations

import dataclasses
from typing import Annotated

import typer

from compactctl.cli.common import (
    ConfigPath,
    Encoding,
    FailUnder,
    FormatOpt,
    Inputs,
    Jobs,
    JsonOut,
    ManifestPath,
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
from compactctl.cli.options import (
    SUMMARY_PANEL,
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
from compactctl.compaction import check_steps
from compactctl.files import STDIO, check_side_files, compact_file, plan, run_jobs
from compactctl.summarizers.build import make_summarizer
from compactctl.tokens import counter_for


@handle_errors
def compact(
    inputs: Inputs,
    output: Output = None,
    strategy: StrategySteps = None,
    keep_recent: KeepRecent = None,
    tool_max_tokens: ToolMaxTokens = None,
    head_lines: HeadLines = None,
    tail_lines: TailLines = None,
    threshold: Annotated[
        int | None,
        typer.Option(
            help="Summarizing strategies compact above this many tokens (0: always).  \\[default: 10000, structured 0]",
            min=0,
            rich_help_panel=SUMMARY_PANEL,
        ),
    ] = None,
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
    dry_run: Annotated[
        bool,
        typer.Option(
            "--dry-run",
            help="openai: print each request that would be sent; send and write nothing.",
            rich_help_panel=SUMMARY_PANEL,
        ),
    ] = False,
    manifest: ManifestPath = None,
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
