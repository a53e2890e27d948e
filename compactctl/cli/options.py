"""The options of every command: the few that are the CLI's own, and the settings, derived.

Each setting is declared once on an options dataclass field (``compactctl.settings``), and the
fields are grouped by concern (``config.InputOptions``, ``GateOptions``, each strategy's options,
``SummarizerOptions``...). A command lists the groups it takes (``TAKES`` in ``cli/<command>.py``,
as pipx's ``_add_<command>`` does); :func:`takes_settings` turns their fields into its Typer
options (flags, type, bounds, help panel, and the default each strategy really has), so a flag
of a group the command does not take is not in its help and is a usage error, and a new field
is a new flag of every command taking its group with nothing else to edit.

:func:`settings_for` merges the flags over the config file over the defaults, refuses a flag that
would have no effect with the other settings given (``Needs``), and gives the command a
:class:`Given`, from which it builds the groups it hands below the CLI.
"""

from __future__ import annotations

import copy
import dataclasses
import functools
import inspect
import re
import types
import typing
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, TypeVar

from compactctl import lazyre
from compactctl.cli.markup import escape
from compactctl.cli.params import Param, argument, option, to_typer
from compactctl.config import GATE_PANEL, IO_PANEL, DatabaseOptions, all_settings, load_config, merge
from compactctl.errors import InputError
from compactctl.formats import writing_formats
from compactctl.settings import SPEC_KEY, Needs, Options, SettingDecl, SettingSpec, declared, fields_of, problem
from compactctl.strategies import STRATEGIES, StrategyOptions

Inputs = Annotated[list[str], argument(help="Transcript files or folders; - reads stdin.", show_default=False)]
OptionalInputs = Annotated[
    list[str] | None,
    argument(help="Transcript files or folders; - reads stdin. None with --session ID.", show_default=False),
]
Output = Annotated[
    str | None,
    option("-o", "--output", help="Output file, or folder for several inputs; - for stdout.", rich_help_panel=IO_PANEL),
]
ManifestPath = Annotated[
    Path | None,
    option(help="Write what became of every input message (JSON Lines).", rich_help_panel=IO_PANEL),
]
ToFormat = Annotated[
    str | None,
    option(
        "--to",
        help=f"Output format (converts): {', '.join(writing_formats())}.  \\[default: the input's format]",
        metavar="FORMAT",
        rich_help_panel=IO_PANEL,
    ),
]
JsonOut = Annotated[bool, option("--json", help="Print the report as one JSON object.", rich_help_panel=GATE_PANEL)]
Quiet = Annotated[bool, option("--quiet", "-q", help="No progress bar, no table.", rich_help_panel=GATE_PANEL)]
ConfigPath = Annotated[
    Path | None, option("--config", help="Settings file (default: ./compactctl.toml or ./pyproject.toml).")
]


@dataclass(frozen=True)
class Takes:
    """One group of settings a command takes.

    ``owner`` is the strategy whose options these are: they are read only when it is a step.
    ``needs`` overrides when the group's settings are read (the eval judge's server: with ``--judge
    openai``); otherwise each field's own ``needs`` holds. ``omit`` lists fields this command does
    not offer (replay's trigger sets each strategy's threshold).
    """

    group: type[Options]
    owner: str = ""
    needs: Needs | None = None
    omit: tuple[str, ...] = ()

    def fields(self) -> list[str]:
        return [field.name for field, *_ in fields_of(self.group) if field.name not in self.omit]

    def needs_of(self, name: str) -> Needs | None:
        """When this group's ``name`` is read: always (None), or while a setting has one of some values."""
        if self.owner:
            return Needs("strategy", (self.owner,))
        if self.needs is not None:
            return self.needs
        spec: SettingSpec = next(f for f, *_ in fields_of(self.group) if f.name == name).metadata[SPEC_KEY]
        return spec.needs


def strategy_takes(omit: tuple[str, ...] = ()) -> list[Takes]:
    """Every strategy's options, each read only when that strategy is a step."""
    return [Takes(strategy.options, owner=name, omit=omit) for name, strategy in STRATEGIES.items()]


