"""What the commands print: the report tables, the notes, and the run document of --json (cli/outcome.py)."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, cast

from compactctl import jsonbytes
from compactctl.cli.markup import escape
from compactctl.reporting import FileReport, totals

if TYPE_CHECKING:  # rich is imported when something is printed: a quiet run that goes well prints nothing
    from rich.console import Console, RenderableType
    from rich.table import Table


def write_json(data: Mapping[str, Any], to_stderr: bool = False) -> None:
    (sys.stderr.buffer if to_stderr else sys.stdout.buffer).write(jsonbytes.dumps(data, indent=True) + b"\n")


# Piped or in CI, rich would fold tables to 80 columns; a log reads better a little wider.
PIPED_WIDTH = 140


def console(to_stderr: bool = False) -> Console:
    """A console for data (stdout) or diagnostics (stderr), wider than 80 columns when piped."""
    stream = sys.stderr if to_stderr else sys.stdout
    wide = None if stream.isatty() or "COLUMNS" in os.environ else PIPED_WIDTH  # COLUMNS: the width asked for
    from rich.console import Console

    return Console(stderr=to_stderr, highlight=False, width=wide)


FIRST_COLUMN = 20  # the least a first column (a file's path, folded) may take before the table stacks


def _narrowest(table: Table, out: Console) -> int:
    """The table's width with every cell wrapped at its spaces, the first column folded to FIRST_COLUMN."""
    from rich.measure import Measurement
    from rich.text import Text

    options = out.options.update_width(1_000_000)
    widths = [
        max(
            Measurement.get(out, options, Text.from_markup(str(cell))).minimum
            for cell in [column.header, *column.cells]
        )
        for column in table.columns
    ]
    if widths:
        widths[0] = min(widths[0], FIRST_COLUMN)
    return sum(widths) + 3 * len(widths) + 1  # a space either side and a rule after each, and the first rule


def fitted(table: Table, out: Console) -> RenderableType:
    """The table where it fits the console; else stacked, never a column dropped or cut: a block per
    row, its first cell on a line, then every other cell after its column's name, wrapped."""
    from rich.console import Group
    from rich.padding import Padding
    from rich.text import Text

    if _narrowest(table, out) <= out.width:
        return table
    columns = [(Text.from_markup(str(column.header)).plain, list(column.cells)) for column in table.columns]
    blocks: list[RenderableType] = [Text.from_markup(str(table.title))] if table.title else []
    for row in range(table.row_count):
        first = columns[0][1][row]
        figures = [f"{name} [bold]{cells[row]}[/]" for name, cells in columns[1:] if str(cells[row]).strip()]
        blocks.append(Text.from_markup(str(first) or "-", style="bold"))
        blocks.append(Padding(Text.from_markup(", ".join(figures)), (0, 0, 0, 2)))
    if table.caption:
        blocks.append(Text.from_markup(str(table.caption)))
    return Group(*blocks)


class _Diagnostics:
    """The stderr console, made at its first use (rich's console and its tables cost some 40 ms
    to import), its width fixed now, as the console made at import had it."""

    def __init__(self, width: int | None) -> None:
        self._width = width
        self._made: Console | None = None

    def __getattr__(self, name: str) -> Any:  # the console's own attributes, once it is made
        if name in ("_width", "_made"):  # not set yet (a copy being made): not the console's
            raise AttributeError(name)
        if self._made is None:
            from rich.console import Console

            self._made = Console(stderr=True, highlight=False, width=self._width)
        return getattr(self._made, name)


# COLUMNS is read by console(), when a command prints its report.
stderr = cast("Console", _Diagnostics(None if sys.stderr.isatty() else PIPED_WIDTH))


