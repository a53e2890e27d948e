"""A run's outcome, one document for every command: files with their status, gates, totals, exit code.

The document is what ``--json`` prints (``compactctl/schema/run.schema.json``, version 2), and
what the table header, ``--annotations github`` and ``--junit`` are rendered from, so they agree.
Paths are as given on the command line (a folder's files joined to the folder as given);
``output`` is the path written for the file.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from compactctl.cli.options import as_flags
from compactctl.errors import EXIT_GATE, EXIT_INPUT, EXIT_OK, EXIT_SUMMARIZER, CompactctlError
from compactctl.files.io import STDIO, Job
from compactctl.files.jobs import Failure
from compactctl.formats.records import SkippedLine
from compactctl.reporting import FileReport, skipped_note, totals

JSON_VERSION = 2
SCHEMA = Path(__file__).resolve().parents[1] / "schema" / "run.schema.json"


def file_entries(
    jobs: Sequence[Job],
    bodies: Iterable[Mapping[str, Any]],
    failures: Sequence[Failure],
    written: bool,
    write_unchanged: bool = False,
) -> list[dict[str, Any]]:
    """One entry per input, in the order given: its figures, where it was written, its status and why.

    ``bodies`` are the JSON of the files that gave a result, in job order (a failed job gives none);
    ``written``: the jobs' targets are outputs this command wrote, but for a file nothing changed
    (``unchanged_reason``), which compact copies only with ``--write-unchanged`` (or to stdout).
    """
    failed = Counter(failure.file for failure in failures)
    by_file: dict[str, list[Failure]] = {}
    for failure in failures:
        by_file.setdefault(failure.file, []).append(failure)
    results = iter(bodies)
    entries: list[dict[str, Any]] = []
    for job in jobs:
        if failed[job.source]:
            failed[job.source] -= 1
            failure = by_file[job.source].pop(0)
            entries.append(
                {
                    "file": job.source,
                    "name": job.name,
                    "output": None,
                    "status": "failed",
                    "reason": as_flags(failure.error),
                    "line": failure.line,
                    "exit_code": failure.exit_code,
                    "skipped_lines": [],
                }
            )
            continue
        body = dict(next(results))
        status, reason = status_of(body)
        copied = not body.get("unchanged_reason") or write_unchanged or job.target == STDIO
        output = job.target if written and copied else None
        entries.append({**body, "file": job.source, "name": job.name, "output": output, "status": status})
        if not written and job.target is not None:  # report and eval read BEFORE against AFTER
            entries[-1]["after"] = job.target
        entries[-1]["reason"] = reason
        entries[-1].setdefault("skipped_lines", [])
    return entries


def status_of(body: Mapping[str, Any]) -> tuple[str, str | None]:
    """skipped-lines when --on-error skip left lines out; unchanged when nothing changed; else ok."""
    skipped = body.get("skipped") or []
    if skipped:
        return "skipped-lines", skipped_note([SkippedLine(s["line"], s["problem"]) for s in skipped])
    if body.get("unchanged_reason"):  # compact's own word on why nothing changed
        return "unchanged", str(body["unchanged_reason"])
    after = body.get("tokens_after")
    if (
        after is not None
        and after == body.get("tokens_before")
        and body.get("messages_after") == body.get("messages_before")
    ):  # report BEFORE AFTER, or a step that changed nothing it measures
        return "unchanged", "the same tokens and messages after as before"
    return "ok", None


def report_gates(reports: Sequence[FileReport], fail_under: float | None) -> list[dict[str, Any]]:
    """Every gate the run evaluated and its result: facts kept, output API-valid, --fail-under."""
    from compactctl.cli.render import pct

    gates: list[dict[str, Any]] = []
    if reports:
        lost = [(r.file, f"facts missing: {', '.join(map(repr, r.facts_missing))}") for r in reports if r.facts_missing]
        required = sum(r.facts_required for r in reports)
        gates.append(
            _gate(
                "facts",
                lost,
                f"{len(lost)} file(s) lost facts",
                f"every fact kept ({sum(r.facts_preserved for r in reports)}/{required})",
            )
        )
    compared = [r for r in reports if r.valid_after is not None]
    if compared:
        invalid = [
            (r.file, f"output not API-valid: {r.violation_after}")
            for r in compared
            if r.valid_after is False and r.valid_before
        ]
        gates.append(
            _gate(
                "api-valid",
                invalid,
                f"{len(invalid)} output(s) not API-valid",
                "every output API-valid where its input was",
            )
        )
    if fail_under is not None:
        reduction = totals(list(reports))["reduction"] if reports else None
        measured = None if reduction is None else round(reduction * 100, 2)
        passed = measured is not None and measured >= fail_under
        said = "none measured (no file read)" if not reports else "none measured (no AFTER)"
        shown = said if reduction is None else pct(reduction)
        relation = "is at least" if passed else "is under"
        gates.append(
            {
                "name": "fail-under",
                "passed": passed,
                "reason": f"total reduction {shown} {relation} --fail-under {fail_under:g}%",
                "threshold": fail_under,
                "measured": measured,
            }
        )
    return gates


def _gate(name: str, failing: list[tuple[str, str]], failed: str, passed: str) -> dict[str, Any]:
    gate: dict[str, Any] = {"name": name, "passed": not failing, "reason": failed if failing else passed}
    if failing:
        gate["files"] = [{"file": file, "reason": reason} for file, reason in failing]
    return gate


def with_sources(gates: list[dict[str, Any]], jobs: Sequence[Job]) -> list[dict[str, Any]]:
    """Gate files named as the entries are, by the path given (reports name files by relative path)."""
    source = {job.name: job.source for job in jobs}
    for gate in gates:
        for failing in gate.get("files", ()):
            failing["file"] = source.get(failing["file"], failing["file"])
    return gates


def exit_code(
    failures: Sequence[Failure], done: int, gates: Sequence[Mapping[str, Any]], max_failed_files: int = 0
) -> int:
    """The one exit rule: 3 when the summarizer failed; 2 when more files failed than
    ``--max-failed-files`` allows (or none gave a result); else 1 when a gate failed; else 0."""
    if any(failure.exit_code == EXIT_SUMMARIZER for failure in failures):
        return EXIT_SUMMARIZER  # never tolerated: the file was not written, its figures are missing
    if len(failures) > max_failed_files or (failures and not done):
        return max(failure.exit_code for failure in failures)
    if any(not gate["passed"] for gate in gates):
        return EXIT_GATE
    return EXIT_OK


def run_totals(entries: Sequence[Mapping[str, Any]]) -> dict[str, int]:
    """The header's counts: inputs, written, unchanged, failed, lines skipped."""
    return {
        "inputs": len(entries),
        "written": sum(1 for e in entries if e["output"] not in (None, STDIO) and e["status"] != "failed"),
        "unchanged": sum(1 for e in entries if e["status"] == "unchanged"),
        "failed": sum(1 for e in entries if e["status"] == "failed"),
        "skipped_lines": sum(len(e.get("skipped_lines") or ()) for e in entries),
    }


def document(
    command: str,
    entries: list[dict[str, Any]],
    gates: list[dict[str, Any]],
    code: int,
    total: Mapping[str, Any] | None = None,
    error: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """The run document (``--json``): version, command, exit code, error, files, failed, gates, total."""
    failed = [
        {"file": e["file"], "error": e["reason"], "line": e.get("line"), "exit_code": _failed_code(e)}
        for e in entries
        if e["status"] == "failed"
    ]
    return {
        "version": JSON_VERSION,
        "command": command,
        "exit_code": code,
        "error": dict(error) if error else None,
        "files": entries,
        "failed": failed,
        "gates": gates,
        "total": {**(total or {}), **run_totals(entries)},
    }


def _failed_code(entry: Mapping[str, Any]) -> int:
    return int(entry.get("exit_code") or EXIT_INPUT)


def error_document(command: str, error: CompactctlError | str, kind: str | None = None) -> dict[str, Any]:
    """The document of a run that did not start: a usage error, a bad flag value, no such input."""
    code = error.exit_code if isinstance(error, CompactctlError) else EXIT_INPUT
    kind = kind or ("summarizer" if code == EXIT_SUMMARIZER else "input")
    return document(command, [], [], code, error={"kind": kind, "message": as_flags(str(error))})
