"""``compactctl prune``: the deterministic prune step over files and folders, with what it did and why."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

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
    console,
    finish_compaction,
    handle_errors,
    progress_wanted,
    settings_for,
    stderr,
    write_jsonl,
)
from compactctl.files import PRUNED_MARK, STDIO, FileCompaction, check_side_files, compact_file, plan, run_jobs
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
            "\\[default: stub]",
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
    check_output_format(to)
    planned = plan(inputs, output, PRUNED_MARK)
    check_side_files(planned, archive=archive, manifest=manifest)
    results, failures = run_jobs(
        planned,
        lambda job: compact_file(job, ["prune"], settings, counter, to=to, archive=archive is not None),
        settings["jobs"],
        progress_wanted(quiet),
    )
    if archive is not None:
        write_jsonl(archive, (entry for result in results for entry in result.archive))
    to_stderr = any(job.target == STDIO for job in planned)
    if explain:
        (stderr if to_stderr or as_json else console()).print(explain_table(results))
    finish_compaction(
        planned, results, failures, settings, manifest=manifest, as_json=as_json, quiet=quiet, to_stderr=to_stderr
    )


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
