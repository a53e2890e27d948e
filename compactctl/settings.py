"""Settings: each one declared once, on the options dataclass field that uses it.

A field made with :func:`setting` (or with a shared :class:`SettingSpec` called with
a default) carries its help, bounds, choices, flags and help panel in the field's
metadata. Everything else is derived from those fields: the CLI options of every
command (``compactctl.cli.options``), config-file validation (``compactctl.config``),
the defaults shown in ``--help``, and the check a library caller gets on construction
(``Options.__post_init__``), whose errors name the setting, not a flag.
"""

from __future__ import annotations

import dataclasses
import functools
import sys
import types
import typing
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from compactctl.errors import InputError

SPEC_KEY = "compactctl.setting"


@dataclass(frozen=True)
class Needs:
    """When a setting has an effect: only while ``setting`` is (or, for a list, holds) one of ``values``."""

    setting: str
    values: tuple[str, ...]

    def met(self, values: Mapping[str, Any]) -> bool:
        value = values.get(self.setting)
        held = value if isinstance(value, (list, tuple)) else (value,)
        return any(item in self.values for item in held)


@dataclass(frozen=True)
class SettingSpec:
    """What a setting is besides its default. Calling it with a default makes the dataclass field."""

    help: str
    min: float | None = None
    choices: tuple[str, ...] = ()
    flags: tuple[str, ...] = ()  # default: --the-name; "--x/--no-x" for a switch with both forms
    panel: str | None = None
    metavar: str | None = None
    shown_default: str | None = None  # for --help when the value alone would mislead (a None meaning "derived")
    # (setting, values): this one is read only when that setting is (or, for a list, holds) one of the
    # values, e.g. ("summarizer", ("openai",)); given otherwise, it is a usage error (see ``Needs``).
    needs: Needs | None = None
    # The values a registry below holds (the formats, the summarizers), listed in --help: read when
    # the help is built, so declaring the setting imports no registry; the registry checks the value.
    listed: Callable[[], Iterable[str]] | None = None

    def __call__(self, default: Any) -> Any:
        return dataclasses.field(default=default, metadata={SPEC_KEY: self})


def setting(
    default: Any,
    *,
    help: str,
    min: float | None = None,
    choices: tuple[str, ...] = (),
    flags: tuple[str, ...] = (),
    panel: str | None = None,
    metavar: str | None = None,
    shown_default: str | None = None,
    needs: Needs | None = None,
    listed: Callable[[], Iterable[str]] | None = None,
) -> Any:
    """A dataclass field declaring one setting: ``keep_recent: int = setting(6, help=..., min=0)``."""
    return SettingSpec(help, min, choices, flags, panel, metavar, shown_default, needs, listed)(default)


@dataclass(frozen=True)
class SettingDecl:
    """One setting as every dataclass holding it declares it: its type, its spec, its default per owner."""

    name: str
    kind: type  # int, float, bool or str
    many: bool  # a list (tuple) of ``kind``
    optional: bool  # None allowed (and meaning "not set")
    spec: SettingSpec
    defaults: tuple[tuple[str, Any], ...]  # (owner, default): a strategy name, or "" for a command-wide setting

    @property
    def flags(self) -> tuple[str, ...]:
        return self.spec.flags or (f"--{self.name.replace('_', '-')}",)

    def shown_default(self) -> str | None:
        """The default as ``--help`` says it: one value, or the value each owner takes."""
        if self.spec.shown_default is not None:
            return self.spec.shown_default
        by_value: dict[str, list[str]] = {}
        for owner, default in self.defaults:
            by_value.setdefault(_shown(default, self), []).append(owner)
        shown = {value: owners for value, owners in by_value.items() if value}
        if len(shown) <= 1:
            return next(iter(shown), None)
        return ", ".join(f"{_and(owners)} {value}" for value, owners in shown.items())


def _shown(value: Any, declared: SettingDecl) -> str:
    if value is None or value == () or value == []:
        return ""
    if isinstance(value, bool):
        switch = declared.flags[0].split("/")[0].lstrip("-")
        return switch if value else ("" if "/" not in declared.flags[0] else f"no-{switch}")
    if isinstance(value, (tuple, list)):
        return ",".join(str(item) for item in value)
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def _and(names: list[str]) -> str:
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def _kind(hint: Any) -> tuple[type, bool, bool]:
    """(item type, is a list, may be None) of a field's type hint."""
    args = typing.get_args(hint)
    optional = False
    if isinstance(hint, types.UnionType) or typing.get_origin(hint) is typing.Union:
        rest = [arg for arg in args if arg is not type(None)]
        optional = len(rest) < len(args)
        if len(rest) != 1:
            raise TypeError(f"a setting takes one type (or None), not {hint!r}")
        hint, args = rest[0], typing.get_args(rest[0])
    if typing.get_origin(hint) in (tuple, list):
        return args[0], True, optional
    return hint, False, optional


def fields_of(options_type: type) -> tuple[tuple[dataclasses.Field[Any], type, bool, bool], ...]:
    """The settings an options dataclass declares, with (item type, is a list, may be None)."""
    return _fields_of(options_type)


@functools.cache
def _fields_of(options_type: type) -> tuple[tuple[dataclasses.Field[Any], type, bool, bool], ...]:
    hints = type_hints(options_type)
    return tuple(
        (field, *_kind(hints[field.name])) for field in dataclasses.fields(options_type) if SPEC_KEY in field.metadata
    )


# Each annotation's text compiled once per process: the options groups spell theirs in seven ways ("int",
# "str | None", "tuple[str, ...]"...), where ``typing.get_type_hints`` compiles each of the 78 a compact
# reads anew (a ForwardRef each), 2-3 ms of every run.
_COMPILED: dict[str, types.CodeType] = {}


