"""``compactctl review``: one self-contained HTML page per file (and an index), or a terminal view.

Side A is the usual settings; any ``--vs-*`` setting makes a side B, a second compaction
of the same inputs shown beside A with the difference.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape

from compactctl.cli.exit import exit_code, handle_errors
from compactctl.cli.options import ConfigPath, Inputs, Quiet, command_settings, settings_for
from compactctl.cli.render import console, progress_wanted, stderr
from compactctl.compaction import check_steps
from compactctl.config import IO_PANEL, RunOptions, load_config, strategy_owners
from compactctl.errors import InputError
from compactctl.files.io import Job, run_jobs, write_atomic
from compactctl.files.review import ReviewSide, review_file, review_targets
from compactctl.review import FileReview, ReviewOptions, SideReview, TranscriptReview, sections, shown, side_b_asked
from compactctl.review.page import file_page, index_page
from compactctl.settings import Declared
from compactctl.summarizers.build import make_summarizer
from compactctl.summarizers.options import SummarizerOptions
from compactctl.tokens import TokenCounter, counter_for
from compactctl.transcript import content_text

NOT_HERE = ("dry_run", "fail_under", "require")  # review sends for real, writes pages, and gates nothing

PageOut = Annotated[
    str | None,
    typer.Option(
        "-o",
        "--output",
        help="The page (one input; default NAME.review.html beside it), or a folder for pages and index.html.",
        rich_help_panel=IO_PANEL,
    ),
]
Terminal = Annotated[
    bool, typer.Option("--terminal", help="Show one transcript in the terminal instead of writing a page.")
]
TranscriptChoice = Annotated[
    int, typer.Option("--transcript", help="--terminal: which transcript of the file (0 = the first).", min=0)
]


def declared_settings() -> dict[str, Declared]:
    owners = [("", RunOptions), *strategy_owners(), ("", SummarizerOptions), ("", ReviewOptions)]
    return command_settings(owners, exclude=NOT_HERE)


def describe(settings: dict[str, Any]) -> str:
    prompts = ", ".join(settings.get("prompt_file") or ()) or "shipped"
    return f"{' + '.join(settings['strategy'])}, {settings['summarizer']} summarizer, prompt {prompts}"


def side_b_settings(settings: dict[str, Any]) -> dict[str, Any]:
    """A's settings with B's settings file over them, then B's own flags."""
    b = dict(settings)
    if settings.get("vs_config"):
        b.update(load_config(Path(settings["vs_config"])))
    for mine, theirs in (
        ("vs_strategy", "strategy"),
        ("vs_prompt_file", "prompt_file"),
        ("vs_summarizer", "summarizer"),
    ):
        if settings.get(mine):
            b[theirs] = settings[mine]
    return b


def sides_for(settings: dict[str, Any], counter: TokenCounter) -> list[ReviewSide]:
    chosen = [("A", settings), *([("B", side_b_settings(settings))] if side_b_asked(settings) else [])]
    sides = []
    for name, one in chosen:
        check_steps(one["strategy"])
        sides.append(ReviewSide(name, describe(one), one, make_summarizer(one, counter)))
    if len(sides) == 2 and sides[0].description == sides[1].description and not settings.get("vs_config"):
        raise InputError("side B runs the same strategy, summarizer and prompt as side A; change one --vs-* setting")
    return sides


@handle_errors
def review(
    inputs: Inputs,
    output: PageOut = None,
    terminal: Terminal = False,
    transcript: TranscriptChoice = 0,
    quiet: Quiet = False,
    config: ConfigPath = None,
    **given: Any,
) -> None:
    """Write a review page: the summary beside the span it replaced, identifiers kept and lost, probes, figures.

    With --vs-strategy, --vs-prompt-file, --vs-summarizer or --vs-config, a second compaction (side B)
    is shown beside the first with the difference; over a folder, index.html lists the files by difference.
    """
    settings = settings_for(config, given)
    counter = counter_for(settings["encoding"])
    jobs, index = review_targets(inputs, output)
    sides = sides_for(settings, counter)
    if terminal:
        if len(jobs) != 1:
            raise InputError("--terminal shows one file; give one input")
        show_terminal(review_file(jobs[0], sides, counter), transcript)
        return
    results, failures = run_jobs(
        jobs,
        lambda job: _write_page(job, review_file(job, sides, counter)),
        settings["jobs"],
        progress_wanted(quiet),
    )
    if index is not None and results:
        links = [
            (result, str(Path(str(job.target)).name))
            for result, job in zip(results, _done(jobs, failures), strict=True)
        ]
        write_atomic(index, index_page(links, bool(settings["redact"])).encode(), [job.source for job in jobs])
    if not quiet:
        for job in _done(jobs, failures):
            stderr.print(f"wrote {escape(str(job.target))}", soft_wrap=True, highlight=False)
        if index is not None and results:
            stderr.print(f"wrote {escape(index)}", soft_wrap=True, highlight=False)
    for failure in failures:
        stderr.print(f"[bold red]error:[/] {escape(failure.file)}: {escape(failure.error)}", soft_wrap=True)
    raise typer.Exit(exit_code(failures, settings["on_error"], len(results)))


