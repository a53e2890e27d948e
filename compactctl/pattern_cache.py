"""Compiled regular expressions kept between runs: ``re``'s parse and compile done once per machine.

``re.compile`` parses a pattern and turns it into the regex engine's code in pure Python; the
engine itself (``_sre``) only takes the finished code. A plain ``compact`` of a real session
uses some 55 of the package's patterns, and compiling them is 20-35 ms of a 250 ms run: more
than the whole redaction pass on most sessions. So what ``re``'s compiler hands to ``_sre`` (the
code, the flags, the groups) is kept (``build_cache``), and a pattern found there is made by
``_sre.compile`` in microseconds: the same object ``re.compile`` returns (``tests/test_build_cache.py``
compares every pattern of the package). ``_sre`` checks the code it is given, and anything that
goes wrong compiles the pattern the ordinary way.
"""

from __future__ import annotations

import re
from array import array
from typing import Any

from compactctl.build_cache import BuildCache

# (source, flags) -> what re's compiler gave _sre.compile after the source. Patterns made from a
# user's words are kept too, up to the limit: the file stays small.
CACHE = BuildCache("patterns", 2_000)
_WORD = "I"  # the engine's code words: 32 bits (another _sre.CODESIZE: every pattern compiles as re does)


def compiled(source: str | bytes, flags: int) -> re.Pattern[Any]:
    """``re.compile(source, flags)``, made from the cached compiler output when it is there."""
    made = _made(source, int(flags))  # a RegexFlag is an int marshal cannot write
    return made if made is not None else re.compile(source, flags)


def install() -> None:
    """``re`` compiles through the cache from now on (this process): every pattern, not only the package's
    own (``lazyre``): the standard library's at their import too (``dataclasses``, ``json``, ``platform``:
    16 patterns, about 5 ms of CPU of every start of the command)."""
    from re import _compiler  # type: ignore[attr-defined]

    if "compile" not in _PLAIN:
        _PLAIN["compile"] = _compiler.compile
        _compiler.compile = _compile


def uninstall() -> None:
    from re import _compiler  # type: ignore[attr-defined]

    if "compile" in _PLAIN:
        _compiler.compile = _PLAIN.pop("compile")


_PLAIN: dict[str, Any] = {}  # what install replaced in re._compiler


def _compile(p: Any, flags: int = 0) -> Any:
    """``re._compiler.compile`` (what ``re.compile`` calls when its own cache misses), made from the cached
    compiler output where it can be: a pattern's text, and no ``re.DEBUG`` (which prints as it compiles)."""
    if isinstance(p, (str, bytes)) and not flags & re.DEBUG:
        made = _made(p, int(flags))
        if made is not None:
            return made
    return _PLAIN["compile"](p, flags)


def _made(source: str | bytes, flags: int) -> re.Pattern[Any] | None:
    """The pattern as ``re`` compiles it, from the cache or compiled here (and kept); None where anything
    goes wrong (the caller compiles it the ordinary way): this never calls ``re.compile``."""
    try:
        import _sre

        if array(_WORD).itemsize != _sre.CODESIZE:
            raise ValueError("another size of code word")
        key = (source, flags)
        parts = CACHE.get(key)
        new = parts is None
        if new:
            parts = _compiler_output(source, flags)
        final_flags, code, groups, groupindex, indexgroup = parts
        words = array(_WORD, code).tolist()
        pattern: re.Pattern[Any] = _sre.compile(source, final_flags, words, groups, groupindex, indexgroup)
    except Exception:  # another interpreter's internals, an entry the engine refuses: re compiles it as always
        return None
    if new:
        CACHE.keep(key, parts)
    return pattern


def _compiler_output(source: str | bytes, flags: int) -> tuple[Any, ...]:
    """What ``re._compiler.compile`` passes to ``_sre.compile`` after the pattern (the same steps)."""
    from re import _compiler, _parser  # type: ignore[attr-defined]

    parsed = _parser.parse(source, flags)
    # The engine's code as bytes: a file of them reads in a fraction of the time a tuple of ints takes.
    code = array(_WORD, _compiler._code(parsed, flags)).tobytes()
    groupindex = dict(parsed.state.groupdict)
    indexgroup: list[str | None] = [None] * parsed.state.groups
    for name, index in groupindex.items():
        indexgroup[index] = name
    return int(flags | parsed.state.flags), code, parsed.state.groups - 1, groupindex, tuple(indexgroup)
