"""How a command ends: an error as one line, the gates, the exit code (one rule for every command)."""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any, NoReturn, TypeVar

import typer
from rich.markup import escape

from compactctl import interrupts, jsonbytes
from compactctl.cli.render import emit, pct, stderr
from compactctl.errors import EXIT_GATE, EXIT_INPUT, EXIT_OK, EXIT_SUMMARIZER, CompactctlError
from compactctl.files.compact import FileCompaction
from compactctl.files.io import STDIO, Failure, Job, Staged, write_atomic
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


def write_jsonl(path: Path, entries: Iterable[dict[str, Any]], like: Iterable[str] = ()) -> None:
    # An error writing it is an InputError naming the file (write_atomic), not a traceback.
    write_atomic(str(path), b"".join(jsonbytes.dumps(entry) + b"\n" for entry in entries), like)


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
    unit: Staged | None = None,
    archive: Path | None = None,
) -> NoReturn:
    """What compact and prune do once the files are done: manifest, archive, renames, report, exit code.

    The outputs, the --manifest and the --archive are one unit (``unit``): they were written as
    temporaries and are renamed together here. With a side file asked for, one failed file
    means none is renamed (the manifest would not describe what was written); without one, the
    files that succeeded are.
    """
    sources = [job.source for job in planned]
    side_files = manifest is not None or archive is not None
    kept_back = bool(failures) and side_files and unit is not None
    if not kept_back:
        if archive is not None:
            write_jsonl(archive, (entry for result in results for entry in result.archive), sources)
        if manifest is not None:
            write_jsonl(manifest, (entry for result in results for entry in result.manifest), sources)
        if unit is not None:
            unit.commit()
    elif unit is not None:
        unit.discard()
    reports = [result.report for result in results]
    emit(command, reports, failures, as_json, quiet, to_stderr)
    if kept_back:
        named = " and ".join(f"--{flag}" for flag, path in (("manifest", manifest), ("archive", archive)) if path)
        stderr.print(f"nothing written: the outputs and {named} are one unit, and {len(failures)} file(s) failed")
    else:
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
