"""What every subcommand shares: option types, error handling, the report renderer."""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NoReturn, TypeVar

import orjson
import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from compactctl import interrupts
from compactctl.batch import STDIO, Failure, Job, write_atomic
from compactctl.config import load_config, merge
from compactctl.errors import EXIT_GATE, EXIT_INPUT, EXIT_OK, EXIT_SUMMARIZER, CompactctlError, InputError
from compactctl.report import FileReport, report_json, totals

if TYPE_CHECKING:
    from compactctl.compact import FileCompaction

F = TypeVar("F", bound=Callable[..., Any])

# Piped or in CI, rich would fold tables to 80 columns; a log reads better a little wider.
PIPED_WIDTH = 140


def console(to_stderr: bool = False) -> Console:
    """A console for data (stdout) or diagnostics (stderr), wider than 80 columns when piped."""
    stream = sys.stderr if to_stderr else sys.stdout
    return Console(stderr=to_stderr, highlight=False, width=None if stream.isatty() else PIPED_WIDTH)


stderr = console(to_stderr=True)

IO_PANEL = "Input and output"
GATE_PANEL = "Report and gates"

Inputs = Annotated[list[str], typer.Argument(help="Transcript files or folders; - reads stdin.", show_default=False)]
Output = Annotated[
    str | None,
    typer.Option(
        "-o", "--output", help="Output file, or folder for several inputs; - for stdout.", rich_help_panel=IO_PANEL
    ),
]
ManifestPath = Annotated[
    Path | None,
    typer.Option(help="Write what became of every input message (JSON Lines).", rich_help_panel=IO_PANEL),
]
FormatOpt = Annotated[
    str | None,
    typer.Option("--format", "-f", help="Input format, or auto.  \\[default: auto]", rich_help_panel=IO_PANEL),
]
ToFormat = Annotated[
    str | None,
    typer.Option("--to", help="Output format (converts).  \\[default: the input's format]", rich_help_panel=IO_PANEL),
]
Encoding = Annotated[
    str | None,
    typer.Option(help="tiktoken encoding, or approx (chars/4).  \\[default: cl100k_base]", rich_help_panel=IO_PANEL),
]
JsonOut = Annotated[
    bool, typer.Option("--json", help="Print the report as one JSON object.", rich_help_panel=GATE_PANEL)
]
Quiet = Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar, no table.", rich_help_panel=GATE_PANEL)]
Jobs = Annotated[int | None, typer.Option("--jobs", "-j", help="Files processed in parallel.  \\[default: 1]", min=1)]
ConfigPath = Annotated[
    Path | None, typer.Option("--config", help="Settings file (default: ./compactctl.toml or ./pyproject.toml).")
]
FailUnder = Annotated[
    float | None,
    typer.Option(
        help="Exit 1 when the total reduction is under PCT percent.", metavar="PCT", rich_help_panel=GATE_PANEL
    ),
]
Require = Annotated[
    list[str] | None,
    typer.Option(
        "--require", help="A fact that must survive (repeatable).", metavar="TEXT", rich_help_panel=GATE_PANEL
    ),
]
OnError = Annotated[
    str | None,
    typer.Option(
        "--on-error", help="fail: exit 2 if any file is bad; skip: skip it and count it.", rich_help_panel=GATE_PANEL
    ),
]


def handle_errors(command: F) -> F:
    """Print a CompactctlError as one line on stderr and exit with its code."""

    @functools.wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return command(*args, **kwargs)
        except KeyboardInterrupt as interrupt:  # Ctrl-C, SIGTERM, SIGHUP: exit 128 + N at once
            interrupts.stop_now(interrupt)
        except CompactctlError as error:
            # Escaped: a message may hold brackets ("pip install 'compactctl[plot]'") that are not markup.
            stderr.print(f"[bold red]error:[/] {escape(str(error))}", markup=True, highlight=False, soft_wrap=True)
            raise typer.Exit(error.exit_code) from None

    return wrapper  # type: ignore[return-value]


def settings_for(config: Path | None, **flags: Any) -> dict[str, Any]:
    settings = merge(flags, load_config(config))
    if settings["on_error"] not in ("fail", "skip"):
        raise InputError(f"--on-error must be fail or skip, not {settings['on_error']!r}")
    return settings


