"""The Typer app: the group, each command built when it is run (``cli.main`` assembles and runs it).

Imported only when a line goes through Click: ``--help``, a usage error, any line ``cli.direct``
does not read itself.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Annotated, Any

import typer
from typer.core import TyperCommand, TyperGroup

try:  # typer 0.29 carries its own copy of click; older ones use click itself
    from typer._click.exceptions import ClickException, UsageError
except ImportError:  # pragma: no cover
    from click.exceptions import ClickException, UsageError  # type: ignore[assignment]

from compactctl import __version__
from compactctl.cli.main import SUMMARIES


def _show_version(value: bool) -> None:
    if value:
        typer.echo(f"compactctl {__version__}")
        raise typer.Exit()


def _main(
    version: Annotated[
        bool,
        typer.Option("--version", help="Show the version and exit.", metavar="", callback=_show_version, is_eager=True),
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


class LazyCommands(JsonUsageErrors):
    """Commands built when one is run: the list in the app's help comes from ``SUMMARIES``."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        from compactctl.cli.plain_values import read_plainly

        super().__init__(*args, **kwargs)
        read_plainly(self)  # --version, read without pydantic too
        self.built: dict[str, Any] = {}
        self.listing = False

    def get_help_option(self, ctx: Any) -> Any:
        option = super().get_help_option(ctx)
        if option is not None:
            option.metavar = ""  # a switch: no <bool> beside it
        return option

    def list_commands(self, ctx: Any) -> list[str]:
        return list(SUMMARIES)

    def get_command(self, ctx: Any, name: str) -> Any:
        if name not in SUMMARIES:
            return None
        if self.listing:  # the app's own help: a name and a line, nothing imported
            return TyperCommand(name, help=SUMMARIES[name])
        if name not in self.built:
            self.built[name] = build_command(name)
        return self.built[name]

    def format_help(self, ctx: Any, formatter: Any) -> None:
        self.listing = True
        try:
            super().format_help(ctx, formatter)
        finally:
            self.listing = False


def build_command(name: str) -> Any:
    """One command, its options derived from the settings its module declares (imported now)."""
    from importlib import import_module

    from compactctl.cli.help import ReadableCommand
    from compactctl.cli.options import takes_settings
    from compactctl.cli.plain_values import read_plainly

    module = import_module(f"compactctl.cli.{name}")
    one = typer.Typer(pretty_exceptions_show_locals=False, add_completion=False)
    one.command(name, cls=ReadableCommand)(takes_settings(getattr(module, name), module.declared_settings()))
    return read_plainly(typer.main.get_command(one))  # its flags' values read without pydantic


def build_app() -> typer.Typer:
    """The app; each command's options are derived from the settings declared when it is built."""
    app = typer.Typer(
        name="compactctl",
        help="Compact saved LLM conversation and agent transcripts, and measure what it saves.",
        no_args_is_help=True,
        pretty_exceptions_show_locals=False,  # a traceback must never print an API key
        add_completion=False,
        cls=LazyCommands,
    )
    app.callback()(_main)
    return app


app = build_app()
