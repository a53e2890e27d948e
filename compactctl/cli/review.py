"""``compactctl review``: one self-contained HTML page per file (and an index), or a terminal view.

Side A is the usual settings; any ``--vs-*`` setting makes a side B, a second compaction
of the same inputs shown beside A with the difference. Each side is compacted by ``compact``'s
own job (``compact_file``) into a temporary folder and reviewed as written, so the page shows
the bytes ``compact`` writes. ``--compacted AFTER`` (and ``--vs-compacted``) review a compaction
that was already written, without compacting again.
"""

from __future__ import annotations

import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any

import typer

from compactctl.cli.eval import JUDGE_SERVER
from compactctl.cli.exit import build_document, finish, handle_errors
from compactctl.cli.markup import escape
from compactctl.cli.options import (
    ConfigPath,
    Given,
    Inputs,
    JsonOut,
    Quiet,
    Takes,
    command_settings,
    settings_for,
    strategy_takes,
)
from compactctl.cli.render import console, progress_wanted, say_failures, stderr, write_json
from compactctl.cli.report import counterpart
from compactctl.compaction import check_steps
from compactctl.config import (
    IO_PANEL,
    BatchOptions,
    CountOptions,
    DatabaseOptions,
    GateOptions,
    InputOptions,
    OutcomeOptions,
    StepsOptions,
    WriteOptions,
    load_config,
)
from compactctl.errors import InputError
from compactctl.evaluate import EvalOptions, Judge
from compactctl.files.compact import compact_file
from compactctl.files.io import Job, write_atomic
from compactctl.files.jobs import run_jobs
from compactctl.files.review import ReviewSide, WrittenSide, read_manifest, review_targets, review_written
from compactctl.review import (
    FileReview,
    ReviewOptions,
    SideReview,
    TranscriptReview,
    recording,
    review_json,
    shown,
    side_b_asked,
)
from compactctl.review.page import file_page, index_page
from compactctl.review.sections import sections
from compactctl.settings import SettingDecl
from compactctl.summarizers.build import check_prompt_read, make_summarizer
from compactctl.summarizers.options import SummarizerOptions
from compactctl.tokens import TokenCounter, counter_for
from compactctl.transcript import content_text

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
Compacted = Annotated[
    str | None,
    typer.Option(
        "--compacted",
        help="Review this compaction of the input as it was written (a file; for a folder input, a folder "
        "mirroring it), without compacting again.",
        rich_help_panel=IO_PANEL,
        show_default=False,
    ),
]
VsCompacted = Annotated[
    str | None,
    typer.Option(
        "--vs-compacted",
        help="With --compacted: side B, another written compaction of the same input.",
        rich_help_panel=IO_PANEL,
        show_default=False,
    ),
]
Manifest = Annotated[
    Path | None,
    typer.Option(
        "--manifest",
        help="With --compacted: the manifest compact wrote for it (fates from it; else read off the output).",
        rich_help_panel=IO_PANEL,
        show_default=False,
    ),
]
VsManifest = Annotated[
    Path | None,
    typer.Option("--vs-manifest", help="With --vs-compacted: its manifest.", rich_help_panel=IO_PANEL),
]


def takes() -> list[Takes]:
    """The groups of settings review takes. It sends for real (no --dry-run), writes pages and gates
    nothing (no --require, --fail-under), and never writes into an input database (no --in-place)."""
    return [
        Takes(StepsOptions),
        Takes(InputOptions),
        Takes(DatabaseOptions, omit=("in_place",)),
        Takes(CountOptions),
        Takes(BatchOptions),
        Takes(OutcomeOptions),
        Takes(GateOptions, omit=("require", "fail_under")),
        *strategy_takes(),
        Takes(SummarizerOptions),
        Takes(ReviewOptions),
        Takes(EvalOptions),
        JUDGE_SERVER,  # the judge reads the server settings too, whichever summarizer
    ]


def declared_settings() -> dict[str, SettingDecl]:
    return command_settings(takes())


def describe(steps: tuple[str, ...], summarizer: SummarizerOptions) -> str:
    prompts = ", ".join(summarizer.prompt_file) or "shipped"
    return f"{' + '.join(steps)}, {summarizer.summarizer} summarizer, prompt {prompts}"


