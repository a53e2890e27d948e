"""The ``compactctl`` command: one module per subcommand, assembled here.

Nothing here imports ``openai``: it costs about half a second, and only the
LLM summarizer needs it.
"""

from __future__ import annotations

from typing import Annotated

import typer

from compactctl import __version__, interrupts
from compactctl.cli.compact import compact
from compactctl.cli.prune import prune
from compactctl.cli.replay import replay
from compactctl.cli.report import report

app = typer.Typer(
    name="compactctl",
    help="Compact saved LLM conversation and agent transcripts, and measure what it saves.",
    no_args_is_help=True,
    pretty_exceptions_show_locals=False,  # a traceback must never print an API key
    add_completion=False,
)


def _show_version(value: bool) -> None:
    if value:
        typer.echo(f"compactctl {__version__}")
        raise typer.Exit()


@app.callback()
def _main(
    version: Annotated[
        bool, typer.Option("--version", help="Show the version and exit.", callback=_show_version, is_eager=True)
    ] = False,
) -> None:
    """Compact saved LLM conversation and agent transcripts, and measure what it saves."""


app.command()(compact)
app.command()(prune)
app.command()(report)
app.command()(replay)


def main() -> None:
    interrupts.install()
    app()
