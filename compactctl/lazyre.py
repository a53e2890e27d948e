"""Regular expressions compiled the first time they are used, not when their module is imported.

A module's patterns cost their compile at every start of every command that imports it (the
redaction table alone is some 70 patterns), though most runs use few of them and many use none.
``lazyre.compile`` takes what ``re.compile`` takes and returns what stands for the pattern: its
first method call compiles it, and puts the compiled pattern's own bound methods on the object,
so every later call is as fast as on the pattern itself. The compile itself is made from what an
earlier run's compiler produced, when the user's cache holds it (``compactctl.pattern_cache``).
"""

from __future__ import annotations

import re
from typing import Any, AnyStr, cast

# What a pattern is used for; any other attribute (``scanner``...) compiles it too, through __getattr__.
_METHODS = ("search", "match", "fullmatch", "finditer", "findall", "sub", "subn", "split")
_ATTRIBUTES = ("pattern", "flags", "groups", "groupindex")


class _CompiledOnFirstUse:
    def __init__(self, source: str | bytes, flags: int) -> None:
        self._source = source
        self._given_flags = flags

    def _compiled(self) -> re.Pattern[Any]:
        from compactctl.pattern_cache import compiled as cached

        compiled = cached(self._source, self._given_flags)
        # Instance attributes win over the class's methods: from now on a call goes straight to re.
        for name in (*_METHODS, *_ATTRIBUTES):
            self.__dict__[name] = getattr(compiled, name)
        return compiled

    def __getattr__(self, name: str) -> Any:  # only for names not found: the rest of re.Pattern
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(self._compiled(), name)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, _CompiledOnFirstUse):
            return (self._source, self._given_flags) == (other._source, other._given_flags)
        return NotImplemented

    def __hash__(self) -> int:
        return hash((self._source, self._given_flags))

    def __repr__(self) -> str:
        return f"lazyre.compile({self._source!r}, {self._given_flags})"

    def __reduce__(self) -> tuple[Any, ...]:  # pickled (a Ray worker) as what it was made from
        return (_CompiledOnFirstUse, (self._source, self._given_flags))

    def __copy__(self) -> _CompiledOnFirstUse:
        return self  # a pattern does not change: re.Pattern copies to itself too

    def __deepcopy__(self, memo: dict[int, Any]) -> _CompiledOnFirstUse:
        return self


def _deferred(name: str) -> Any:
    def method(self: _CompiledOnFirstUse, *args: Any, **kwargs: Any) -> Any:
        return getattr(self._compiled(), name)(*args, **kwargs)

    method.__name__ = name
    return method


for _name in _METHODS:
    setattr(_CompiledOnFirstUse, _name, _deferred(_name))


def compile(pattern: AnyStr, flags: int = 0) -> re.Pattern[AnyStr]:  # re's own name, on purpose
    """``re.compile(pattern, flags)``, done when the pattern is first used."""
    return cast("re.Pattern[AnyStr]", _CompiledOnFirstUse(pattern, int(flags)))
