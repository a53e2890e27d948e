"""``--session ID`` without input files: a session of Claude Code, Codex or Gemini CLI, found where the client keeps it.

``--session`` means one thing everywhere: the conversation whose id is ID. With input files
it is looked up inside them (an Agents SDK database holds many sessions); with none, in the
clients' folders (``compactctl sessions`` lists them), by its id, a unique prefix of it, or
``latest``. ``--in-place`` likewise replaces the session where it lives, keeping a backup (a
table in the database; a named file beside the client's).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import TYPE_CHECKING, Annotated, NoReturn

from compactctl.cli.exit import build_document, finish
from compactctl.cli.markup import escape
from compactctl.cli.options import Given
from compactctl.cli.outcome import JSON_VERSION, report_gates
from compactctl.cli.params import option
from compactctl.cli.render import emit, pct, stderr, write_json
from compactctl.config import DatabaseOptions, GateOptions, InputOptions, OutcomeOptions, WriteOptions
from compactctl.errors import EXIT_OK, InputError
from compactctl.files.compact import FileCompaction, compact_file
from compactctl.files.io import Job
from compactctl.reporting import report_json
from compactctl.strategies import StrategyOptions
from compactctl.summarizers import Summarizer
from compactctl.tokens import TokenCounter

if TYPE_CHECKING:
    from compactctl.sessions.run import CompactInto

SESSION_PANEL = "Sessions (with --session and no input files)"

Client = Annotated[
    str | None,
    option(
        "--client",
        help="The client whose session --session names: claude-code, codex or gemini.",
        rich_help_panel=SESSION_PANEL,
        show_default=False,
    ),
]
Slim = Annotated[
    bool,
    option(
        "--slim",
        help="Write only what the client reads to resume (the live thread), not every old record.",
        rich_help_panel=SESSION_PANEL,
    ),
]
Undo = Annotated[
    bool,
    option(
        "--undo",
        help="Put back the session an earlier --in-place replaced, from its backup.",
        rich_help_panel=SESSION_PANEL,
    ),
]
Force = Annotated[
    bool,
    option(
        "--force", help="Rewrite a session even though its client may be writing it now.", rich_help_panel=SESSION_PANEL
    ),
]
Window = Annotated[
    int | None,
    option(
        "--context-window",
        min=1,
        help="The model's context window in tokens (default: the model's own).",
        rich_help_panel=SESSION_PANEL,
        show_default=False,
    ),
]


def _kb(size: int) -> str:
    return f"{size / 1e6:.1f} MB" if size >= 1e6 else f"{size / 1e3:.1f} kB"


# What a tighter pass (``sessions.run``) halves when the user did not set it, and the floor it stops at.
TIGHTENED = {"keep_recent": 2, "tool_max_tokens": 200, "keep_turns": 1}


def _default(steps: Sequence[str], key: str) -> int | None:
    """The value ``key`` takes in the first step that has it (its strategy's default)."""
    from compactctl.strategies import STRATEGIES

    for step in steps:
        options = STRATEGIES[step].options if step in STRATEGIES else None
        for field in dataclasses.fields(options) if options else ():
            if field.name == key and isinstance(field.default, int):
                return field.default
    return None


def tighter(settings: Given, steps: Sequence[str], round_number: int) -> StrategyOptions:
    """The strategies' options in tighter pass ``round_number`` (0: as given): the tail settings the
    user did not set (by flag or config), halved per round down to their floor."""
    halved = {}
    for key, floor in TIGHTENED.items() if round_number else ():
        if settings.values.get(key) is not None:
            continue  # the user's own value stays
        default = _default(steps, key)
        if default is not None:
            halved[key] = max(floor, default >> round_number)
    return settings.strategies().replaced(**halved) if halved else settings.strategies()


def compactor(
    steps: Sequence[str], settings: Given, counter: TokenCounter, summarizer: Summarizer | None
) -> CompactInto:
    """The command's compaction of one file, as tighter pass ``round`` has its settings."""
    read, gates = settings.of(InputOptions), settings.of(GateOptions)
    # In place or not is the session writer's to do (a backup beside the session), not the database's.
    # The session is the whole file found (no database to pick it from).
    database = dataclasses.replace(settings.of(DatabaseOptions), in_place=False, session=None)
    # The session's copy is what it places for its client: written here even when unchanged.
    written = dataclasses.replace(settings.of(WriteOptions), write_unchanged=True)

    def compact_into(job: Job, round_number: int) -> FileCompaction:
        return compact_file(
            job, steps, tighter(settings, steps, round_number), counter, summarizer, read=read, gates=gates,
            database=database, written=written, keep_manifest=False,
        )  # fmt: skip

    return compact_into


def session_inputs(
    inputs: Sequence[str] | None, session: str | None, undo: bool = False, **session_flags: object
) -> bool:
    """Whether this run is on a client's session (``--session`` and no input files). A flag only such
    a run reads (``session_flags``: ``client=...``, ``slim=...``), given with input files, is refused."""
    if inputs:
        if undo:
            raise InputError("--undo puts back a client's session: give --session ID and no input files")
        given = [name for name, value in session_flags.items() if value is not None and value is not False]
        if given:
            flag = "--" + given[0].replace("_", "-")
            raise InputError(f"{flag} has no effect here: it is read with --session ID and no input files")
        return False
    if session is None:
        raise InputError("give transcript files or folders, or --session ID (compactctl sessions lists them)")
    return True


def undo_session(session_id: str, client: str | None, as_json: bool) -> NoReturn:
    from compactctl.sessions import find_session
    from compactctl.sessions.place import undo

    found = find_session(session_id, client)
    placed = undo(found)
    if as_json:
        session = {"id": found.session_id, "path": str(found.path), "kept": str(placed.backup)}
        write_json({"version": JSON_VERSION, "command": "undo", "exit_code": EXIT_OK, "session": session})
    else:
        stderr.print(
            f"restored {escape(str(found.path))} from its backup; what it replaced is kept as "
            f"{escape(str(placed.backup))}",
            soft_wrap=True,
            highlight=False,
        )
    raise SystemExit(EXIT_OK)


def run_on_session(
    command: str,
    session_id: str,
    client: str | None,
    steps: Sequence[str],
    settings: Given,
    counter: TokenCounter,
    summarizer: Summarizer | None,
    *,
    slim: bool,
    force: bool,
    window: int | None,
    dry_run: bool,
    as_json: bool,
    quiet: bool,
) -> NoReturn:
    """Compact the session, write it where its client resumes it, say how to resume it."""
    from compactctl.sessions import find_session
    from compactctl.sessions.run import TIGHTER_ROUNDS, compact_session

    found = find_session(session_id, client)
    outcome, gating = settings.of(OutcomeOptions), settings.of(GateOptions)
    done = compact_session(
        found,
        compactor(steps, settings, counter, summarizer),
        tighter_rounds=0 if list(steps) == ["prune"] else TIGHTER_ROUNDS,
        in_place=settings.of(DatabaseOptions).in_place,
        slim=slim,
        force=force,
        window=window,
        write=not dry_run,
    )
    report = done.result.report
    placed = done.placed
    job = Job(str(found.path), str(placed.path) if placed else None, found.path.name)
    before, after = done.before, done.after
    fits = {
        "name": "fits-window",
        "passed": done.fits,
        "reason": f"live context {after.tokens:,} tokens, window {before.window:,} (target {before.target:,})"
        + ("" if done.fits else ": still over the window, nothing written (try -s structured --keep-recent 2)"),
        "measured": after.tokens,
        "threshold": before.window,
    }
    body = report_json([report], [])
    gates = [*report_gates([report], gating.fail_under), fits]
    doc = build_document(
        command, [job], body["files"], [], outcome, gates=gates, written=placed is not None, total=body["total"],
        write_unchanged=settings.of(WriteOptions).write_unchanged,
    )  # fmt: skip
    doc = {**doc, "session": done.json()}
    emit(doc, [report], as_json, quiet, to_stderr=False)
    if not as_json:
        stderr.print(
            f"{found.client} {found.session_id}: live context {before.live.tokens:,} -> {after.tokens:,} tokens "
            f"(window {before.window:,}: {pct(before.full)} -> {pct(after.tokens / before.window)}; target "
            f"{before.target:,}), file {_kb(found.size)} -> {_kb(done.size_after)}"
            + (f"; {done.rounds} tighter pass(es)" if done.rounds else ""),
            soft_wrap=True,
            highlight=False,
        )
        if placed is not None:
            if placed.backup is not None:
                stderr.print(
                    f"replaced {escape(str(placed.path))}; the original is kept as {escape(str(placed.backup))} "
                    "(--undo puts it back)",
                    soft_wrap=True,
                    highlight=False,
                )
            else:
                stderr.print(
                    f"wrote {escape(str(placed.path))} (the original is untouched)", soft_wrap=True, highlight=False
                )
            for note in placed.notes:
                stderr.print(escape(note), soft_wrap=True, highlight=False)
        if done.resume is not None:
            import typer  # only here: a run on a file never loads it (cli.direct)

            typer.echo(done.resume)  # the one line on stdout after the report: the command that resumes it
    finish(doc, outcome)
