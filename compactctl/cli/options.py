"""The options of every command: the few that are the CLI's own, and the settings, derived.

Each setting is declared once on an options dataclass field (``compactctl.settings``);
:func:`takes_settings` turns the declarations a command takes into its Typer options
(flags, type, bounds, help panel, and the default each strategy really has), so no
command lists them by hand and a new field is a new flag with nothing else to edit.
"""

from __future__ import annotations

import functools
import inspect
import types
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Annotated, Any

import typer

from compactctl.config import GATE_PANEL, IO_PANEL, Owners, all_settings, load_config, merge
from compactctl.errors import InputError
from compactctl.settings import Declared, declared, problem

Inputs = Annotated[list[str], typer.Argument(help="Transcript files or folders; - reads stdin.", show_default=False)]
OptionalInputs = Annotated[
    list[str] | None,
    typer.Argument(help="Transcript files or folders; - reads stdin. None with --session ID.", show_default=False),
]
Output = Annotated[
    str | None,
    typer.Option(
        "-o", "--output", help="Output file, or folder for several inputs; - for stdout.", rich_help_panel=IO_PANEL
    ),
]
ManifestPath = Annotated[
    Path | None,
    typer.Option(help="Write what became of every input message (JSON Lines).", rich_help_panel=IO_PANEL),
]
ToFormat = Annotated[
    str | None,
    typer.Option("--to", help="Output format (converts).  \\[default: the input's format]", rich_help_panel=IO_PANEL),
]
JsonOut = Annotated[
    bool, typer.Option("--json", help="Print the report as one JSON object.", rich_help_panel=GATE_PANEL)
]
Quiet = Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar, no table.", rich_help_panel=GATE_PANEL)]
ConfigPath = Annotated[
    Path | None, typer.Option("--config", help="Settings file (default: ./compactctl.toml or ./pyproject.toml).")
]


def command_settings(owners: Owners, exclude: Iterable[str] = ()) -> dict[str, Declared]:
    """The settings the ``owners`` dataclasses declare, but those in ``exclude``: what one command takes."""
    return {name: one for name, one in declared(owners).items() if name not in set(exclude)}


def option_for(setting: Declared) -> Any:
    """The ``Annotated`` Typer type of one setting's option; its default is None: "not given"."""
    value_type: Any = types.GenericAlias(list, (setting.kind,)) if setting.many else setting.kind
    spec = setting.spec
    shown = setting.shown_default()
    help_text = spec.help + (f"  \\[default: {shown}]" if shown else "")
    metavar = spec.metavar or ("|".join(spec.choices) if spec.choices else None)
    option = typer.Option(
        *setting.flags,
        help=help_text,
        min=spec.min,
        metavar=metavar,
        rich_help_panel=spec.panel,
        show_default=False,
    )
    return Annotated[value_type | None, option]


def takes_settings(command: Callable[..., Any], settings: Mapping[str, Declared]) -> Callable[..., Any]:
    """``command(own options..., **given)`` with one keyword option per setting, as Typer reads it.

    Typer reads a command's options from its signature, so the signature is built here:
    the command's own parameters, then the settings'. Their values arrive in ``**given``.
    Built when the app is, so a setting added to a dataclass is a flag with nothing else to edit.
    """

    @functools.wraps(command)
    def with_settings(*args: Any, **kwargs: Any) -> Any:
        return command(*args, **kwargs)

    own = [
        parameter
        for parameter in inspect.signature(command, eval_str=True).parameters.values()
        if parameter.kind is not inspect.Parameter.VAR_KEYWORD
    ]
    derived = [
        inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=None, annotation=option_for(setting))
        for name, setting in settings.items()
    ]
    parameters = [*own, *derived]
    with_settings.__signature__ = inspect.Signature(parameters)  # type: ignore[attr-defined]
    with_settings.__annotations__ = {parameter.name: parameter.annotation for parameter in parameters}
    return with_settings


def settings_for(config: Path | None, given: Mapping[str, Any]) -> dict[str, Any]:
    """Flags given, over the config file, over the defaults; a bad flag value names its setting."""
    known = all_settings()
    for name, value in given.items():
        reason = problem(known[name], value) if value is not None and name in known else None
        if reason:
            raise InputError(f"{reason} (given as {known[name].flags[0].split('/')[0]})")
    return merge(given, load_config(config))


def check_output_format(to: str | None) -> None:
    """An unknown --to is bad usage, caught before any file is read."""
    if to is not None:
        from compactctl.formats import READ_ONLY, get_format

        get_format(to)
        if to in READ_ONLY:
            raise InputError(f"{to} is read, not written; --to takes one of the others")
