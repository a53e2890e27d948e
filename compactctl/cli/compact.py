"""``compactctl compact``: run strategy steps over files and folders, write, report."""

from __future__ import annotations

import dataclasses
from typing import Any

from compactctl.cli.exit import finish_compaction, handle_errors
from compactctl.cli.options import (
    ConfigPath,
    JsonOut,
    ManifestPath,
    OptionalInputs,
    Output,
    Quiet,
    ToFormat,
    check_output_format,
    command_settings,
    settings_for,
)
from compactctl.cli.render import note_left_out, progress_wanted, stderr
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
from compactctl.config import RunOptions, WriteOptions, strategy_owners
from compactctl.errors import InputError
from compactctl.files.compact import compact_file
from compactctl.files.io import STDIO, check_side_files, one_unit, plan, run_jobs
from compactctl.settings import Declared
from compactctl.summarizers.build import NOTHING_TO_SEND, make_summarizer, reads_prompt
from compactctl.summarizers.options import SummarizerOptions
from compactctl.tokens import counter_for


def declared_settings() -> dict[str, Declared]:
    """The run's settings, every strategy's and the summarizer's."""
    return command_settings([("", RunOptions), ("", WriteOptions), *strategy_owners(), ("", SummarizerOptions)])


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
    settings = settings_for(config, given)
    steps = settings["strategy"]
    check_steps(steps)
    counter = counter_for(settings["encoding"])
    check_output_format(to)
    if session_inputs(inputs, settings["session"], undo):
        if undo:
            undo_session(settings["session"], client, as_json)
        if output is not None or to is not None or manifest is not None:
            raise InputError("--session writes beside the client's session: drop -o, --to and --manifest")
        summarizer = make_summarizer(settings, counter)
        run_on_session(
            "compact",
            settings["session"],
            client,
            steps,
            settings,
            counter,
            summarizer,
            slim=slim,
            force=force,
            window=context_window,
            as_json=as_json,
            quiet=quiet,
        )
    assert inputs is not None
    if settings["in_place"] and output is not None:
        raise InputError("--in-place writes into the input database; drop -o")
    jobs_planned = plan(inputs, output)
    note_left_out(inputs)
    if settings["in_place"]:
        jobs_planned = [dataclasses.replace(job, target=job.source) for job in jobs_planned]
    check_side_files(jobs_planned, manifest=manifest)
    summarizer_used = make_summarizer(settings, counter)
    if settings["dry_run"]:
        # The requests go to stdout; nothing is sent, so nothing is written.
        jobs_planned = [dataclasses.replace(job, target=None) for job in jobs_planned]
        if not reads_prompt(settings["summarizer"]):
            stderr.print(NOTHING_TO_SEND.format(name=settings["summarizer"]), soft_wrap=True, highlight=False)
    with one_unit() as unit:
        results, failures = run_jobs(
            jobs_planned,
            lambda job: compact_file(
                job, steps, settings, counter, summarizer_used, to=to, keep_manifest=manifest is not None
            ),
            settings["jobs"],
            progress_wanted(quiet),
            settings["engine"],
        )
        to_stderr = settings["dry_run"] or any(job.target == STDIO for job in jobs_planned)
        finish_compaction(
            "compact",
            jobs_planned,
            results,
            failures,
            settings,
            manifest=manifest,
            as_json=as_json,
            quiet=quiet,
            to_stderr=to_stderr,
            unit=unit,
        )
