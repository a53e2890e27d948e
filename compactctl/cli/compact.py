"""``compactctl compact``: run strategy steps over files and folders, write, report."""

from __future__ import annotations

import dataclasses
from typing import Any

from compactctl.cli.exit import compact_and_finish, handle_errors
from compactctl.cli.options import (
    ConfigPath,
    JsonOut,
    ManifestPath,
    OptionalInputs,
    Output,
    Quiet,
    Takes,
    ToFormat,
    check_output_format,
    command_settings,
    settings_for,
    strategy_takes,
)
from compactctl.cli.render import note_left_out, stderr
from compactctl.cli.session_options import (
    Client,
    Force,
    Slim,
    Undo,
    Window,
    run_on_session,
    session_inputs,
    undo_session,
)
from compactctl.compaction import check_steps
from compactctl.config import (
    BatchOptions,
    CountOptions,
    DatabaseOptions,
    EngineOptions,
    GateOptions,
    InputOptions,
    OutcomeOptions,
    StepsOptions,
    WriteOptions,
)
from compactctl.errors import InputError
from compactctl.files.io import check_side_files, plan
from compactctl.settings import SettingDecl
from compactctl.summarizers.build import NOTHING_TO_SEND, make_summarizer, reads_prompt
from compactctl.summarizers.options import DryRunOptions, SummarizerOptions
from compactctl.tokens import counter_for


def takes() -> list[Takes]:
    """The groups of settings compact takes (a strategy's, only when it is a step)."""
    return [
        Takes(StepsOptions),
        Takes(WriteOptions),
        Takes(InputOptions),
        Takes(DatabaseOptions),
        Takes(CountOptions),
        Takes(BatchOptions),
        Takes(EngineOptions),
        Takes(OutcomeOptions),
        Takes(GateOptions),
        *strategy_takes(),
        Takes(SummarizerOptions),
        Takes(DryRunOptions),
    ]


def declared_settings() -> dict[str, SettingDecl]:
    """The settings of the groups compact takes: the run's, every strategy's, the summarizer's."""
    return command_settings(takes())


@handle_errors
def compact(
    inputs: OptionalInputs = None,
    output: Output = None,
    manifest: ManifestPath = None,
    to: ToFormat = None,
    as_json: JsonOut = False,
    quiet: Quiet = False,
    config: ConfigPath = None,
    client: Client = None,
    slim: Slim = False,
    undo: Undo = False,
    force: Force = False,
    context_window: Window = None,
    **given: Any,
) -> None:
    """Compact transcripts with the given strategy steps, write them, and print a before/after report.

    The output goes to -o PATH, or NAME.compacted.jsonl beside the input; an input is never overwritten.
    With --session ID and no input files, the session of Claude Code, Codex or Gemini CLI with that id
    is compacted into a new session beside it (or, with --in-place, over it, a backup kept), and the
    command that resumes it is printed.
    """
    settings = settings_for(config, given, takes())
    steps = settings.of(StepsOptions).strategy
    check_steps(steps)
    database, dry_run = settings.of(DatabaseOptions), settings.of(DryRunOptions).dry_run
    counter = counter_for(settings.of(CountOptions).encoding)
    check_output_format(to)
    if session_inputs(
        inputs, database.session, undo, client=client, slim=slim, force=force, context_window=context_window
    ):
        assert database.session is not None  # session_inputs says so
        if undo:
            undo_session(database.session, client, as_json)
        if output is not None or to is not None or manifest is not None:
            raise InputError("--session writes beside the client's session: drop -o, --to and --manifest")
        made = make_summarizer(settings.of(SummarizerOptions), counter)
        run_on_session(
            "compact",
            database.session,
            client,
            steps,
            settings,
            counter,
            made,
            slim=slim,
            force=force,
            window=context_window,
            dry_run=dry_run,
            as_json=as_json,
            quiet=quiet,
        )
    assert inputs is not None
    if database.in_place and output is not None:
        raise InputError("--in-place writes into the input database; drop -o")
    jobs_planned = plan(inputs, output)
    note_left_out(inputs)
    if database.in_place:
        jobs_planned = [dataclasses.replace(job, target=job.source) for job in jobs_planned]
    check_side_files(jobs_planned, manifest=manifest, junit=settings.of(OutcomeOptions).junit_path())
    summarizer = settings.of(SummarizerOptions)
    summarizer_used = make_summarizer(summarizer, counter, dry_run=dry_run)
    if dry_run:
        # The requests go to stdout; nothing is sent, so nothing is written.
        jobs_planned = [dataclasses.replace(job, target=None) for job in jobs_planned]
        if not reads_prompt(summarizer.summarizer):
            stderr.print(NOTHING_TO_SEND.format(name=summarizer.summarizer), soft_wrap=True, highlight=False)
    compact_and_finish(
        "compact",
        jobs_planned,
        steps,
        settings,
        counter,
        summarizer_used,
        to=to,
        manifest=manifest,
        as_json=as_json,
        quiet=quiet,
        to_stderr=dry_run,
    )