def _write_page(job: Job, reviewed: FileReview) -> FileReview:
    # The page shows the input's messages: it gets the input's mode, never a wider one.
    write_atomic(str(job.target), file_page(reviewed).encode(), [job.source])
    return reviewed


def _done(jobs: list[Any], failures: list[Any]) -> list[Any]:
    failed = {failure.file for failure in failures}
    return [job for job in jobs if job.source not in failed]


# --- the terminal view --------------------------------------------------------------------------


def show_terminal(reviewed: FileReview, which: int) -> None:
    """One transcript in the terminal: figures, the fate of every message, the summary by sections, identifiers lost."""
    from rich.panel import Panel
    from rich.table import Table

    if which >= len(reviewed.transcripts):
        raise InputError(f"--transcript {which}: the file holds {len(reviewed.transcripts)} transcript(s)")
    one: TranscriptReview = reviewed.transcripts[which]
    out = console()
    figures = Table(title=f"{reviewed.file} {one.label}".strip(), show_lines=False)
    figures.add_column("")
    for side in one.sides:
        figures.add_column(f"{side.name}: {side.settings}", justify="right")
    for label, value in (
        ("tokens", lambda s: f"{s.figures.tokens_before:,} → {s.figures.tokens_after:,}"),
        ("reduction", lambda s: f"{100 * s.figures.reduction:.1f}%"),
        ("messages", lambda s: f"{s.figures.messages_before:,} → {s.figures.messages_after:,}"),
        ("identifiers kept", lambda s: f"{s.figures.identifiers_kept} / {s.figures.identifiers}"),
        ("eval probes passed", lambda s: f"{s.figures.probes_passed} / {s.figures.probes}"),
    ):
        figures.add_row(label, *(value(side) for side in one.sides))
    out.print(figures)
    fates = Table(show_header=True, header_style="bold", expand=True)
    fates.add_column("#", justify="right")
    fates.add_column("role")
    for side in one.sides:
        fates.add_column(side.name)
    fates.add_column("text", ratio=1, no_wrap=True)
    styles = {"kept": "green", "summarized": "magenta", "elided": "yellow", "removed": "red", "restored": "blue"}
    for index, message in enumerate(one.messages):
        cells = []
        for side in one.sides:
            entry = side.compaction.manifest[index]
            cells.append(f"[{styles.get(entry.action, 'white')}]{entry.action}[/]")
        preview = shown(" ".join(content_text(message).split())[:200], reviewed.redact)[0]
        fates.add_row(str(index), str(message.get("role")), *cells, escape(preview))
    out.print(fates)
    for side in one.sides:
        _side_panels(out, side, reviewed.redact, Panel)


def _side_panels(out: Any, side: SideReview, redact: bool, panel: Any) -> None:
    for span in side.spans:
        if span.summary is None:
            continue
        body = "\n\n".join(
            f"[bold]{escape(heading)}[/]\n{escape(shown(text, redact)[0])}"
            if heading
            else escape(shown(text, redact)[0])
            for heading, text in sections(span.summary)
        )
        title = f"{side.name}: summary of messages {span.indices.start}-{span.indices.stop - 1}"
        out.print(panel(body, title=title, border_style="magenta"))
    lost = [i for i in side.identifiers if not i.survived]
    listed = "\n".join(f"[red]✗[/] {i.kind}: {escape(shown(i.text, redact)[0][:160])}  (#{i.first})" for i in lost[:40])
    more = f"\n… and {len(lost) - 40} more" if len(lost) > 40 else ""
    title = f"{side.name}: {len(lost)} of {len(side.identifiers)} identifiers of the replaced span lost"
    out.print(panel(listed + more or "none lost", title=title, border_style="red" if lost else "green"))
