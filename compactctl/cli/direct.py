"""A command line read without Click, when every word of it reads plainly: ``compact FILE -o OUT -q``.

Importing Typer (and the Click it carries) and building a command's 60 options costs about
60 ms of CPU, a third of compacting a real session. The line a person or a script types most
(``compact`` or ``prune``, files, flags and values of the plain kinds) is read here instead,
from the same declarations Click's command is built from (the command's signature and its
settings), into the same keyword arguments Click would pass (``tests/cli/test_direct.py`` holds
the two to each other, line by line). Anything else goes to Click untouched: ``--help``, a flag
it does not know, a value that is not plain (``cli.params.plain_value``: out of bounds, not a
number), ``--x=1`` for a switch, a flag given twice, ``--``, a word after the command that
starts with ``-`` and is not one of its flags. Reading has no side effect, so falling back loses
nothing, and every usage error is still Click's own message.
"""

from __future__ import annotations

import errno
import sys
import types
import typing
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Annotated, Any

from compactctl.cli.params import NOT_PLAIN, Param, plain_value

COMMANDS = ("compact", "prune")  # the commands read here; the others are rarer, or mostly --session


@dataclass(frozen=True)
class Flag:
    """What one flag sets: ``name`` to ``value`` (a switch), or to the word that follows, read as ``kind``."""

    name: str
    kind: Any  # str, int, float, Path, bool (a switch)
    many: bool = False  # given again, it adds to a list
    value: bool = True  # a switch's value: False for its --no- form
    minimum: float | None = None
    maximum: float | None = None


@dataclass(frozen=True)
class Line:
    """A command's flags (each spelling), where its files go, and what each keyword is when not given."""

    flags: Mapping[str, Flag]
    positional: str | None  # the argument taking the files
    defaults: Mapping[str, Any]


def run(argv: Sequence[str]) -> None:
    """Run the command ``argv`` names and exit, when every word of it reads plainly; else return."""
    if len(argv) < 2 or argv[0] not in COMMANDS:
        return
    from importlib import import_module

    module = import_module(f"compactctl.cli.{argv[0]}")
    command = getattr(module, argv[0])
    line = line_of(command, module.declared_settings())
    given = read(argv[1:], line) if line is not None else None
    if given is not None:
        invoke(command, given)


def line_of(command: Callable[..., Any], settings: Mapping[str, Any]) -> Line | None:
    """The flags of ``command``: its own parameters (``cli.params`` declarations), then its settings';
    None when one is declared for Typer alone."""
    flags: dict[str, Flag] = {}
    positional = None
    defaults: dict[str, Any] = {}
    for name, default, annotation in parameters(command):
        defaults[name] = None if default is NO_DEFAULT else default
        kind, many, declared = _declared(annotation)
        if declared is None:  # a parameter declared for Typer alone: Click reads every line
            return None
        if declared.argument:
            positional = name
            continue
        spellings = declared.flags or (f"--{name.replace('_', '-')}",)
        bounds = declared.more.get("min"), declared.more.get("max")
        _add(flags, name, spellings, kind, many, *bounds)
    for name, setting in settings.items():
        defaults[name] = None
        _add(flags, name, setting.flags, setting.kind, setting.many, setting.spec.min, None)
    return Line(flags, positional, defaults)


NO_DEFAULT: Any = object()  # a parameter without a default (``inspect.Parameter.empty``)
_NO_ANNOTATION: Any = object()
_CO_VARARGS = 0x04  # inspect.CO_VARARGS: the function takes *args


def parameters(command: Callable[..., Any]) -> list[tuple[str, Any, Any]]:
    """(name, default or NO_DEFAULT, annotation) of each parameter of ``command`` but its ``**`` one, in
    order, as ``inspect.signature(command, eval_str=True)`` gives them (through ``functools.wraps``).

    Read from the function itself: ``inspect`` (and the ``ast``, ``dis`` and ``tokenize`` it imports,
    10 ms of CPU) is loaded by nothing else of a plain run (``dataclass_code.defer_inspect``). Anything
    but a plain function is left to ``inspect``."""
    function: Any = command
    while hasattr(function, "__wrapped__") and not hasattr(function, "__signature__"):
        function = function.__wrapped__
    code = getattr(function, "__code__", None)
    if code is None or hasattr(function, "__signature__") or not isinstance(function, types.FunctionType):
        import inspect

        return [
            (p.name, NO_DEFAULT if p.default is p.empty else p.default, p.annotation)
            for p in inspect.signature(command, eval_str=True).parameters.values()
            if p.kind is not p.VAR_KEYWORD
        ]
    annotations = {
        name: eval(text, function.__globals__) if isinstance(text, str) else text  # as inspect's eval_str does
        for name, text in function.__annotations__.items()
    }
    positional = code.co_varnames[: code.co_argcount]
    keyword = code.co_varnames[code.co_argcount : code.co_argcount + code.co_kwonlyargcount]
    given = function.__defaults__ or ()
    start = len(positional) - len(given)  # the first positional parameter with a default
    found = [(name, given[n - start] if n >= start else NO_DEFAULT) for n, name in enumerate(positional)]
    if code.co_flags & _CO_VARARGS:
        found.append((code.co_varnames[code.co_argcount + code.co_kwonlyargcount], NO_DEFAULT))
    keyword_defaults = function.__kwdefaults__ or {}
    found += [(name, keyword_defaults.get(name, NO_DEFAULT)) for name in keyword]
    return [(name, default, annotations.get(name, _NO_ANNOTATION)) for name, default in found]