def exit_code(reports: list[FileReport], failures: list[Failure], fail_under: float | None, on_error: str) -> int:
    """2 for bad files (unless skipped), else 1 for a failed gate, else 0."""
    if failures and (on_error != "skip" or any(f.exit_code == EXIT_SUMMARIZER for f in failures)):
        # A summarizer failure is never skipped: its file was not written.
        return max(failure.exit_code for failure in failures)
    total = totals(reports)
    reasons = [_gate_reason(report) for report in reports if report.gate_failed]
    if fail_under is not None and reports and (total["reduction"] or 0.0) * 100 < fail_under:
        measured = "none measured (no AFTER)" if total["reduction"] is None else _pct(total["reduction"])
        reasons.append(f"total reduction {measured} is under --fail-under {fail_under:g}%")
    for reason in reasons:  # a CI log must say which gate failed, --quiet or not
        stderr.print(f"[bold red]gate failed:[/] {escape(reason)}", soft_wrap=True)
    if reasons:
        return EXIT_GATE
    return EXIT_OK if reports or not failures else EXIT_INPUT


def _gate_reason(report: FileReport) -> str:
    if report.facts_missing:
        return f"{report.file}: facts missing: {', '.join(repr(fact) for fact in report.facts_missing)}"
    return f"{report.file}: output not API-valid: {report.violation_after}"


def emit(reports: list[FileReport], failures: list[Failure], as_json: bool, quiet: bool, to_stderr: bool) -> None:
    """The report: JSON, or rich tables; on stderr when stdout carries a transcript."""
    errors = [{"file": f.file, "error": f.error} for f in failures]
    if as_json:
        data = orjson.dumps(report_json(reports, errors), option=orjson.OPT_INDENT_2) + b"\n"
        (sys.stderr.buffer if to_stderr else sys.stdout.buffer).write(data)
        return
    out = stderr if to_stderr else console()
    for failure in failures:
        # A summarizer error names the server, not the file: the line says which file it stopped.
        named = failure.error if failure.file in failure.error else f"{failure.file}: {failure.error}"
        stderr.print(f"[bold red]error:[/] {escape(named)}", soft_wrap=True)
    if quiet or (not reports and len(failures) < 2):
        return
    if len(reports) == 1 and not failures:
        report = reports[0]
        out.print(f"[bold]{report.file}[/] ({report.format}, {report.transcripts} transcript(s))")
        out.print(render_one(report))
    else:
        out.print(render_files(reports, failures))
    for report in reports:
        for when, violation in (("before", report.violation_before), ("after", report.violation_after)):
            if violation:
                out.print(f"[red]not API-valid {when}:[/] {report.file}: {violation}", soft_wrap=True)
    notes = {note for report in reports for note in report.notes}
    for note in sorted(notes):
        out.print(f"[yellow]note:[/] {note}", soft_wrap=True)


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value * 100:.1f}%"


def _num(value: int | None) -> str:
    return "-" if value is None else f"{value:,}"


def _validity(valid: bool | None) -> str:
    if valid is None:
        return "-"
    return "[green]yes[/]" if valid else "[red]no[/]"


def _facts(report: FileReport) -> str:
    text = f"{report.facts_preserved}/{report.facts_required}"
    return f"[red]{text}[/] missing: {', '.join(map(repr, report.facts_missing))}" if report.facts_missing else text


def render_one(report: FileReport) -> Table:
    """Before and after side by side; with no after, one column."""
    compared = report.tokens_after is not None
    after_roles = report.tokens_by_role_after or {}
    rows: list[tuple[str, str, str]] = [
        ("tokens", _num(report.tokens_before), _num(report.tokens_after)),
        ("messages", _num(report.messages_before), _num(report.messages_after)),
        *(
            (f"  {role} tokens", _num(report.tokens_by_role_before.get(role, 0)), _num(after_roles.get(role, 0)))
            for role in sorted(set(report.tokens_by_role_before) | set(after_roles))
        ),
        ("tool output share", _pct(report.tool_output_share_before), _pct(report.tool_output_share_after)),
        ("API-valid", _validity(report.valid_before), _validity(report.valid_after)),
    ]
    if compared:
        rows.append(("[bold]reduction", "", f"[bold]{_pct(report.reduction)}"))
    rows.append(("facts kept" if compared else "facts present", "", _facts(report)))
    if report.api_usage:
        rows.append(("API-reported input", _api_usage(report.api_usage), ""))
    if report.summarizer_calls:
        tokens = report.summarizer_prompt_tokens + report.summarizer_completion_tokens
        plural = "" if report.summarizer_calls == 1 else "s"
        usage = f"{report.summarizer_calls} call{plural}, " + (
            f"{report.summarizer_prompt_tokens:,} in / {report.summarizer_completion_tokens:,} out"
            if tokens
            else "no tokens billed"
        )
        if report.summary_truncated:
            usage += f", [red]{report.summary_truncated} truncated[/]"
        rows.append(("summarizer", "", usage))
    table = Table()
    table.add_column("")
    table.add_column("before", justify="right")
    if compared:
        table.add_column("after", justify="right")
    for label, before, after in rows:
        table.add_row(label, before, after) if compared else table.add_row(label, before or after)
    return table


