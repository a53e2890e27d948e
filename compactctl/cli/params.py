"""A command's own options and arguments, declared without importing Typer.

``Annotated[str | None, option("-o", "--output", help=...)]`` says what ``typer.Option("-o",
"--output", help=...)`` would; :func:`to_typer` makes the Typer object when the command is built
for Click (``cli.options.with_placeholder``). Declared this way, the command's module imports no
Typer, so a run that ``cli.direct`` reads without Click (``compact FILE -o OUT``) never loads it:
Typer and the Click it carries cost about 50 ms of CPU at every start, a third of a small run.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from compactctl import lazyre


@dataclass(frozen=True)
class Param:
    """``typer.Option(*flags, **more)`` (or ``typer.Argument(**more)`` when ``argument``), not made yet."""

    flags: tuple[str, ...]
    more: Mapping[str, Any]
    argument: bool = False


def option(*flags: str, **more: Any) -> Param:
    return Param(flags, more)


def argument(**more: Any) -> Param:
    return Param((), more, argument=True)


def to_typer(param: Param) -> Any:
    """The Typer object this declaration stands for."""
    import typer

    if param.argument:
        return typer.Argument(**param.more)
    return typer.Option(*param.flags, **param.more)


# A value read as Typer reads it, without it (``cli.plain_values`` for Click, ``cli.direct`` for plain lines).
NOT_PLAIN = object()  # a value this module leaves to Typer
_INT = lazyre.compile(r"-?(?:0|[1-9][0-9]{0,17})")  # what int() and pydantic read alike, well within 64 bits
_FLOAT = lazyre.compile(r"-?(?:0|[1-9][0-9]{0,14})(?:\.[0-9]{1,15})?")


def plain_value(annotation: Any, minimum: float | None, maximum: float | None, value: Any) -> Any:
    """``value`` as Typer would give it for an option of this type and bounds, or NOT_PLAIN."""
    if annotation is str:
        return value if isinstance(value, str) else NOT_PLAIN
    if annotation is Path:
        # A NUL is no path (Typer says "embedded null byte"; a plain Path would fail later, at open).
        return Path(value) if isinstance(value, str) and "\x00" not in value else NOT_PLAIN
    if annotation is int or annotation is float:
        if not isinstance(value, str) or not (_INT if annotation is int else _FLOAT).fullmatch(value):
            return NOT_PLAIN
        number = annotation(value)
        if (minimum is not None and number < minimum) or (maximum is not None and number > maximum):
            return NOT_PLAIN  # Typer says what the bound is
        return number
    listed = getattr(annotation, "__origin__", None) is list and annotation.__args__ == (str,)
    if listed and isinstance(value, (list, tuple)) and all(isinstance(item, str) for item in value):
        return list(value)
    return NOT_PLAIN
