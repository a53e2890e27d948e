"""``compactctl prune``: the deterministic prune step over files and folders, with what it did and why."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import orjson
import typer
from rich.console import Console
from rich.table import Table

from compactctl.batch import PRUNED_MARK, STDIO, plan, run_jobs, write_atomic
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
    stderr,
)
from compactctl.compact import FileCompaction, compact_file
from compactctl.formats import get_format
from compactctl.strategies.prune import check_mode
from compactctl.tokens import counter_for

PRUNE_PANEL = "Pruning"


@handle_errors
def prune(
    inputs: Inputs,
    output: Output = None,
    mode: Annotated[
        str | None,
        typer.Option(
            help="stub: a pruned tool result keeps its place as a short stub; drop: the call and its result go.  "
            "[default: stub]",
            metavar="stub|drop",
            rich_help_panel=PRUNE_PANEL,
        ),
    ] = None,
    explain: Annotated[
        bool,
        typer.Option(
            "--explain", help="List every message elided, removed or restored, and why.", rich_help_panel=PRUNE_PANEL
        ),
    ] = False,
    archive: Annotated[
        Path | None,
        typer.Option(
            help="Write every removed or elided original with its index (JSON Lines).",
            rich_help_panel="Input and output",
        ),
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
    """Prune transcripts deterministically: superseded and duplicate tool results go, what is still referenced stays.

    No model, no key, no network: same input, same output, and pruning twice changes nothing.
    The output goes to -o PATH, or NAME.pruned.jsonl beside the input; an input is never overwritten.
    """
    settings = settings_for(
        config,
        mode=mode,
        format=format,
        encoding=encoding,
        require=require,
        fail_under=fail_under,
        on_error=on_error,
        jobs=jobs,
    )
    check_mode(settings.get("mode", "stub"))
    counter = counter_for(settings["encoding"])
    if to is not None:
        get_format(to)  # an unknown --to is bad usage, caught before any file is read
    planned = plan(inputs, output, PRUNED_MARK)
    results, failures = run_jobs(
        planned,
        lambda job: compact_file(job, ["prune"], settings, counter, to=to, archive=archive is not None),
        settings["jobs"],
        progress_wanted(quiet),
    )
    if manifest is not None:
        write_atomic(str(manifest), _jsonl(entry for result in results for entry in result.manifest))
    if archive is not None:
        write_atomic(str(archive), _jsonl(entry for result in results for entry in result.archive))
    to_stderr = any(job.target == STDIO for job in planned)
    if explain:
        (stderr if to_stderr or as_json else Console(highlight=False)).print(explain_table(results))
    reports = [result.report for result in results]
    emit(reports, failures, as_json, quiet, to_stderr)
    announce_written(planned, failures, quiet or as_json)
    raise typer.Exit(exit_code(reports, failures, settings["fail_under"], settings["on_error"]))


def _jsonl(entries: Any) -> bytes:
    return b"".join(orjson.dumps(entry) + b"\n" for entry in entries)


def explain_table(results: list[FileCompaction]) -> Table:
    """One row per message not kept as it was: where it is, its role, what became of it and why."""
    rows = [entry for result in results for entry in result.manifest if entry["action"] != "kept"]
    where = len(results) > 1 or any(entry["transcript"] for entry in rows)
    table = Table(title=f"pruned: {len(rows)} message(s) not kept as they were", title_justify="left")
    if where:
        table.add_column("file / transcript")
    for name in ("index", "role", "action", "reason"):
        table.add_column(name, justify="right" if name == "index" else "left")
    for entry in rows:
        location = " ".join(part for part in (entry["file"], entry["transcript"]) if part)
        cells = [str(entry["index"]), entry["role"], entry["action"], entry["reason"]]
        table.add_row(*([location] if where else []), *cells)
    return table