def _declared(annotation: Any) -> tuple[Any, bool, Param | None]:
    """(item type, is a list, the declaration) of ``Annotated[T | None, option(...)]``."""
    if typing.get_origin(annotation) is not Annotated:
        return annotation, False, None
    hint, *extras = typing.get_args(annotation)
    kinds = [arg for arg in typing.get_args(hint) if arg is not type(None)] or [hint]
    kind = kinds[0]
    many = typing.get_origin(kind) is list
    declared = next((extra for extra in extras if isinstance(extra, Param)), None)
    return (typing.get_args(kind)[0] if many else kind), many, declared


def _add(
    flags: dict[str, Flag],
    name: str,
    spellings: Sequence[str],
    kind: Any,
    many: bool,
    minimum: float | None,
    maximum: float | None,
) -> None:
    for spelling in spellings:
        on, _, off = spelling.partition("/")  # "--redact/--no-redact": a switch with both forms
        for word in on.split():
            flags[word] = Flag(name, kind, many, True, minimum, maximum)
        for word in off.split():
            flags[word] = Flag(name, kind, many, False, minimum, maximum)


def read(words: Sequence[str], line: Line) -> dict[str, Any] | None:
    """The keyword arguments Click would pass for ``words``, or None where one does not read plainly."""
    given: dict[str, Any] = {}
    files: list[str] = []
    at = 0
    while at < len(words):
        word = words[at]
        at += 1
        if word == "-" or not word.startswith("-"):
            files.append(word)
            continue
        flag_word, equals, attached = word.partition("=")
        flag = line.flags.get(flag_word if word.startswith("--") else word)
        if flag is None or (flag.name in given and not flag.many):
            return None
        if flag.kind is bool:
            if equals:
                return None
            given[flag.name] = flag.value
            continue
        if equals:
            value = attached
        elif at < len(words) and (words[at] == "-" or not words[at].startswith("-")):
            value, at = words[at], at + 1
        else:
            return None  # no value, or one that looks like a flag: Click decides
        found = plain_value(flag.kind, flag.minimum, flag.maximum, value)
        if found is NOT_PLAIN:
            return None
        if flag.many:
            given.setdefault(flag.name, []).append(found)
        else:
            given[flag.name] = found
    if files:
        if line.positional is None:
            return None
        given[line.positional] = files
    return {**line.defaults, **given}


def invoke(command: Callable[..., Any], given: Mapping[str, Any]) -> typing.NoReturn:
    """Run the command as Click's standalone ``main`` does: exit 0 when it returns, its own code when it
    exits, "Aborted!" on an interrupt it did not handle, 1 on a closed pipe; a bug as Typer shows it."""
    try:
        command(**given)
    except (EOFError, KeyboardInterrupt):
        print(file=sys.stderr)
        print("Aborted!", file=sys.stderr)
        sys.exit(1)
    except OSError as error:
        if error.errno != errno.EPIPE:
            _shown_as_typer_shows(error)
            raise
        from typer._click.utils import PacifyFlushWrapper

        sys.stdout = typing.cast(Any, PacifyFlushWrapper(sys.stdout))
        sys.stderr = typing.cast(Any, PacifyFlushWrapper(sys.stderr))
        sys.exit(1)
    except Exception as error:
        _shown_as_typer_shows(error)
        raise
    sys.exit(0)


def _shown_as_typer_shows(error: Exception) -> None:
    """Typer's excepthook for a bug, with the app's settings (no locals shown: never an API key)."""
    try:
        import typer.main
        from typer.models import DeveloperExceptionConfig

        from compactctl.cli.app import app
    except ImportError:  # pragma: no cover - another Typer: Python's own traceback
        return
    sys.excepthook = typer.main.except_hook
    config = DeveloperExceptionConfig(
        pretty_exceptions_enable=app.pretty_exceptions_enable,
        pretty_exceptions_show_locals=app.pretty_exceptions_show_locals,
        pretty_exceptions_short=app.pretty_exceptions_short,
    )
    setattr(error, typer.main._typer_developer_exception_attr_name, config)
