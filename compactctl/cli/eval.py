"""``compactctl eval BEFORE AFTER``: probes from the full history, answered from the compacted one."""

from __future__ import annotations

from typing import Annotated, Any

import typer
from rich.table import Table

from compactctl.cli.exit import build_document, finish, handle_errors
from compactctl.cli.options import ConfigPath, JsonOut, Quiet, command_settings, settings_for
from compactctl.cli.render import console, progress_wanted, say_failures, write_json
from compactctl.cli.report import counterpart
from compactctl.config import RunOptions
from compactctl.evaluate import FAMILIES, EvalOptions, Evaluation, FileEvaluation, Judge, evaluation_json, merged
from compactctl.files.eval import eval_pair
from compactctl.files.io import Job, expand_inputs, run_jobs
from compactctl.settings import Declared
from compactctl.summarizers.options import SummarizerOptions

# The summarizer's, as the judge uses them too: its server, timeout, retries and cache.
JUDGE_SETTINGS = (
    "base_url",
    "summary_timeout",
    "summary_retries",
    "summary_backoff",
    "redact",
    "cache",
    "cache_dir",
    "summary_temperature",
)


def declared_settings() -> dict[str, Declared]:
    """The format and batch settings, the judge's, and where the judge's server is."""
    run = command_settings([("", RunOptions)], exclude=("strategy", "encoding", "require", "fail_under"))
    judge = command_settings([("", EvalOptions)])
    server = {k: v for k, v in command_settings([("", SummarizerOptions)]).items() if k in JUDGE_SETTINGS}
    return {**run, **judge, **server}


def _judge(settings: dict[str, Any]) -> Judge | None:
    if settings["judge"] == "none":
        return None
    from compactctl.summarizers.judge import OpenAIJudge, judge_config  # imports openai: only when asked for

    return OpenAIJudge(judge_config(settings))


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
    settings = settings_for(config, given)
    judge = _judge(settings)
    pairs = [Job(source, counterpart(after, name, before), name) for source, name, _ in expand_inputs([before])]
    results, failures = run_jobs(
        pairs,
        lambda job: eval_pair(job.name, job.source, str(job.target), settings["format"], judge),
        settings["jobs"],
        progress_wanted(quiet),
    )
    judged = judge is not None
    total = merged(r.evaluation for r in results)
    doc = build_document(
        "eval",
        pairs,
        [evaluation_json(r, judged) for r in results],
        failures,
        settings,
        total=evaluation_json(FileEvaluation("total", "", total), judged) | {"files": len(results)},
    )
    if as_json:
        write_json(doc)
    elif not quiet and results:
        console().print(eval_table(results, judged))
    say_failures(entry for entry in doc["files"] if entry["status"] == "failed")  # whatever was printed
    finish(doc, settings)


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
