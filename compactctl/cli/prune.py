"""``compactctl prune``: the deterministic prune step over files and folders, with what it did and why."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

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
)
from compactctl.cli.params import option
from compactctl.cli.render import console, note_left_out, stderr
from compactctl.cli.session_options import Client, Force, Slim, Window, run_on_session, session_inputs
from compactctl.config import (
    IO_PANEL,
    BatchOptions,
    CountOptions,
    DatabaseOptions,
    EngineOptions,
    GateOptions,
    InputOptions,
    OutcomeOptions,
    WriteOptions,
)
from compactctl.errors import InputError
from compactctl.files.compact import FileCompaction
from compactctl.files.io import PRUNED_MARK, check_side_files, plan
from compactctl.settings import SettingDecl
from compactctl.strategies.settings import PruneOptions
from compactctl.tokens import APPROX, TokenCounter, counter_for

PRUNE_PANEL = "Pruning"

if TYPE_CHECKING:
    from rich.table import Table


def takes() -> list[Takes]:
    """The groups of settings prune takes (a strategy's, only when it is a step)."""
    return [
        Takes(WriteOptions),
        Takes(InputOptions),
        Takes(DatabaseOptions),
        Takes(CountOptions),
        Takes(BatchOptions),
        Takes(EngineOptions),
        Takes(OutcomeOptions),
        Takes(GateOptions),
        Takes(PruneOptions),  # the one step, always run: its settings are always read
    ]


def declared_settings() -> dict[str, SettingDecl]:
    """The run's settings (no strategy: the step is prune) and prune's own."""
    return command_settings(takes())


@handle_errors
def prune(
    inputs: OptionalInputs = None,
    output: Output = None,
    explain: Annotated[
        bool,
        option(
            "--explain", help="List every message elided, removed or restored, and why.", rich_help_panel=PRUNE_PANEL
        ),
    ] = False,
    archive: Annotated[
        Path | None,
        option(help="Write every removed or elided original with its index (JSON Lines).", rich_help_panel=IO_PANEL),
    ] = None,
    manifest: ManifestPath = None,
    to: ToFormat = None,
    as_json: JsonOut = False,
    quiet: Quiet = False,
    config: ConfigPath = None,
    client: Client = None,
    slim: Slim = False,
    force: Force = False,
    context_window: Window = None,
    **given: Any,
) -> None:
    """Prune transcripts deterministically: superseded and duplicate tool results go, what is still referenced stays.

    No model, no key, no network: same input, same output, and pruning twice changes nothing.
    The output goes to -o PATH, or NAME.pruned.jsonl beside the input; an input is never overwritten.
    With --session ID and no input files, a Claude Code, Codex or Gemini CLI session is pruned into a
    new session beside it, as compact --session does.
    """
    settings = settings_for(config, given, takes())
    database, gates = settings.of(DatabaseOptions), settings.of(GateOptions)
    # Quiet, with no JSON and no --fail-under, says nothing of tokens: none is counted (the
    # cheap estimate stands in, so no tokenizer table is loaded); gates on validity and facts hold.
    counts = not quiet or as_json or gates.fail_under is not None
    counter = counter_for(settings.of(CountOptions).encoding) if counts else TokenCounter(APPROX)
    check_output_format(to)
    if session_inputs(inputs, database.session, client=client, slim=slim, force=force, context_window=context_window):
        assert database.session is not None  # session_inputs says so
        if output is not None or to is not None or manifest is not None or archive is not None or explain:
            raise InputError(
                "--session writes beside the client's session: drop -o, --to, --manifest, --archive, --explain"
            )
        run_on_session(
            "prune",
            database.session,
            client,
            ["prune"],
            settings,
            counter,
            None,
            slim=slim,
            force=force,
            window=context_window,
            dry_run=False,  # prune takes no --dry-run
            as_json=as_json,
            quiet=quiet,
        )
    assert inputs is not None
    planned = plan(inputs, output, PRUNED_MARK)
    note_left_out(inputs)
    check_side_files(planned, archive=archive, manifest=manifest, junit=settings.of(OutcomeOptions).junit_path())
    compact_and_finish(
        "prune",
        planned,
        ["prune"],
        settings,
        counter,
        to=to,
        manifest=manifest,
        archive=archive,
        as_json=as_json,
        quiet=quiet,
        # --explain keeps the manifest it prints, beside the report (stderr when stdout carries data).
        show=(lambda results, to_stderr: (stderr if to_stderr or as_json else console()).print(explain_table(results)))
        if explain
        else None,
    )


def explain_table(results: list[FileCompaction]) -> Table:
    """One row per message not kept as it was: where it is, its role, what became of it and why."""
    rows = [entry for result in results for entry in result.manifest if entry["action"] != "kept"]
    where = len(results) > 1 or any(entry["transcript"] for entry in rows)
    from rich.table import Table  # only for --explain: a quiet run loads no Rich

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
