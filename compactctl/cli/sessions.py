"""``compactctl sessions``: the sessions of Claude Code, Codex and Gemini CLI on this machine, newest first."""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.table import Table

from compactctl.cli.exit import handle_errors
from compactctl.cli.markup import escape
from compactctl.cli.options import JsonOut, as_flags
from compactctl.cli.outcome import document
from compactctl.cli.render import console, stderr, write_json
from compactctl.errors import EXIT_INPUT, CompactctlError
from compactctl.settings import SettingDecl

if TYPE_CHECKING:
    from compactctl.sessions.listing import SessionRow

ClientOption = Annotated[
    str | None, typer.Option("--client", help="Only this client's: claude-code, codex or gemini.", show_default=False)
]
WindowOption = Annotated[
    int | None,
    typer.Option(
        "--context-window",
        min=1,
        help="The model's context window in tokens (default: the model's own, or what Codex recorded).",
        show_default=False,
    ),
]


def declared_settings() -> dict[str, SettingDecl]:
    return {}  # reads sessions, compacts nothing: none of the run's settings apply


def _ago(seconds: float) -> str:
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{seconds / size:.0f}{unit} ago"
    return "just now"


def _size(size: int) -> str:
    return f"{size / 1e6:.1f} MB" if size >= 1e6 else f"{size / 1e3:.1f} kB"


def _tokens(value: int) -> str:
    return f"{value / 1000:.1f}k" if value < 100_000 else f"{value / 1000:.0f}k"


def _home_short(path: str | None) -> str:
    if not path:
        return "-"
    home = str(Path.home())
    return "~" + path[len(home) :] if path.startswith(home + "/") else path


@handle_errors
def sessions(
    client: ClientOption = None,
    project: Annotated[
        str | None, typer.Option("--project", help="Only sessions whose working directory contains TEXT.")
    ] = None,
    since: Annotated[
        str | None, typer.Option("--since", help="Only sessions used since: 30m, 2h, 3d, 1w or a date.")
    ] = None,
    context_window: WindowOption = None,
    as_json: JsonOut = False,
) -> None:
    """List the sessions Claude Code, Codex and Gemini CLI keep for this user, newest first.

    Live context is what the client sends when it resumes, in the model's tokens (calibrated on
    the session's own usage, as report counts it); a session over its window cannot be resumed:
    `compactctl compact --session ID` writes a compacted copy that can.
    """
    from compactctl.sessions import check_client, client_roots, existing_roots, filtered, session_files, since_seconds
    from compactctl.sessions.listing import describe, row_json

    check_client(client)
    if not existing_roots():
        looked = ", ".join(str(root) for roots in client_roots().values() for root in roots)
        message = f"no Claude Code, Codex or Gemini CLI folder here (looked for {looked})"
        if as_json:
            write_json(_document([], [], {"sessions": 0}, message))
        else:
            stderr.print(escape(message))
        return
    found = filtered(session_files(client=client), project, since_seconds(since) if since else None)
    rows: list[SessionRow] = []
    failed: list[dict[str, str | int]] = []
    for session in found:
        try:
            rows.append(describe(session, context_window))
        except (CompactctlError, OSError) as error:
            failed.append({"file": str(session.path), "error": as_flags(str(error)), "exit_code": EXIT_INPUT})
    shown = [row for row in rows if row.live.messages]  # the clients' own empty files (a resume's shadow)
    total = {
        "sessions": len(shown),
        "over_window": sum(row.over_window for row in shown),
        "empty": len(rows) - len(shown),
    }
    if as_json:
        write_json(_document([{"file": str(row.session.path), **row_json(row)} for row in shown], failed, total))
        return
    from compactctl.sessions import short_ids

    short = short_ids(row.session.session_id for row in shown)
    out = console()
    if not shown:
        if client or project or since:
            out.print("no sessions match")
        else:  # where it looked, as a missing folder is said: a client that keeps its sessions elsewhere shows here
            out.print(f"no sessions yet in {', '.join(_home_short(str(root)) for root in existing_roots())}")
    else:
        out.print(_table(shown, short))
    for failure in failed:
        stderr.print(
            f"[bold red]unreadable:[/] {escape(str(failure['file']))}: {escape(str(failure['error']))}", soft_wrap=True
        )
    stuck = [row for row in shown if row.over_window]
    for row in stuck:
        stderr.print(
            f"{row.session.client} {row.session.session_id} is over its window "
            f"({row.live.tokens:,} > {row.window:,} tokens): its client cannot resume it. "
            f"compactctl compact --session {short[row.session.session_id]}",
            soft_wrap=True,
            highlight=False,
        )


def _document(
    rows: list[dict[str, Any]], failed: list[dict[str, str | int]], total: dict[str, int], note: str | None = None
) -> dict[str, Any]:
    """The --json document, in the run document's frame: one entry per session (``files``), the unreadable."""
    entries = [
        {**row, "name": row["file"], "output": None, "status": "ok", "reason": None, "skipped_lines": [],
         "format": row.get("client", "")}
        for row in rows
    ] + [
        {"file": f["file"], "name": f["file"], "output": None, "status": "failed", "reason": f["error"],
         "skipped_lines": [], "exit_code": f["exit_code"]}
        for f in failed
    ]  # fmt: skip
    doc = document("sessions", entries, [], 0, total)  # a listing: an unreadable session is said, not a failure
    return {**doc, **({"note": note} if note else {})}


def _table(rows: list[SessionRow], short: dict[str, str]) -> Table:
    now = time.time()
    table = Table(title_justify="left", title=None)
    for name in ("client", "id", "project", "last used", "size", "live", "window", "full", "compacted"):
        table.add_column(name, justify="right" if name in ("size", "live", "window", "full") else "left")
    for row in rows:
        session = row.session
        full = f"{row.full:.0%}"
        table.add_row(
            session.client,
            short[session.session_id],
            _home_short(row.cwd),
            _ago(now - session.modified),
            _size(session.size),
            _tokens(row.live.tokens),
            _tokens(row.window),
            f"[bold red]{full} over[/]" if row.over_window else full,
            "yes" if row.compacted else "",
        )
    return table
