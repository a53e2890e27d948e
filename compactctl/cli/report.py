"""``compactctl report BEFORE [AFTER]``: figures for existing files or folders."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from compactctl.cli.common import (
    ConfigPath,
    Encoding,
    FailUnder,
    FormatOpt,
    Jobs,
    JsonOut,
    OnError,
    Quiet,
    Require,
    emit,
    exit_code,
    handle_errors,
    progress_wanted,
    settings_for,
)
from compactctl.errors import InputError
from compactctl.files import Job, expand_inputs, report_pair, run_jobs
from compactctl.tokens import counter_for


@handle_errors
def report(
    before: Annotated[str, typer.Argument(help="A transcript file or folder (- for stdin).", show_default=False)],
    after: Annotated[
        str | None,
        typer.Argument(help="Its compacted counterpart; folders match by relative path.", show_default=False),
    ] = None,
    format: FormatOpt = None,
    encoding: Encoding = None,
    as_json: JsonOut = False,
    require: Require = None,
    fail_under: FailUnder = None,
    on_error: OnError = None,
    jobs: Jobs = None,
    quiet: Quiet = False,
    config: ConfigPath = None,
) -> None:
    """Tokens, messages, tokens by role, facts and API validity of a file, or before against after."""
    settings = settings_for(
        config, format=format, encoding=encoding, require=require, fail_under=fail_under, on_error=on_error, jobs=jobs
    )
    counter = counter_for(settings["encoding"])
    pairs = [Job(source, _counterpart(after, name, before), name) for source, name, _ in expand_inputs([before])]
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
        ),
        settings["jobs"],
        progress_wanted(quiet),
    )
    emit(reports, failures, as_json, quiet, to_stderr=False)
    raise typer.Exit(exit_code(reports, failures, settings["fail_under"], settings["on_error"]))


def _counterpart(after: str | None, name: str, before: str) -> str | None:
    """AFTER itself for a file; for a folder, the file at the same relative path under it."""
    if after is None:
        return None
    if Path(before).is_dir():
        if not Path(after).is_dir():
            raise InputError("BEFORE is a folder, so AFTER must be one too", after)
        return str(Path(after) / name)
    return after