def command_settings(takes: Sequence[Takes]) -> dict[str, SettingDecl]:
    """The settings a command's groups declare (by name, in order), but those every group holding them omits."""
    found = declared([(t.owner, t.group) for t in takes])
    kept = {name for t in takes for name in t.fields()}
    return {name: one for name, one in found.items() if name in kept}


G = TypeVar("G", bound=Options)


@dataclass(frozen=True)
class Given:
    """A command's settings once merged (flags over config over defaults) and checked: build its groups here."""

    values: Mapping[str, Any]
    flagged: frozenset[str] = frozenset()  # the settings given as flags, not from a config file

    def of(self, group: type[G]) -> G:
        return group.from_values(self.values)

    def database(self) -> DatabaseOptions:
        """The database settings, knowing whether --session was typed (a config file's only picks in a database)."""
        return dataclasses.replace(self.of(DatabaseOptions), session_flagged="session" in self.flagged)

    def strategies(self) -> StrategyOptions:
        return StrategyOptions.from_values(self.values)


# What to type after a flag, by the value's type, where its declaration names nothing better
# (``metavar="MODEL"``); a switch takes nothing. Typer's own would be a type name (``<list[str]>``).
PLACEHOLDERS: dict[type, str] = {bool: "", int: "N", float: "NUMBER", str: "TEXT", Path: "PATH"}


def placeholder(kind: Any) -> str:
    return PLACEHOLDERS.get(kind, "VALUE")


def readable_help(help_text: str) -> str:
    """Rich markup escaped (``compactctl[ray]`` is not a tag) and the ``[default: ...]`` suffix kept."""
    body, _, default = help_text.partition("  \\[default: ")
    return escape(body) + (f"  \\[default: {default}" if default else "")


def option_for(setting: SettingDecl) -> Any:
    """The ``Annotated`` Typer type of one setting's option; its default is None: "not given"."""
    value_type: Any = types.GenericAlias(list, (setting.kind,)) if setting.many else setting.kind
    spec = setting.spec
    shown = setting.shown_default()
    listed = f" One of: {', '.join(spec.listed())}." if spec.listed else ""
    help_text = escape(spec.help + listed) + (f"  \\[default: {escape(shown)}]" if shown else "")
    metavar = spec.metavar or ("|".join(spec.choices) if spec.choices else placeholder(setting.kind))
    import typer

    made = typer.Option(
        *setting.flags,
        help=help_text,
        min=spec.min,
        metavar=metavar,
        rich_help_panel=spec.panel,
        show_default=False,
    )
    return Annotated[value_type | None, made]


def takes_settings(command: Callable[..., Any], settings: Mapping[str, SettingDecl]) -> Callable[..., Any]:
    """``command(own options..., **given)`` with one keyword option per setting, as Typer reads it.

    Typer reads a command's options from its signature, so the signature is built here:
    the command's own parameters, then the settings'. Their values arrive in ``**given``.
    Built when the app is, so a setting added to a dataclass is a flag with nothing else to edit.
    """

    @functools.wraps(command)
    def with_settings(*args: Any, **kwargs: Any) -> Any:
        return command(*args, **kwargs)

    own = [
        parameter.replace(annotation=with_placeholder(parameter.annotation))
        for parameter in inspect.signature(command, eval_str=True).parameters.values()
        if parameter.kind is not inspect.Parameter.VAR_KEYWORD
    ]
    derived = [
        inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=None, annotation=option_for(setting))
        for name, setting in settings.items()
    ]
    parameters = [*own, *derived]
    with_settings.__doc__ = unwrapped(command.__doc__ or "")
    with_settings.__signature__ = inspect.Signature(parameters)  # type: ignore[attr-defined]
    with_settings.__annotations__ = {parameter.name: parameter.annotation for parameter in parameters}
    return with_settings


