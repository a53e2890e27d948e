"""The ``compactctl`` command: one module per subcommand, assembled here.

Nothing here imports ``openai``: it costs about half a second, and only the
LLM summarizer needs it.
"""

from __future__ import annotations

import typer

from compactctl.cli.compact import compact
from compactctl.cli.prune import prune
from compactctl.cli.report import report

app = typer.Typer(
    name="compactctl",
    help="Compact saved LLM conversation and agent transcripts, and measure what it saves.",
    no_args_is_help=True,
    pretty_exceptions_show_locals=False,  # a traceback must never print an API key
    add_completion=False,
)
app.command()(compact)
app.command()(prune)
app.command()(report)


def main() -> None:
    app()
