"""How a command ends: an error as one line, the gates, the exit code (one rule for every command)."""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

from compactctl import interrupts, jsonbytes
from compactctl.cli.markup import escape
from compactctl.cli.options import as_flags
from compactctl.cli.outcome import document, error_document, exit_code, file_entries, report_gates, with_sources
from compactctl.cli.render import emit, progress_wanted, say_skipped, stderr, write_json
from compactctl.config import (
    BatchOptions,
    EngineOptions,
    GateOptions,
    InputOptions,
    OutcomeOptions,
    WriteOptions,
)
from compactctl.errors import EXIT_GATE, EXIT_INPUT, EXIT_OK, CompactctlError, InputError
from compactctl.files.compact import FileCompaction, compact_file
from compactctl.files.io import STDIO, Job, Staged, one_unit, write_atomic
from compactctl.files.jobs import Failure, run_jobs
from compactctl.reporting import FileReport, report_json

if TYPE_CHECKING:
    from compactctl.cli.options import Given
    from compactctl.summarizers import Summarizer
    from compactctl.tokens import TokenCounter

F = TypeVar("F", bound=Callable[..., Any])


def handle_errors(command: F) -> F:
    """Print a CompactctlError as one line on stderr and exit with its code; with --json, the
    run's document too, with the error, so a CI step parsing stdout always gets JSON."""

    @functools.wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            if kwargs.get("junit") == STDIO and kwargs.get("as_json"):  # two documents on one stream
                raise InputError("--junit - and --json would both write to stdout; give --junit a file")
            return command(*args, **kwargs)
        except KeyboardInterrupt as interrupt:  # Ctrl-C, SIGTERM, SIGHUP: exit 128 + N at once
            interrupts.stop_now(interrupt)
        except CompactctlError as error:
            # Escaped: a message may hold brackets ("pip install 'compactctl[plot]'") that are not markup.
            said = escape(as_flags(str(error)))
            stderr.print(f"[bold red]error:[/] {said}", markup=True, highlight=False, soft_wrap=True)
            doc = error_document(command.__name__, error)
            if kwargs.get("as_json"):
                write_json(doc)
            # The run stopped, and CI is told so the way it asked (never over a path the command was given,
            # nor where the error is that --junit's file cannot be written: it is said once).
            outcome = asked_by_flags(kwargs)
            if outcome.junit and "--junit" in said:
                outcome = OutcomeOptions(annotations=outcome.annotations)
            ci_reports(doc, outcome, given_paths(kwargs))
            raise SystemExit(error.exit_code) from None

    return wrapper  # type: ignore[return-value]


def asked_by_flags(given: Mapping[str, Any]) -> OutcomeOptions:
    """The CI reports a run asked for by flag (``--annotations``, ``--junit``), for one that stopped
    before its settings were read: the command's own keyword arguments, as Typer gave them."""
    return OutcomeOptions(annotations=given.get("annotations"), junit=given.get("junit"))


def given_paths(given: Mapping[str, Any]) -> list[tuple[str, str]]:
    """The paths a command was given as its inputs and output (Typer's keyword arguments), each with what it
    is: what a run that stopped early must not write a --junit report over, as its document lists no file."""
    paths: list[tuple[str, str]] = []
    for key in ("inputs", "before", "after", "compacted", "vs_compacted", "output"):
        value = given.get(key)
        what = "an output" if key == "output" else "an input"
        for path in value if isinstance(value, (list, tuple)) else [value]:
            if isinstance(path, str) and path != STDIO:
                paths.append((path, what))
    return paths


def junit_clash(junit: str, doc: Mapping[str, Any], given: Iterable[tuple[str, str]] = ()) -> str | None:
    """What a --junit file would replace: an input or an output of the run (an input is never overwritten,
    SPEC), or a transcript inside a folder given as an input; None where it replaces neither."""
    from compactctl.files.io import same_file
    from compactctl.formats import SUFFIXES

    given = list(given)
    named = [(entry.get(key), what) for entry in doc.get("files", []) for key, what in
             (("file", "an input"), ("after", "an input"), ("output", "an output"))]  # fmt: skip
    for path, what in [*named, *given]:
        if isinstance(path, str) and path != STDIO and Path(path).is_file() and same_file(path, junit):
            return what
    target = Path(junit).resolve()
    if target.suffix in SUFFIXES and target.is_file():
        for folder in (Path(path) for path, what in given if what == "an input" and Path(path).is_dir()):
            if target.is_relative_to(folder.resolve()):
                return "a transcript of an input folder"
    return None


def build_document(
    command: str,
    jobs: Sequence[Job],
    bodies: Iterable[Mapping[str, Any]],
    failures: Sequence[Failure],
    outcome: OutcomeOptions,
    *,
    gates: list[dict[str, Any]] | None = None,
    written: bool = False,
    total: Mapping[str, Any] | None = None,
    write_unchanged: bool = False,
) -> dict[str, Any]:
    """The run's document: each input's entry, the gates, the totals and the exit code by the one rule."""
    entries = file_entries(jobs, bodies, failures, written, write_unchanged)
    gates = with_sources(gates or [], jobs)
    done = sum(1 for entry in entries if entry["status"] != "failed")
    code = exit_code(failures, done, gates, outcome.max_failed_files or 0)
    return document(command, entries, gates, code, total)


