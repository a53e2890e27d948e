"""The ``compactctl`` command: one module per subcommand, assembled here.

Nothing here imports ``openai``: it costs about half a second, and only the
LLM summarizer needs it.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Annotated, Any

import typer
from typer.core import TyperGroup

try:  # typer 0.29 carries its own copy of click; older ones use click itself
    from typer._click.exceptions import ClickException, UsageError
except ImportError:  # pragma: no cover
    from click.exceptions import ClickException, UsageError  # type: ignore[assignment]

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


class JsonUsageErrors(TyperGroup):
    """With --json anywhere on the line, a usage error (an unknown flag, a bad value, a missing
    argument) is the run's JSON document on stdout too, so a CI step parsing stdout gets JSON."""

    def main(
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        windows_expand_args: bool = True,
        **extra: Any,
    ) -> Any:
        argv = list(sys.argv[1:] if args is None else args)
        if "--json" not in argv or not standalone_mode:
            return super().main(argv, prog_name, complete_var, standalone_mode, windows_expand_args, **extra)
        try:
            returned = super().main(argv, prog_name, complete_var, False, windows_expand_args, **extra)
        except UsageError as error:
            from compactctl.cli.outcome import error_document
            from compactctl.cli.render import write_json

            command = error.ctx.info_name if error.ctx is not None and error.ctx.command is not self else None
            message = error.format_message()
            print(f"error: {message}", file=sys.stderr)
            write_json(error_document(command or "compactctl", message, kind="usage"))
            sys.exit(error.exit_code)
        except ClickException as error:
            error.show()
            sys.exit(error.exit_code)
        except typer.Abort:
            print("Aborted!", file=sys.stderr)
            sys.exit(1)
        sys.exit(returned if isinstance(returned, int) else 0)


def build_app() -> typer.Typer:
    """The app, each command's options derived from the settings declared when it is built."""
    app = typer.Typer(
        name="compactctl",
        help="Compact saved LLM conversation and agent transcripts, and measure what it saves.",
        no_args_is_help=True,
        pretty_exceptions_show_locals=False,  # a traceback must never print an API key
        add_completion=False,
        cls=JsonUsageErrors,
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
