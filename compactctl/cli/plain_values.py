"""Flag values read without pydantic: Typer 0.29 checks every parameter through a pydantic
``TypeAdapter``, and importing pydantic then building one adapter per option costs more than a
small ``prune`` itself (about 0.1 s of CPU at every start; ``bench/speed_bench.py``).

Every option compactctl declares is a plain ``str``, ``int``, ``float``, ``bool``, ``Path`` or
``list[str]``. A value that reads plainly as its type (a string for ``str``, digits for ``int``
within the option's bounds...) is taken here, as Typer would have taken it; anything else
(out of bounds, not a number, a type not listed) goes to Typer's own coercion, so its error
messages are Typer's. Typer's internals may move: when they are not where this expects
them, nothing is changed and Typer reads every value itself.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from compactctl.cli.params import NOT_PLAIN as NOT_PLAIN
from compactctl.cli.params import plain_value as plain_value

try:  # Typer's coercion layer (0.29): RuntimeParam is what a parameter's values go through
    from typer._coercion import RuntimeParam, TypeDescriptor, build_runtime_param
    from typer._param_types import coerce_cli_path
    from typer.core import _TyperParameter
except ImportError:  # pragma: no cover - another Typer: it reads every value itself
    RuntimeParam = None  # type: ignore[assignment,misc]

if RuntimeParam is not None:

    @dataclass(frozen=True)
    class PlainValues(RuntimeParam):
        """A parameter's coercion: a plain value here, anything else through Typer's (built when first needed)."""

        descriptor: TypeDescriptor

        def _coerce_value(self, value: Any, param: Any, ctx: Any) -> Any:
            info = self.parameter_info
            if info.clamp or info.parser is not None or self.descriptor.file_annotation is not None:
                found = NOT_PLAIN
            else:
                found = plain_value(self.annotation, info.min, info.max, value)
            if found is NOT_PLAIN:
                return build_runtime_param(self.descriptor)._coerce_value(value, param=param, ctx=ctx)
            if isinstance(found, Path):  # Typer's checks of a path (exists, dir_okay...), on a Path already made
                return coerce_cli_path(found, info, path_type=Path, param=param, ctx=ctx)
            return found


def read_plainly(command: Any) -> Any:
    """``command`` (a Click command Typer built) with its parameters' values read here where plain,
    ``--help`` too (made by Click when the line is parsed)."""
    if RuntimeParam is None:
        return command  # pragma: no cover
    for param in getattr(command, "params", ()):
        _read_plainly(param)
    help_option = command.get_help_option

    def plain_help_option(ctx: Any) -> Any:
        return _read_plainly(help_option(ctx))

    command.get_help_option = plain_help_option
    return command


def _read_plainly(param: Any) -> Any:
    descriptor = getattr(param, "type_descriptor", None)
    if not isinstance(param, _TyperParameter) or not isinstance(descriptor, TypeDescriptor):
        return param
    if getattr(param, "_runtime_param", None) is None:
        param._runtime_param = PlainValues(descriptor.parameter_info, descriptor.annotation, descriptor)
    return param