def both_sides(settings: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The values of side A, and of side B when a --vs-* setting asks for one."""
    return [settings, *([side_b_settings(settings)] if side_b_asked(ReviewOptions.from_values(settings)) else [])]


def side_b_settings(settings: Mapping[str, Any]) -> dict[str, Any]:
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


def sides_for(settings: Given, counter: TokenCounter) -> list[ReviewSide]:
    chosen = [Given(values) for values in both_sides(settings.values)]
    asked = settings.of(ReviewOptions)
    if len(chosen) == 2 and asked.vs_prompt_file:
        check_prompt_read(chosen[1].of(SummarizerOptions).summarizer, asked.vs_prompt_file, "vs_prompt_file")
    sides = []
    for name, one in zip("AB", chosen, strict=False):
        steps, summarizer = one.of(StepsOptions).strategy, one.of(SummarizerOptions)
        check_steps(steps)
        made = make_summarizer(summarizer, counter)
        read, gates = one.of(InputOptions), one.of(GateOptions)
        sides.append(ReviewSide(name, describe(steps, summarizer), steps, one.strategies(), made, read, gates))
    if len(sides) == 2 and sides[0].description == sides[1].description and not asked.vs_config:
        raise InputError("side B runs the same strategy, summarizer and prompt as side A; change one --vs-* setting")
    return sides


@handle_errors
def review(
    inputs: Inputs,
    output: PageOut = None,
    compacted: Compacted = None,
    vs_compacted: VsCompacted = None,
    manifest: Manifest = None,
    vs_manifest: VsManifest = None,
    terminal: Terminal = False,
    transcript: TranscriptChoice = 0,
    as_json: JsonOut = False,
    quiet: Quiet = False,
    config: ConfigPath = None,
    **given: Any,
) -> None:
    """Write a review page: the summary beside the span it replaced, identifiers kept and lost, probes, figures.

    With --vs-strategy, --vs-prompt-file, --vs-summarizer or --vs-config, a second compaction (side B)
    is shown beside the first with the difference; over a folder, index.html lists the files by difference.
    With --compacted AFTER, the compaction already written is reviewed instead of compacting again.
    """
    settings = settings_for(config, given, takes(), sides=both_sides)
    if transcript and not terminal:  # a page shows every transcript of the file
        raise InputError("--transcript has no effect here: it is read with --terminal")
    counter = counter_for(settings.of(CountOptions).encoding)
    jobs, index = review_targets(inputs, output)
    review_one = _reviewer(inputs, settings, counter, compacted, vs_compacted, manifest, vs_manifest)
    if terminal:
        if len(jobs) != 1:
            raise InputError("--terminal shows one file; give one input")
        show_terminal(review_one(jobs[0]), transcript)
        return
    results, failures = run_jobs(
        jobs,
        lambda job: _write_page(job, review_one(job)),
        settings.of(BatchOptions).jobs,
        progress_wanted(quiet),
    )
    if index is not None and results:
        links = [
            (result, str(Path(str(job.target)).name))
            for result, job in zip(results, _done(jobs, failures), strict=True)
        ]
        write_atomic(
            index, index_page(links, settings.of(SummarizerOptions).redact).encode(), [job.source for job in jobs]
        )
    body: dict[str, Any] = review_json(results)
    outcome = settings.of(OutcomeOptions)
    doc = build_document("review", jobs, body["files"], failures, outcome, written=True, total=body["total"])
    if as_json:
        write_json(doc)
    if not quiet:
        for job in _done(jobs, failures):
            stderr.print(f"wrote {escape(str(job.target))}", soft_wrap=True, highlight=False)
        if index is not None and results:
            stderr.print(f"wrote {escape(index)}", soft_wrap=True, highlight=False)
    say_failures(entry for entry in doc["files"] if entry["status"] == "failed")
    finish(doc, outcome)


def _reviewer(
    inputs: list[str],
    settings: Given,
    counter: TokenCounter,
    compacted: str | None,
    vs_compacted: str | None,
    manifest: Path | None,
    vs_manifest: Path | None,
) -> Any:
    """The per-file review: of the compactions written, or of the ones compact's own job writes now."""
    judge = _judge(settings.of(EvalOptions), settings.of(SummarizerOptions))
    # The session only: review writes its compactions into a temporary folder, never into the input.
    read, given = settings.of(InputOptions), settings.database()
    database = DatabaseOptions(session=given.session, session_flagged=given.session_flagged)
    redact_secrets = settings.of(SummarizerOptions).redact
    if compacted is None:
        if vs_compacted or manifest or vs_manifest:
            raise InputError("--vs-compacted, --manifest and --vs-manifest go with --compacted AFTER")
        sides = sides_for(settings, counter)
        return lambda job: review_compacting(job, sides, counter, judge, read, database, redact_secrets)
    if side_b_asked(settings.of(ReviewOptions)):
        raise InputError("--compacted reviews what was written; compare it with --vs-compacted, not --vs-* settings")
    if vs_manifest and not vs_compacted:
        raise InputError("--vs-manifest goes with --vs-compacted")
    if len(inputs) != 1:
        raise InputError("--compacted reviews one input file or folder against its compaction")
    before = inputs[0]
    manifests = [read_manifest(str(m)) if m is not None else None for m in (manifest, vs_manifest)]
    chosen = [("A", compacted, manifests[0]), *([("B", vs_compacted, manifests[1])] if vs_compacted else [])]

    def review_one(job: Job) -> FileReview:
        written = []
        for name, after, entries in chosen:
            path = str(counterpart(after, job.name, before))
            if not Path(path).is_file():
                raise InputError("no compacted counterpart of this input", path)
            written.append(WrittenSide(name, f"as written: {path}", path, entries))
        return review_written(job, written, counter, judge, read=read, database=database, redact_secrets=redact_secrets)

    return review_one


def review_compacting(
    job: Job,
    sides: list[ReviewSide],
    counter: TokenCounter,
    judge: Judge | None,
    read: InputOptions,
    database: DatabaseOptions,
    redact_secrets: bool,
) -> FileReview:
    """Each side compacted by ``compact``'s own job, into a temporary folder, then reviewed as written."""
    with tempfile.TemporaryDirectory(prefix="compactctl-review-") as folder:
        written = []
        for side in sides:
            target = Path(folder) / side.name / Path(job.source).name
            target.parent.mkdir()
            recorder = recording(side.summarizer) if side.summarizer is not None else None
            done = compact_file(
                Job(job.source, str(target), job.name), side.steps, side.strategies, counter, recorder,
                read=side.read, gates=side.gates, database=database, keep_manifest=True,
                written=WriteOptions(write_unchanged=True),  # a file nothing changed is reviewed too
            )  # fmt: skip
            sent = recorder.sent(redact_secrets) if recorder is not None else []
            written.append(WrittenSide(side.name, side.description, str(target), done.manifest, sent, done.report))
        return review_written(job, written, counter, judge, read=read, database=database, redact_secrets=redact_secrets)


def _judge(judging: EvalOptions, server: SummarizerOptions) -> Judge | None:
    if judging.judge == "none":
        return None
    from compactctl.summarizers.judge import OpenAIJudge, judge_config  # imports openai: only when asked for

    return OpenAIJudge(judge_config(judging.judge_model, server))


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
        ("identifiers, summarizer's own text", lambda s: f"{s.figures.identifiers_kept_own} / {s.figures.identifiers}"),
        ("probes, summarizer's own text", lambda s: f"{s.figures.probes_passed_own} / {s.figures.probes}"),
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
            for heading, text in sections(span.summary, side.headings)
        )
        title = f"{side.name}: summary of messages {span.indices.start}-{span.indices.stop - 1}"
        out.print(panel(body, title=title, border_style="magenta"))
    lost = [i for i in side.identifiers if not i.survived]
    listed = "\n".join(f"[red]✗[/] {i.kind}: {escape(shown(i.text, redact)[0][:160])}  (#{i.first})" for i in lost[:40])
    more = f"\n… and {len(lost) - 40} more" if len(lost) > 40 else ""
    title = f"{side.name}: {len(lost)} of {len(side.identifiers)} identifiers of the replaced span lost"
    out.print(panel(listed + more or "none lost", title=title, border_style="red" if lost else "green"))