def emit(doc: Mapping[str, Any], reports: list[FileReport], as_json: bool, quiet: bool, to_stderr: bool) -> None:
    """The report: the run's JSON document, or rich tables; on stderr when stdout carries a transcript."""
    failed = [entry for entry in doc["files"] if entry["status"] == "failed"]
    if not (as_json and to_stderr):  # on stderr, --json or not (but for JSON on stderr: it stays pure)
        say_failures(failed)
    if as_json:
        write_json(doc, to_stderr)
        return
    if quiet or (not reports and len(failed) < 2):
        return
    out = stderr if to_stderr else console()
    if len(reports) == 1 and not failed:
        report = reports[0]
        out.print(f"[bold]{doc['files'][0]['file']}[/] ({report.format}, {report.transcripts} transcript(s))")
        out.print(render_one(report))
    else:
        out.print(fitted(render_files(reports, doc), out))
    given = [entry["file"] for entry in doc["files"] if entry["status"] != "failed"]  # in the reports' order
    for report, file in zip(reports, given, strict=True):
        for when, count, listed, open_calls in (
            ("before", report.violation_count_before, report.violations_before, report.open_calls_before),
            ("after", report.violation_count_after, report.violations_after, report.open_calls_after),
        ):
            for violation in listed or ():
                out.print(f"[red]not API-valid {when}:[/] {escape(file)}: {escape(violation)}", soft_wrap=True)
            if count and listed and count > len(listed):
                more = f"... {count} violations in all"
                out.print(f"[red]not API-valid {when}:[/] {escape(file)}: {more}", soft_wrap=True)
            for call in open_calls or ():
                out.print(
                    f"[yellow]note:[/] {escape(file)} ({when}) ends on an open call ({escape(call)}): a call still "
                    "running when the session was saved, not a fault",
                    soft_wrap=True,
                )
    for report, file in zip(reports, given, strict=True):
        for fact in report.facts_absent_before:
            out.print(
                f"[yellow]warning:[/] {escape(file)}: fact {escape(repr(fact))} is not in the input"
                " (facts_absent_before; --strict-facts makes it an error)",
                soft_wrap=True,
            )
    if len(reports) == 1 and not failed:  # the one file's table, under its name: its notes need none
        for note in sorted(set(reports[0].notes)):
            out.print(f"[yellow]note:[/] {note}", soft_wrap=True)
        return
    # Several files: each note says which files it is of (in the inputs' order), once for all of them.
    files_of: dict[str, list[str]] = {}
    for report, file in zip(reports, given, strict=True):
        for note in dict.fromkeys(report.notes):
            files_of.setdefault(note, []).append(file)
    for note, files in sorted(files_of.items(), key=lambda item: (given.index(item[1][0]), item[0])):
        named = ", ".join(files[:NOTE_FILES_NAMED]) + (
            f" and {len(files) - NOTE_FILES_NAMED} more" if len(files) > NOTE_FILES_NAMED else ""
        )
        out.print(f"[yellow]note:[/] {escape(named)}: {note}", soft_wrap=True)


NOTE_FILES_NAMED = 3  # a note of more files names the first few; --json has each file's own notes


SKIPPED_SHOWN = 20  # per file; --json lists every one


def say_skipped(entries: Iterable[Mapping[str, Any]]) -> None:
    """Every line ``--on-error skip`` left out, one warning each, ``FILE:LINE: what was wrong``: the
    same in every command, -q or not (a line of input was not read: that is never silent)."""
    for entry in entries:
        skipped = entry.get("skipped") or ()
        for line in skipped[:SKIPPED_SHOWN]:
            where = f"{line.get('file') or entry['file']}:{line['line']}"
            stderr.print(f"[yellow]skipped:[/] {escape(where)}: {escape(line['problem'])}", soft_wrap=True)
        if len(skipped) > SKIPPED_SHOWN:
            more = len(skipped) - SKIPPED_SHOWN
            stderr.print(f"[yellow]skipped:[/] {escape(entry['file'])}: {more} more line(s) (--json lists them all)")


def say_failures(failed: Iterable[Mapping[str, Any]]) -> None:
    """One error line per failed file, naming it as given."""
    for entry in failed:
        # A summarizer error names the server, not the file: the line says which file it stopped.
        error = entry["reason"]
        named = error if entry["file"] in error else f"{entry['file']}: {error}"
        stderr.print(f"[bold red]error:[/] {escape(named)}", soft_wrap=True)


