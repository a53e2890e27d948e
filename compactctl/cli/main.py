"""The ``compactctl`` command: one module per subcommand, assembled here.

Nothing here imports ``openai``: it costs about half a second, and only the
LLM summarizer needs it.
"""

from __future__ import annotations

from typing import Annotated

import typer

from compactctl import __version__, interrupts
from compactctl.cli import compact, eval, prune, replay, report, review, sessions
from compactctl.cli.options import takes_settings

COMMANDS = (
    compact,
    prune,
    report,
    replay,
    eval,
    review,
    sessions,
)  # each module: the command function and declared_settings()


def _show_version(value: bool) -> None:
    if value:
        typer.echo(f"compactctl {__version__}")
        raise typer.Exit()


def _main(
    version: Annotated[
        bool, typer.Option("--version", help="Show the version and exit.", callback=_show_version, is_eager=True)
    ] = False,
) -> None:
    """Compact saved LLM conversation and agent transcripts, and measure what it saves."""


def build_app() -> typer.Typer:
    """The app, each command's options derived from the settings declared when it is built."""
    app = typer.Typer(
        name="compactctl",
        help="Compact saved LLM conversation and agent transcripts, and measure what it saves.",
        no_args_is_help=True,
        pretty_exceptions_show_locals=False,  # a traceback must never print an API key
        add_completion=False,
    )
    app.callback()(_main)
    for module in COMMANDS:
        name = module.__name__.rsplit(".", 1)[1]
        app.command(name)(takes_settings(getattr(module, name), module.declared_settings()))
    return app


app = build_app()


def main() -> None:
    interrupts.install()  # SIGTERM and SIGHUP stop a run the way Ctrl-C does
    app()
