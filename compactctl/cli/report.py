"""``compactctl report BEFORE [AFTER]``: figures for existing files or folders."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from compactctl.cli.exit import finish_report, handle_errors
from compactctl.cli.options import ConfigPath, JsonOut, Quiet, command_settings, settings_for
from compactctl.cli.render import progress_wanted
from compactctl.cli.session_options import Client, session_inputs
from compactctl.config import RunOptions
from compactctl.errors import InputError
from compactctl.files.io import Job, expand_inputs, run_jobs
from compactctl.files.report import report_pair
from compactctl.settings import Declared
from compactctl.tokens import counter_for


def declared_settings() -> dict[str, Declared]:
    """The run's settings but the strategy: a report changes nothing."""
    return command_settings([("", RunOptions)], exclude=("strategy",))


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
    settings = settings_for(config, given)
    counter = counter_for(settings["encoding"])
    if session_inputs([before] if before else None, settings["session"]):
        from compactctl.sessions import find_session

        if after is not None:
            raise InputError("--session names BEFORE: give no files")
        before = str(find_session(settings["session"], client).path)
    assert before is not None
    pairs = [Job(source, counterpart(after, name, before), name) for source, name, _ in expand_inputs([before])]
    reports, failures = run_jobs(
        pairs,
        lambda job: report_pair(
            job.name,
            job.source,
            job.target,
            counter,
            settings["format"],
            settings["require"],
            skip_bad_lines=settings["on_error"] == "skip",
            strict_facts=settings["strict_facts"],
            claude_tokens=settings["claude_tokens"],
        ),
        settings["jobs"],
        progress_wanted(quiet),
        settings["engine"],
    )
    finish_report("report", pairs, reports, failures, settings, as_json=as_json, quiet=quiet)


def counterpart(after: str | None, name: str, before: str) -> str | None:
    """AFTER itself for a file; for a folder, the file at the same relative path under it."""
    if after is None:
        return None
    if Path(before).is_dir():
        if not Path(after).is_dir():
            raise InputError("BEFORE is a folder, so AFTER must be one too", after)
        return str(Path(after) / name)
    return after