def _api_usage(usage: dict[str, Any]) -> str:
    """Reported against counted input tokens of the calls a transcript recorded."""
    difference = usage["difference_pct"]
    text = (
        f"{usage['calls']:,} calls: reported {usage['reported_input_tokens']:,}, "
        f"counted {usage['counted_input_tokens']:,}"
    )
    return text + (f" ({difference:+.1f}%)" if difference is not None else "")


def render_files(reports: list[FileReport], failures: Iterable[Failure] = ()) -> Table:
    failures = list(failures)
    compared = any(r.tokens_after is not None for r in reports)
    title = f"{len(reports)} files" + (f", {len(failures)} failed" if failures else "")
    table = Table(title=title, title_justify="left")
    table.add_column("file", overflow="fold", min_width=12)
    columns = ["tokens before", "tokens after", "reduction"] if compared else ["tokens"]
    for name in [*columns, "messages", "tool share", "facts", "API-valid"]:
        table.add_column(name, justify="right")
    for r in reports:
        messages = f"{r.messages_before:,}" + (f" -> {r.messages_after:,}" if r.messages_after is not None else "")
        valid = r.valid_after if r.valid_after is not None else r.valid_before
        share = r.tool_output_share_after if r.tool_output_share_after is not None else r.tool_output_share_before
        tokens = (
            [_num(r.tokens_before), _num(r.tokens_after), _pct(r.reduction)] if compared else [_num(r.tokens_before)]
        )
        table.add_row(r.file, *tokens, messages, _pct(share), _facts(r), _validity(valid))
    for failure in failures:  # the bad files are named in the table too, not only above it
        table.add_row(f"[red]{escape(failure.file)}", "[red]failed", *[""] * (len(table.columns) - 2))
    total = totals(reports)
    tokens = (
        [_num(total["tokens_before"]), _num(total["tokens_after"]), _pct(total["reduction"])]
        if compared
        else [_num(total["tokens_before"])]
    )
    facts = f"{total['facts_preserved']}/{total['facts_required']}"
    table.add_row("[bold]total", *tokens, "", "", facts, "")
    return table


def check_output_format(to: str | None) -> None:
    """An unknown --to is bad usage, caught before any file is read."""
    if to is not None:
        from compactctl.formats import get_format

        get_format(to)


def write_jsonl(path: Path, entries: Iterable[dict[str, Any]]) -> None:
    try:
        write_atomic(str(path), b"".join(orjson.dumps(entry) + b"\n" for entry in entries))
    except OSError as error:  # a manifest or archive that cannot be written is an error line, not a traceback
        raise InputError(f"cannot write: {error.strerror or error}", str(path)) from None


def finish_compaction(
    planned: list[Job],
    results: list[FileCompaction],
    failures: list[Failure],
    settings: dict[str, Any],
    *,
    manifest: Path | None,
    as_json: bool,
    quiet: bool,
    to_stderr: bool,
) -> NoReturn:
    """What compact and prune do once the files are done: manifest, report, where it went, exit code."""
    if manifest is not None:
        write_jsonl(manifest, (entry for result in results for entry in result.manifest))
    reports = [result.report for result in results]
    emit(reports, failures, as_json, quiet, to_stderr)
    announce_written(planned, failures, quiet or as_json)
    raise typer.Exit(exit_code(reports, failures, settings["fail_under"], settings["on_error"]))


def announce_written(jobs: list[Job], failures: list[Failure], quiet: bool) -> None:
    """Say where the outputs went (on stderr: stdout may carry the data)."""
    failed = {failure.file for failure in failures}
    written = [job.target for job in jobs if job.source not in failed and job.target not in (None, STDIO)]
    if quiet or not written:
        return
    stderr.print(f"wrote {written[0]}" if len(written) == 1 else f"wrote {len(written)} files")


def progress_wanted(quiet: bool) -> bool:
    return not quiet and sys.stderr.isatty()
