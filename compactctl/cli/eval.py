"""``compactctl eval BEFORE AFTER``: probes from the full history, answered from the compacted one."""

from __future__ import annotations

from typing import Annotated, Any

import typer
from rich.table import Table

from compactctl.cli.exit import build_document, finish, handle_errors
from compactctl.cli.options import ConfigPath, JsonOut, Quiet, Takes, command_settings, settings_for
from compactctl.cli.render import console, progress_wanted, say_failures, write_json
from compactctl.cli.report import counterpart
from compactctl.config import BatchOptions, InputOptions, OutcomeOptions
from compactctl.evaluate import (
    FAMILIES,
    EvalOptions,
    Evaluation,
    FileEvaluation,
    Judge,
    evaluation_json,
    merged,
)
from compactctl.files.eval import eval_pair
from compactctl.files.io import Job, expand_inputs
from compactctl.files.jobs import run_jobs
from compactctl.settings import Needs, SettingDecl
from compactctl.summarizers.options import SummarizerOptions

# What of the summarizer's settings the judge does not read: it has its own model, and asks chat.
NOT_THE_JUDGE_S = (
    "summarizer",
    "model",
    "api",
    "summary_deadline",
    "summary_fail_after",
    "prompt_file",
    "summary_request_deadline",
    "max_tokens_field",
)

# The summarizer's server settings, as the openai judge reads them (review takes them so too).
JUDGE_SERVER = Takes(SummarizerOptions, needs=Needs("judge", ("openai",)), omit=NOT_THE_JUDGE_S)


def takes() -> list[Takes]:
    """The groups of settings eval takes: the judge reads the summarizer's server settings, with --judge openai."""
    return [
        Takes(InputOptions),
        Takes(BatchOptions),
        Takes(OutcomeOptions),
        Takes(EvalOptions),
        JUDGE_SERVER,
    ]


def declared_settings() -> dict[str, SettingDecl]:
    """How files are read, the batch, the judge's, and where the judge's server is."""
    return command_settings(takes())


def _judge(judging: EvalOptions, server: SummarizerOptions) -> Judge | None:
    if judging.judge == "none":
        return None
    from compactctl.summarizers.judge import OpenAIJudge, judge_config  # imports openai: only when asked for

    return OpenAIJudge(judge_config(judging.judge_model, server))


@handle_errors
def eval(
    before: Annotated[str, typer.Argument(help="The full history: a transcript file or folder.", show_default=False)],
    after: Annotated[
        str, typer.Argument(help="Its compacted counterpart; folders match by relative path.", show_default=False)
    ],
    as_json: JsonOut = False,
    quiet: Quiet = False,
    config: ConfigPath = None,
    **given: Any,
) -> None:
    """Score a compaction: recall, artifact, continuation and decision probes built from BEFORE, answered from AFTER."""
    settings = settings_for(config, given, takes())
    judge = _judge(settings.of(EvalOptions), settings.of(SummarizerOptions))
    read = settings.of(InputOptions)
    pairs = [Job(source, counterpart(after, name, before), name) for source, name, _ in expand_inputs([before])]
    results, failures = run_jobs(
        pairs,
        lambda job: eval_pair(job.name, job.source, str(job.target), read, judge),
        settings.of(BatchOptions).jobs,
        progress_wanted(quiet),
    )
    judged = judge is not None
    total = merged(r.evaluation for r in results)
    doc = build_document(
        "eval",
        pairs,
        [evaluation_json(r, judged) for r in results],
        failures,
        settings.of(OutcomeOptions),
        total=evaluation_json(FileEvaluation("total", "", total), judged) | {"files": len(results)},
    )
    if as_json:
        write_json(doc)
    elif not quiet and results:
        console().print(eval_table(results, judged))
    say_failures(entry for entry in doc["files"] if entry["status"] == "failed")  # whatever was printed
    finish(doc, settings.of(OutcomeOptions))


def _cell(evaluation: Evaluation, family: str | None, judged: bool) -> str:
    passed, total = evaluation.family(family, judged) if family else evaluation.total(judged)
    return f"{passed}/{total} ({100 * passed / total:.0f}%)" if total else "-"


def eval_table(results: list[FileEvaluation], judged: bool) -> Table:
    table = Table(title="probes answered from AFTER" + (" (deterministic / judged)" if judged else ""))
    table.add_column("file")
    for name in (*FAMILIES, "total"):
        table.add_column(name, justify="right")
    rows = [(r.file, r.evaluation) for r in results]
    if len(results) > 1:
        rows.append(("total", merged(r.evaluation for r in results)))
    for name, evaluation in rows:
        cells = []
        for family in (*FAMILIES, None):
            cell = _cell(evaluation, family, False)
            cells.append(f"{cell} / {_cell(evaluation, family, True)}" if judged else cell)
        table.add_row(name, *cells)
    return table