def finish(doc: Mapping[str, Any], outcome: OutcomeOptions) -> NoReturn:
    """Name every failed gate on stderr (--quiet or not, whatever else failed), write the
    annotations and the JUnit report if asked, and exit with the document's code."""
    say_skipped(doc["files"])
    for gate in doc["gates"]:
        if not gate["passed"]:
            for failing in gate.get("files") or ():
                stderr.print(f"[bold red]gate failed:[/] {escape(failing['file'])}: {escape(failing['reason'])}")
            if not gate.get("files"):
                stderr.print(f"[bold red]gate failed:[/] {escape(gate['reason'])}", soft_wrap=True)
    tolerated = doc["total"]["failed"] if doc["exit_code"] in (EXIT_OK, EXIT_GATE) else 0
    if tolerated:
        limit = outcome.max_failed_files
        stderr.print(f"[yellow]note:[/] {tolerated} file(s) failed, within --max-failed-files {limit}")
    ci_reports(doc, outcome)
    raise SystemExit(doc["exit_code"])


def ci_reports(doc: Mapping[str, Any], outcome: OutcomeOptions, given: Iterable[tuple[str, str]] = ()) -> None:
    """--annotations github (workflow commands on stderr) and --junit FILE, from the run document; a --junit
    file that is one of the run's inputs or outputs (``given``: the paths the command was given) is refused."""
    if outcome.annotations == "github":
        from compactctl.ci import github_annotations, repo_root

        for line in github_annotations(doc, repo_root()):
            print(line, file=sys.stderr)
    junit = outcome.junit
    if junit:
        from compactctl.ci import junit_xml

        clash = junit_clash(str(junit), doc, given)
        if clash is not None:
            said = f"{junit}: --junit would overwrite {clash}; choose another file"
            stderr.print(f"[bold red]error:[/] {escape(said)}", soft_wrap=True)
            raise SystemExit(EXIT_INPUT)
        try:
            write_atomic(str(junit), junit_xml(doc))
        except InputError as error:  # write_atomic names the file and what went wrong
            stderr.print(f"[bold red]error:[/] {escape(as_flags(str(error)))}")
            raise SystemExit(EXIT_INPUT) from None


def finish_report(
    command: str,
    jobs: list[Job],
    reports: list[FileReport],
    failures: list[Failure],
    outcome: OutcomeOptions,
    *,
    fail_under: float | None,
    as_json: bool,
    quiet: bool,
    to_stderr: bool = False,
    written: bool = False,
    write_unchanged: bool = False,
) -> NoReturn:
    """Print the report and exit by the one rule, the gates (``--fail-under``) included."""
    gates = report_gates(reports, fail_under)
    body = report_json(reports, [])
    doc = build_document(
        command, jobs, body["files"], failures, outcome, gates=gates, written=written, total=body["total"],
        write_unchanged=write_unchanged,
    )  # fmt: skip
    emit(doc, reports, as_json, quiet, to_stderr)
    if written:
        announce_written(doc, quiet or as_json)
    finish(doc, outcome)


def write_jsonl(path: Path, entries: Iterable[dict[str, Any]], like: Iterable[str] = ()) -> None:
    # An error writing it is an InputError naming the file (write_atomic), not a traceback.
    write_atomic(str(path), b"".join(jsonbytes.dumps(entry) + b"\n" for entry in entries), like)


def finish_compaction(
    command: str,
    planned: list[Job],
    results: list[FileCompaction],
    failures: list[Failure],
    outcome: OutcomeOptions,
    *,
    fail_under: float | None,
    write_unchanged: bool,
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
    if kept_back:
        named = " and ".join(f"--{flag}" for flag, path in (("manifest", manifest), ("archive", archive)) if path)
        stderr.print(f"nothing written: the outputs and {named} are one unit, and {len(failures)} file(s) failed")
    finish_report(
        command,
        planned,
        reports,
        failures,
        outcome,
        fail_under=fail_under,
        as_json=as_json,
        quiet=quiet,
        to_stderr=to_stderr,
        written=not kept_back,
        write_unchanged=write_unchanged,
    )


def compact_and_finish(
    command: str,
    planned: list[Job],
    steps: Sequence[str],
    settings: Given,
    counter: TokenCounter,
    summarizer: Summarizer | None = None,
    *,
    to: str | None,
    manifest: Path | None,
    archive: Path | None = None,
    as_json: bool,
    quiet: bool,
    to_stderr: bool = False,
    show: Callable[[list[FileCompaction], bool], None] | None = None,
) -> NoReturn:
    """compact's and prune's run: every planned file through ``compact_file`` as one unit, then
    ``finish_compaction``; ``show`` prints what the command adds once the files are done (prune's
    --explain), and keeps the manifest it needs."""
    strategies, gates, written = settings.strategies(), settings.of(GateOptions), settings.of(WriteOptions)
    with one_unit() as unit:
        results, failures = run_jobs(
            planned,
            lambda job: compact_file(
                job,
                steps,
                strategies,
                counter,
                summarizer,
                read=settings.of(InputOptions),
                gates=gates,
                database=settings.database(),
                written=written,
                to=to,
                archive=archive is not None,
                keep_manifest=manifest is not None or show is not None,
            ),
            settings.of(BatchOptions).jobs,
            progress_wanted(quiet),
            settings.of(EngineOptions).engine,
        )
        to_stderr = to_stderr or any(job.target == STDIO for job in planned)
        if show is not None:
            show(results, to_stderr)
        finish_compaction(
            command,
            planned,
            results,
            failures,
            settings.of(OutcomeOptions),
            fail_under=gates.fail_under,
            write_unchanged=written.write_unchanged,
            manifest=manifest,
            as_json=as_json,
            quiet=quiet,
            to_stderr=to_stderr,
            unit=unit,
            archive=archive,
        )


def announce_written(doc: Mapping[str, Any], quiet: bool) -> None:
    """Say where the outputs went (on stderr: stdout may carry the data)."""
    written = [entry["output"] for entry in doc["files"] if entry["output"] not in (None, STDIO)]
    if quiet or not written:
        return
    stderr.print(f"wrote {written[0]}" if len(written) == 1 else f"wrote {len(written)} files")