def with_placeholder(annotation: Any) -> Any:
    """A command's own option or argument with a placeholder saying what to type, and its help escaped."""
    from typer.models import ArgumentInfo, OptionInfo

    if typing.get_origin(annotation) is not Annotated:
        return annotation
    hint, *extras = typing.get_args(annotation)
    kinds = [arg for arg in typing.get_args(hint) if arg is not type(None)] or [hint]
    kind = kinds[0]
    many = typing.get_origin(kind) is list
    item = typing.get_args(kind)[0] if many else kind
    readable = []
    for extra in extras:
        if isinstance(extra, Param):
            extra = to_typer(extra)
        if isinstance(extra, (OptionInfo, ArgumentInfo)):
            extra = copy.copy(extra)
            if extra.metavar is None:
                extra.metavar = "PATH" if isinstance(extra, ArgumentInfo) else placeholder(item)
            if extra.help:
                extra.help = readable_help(extra.help)
        readable.append(extra)
    return Annotated[(hint, *readable)]


def unwrapped(docstring: str) -> str:
    """A docstring as ``--help`` should wrap it: each paragraph one line (Rich keeps single breaks)."""
    paragraphs = inspect.cleandoc(docstring).split("\n\n")
    return "\n\n".join(re.sub(r"\s*\n\s*", " ", paragraph) for paragraph in paragraphs)


def flag_of(name: str) -> str:
    """The flag a setting is given by (its first, without a --no- form)."""
    return all_settings()[name].flags[0].split("/")[0]


# A setting as the library's errors name it, as a caller passes it: `summary_max_tokens`.
NAMED_SETTING = lazyre.compile(r"`([a-z][a-z0-9_]*)`")


def as_flags(message: str) -> str:
    """A library error as the CLI says it: each `setting` it names becomes the flag it is given by
    (`thresholds` is --threshold); a command's own option (`to`, `since`) is --its-name."""
    known = all_settings()
    return NAMED_SETTING.sub(lambda m: flag_of(m[1]) if m[1] in known else "--" + m[1].replace("_", "-"), message)


def settings_for(
    config: Path | None,
    given: Mapping[str, Any],
    takes: Sequence[Takes] = (),
    sides: Callable[[Mapping[str, Any]], Sequence[Mapping[str, Any]]] | None = None,
) -> Given:
    """Flags given, over the config file, over the defaults; a bad flag value names its setting, and so
    does a flag that has no effect with the settings given (``sides``: every set of values the run uses,
    e.g. review's sides A and B; a flag is read when some side reads it)."""
    # The command's own settings (all of them only for a name they lack): each command imports
    # what it configures, not every other command's groups.
    known = command_settings(takes) if takes else all_settings()
    for name, value in given.items():
        one = known.get(name) or (all_settings().get(name) if value is not None else None)
        reason = problem(one, value) if value is not None and one is not None else None
        if reason:
            raise InputError(f"{reason} (given as {flag_of(name)})")
    values = merge(given, load_config(config), [t.group for t in takes] if takes else None)
    check_needs(takes, [name for name, value in given.items() if value is not None and value != []],
                sides(values) if sides else [values])  # fmt: skip
    return Given(values, frozenset(name for name, value in given.items() if value is not None))


def check_needs(takes: Sequence[Takes], names: Iterable[str], sides: Sequence[Mapping[str, Any]]) -> None:
    """A flag given that none of the command's groups would read with these values is a usage error."""
    for name in names:
        holders = [t.needs_of(name) for t in takes if name in t.fields()]
        if not holders or any(need is None or any(need.met(side) for side in sides) for need in holders):
            continue
        wanted: dict[str, list[str]] = {}
        for need in holders:
            assert need is not None
            wanted.setdefault(need.setting, []).extend(v for v in need.values if v not in wanted.get(need.setting, []))
        what = " or ".join(f"{flag_of(setting)} {' or '.join(values)}" for setting, values in wanted.items())
        raise InputError(f"{flag_of(name)} has no effect here: it is read with {what}")


def check_output_format(to: str | None) -> None:
    """An unknown --to is bad usage, caught before any file is read."""
    if to is not None:
        from compactctl.formats import get_format

        if not get_format(to).writes:
            raise InputError(f"{to} is read, not written; --to takes one of the others")
