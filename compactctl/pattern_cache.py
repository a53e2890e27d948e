"""Compiled regular expressions kept between runs: ``re``'s parse and compile done once per machine.

``re.compile`` parses a pattern and turns it into the regex engine's code in pure Python; the
engine itself (``_sre``) only takes the finished code. A plain ``compact`` of a real session
uses some 55 of the package's patterns, and compiling them is 20-35 ms of a 250 ms run: more
than the whole redaction pass on most sessions. So what ``re``'s compiler hands to ``_sre`` (the
code, the flags, the groups) is kept in the user's cache, one file per interpreter build, and
a pattern found there is made by ``_sre.compile`` in microseconds, the same object
``re.compile`` would return (``tests/test_pattern_cache.py`` compares every pattern of the package).

Nothing in the file is trusted: it is named for the interpreter's exact version and the engine's
magic number (another Python, another file), holds a checksum of its payload (a file cut short
or changed is ignored and rebuilt), and ``_sre`` checks the code it is given. Anything that
goes wrong compiles the pattern the ordinary way. ``COMPACTCTL_PATTERN_CACHE`` names another
folder, or ``off``.
"""

from __future__ import annotations

import marshal
import os
import re
import sys
import zlib
from pathlib import Path
from typing import Any

PATTERN_CACHE_ENV = "COMPACTCTL_PATTERN_CACHE"
_MAGIC = b"compactctl patterns 1\n"
MAX_PATTERNS = 2_000  # a pattern made from a user's words is kept too, but the file stays small

# (source, flags) -> what re's compiler gave _sre.compile; loaded on first use, and what this
# process compiled itself (to be written at exit).
_known: dict[tuple[Any, int], tuple[Any, ...]] | None = None
_added = False


def compiled(source: str | bytes, flags: int) -> re.Pattern[Any]:
    """``re.compile(source, flags)``, made from the cached compiler output when it is there."""
    flags = int(flags)  # a RegexFlag is an int marshal cannot write
    try:
        import _sre

        known = _load()
        key = (source, flags)
        found = known.get(key)
        if found is not None:
            final_flags, code, groups, groupindex, indexgroup = found
            return _sre.compile(source, final_flags, list(code), groups, groupindex, indexgroup)  # type: ignore[no-any-return]
        parts = _compiler_output(source, flags)
        final_flags, code, groups, groupindex, indexgroup = parts
        pattern = _sre.compile(source, final_flags, list(code), groups, groupindex, indexgroup)
    except Exception:  # another interpreter's internals, a damaged entry: re compiles it as always
        return re.compile(source, flags)
    if len(known) < MAX_PATTERNS:
        _keep(key, parts)
    return pattern  # type: ignore[no-any-return]


def _compiler_output(source: str | bytes, flags: int) -> tuple[Any, ...]:
    """What ``re._compiler.compile`` passes to ``_sre.compile`` after the pattern (the same steps)."""
    from re import _compiler, _parser  # type: ignore[attr-defined]

    parsed = _parser.parse(source, flags)
    code = [int(op) for op in _compiler._code(parsed, flags)]  # named opcodes are ints: marshal takes ints
    groupindex = dict(parsed.state.groupdict)
    indexgroup: list[str | None] = [None] * parsed.state.groups
    for name, index in groupindex.items():
        indexgroup[index] = name
    return int(flags | parsed.state.flags), tuple(code), parsed.state.groups - 1, groupindex, tuple(indexgroup)


def cache_path() -> Path | None:
    """This interpreter's file (None: ``COMPACTCTL_PATTERN_CACHE=off``)."""
    import _sre

    named = os.environ.get(PATTERN_CACHE_ENV)
    if named == "off":
        return None
    if named:
        folder = Path(named)
    else:
        from compactctl.userdirs import user_cache_dir

        folder = user_cache_dir() / "patterns"
    build = f"{sys.version}|{sys.implementation.name}|{_sre.MAGIC}|{_sre.CODESIZE}|{_sre.MAXREPEAT}|{marshal.version}"
    return folder / f"{sys.implementation.cache_tag}-{zlib.crc32(build.encode()):08x}.marshal"


def _load() -> dict[tuple[Any, int], tuple[Any, ...]]:
    global _known
    if _known is None:
        path = cache_path()
        _known = _read(path) if path is not None else {}
    return _known


def _read(path: Path) -> dict[tuple[Any, int], tuple[Any, ...]]:
    try:
        blob = path.read_bytes()
    except OSError:
        return {}
    head = len(_MAGIC)
    checksum, payload = blob[head : head + 4], blob[head + 4 :]
    if not blob.startswith(_MAGIC) or zlib.crc32(payload).to_bytes(4, "big") != checksum:
        return {}
    try:
        known = marshal.loads(payload)
    except (ValueError, EOFError, TypeError):
        return {}
    return known if isinstance(known, dict) else {}


def _keep(key: tuple[Any, int], parts: tuple[Any, ...]) -> None:
    global _added
    assert _known is not None
    _known[key] = parts
    if not _added:
        import atexit

        atexit.register(write)
        _added = True


def write() -> None:
    """Write the patterns this process compiled, with those already in the file (at exit)."""
    path = cache_path()
    if path is None or _known is None:
        return
    merged = {**_read(path), **_known}
    payload = marshal.dumps(merged)
    blob = _MAGIC + zlib.crc32(payload).to_bytes(4, "big") + payload
    temporary = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary.write_bytes(blob)
        os.replace(temporary, path)  # whole or not at all: a run reading it meanwhile sees one or the other
    except OSError:  # a read-only home, a full disk: the next run compiles again, that is all
        temporary.unlink(missing_ok=True)