def header(total: Mapping[str, Any]) -> str:
    """``10 inputs: 5 written, 1 unchanged, 4 failed, 3 lines skipped`` (read, for a command that writes nothing)."""
    done = total["inputs"] - total["failed"]
    parts = [f"{total['written']} written" if total["written"] else f"{done} read"]
    if total["unchanged"]:
        parts.append(f"{total['unchanged']} unchanged")
    parts.append(f"{total['failed']} failed")
    if total["skipped_lines"]:
        parts.append(f"{total['skipped_lines']} line(s) skipped")
    return f"{total['inputs']} inputs: {', '.join(parts)}"


def pct(value: float | None) -> str:
    return "-" if value is None else f"{value * 100:.1f}%"


def _num(value: int | None) -> str:
    return "-" if value is None else f"{value:,}"


def _validity(valid: bool | None) -> str:
    if valid is None:
        return "-"
    return "[green]yes[/]" if valid else "[red]no[/]"


def _facts(report: FileReport) -> str:
    text = f"{report.facts_preserved}/{report.facts_required}"
    if report.facts_missing:
        text = f"[red]{text}[/] missing: {', '.join(map(repr, report.facts_missing))}"
    if report.facts_absent_before:
        text += f" [yellow]({len(report.facts_absent_before)} not in the input)[/]"
    return text


def render_one(report: FileReport) -> RenderableType:
    """Before and after side by side; with no after, one column. What the input's usage says (sentences,
    not figures to compare) follows the table, a line each, so the columns stay as narrow as their figures."""
    compared = report.tokens_after is not None
    after_roles = report.tokens_by_role_after or {}
    rows: list[tuple[str, str, str]] = [
        ("tokens", _num(report.tokens_before), _num(report.tokens_after)),
        ("messages", _num(report.messages_before), _num(report.messages_after)),
        *(
            (f"  {role} tokens", _num(report.tokens_by_role_before.get(role, 0)), _num(after_roles.get(role, 0)))
            for role in sorted(set(report.tokens_by_role_before) | set(after_roles))
        ),
        ("tool output share", pct(report.tool_output_share_before), pct(report.tool_output_share_after)),
        ("API-valid", _validity(report.valid_before), _validity(report.valid_after)),
    ]
    if compared:
        rows.append(("[bold]reduction", "", f"[bold]{pct(report.reduction)}"))
    rows.append(("facts kept" if compared else "facts present", "", _facts(report)))
    usage_lines: list[tuple[str, str]] = []
    if report.api_usage:
        usage_lines.append(("API-reported input", _api_usage(report.api_usage)))
    if report.api_calibration:
        usage_lines.extend(_calibration_rows(report.api_calibration))
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
    from rich.table import Table

    table = Table()
    table.add_column("")
    table.add_column("before", justify="right")
    if compared:
        table.add_column("after", justify="right")
    for label, before, after in rows:
        table.add_row(label, before, after) if compared else table.add_row(label, before or after)
    if not usage_lines:
        return table
    from rich.console import Group
    from rich.text import Text

    of_input = " (before)" if compared else ""  # the usage is the input's: the output was never sent
    lines = [
        Text.from_markup(f"{label}{'' if label.startswith(' ') else of_input}: {text}") for label, text in usage_lines
    ]
    return Group(table, *lines)


def held_out_error(calls: int, median: float, p90: float) -> str:
    """The calibration's held-out error, or that there was no call to hold out (too few with usage)."""
    if not calls:
        return "no call held out"
    return f"held-out per-call error median {median:.1%}, p90 {p90:.1%}"


