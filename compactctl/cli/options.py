"""The option sets that choose and tune a strategy and its summarizer, shared by ``compact``
and ``replay`` (defined once, so the two commands take the same flags with the same help)."""

from __future__ import annotations

from typing import Annotated

import typer

from compactctl.config import DEFAULT_STRATEGY
from compactctl.strategies import STRATEGIES

STRATEGY_PANEL = "Strategies"
SUMMARY_PANEL = "Summaries"
STRATEGY_HELP = f"Strategy step, repeatable, run in order: {', '.join(STRATEGIES)}.  \\[default: {DEFAULT_STRATEGY}]"

StrategySteps = Annotated[
    list[str] | None, typer.Option("--strategy", "-s", help=STRATEGY_HELP, rich_help_panel=STRATEGY_PANEL)
]
KeepRecent = Annotated[
    int | None,
    typer.Option(
        help="Messages kept at the end.  \\[default: the strategy's: window and summary 6, structured 10]",
        min=0,
        rich_help_panel=STRATEGY_PANEL,
    ),
]
ToolMaxTokens = Annotated[
    int | None,
    typer.Option(
        help="trim-tools: tool outputs over this are trimmed.  \\[default: 1000]",
        min=1,
        rich_help_panel=STRATEGY_PANEL,
    ),
]
HeadLines = Annotated[
    int | None,
    typer.Option(help="trim-tools: first lines kept.  \\[default: 20]", min=0, rich_help_panel=STRATEGY_PANEL),
]
TailLines = Annotated[
    int | None,
    typer.Option(help="trim-tools: last lines kept.  \\[default: 20]", min=0, rich_help_panel=STRATEGY_PANEL),
]
KeepTurns = Annotated[
    int | None,
    typer.Option(
        help="structured: last turns kept (a user message and what follows).  \\[default: 2]",
        min=0,
        rich_help_panel=SUMMARY_PANEL,
    ),
]
Window = Annotated[
    int | None,
    typer.Option(help="rolling: messages kept after each fold.  \\[default: 8]", min=0, rich_help_panel=SUMMARY_PANEL),
]
KeepPattern = Annotated[
    list[str] | None,
    typer.Option(
        help="selective: messages matching REGEX stay verbatim (repeatable).",
        metavar="REGEX",
        rich_help_panel=SUMMARY_PANEL,
    ),
]
SummaryMaxTokens = Annotated[
    int | None,
    typer.Option(
        help="Summary size bound.  \\[default: summary 500, rolling 400, selective 200, structured 1000]",
        min=16,
        rich_help_panel=SUMMARY_PANEL,
    ),
]
SummaryInputMaxTokens = Annotated[
    int | None,
    typer.Option(
        help="Largest text one summarizer request takes; more is chunked and merged.  \\[default: 32000]",
        min=1,
        rich_help_panel=SUMMARY_PANEL,
    ),
]
SummaryRole = Annotated[
    str | None,
    typer.Option(
        help="Role of the summary message: system or user.  \\[default: system]", rich_help_panel=SUMMARY_PANEL
    ),
]
SummarizerName = Annotated[
    str | None,
    typer.Option(help="extractive (offline) or openai.  \\[default: extractive]", rich_help_panel=SUMMARY_PANEL),
]
Model = Annotated[
    str | None, typer.Option(help="openai: model.  \\[default: gpt-4o-mini]", rich_help_panel=SUMMARY_PANEL)
]
BaseUrl = Annotated[
    str | None,
    typer.Option(help="openai: any compatible server, e.g. http://127.0.0.1:8000/v1.", rich_help_panel=SUMMARY_PANEL),
]
Api = Annotated[
    str | None, typer.Option(help="openai: chat or responses.  \\[default: chat]", rich_help_panel=SUMMARY_PANEL)
]
SummaryTimeout = Annotated[
    float | None,
    typer.Option(help="openai: seconds per request.  \\[default: 60]", min=0.001, rich_help_panel=SUMMARY_PANEL),
]
SummaryRetries = Annotated[
    int | None,
    typer.Option(help="openai: retries on 429/5xx/timeouts.  \\[default: 4]", min=0, rich_help_panel=SUMMARY_PANEL),
]
SummaryBackoff = Annotated[
    float | None,
    typer.Option(
        help="openai: seconds before the first retry, doubled each time.  \\[default: 1]",
        min=0,
        rich_help_panel=SUMMARY_PANEL,
    ),
]
Redact = Annotated[
    bool | None,
    typer.Option(
        "--redact/--no-redact",
        help="openai: redact secrets before sending.  \\[default: redact]",
        rich_help_panel=SUMMARY_PANEL,
    ),
]
Cache = Annotated[
    bool | None,
    typer.Option(
        "--cache/--no-cache",
        help="openai: reuse summaries cached on disk.  \\[default: cache]",
        rich_help_panel=SUMMARY_PANEL,
    ),
]
CacheDir = Annotated[
    str | None,
    typer.Option(
        help="openai: cache folder.  \\[default: $COMPACTCTL_CACHE_DIR or the user cache dir]",
        rich_help_panel=SUMMARY_PANEL,
    ),
]
PromptFile = Annotated[
    list[str] | None,
    typer.Option(
        help="Replace the summary prompt: PATH, or STRATEGY=PATH (repeatable).", rich_help_panel=SUMMARY_PANEL
    ),
]