def type_hints(options_type: type) -> dict[str, Any]:
    """``typing.get_type_hints(options_type)``, each annotation's text compiled once per process.

    The same names in the same order (the class's own module first, then the class, then the
    builtins, base classes first): an annotation that is not text, or that evaluates to anything
    but a class, ``X | None`` or ``tuple[X, ...]`` of classes, is left to ``typing`` itself."""
    hints: dict[str, Any] = {}
    for base in reversed(options_type.__mro__):
        annotations = vars(base).get("__annotations__", {})  # as typing reads them (inspect is not loaded)
        if not annotations:
            continue
        module = getattr(sys.modules.get(base.__module__), "__dict__", {})
        names = dict(vars(base))
        for name, text in annotations.items():
            code = _COMPILED.get(text) if isinstance(text, str) else None
            if code is None:
                if not isinstance(text, str):
                    return typing.get_type_hints(options_type)
                code = _COMPILED[text] = compile(text, "<string>", "eval")
            hint = eval(code, names, module)  # get_type_hints' order: the module's names before the class's
            if not _plain_hint(hint):
                return typing.get_type_hints(options_type)
            hints[name] = hint
    return hints


def _plain_hint(hint: Any) -> bool:
    """A class, or a union or generic alias of classes (and ``...``): what ``typing`` gives back unchanged."""
    if isinstance(hint, type) and not isinstance(hint, types.GenericAlias):
        return True
    if isinstance(hint, (types.UnionType, types.GenericAlias)):
        return all(arg is Ellipsis or _plain_hint(arg) for arg in hint.__args__)
    return False


def declared(owners: Iterable[tuple[str, type]]) -> dict[str, SettingDecl]:
    """Every setting the ``(owner, options dataclass)`` pairs hold, by name, in order of first appearance.

    A name held by several dataclasses (``threshold`` by each summarizing strategy) must be
    declared by one shared :class:`SettingSpec` with one type: only the defaults differ.
    """
    found: dict[str, SettingDecl] = {}
    for owner, options_type in owners:
        for field, kind, many, optional in fields_of(options_type):
            spec = field.metadata[SPEC_KEY]
            earlier = found.get(field.name)
            if earlier is None:
                found[field.name] = SettingDecl(field.name, kind, many, optional, spec, ((owner, field.default),))
                continue
            if earlier.spec is not spec or (earlier.kind, earlier.many) != (kind, many):
                raise TypeError(f"setting {field.name!r} is declared twice ({options_type.__name__}); share one spec")
            found[field.name] = dataclasses.replace(earlier, defaults=(*earlier.defaults, (owner, field.default)))
    return found


def problem(decl: SettingDecl, value: Any) -> str | None:
    """Why ``value`` is not a valid value of the setting, or None when it is; the message names the setting."""
    name = decl.name
    if value is None:
        return None if decl.optional else f"{name} must be set, not None"
    if decl.many:
        if not isinstance(value, (list, tuple)) or not all(isinstance(item, str) for item in value):
            return f"{name} must be a string or a list of strings, not {value!r}"
        values = list(value)
    elif decl.kind is bool:
        return None if isinstance(value, bool) else f"{name} must be true or false, not {value!r}"
    elif decl.kind is int:
        if isinstance(value, bool) or not isinstance(value, int):
            return f"{name} must be a whole number, not {value!r}"
        values = [value]
    elif decl.kind is float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return f"{name} must be a number, not {value!r}"
        values = [value]
    elif not isinstance(value, str):
        return f"{name} must be a string, not {value!r}"
    else:
        values = [value]
    spec = decl.spec
    for item in values:
        if spec.min is not None and item < spec.min:
            return f"{name} must be at least {spec.min}, not {item!r}"
        if spec.choices and item not in spec.choices:
            return f"{name} must be one of {', '.join(spec.choices)}, not {item!r}"
    return None


def check_options(options: Any) -> None:
    """A bad value of a declared field is an InputError naming the setting (not a flag)."""
    for name, one in _own_settings(type(options)).items():
        reason = problem(one, object.__getattribute__(options, name))  # a check, not a read (tests count reads)
        if reason:
            raise InputError(reason)


OptionsT = TypeVar("OptionsT", bound="Options")


class Options:
    """Base of the options dataclasses: what a library caller builds is checked like a flag or a config value."""

    def __post_init__(self) -> None:
        check_options(self)

    @classmethod
    def from_values(cls: type[OptionsT], values: Mapping[str, Any]) -> OptionsT:
        """The group built from flat values (flags over config over defaults): its own fields, lists as tuples;
        a field absent or None keeps its default."""
        given: dict[str, Any] = {}
        for field, _, many, _ in fields_of(cls):
            value = values.get(field.name)
            if value is not None:
                given[field.name] = tuple(value) if many and isinstance(value, list) else value
        return cls(**given)


_OWN: dict[type, dict[str, SettingDecl]] = {}


def _own_settings(options_type: type) -> dict[str, SettingDecl]:
    if options_type not in _OWN:
        _OWN[options_type] = declared([("", options_type)])
    return _OWN[options_type]


def defaults_of(options_type: type) -> dict[str, Any]:
    """The declared settings of a dataclass with their defaults (lists for list settings)."""
    defaults: dict[str, Any] = {}
    for field, _, many, _ in fields_of(options_type):
        default: Any = field.default
        defaults[field.name] = list(default) if many else default
    return defaults


def check_values(settings: Mapping[str, SettingDecl], values: Mapping[str, Any], where: str | None = None) -> None:
    """Raise an InputError (at ``where``, e.g. a config file) for the first value its setting refuses."""
    for name, value in values.items():
        if name in settings:
            reason = problem(settings[name], value)
            if reason:
                raise InputError(reason, where)