def _calibration_rows(recorded: dict[str, Any]) -> list[tuple[str, str]]:
    """(label, sentence) of reported vs counted vs calibrated input, the gap split and the producer's compactions."""
    rows: list[tuple[str, str]] = []
    if recorded["reported_input_tokens"]:
        error = recorded["calibration"]["error"]["held_out"]
        rows.append(
            (
                "API input, calibrated",
                # Every billed call (a subagent's, a side request's), where the row above counts the thread read:
                # its call count says why the two reported figures differ.
                f"{recorded['calls']:,} billed calls: reported {recorded['reported_input_tokens']:,}, "
                f"counted {recorded['counted_input_tokens']:,}, "
                f"calibrated {recorded['calibrated_input_tokens']:,} "
                f"({held_out_error(error['calls'], error['median'], error['p90'])})",
            )
        )
        gap = ", ".join(f"{key.replace('_', ' ')} {value:,}" for key, value in recorded["gap"].items())
        rows.append(("  gap", gap))
    compactions = recorded["producer_compactions"]
    if compactions:
        held = recorded["history_before_last_compaction"]
        rows.append(
            (
                "producer compactions",
                f"{compactions}; the last replaced {held['messages']:,} messages ({held['tokens']:,} tokens)",
            )
        )
    return rows


def _api_usage(usage: dict[str, Any]) -> str:
    """Reported against counted input tokens of the calls a transcript recorded."""
    difference = usage["difference_pct"]
    text = (
        f"{usage['calls']:,} calls: reported {usage['reported_input_tokens']:,}, "
        f"counted {usage['counted_input_tokens']:,}"
    )
    return text + (f" ({difference:+.1f}%)" if difference is not None else "")


def render_files(reports: list[FileReport], doc: Mapping[str, Any]) -> Table:
    """One row per input, as given, in order (failed ones too); the counts in the title."""
    compared = any(r.tokens_after is not None for r in reports)
    from rich.table import Table

    table = Table(title=header(doc["total"]), title_justify="left")
    table.add_column("file", overflow="fold", min_width=12)
    columns = ["tokens before", "tokens after", "reduction"] if compared else ["tokens"]
    for name in [*columns, "messages", "tool share", "facts", "API-valid"]:
        table.add_column(name, justify="right")
    read = iter(reports)
    for entry in doc["files"]:
        if entry["status"] == "failed":  # the bad files are named in the table too, not only above it
            table.add_row(f"[red]{escape(entry['file'])}", "[red]failed", *[""] * (len(table.columns) - 2))
            continue
        r = next(read)
        messages = f"{r.messages_before:,}" + (f" -> {r.messages_after:,}" if r.messages_after is not None else "")
        valid = r.valid_after if r.valid_after is not None else r.valid_before
        share = r.tool_output_share_after if r.tool_output_share_after is not None else r.tool_output_share_before
        tokens = (
            [_num(r.tokens_before), _num(r.tokens_after), pct(r.reduction)] if compared else [_num(r.tokens_before)]
        )
        label = escape(entry["file"]) + (f" [yellow]({entry['status']})[/]" if entry["status"] != "ok" else "")
        table.add_row(label, *tokens, messages, pct(share), _facts(r), _validity(valid))
    total = totals(reports)
    tokens = (
        [_num(total["tokens_before"]), _num(total["tokens_after"]), pct(total["reduction"])]
        if compared
        else [_num(total["tokens_before"])]
    )
    facts = f"{total['facts_preserved']}/{total['facts_required']}"
    table.add_row("[bold]total", *tokens, "", "", facts, "")
    return table


def note_left_out(inputs: list[str]) -> None:
    """Say which files given were left out as outputs of an earlier run (``compact dir/*.jsonl`` twice)."""
    from compactctl.files.io import left_out_outputs

    left_out = left_out_outputs(inputs)
    if left_out:
        shown = ", ".join(left_out[:3]) + (", ..." if len(left_out) > 3 else "")
        stderr.print(
            f"[yellow]note:[/] left out {len(left_out)} output(s) of an earlier run ({escape(shown)}); "
            "name one alone to read it",
            soft_wrap=True,
        )


def progress_wanted(quiet: bool) -> bool:
    """Progress on stderr unless -q: the bar on a terminal (none when piped: ``progress.progress_for``)."""
    return not quiet
