"""``compactctl report BEFORE [AFTER]``: figures for existing files or folders."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from compactctl.cli.exit import finish_report, handle_errors
from compactctl.cli.markup import escape
from compactctl.cli.options import ConfigPath, JsonOut, Quiet, Takes, command_settings, settings_for
from compactctl.cli.render import progress_wanted, stderr
from compactctl.cli.session_options import Client, session_inputs
from compactctl.config import (
    BatchOptions,
    CountOptions,
    DatabaseOptions,
    EngineOptions,
    GateOptions,
    InputOptions,
    OutcomeOptions,
    RecordedOptions,
)
from compactctl.errors import InputError
from compactctl.files.io import UNWRITTEN, Job, expand_inputs, read_with_its_session
from compactctl.files.jobs import run_jobs
from compactctl.files.report import report_pair
from compactctl.settings import SettingDecl
from compactctl.tokens import counter_for


def takes() -> list[Takes]:
    """The groups of settings report takes (a strategy's, only when it is a step)."""
    return [
        Takes(InputOptions),
        Takes(DatabaseOptions, omit=("in_place",)),  # --session: a client's session to report on
        Takes(CountOptions),
        Takes(RecordedOptions),
        Takes(BatchOptions),
        Takes(EngineOptions),
        Takes(OutcomeOptions),
        Takes(GateOptions),
    ]


def declared_settings() -> dict[str, SettingDecl]:
    """How files are read and counted, the batch and the gates: a report changes nothing."""
    return command_settings(takes())


@handle_errors
def report(
    before: Annotated[
        str | None,
        typer.Argument(help="A transcript file or folder (- for stdin); none with --session ID.", show_default=False),
    ] = None,
    after: Annotated[
        str | None,
        typer.Argument(help="Its compacted counterpart; folders match by relative path.", show_default=False),
    ] = None,
    as_json: JsonOut = False,
    quiet: Quiet = False,
    config: ConfigPath = None,
    client: Client = None,
    **given: Any,
) -> None:
    """Tokens, messages, tokens by role, facts and API validity of a file, or before against after.

    With --session ID and no file, the report is of that Claude Code, Codex or Gemini CLI session.
    """
    settings = settings_for(config, given, takes())
    read, gates, recorded = settings.of(InputOptions), settings.of(GateOptions), settings.of(RecordedOptions)
    counter = counter_for(settings.of(CountOptions).encoding)
    database = settings.database()
    session = database.session
    if session_inputs([before] if before else None, session, client=client):
        assert session is not None  # session_inputs says so
        from compactctl.sessions import find_session

        if after is not None:
            raise InputError("--session names BEFORE: give no files")
        before = str(find_session(session, client).path)
        database = DatabaseOptions()  # found: the whole file is that session
    assert before is not None
    if after is None and gates.fail_under is not None:  # nothing to measure a reduction of: bad usage, not a gate
        raise InputError("--fail-under has no effect here: it is read with AFTER, the compacted counterpart")
    pairs = [Job(source, counterpart(after, name, before), name) for source, name, _ in expand_inputs([before])]
    # A subagent's file whose session is among the inputs: its calls are billed in the session's report, not twice.
    sources = {job.source for job in pairs}
    with_session = {job.source for job in pairs if read_with_its_session(job.source, sources)}
    reports, failures = run_jobs(
        pairs,
        lambda job: report_pair(
            job.name,
            job.source,
            job.target,
            counter,
            read=read,
            gates=gates,
            recorded=recorded,
            database=database,
            billed_with_session=job.source in with_session,
        ),
        settings.of(BatchOptions).jobs,
        progress_wanted(quiet),
        settings.of(EngineOptions).engine,
    )
    unread = recorded.unread_note((r.format, r.api_calibration is not None) for r in reports)
    if unread and reports:
        stderr.print(f"[yellow]note:[/] {escape(unread)}", soft_wrap=True)
    outcome = settings.of(OutcomeOptions)
    finish_report(
        "report", pairs, reports, failures, outcome, fail_under=gates.fail_under, as_json=as_json, quiet=quiet
    )


def counterpart(after: str | None, name: str, before: str) -> str | None:
    """AFTER itself for a file; for a folder, the file at the same relative path under it."""
    if after is None:
        return None
    if Path(before).is_dir():
        if not Path(after).exists():
            raise InputError(f"no such folder ({UNWRITTEN})", after)
        if not Path(after).is_dir():
            raise InputError("BEFORE is a folder, so AFTER must be one too", after)
        return str(Path(after) / name)
    return after
