"""The methods ``dataclasses`` writes for each class, compiled once per machine, not at every start.

``@dataclass`` writes each class's ``__init__``, ``__repr__``, ``__eq__``, ``__hash__`` and, frozen,
``__setattr__`` and ``__delattr__`` as Python source and compiles it with ``exec``: some 400
small compiles for the 75 classes a plain ``compact`` imports, a fifth of all the instructions
of compacting a real session (callgrind), and what Python itself does not keep as it keeps a
module's byte-code. The command (``cli.main``) has ``dataclasses`` call ``exec`` here instead:
the same source compiled the same way (no ``__future__`` flag of this module inherited), its
code object kept in the user's cache (``build_cache``) and reused by the next run. The classes
are the ones ``dataclasses`` makes (``tests/test_build_cache.py`` compares every class's
methods, code object for code object). A library caller's classes are never touched: only the
command installs it. Whoever can write the user's cache can run code as the user already (a
shell's start-up file, the user's site-packages), as with the byte-code Python keeps.
"""

from __future__ import annotations

import builtins
import marshal
import sys
import types
from typing import Any

from compactctl.build_cache import BuildCache

CACHE = BuildCache("dataclass-code", 5_000)  # source -> its code object, marshalled (read only when used)


def install() -> None:
    """``dataclasses`` compiles through the cache from now on (this process), and reads each annotation's
    leading names once; imported here first, it finds ``inspect`` deferred (``defer_inspect``)."""
    if "dataclasses" not in sys.modules:
        defer_inspect()
    import dataclasses

    # A name in a module's globals comes before the builtin: only dataclasses' own calls come here.
    dataclasses.exec = _exec  # type: ignore[attr-defined]
    if dataclasses._is_type is not _is_type:  # type: ignore[attr-defined]
        _PLAIN["_is_type"] = dataclasses._is_type  # type: ignore[attr-defined]
        dataclasses._is_type = _is_type  # type: ignore[attr-defined]


def uninstall() -> None:
    import dataclasses

    vars(dataclasses).pop("exec", None)
    if "_is_type" in _PLAIN:
        dataclasses._is_type = _PLAIN.pop("_is_type")  # type: ignore[attr-defined]


class _OnFirstUse(types.ModuleType):
    """A module whose code runs in its own namespace when a name of it is first looked up (``defer_inspect``)."""

    def __getattr__(self, name: str) -> Any:  # only for a name its namespace lacks: before the code ran, any
        self.__class__ = types.ModuleType  # type: ignore[assignment]  # from now on an ordinary module (a name looked up during the run too)
        spec = self.__spec__
        assert spec is not None and spec.loader is not None
        spec.loader.exec_module(self)
        return getattr(self, name)


def defer_inspect() -> None:
    """``inspect`` in ``sys.modules`` as a module whose code runs at the first look-up of a name in it.

    ``dataclasses`` imports ``inspect`` for one thing, a class without a docstring (its ``__doc__``
    is made from its signature), and ``inspect`` brings ``ast``, ``dis`` and ``tokenize``: about 10 ms
    of CPU of every start of the command, which no plain ``compact`` or ``prune`` line uses
    otherwise. ``import inspect`` finds this module (its ``__spec__`` and ``__file__`` are there, so
    the import system asks nothing else of it); the first name looked up in it (``inspect.signature``,
    ``from inspect import ...``) runs ``inspect``'s own code in it, so the module is the one and only
    ``inspect`` from then on. Not done where ``inspect`` is imported already, or cannot be found.
    """
    if "inspect" in sys.modules:
        return
    from importlib.util import find_spec, module_from_spec

    spec = find_spec("inspect")
    if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
        return
    module = module_from_spec(spec)
    module.__class__ = _OnFirstUse
    sys.modules["inspect"] = module


_PLAIN: dict[str, Any] = {}  # what install replaced in dataclasses
# An annotation's text -> its module name (or None) and its name, as dataclasses' _MODULE_IDENTIFIER_RE
# reads them; None where that pattern does not match.
_IDENTIFIERS: dict[str, tuple[str | None, str] | None] = {}


def _is_type(annotation: str, cls: type, a_module: Any, a_type: Any, is_type_predicate: Any) -> bool:
    """``dataclasses._is_type``, the annotation's names read once, not at each of the three times every field
    of every class asks (ClassVar? InitVar? KW_ONLY?): the same lookups, in the same namespaces."""
    found = _IDENTIFIERS.get(annotation, _UNREAD)
    if found is _UNREAD:
        import dataclasses

        match = dataclasses._MODULE_IDENTIFIER_RE.match(annotation)  # type: ignore[attr-defined]
        found = _IDENTIFIERS[annotation] = (match.group(1), match.group(2)) if match else None
    if found is None:
        return False
    module_name, name = found
    ns = None
    if not module_name:  # as dataclasses: the class's module did "from dataclasses import InitVar"
        ns = sys.modules.get(cls.__module__).__dict__  # type: ignore[union-attr]
    else:
        module = sys.modules.get(cls.__module__)
        if module and module.__dict__.get(module_name) is a_module:
            ns = sys.modules.get(a_type.__module__).__dict__  # type: ignore[union-attr]
    return bool(ns and is_type_predicate(ns.get(name), a_module))


_UNREAD: Any = object()


def _exec(source: Any, globals: dict[str, Any] | None = None, locals: dict[str, Any] | None = None) -> None:
    if not isinstance(source, str):
        builtins.exec(source, globals, locals)
        return
    kept = CACHE.get(source)
    if kept is not None:
        code = marshal.loads(kept)
    else:
        # As exec compiles a string: file "<string>", and flags of the calling module (dataclasses: none).
        code = compile(source, "<string>", "exec", dont_inherit=True)
        CACHE.keep(source, marshal.dumps(code))
    builtins.exec(code, globals, locals)
