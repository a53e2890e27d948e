"""How a command ends: an error as one line, the gates, the exit code (one rule for every command)."""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any, NoReturn, TypeVar

import orjson
import typer
from rich.markup import escape

from compactctl import interrupts
from compactctl.cli.render import emit, pct, stderr
from compactctl.errors import EXIT_GATE, EXIT_INPUT, EXIT_OK, EXIT_SUMMARIZER, CompactctlError, InputError
from compactctl.files.compact import FileCompaction
from compactctl.files.io import STDIO, Failure, Job, write_atomic
from compactctl.reporting import FileReport, totals

F = TypeVar("F", bound=Callable[..., Any])


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


def exit_code(failures: Sequence[Failure], on_error: str, done: int, gates: Sequence[str] = ()) -> int:
    """The one exit rule: 2 (or 3) for bad files unless skipped, else 1 for a failed gate, else 0.

    ``done`` is how many files gave a result; with none, skipping every file is still bad input.
    """
    if failures and (on_error != "skip" or any(f.exit_code == EXIT_SUMMARIZER for f in failures)):
        # A summarizer failure is never skipped: its file was not written, its figures are missing.
        return max(failure.exit_code for failure in failures)
    for reason in gates:  # a CI log must say which gate failed, --quiet or not
        stderr.print(f"[bold red]gate failed:[/] {escape(reason)}", soft_wrap=True)
    if gates:
        return EXIT_GATE
    return EXIT_OK if done or not failures else EXIT_INPUT


def gates_failed(reports: list[FileReport], fail_under: float | None) -> list[str]:
    """Why each failed gate failed: facts missing, output not API-valid, total reduction under --fail-under."""
    reasons = [_gate_reason(report) for report in reports if report.gate_failed]
    total = totals(reports)
    if fail_under is not None and reports and (total["reduction"] or 0.0) * 100 < fail_under:
        measured = "none measured (no AFTER)" if total["reduction"] is None else pct(total["reduction"])
        reasons.append(f"total reduction {measured} is under --fail-under {fail_under:g}%")
    return reasons


def finish_report(
    command: str,
    reports: list[FileReport],
    failures: list[Failure],
    settings: dict[str, Any],
    *,
    as_json: bool,
    quiet: bool,
    to_stderr: bool = False,
) -> NoReturn:
    """Print the report and exit by the one rule, the gates included."""
    emit(command, reports, failures, as_json, quiet, to_stderr)
    gates = gates_failed(reports, settings["fail_under"])
    raise typer.Exit(exit_code(failures, settings["on_error"], len(reports), gates))


def _gate_reason(report: FileReport) -> str:
    if report.facts_missing:
        return f"{report.file}: facts missing: {', '.join(repr(fact) for fact in report.facts_missing)}"
    return f"{report.file}: output not API-valid: {report.violation_after}"


def write_jsonl(path: Path, entries: Iterable[dict[str, Any]]) -> None:
    try:
        write_atomic(str(path), b"".join(orjson.dumps(entry) + b"\n" for entry in entries))
    except OSError as error:  # a manifest or archive that cannot be written is an error line, not a traceback
        raise InputError(f"cannot write: {error.strerror or error}", str(path)) from None


def finish_compaction(
    command: str,
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
    emit(command, reports, failures, as_json, quiet, to_stderr)
    announce_written(planned, failures, quiet or as_json)
    gates = gates_failed(reports, settings["fail_under"])
    raise typer.Exit(exit_code(failures, settings["on_error"], len(reports), gates))


def announce_written(jobs: list[Job], failures: list[Failure], quiet: bool) -> None:
    """Say where the outputs went (on stderr: stdout may carry the data)."""
    failed = {failure.file for failure in failures}
    written = [job.target for job in jobs if job.source not in failed and job.target not in (None, STDIO)]
    if quiet or not written:
        return
    stderr.print(f"wrote {written[0]}" if len(written) == 1 else f"wrote {len(written)} files")
