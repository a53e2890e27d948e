"""What this interpreter built once and a later run can reuse: one checksummed file per kind, command and build.

Two kinds of work are the same at every start of the command and cost it tens of milliseconds:
compiling the package's regular expressions (``pattern_cache``) and compiling the methods
``dataclasses`` writes for each class (``dataclass_code``). Each keeps what the compiler made in
a file of the user's cache named for the command that runs and the interpreter's exact build
(another Python, another file), with a checksum of its payload (a file cut short or changed is
ignored, and rebuilt). What is new in a run is added at exit, the file replaced whole.
``COMPACTCTL_BUILD_CACHE`` names another folder, or ``off``.
"""

from __future__ import annotations

import marshal
import os
import sys
import zlib
from pathlib import Path
from typing import Any

BUILD_CACHE_ENV = "COMPACTCTL_BUILD_CACHE"
_MAGIC = b"compactctl build cache 1\n"


class BuildCache:
    """A dict of what one kind of compile made, read from its file on first use, written back at exit."""

    def __init__(self, kind: str, limit: int) -> None:
        self.kind, self.limit = kind, limit
        self.part = ""  # the command whose file this is (``narrow``); "" for a library caller
        self._known: dict[Any, Any] | None = None
        self._new = False

    def narrow(self, part: str) -> None:
        """Keep what this process compiles in a file of its own for ``part`` (the command that runs), unless the
        cache was read already. A compact uses a third of the package's dataclass methods: its own file reads in
        1.3 ms where one for every command (1,200 methods) took 3.5 ms of CPU."""
        if self._known is None:
            self.part = part

    def get(self, key: Any) -> Any:
        return self.known().get(key)

    def keep(self, key: Any, value: Any) -> None:
        """Remember ``value`` (marshal-able) under ``key``; written at exit, unless the cache is full."""
        known = self.known()
        if len(known) >= self.limit:
            return
        known[key] = value
        if not self._new:
            import atexit

            atexit.register(self.write)
            self._new = True

    def known(self) -> dict[Any, Any]:
        if self._known is None:
            path = self.path()
            self._known = read(path) if path is not None else {}
        return self._known

    def forget(self) -> None:
        """Read the file again at the next use (as a new process would)."""
        self._known = None

    def path(self) -> Path | None:
        """This interpreter's file of this kind (None: ``COMPACTCTL_BUILD_CACHE=off``)."""
        named = os.environ.get(BUILD_CACHE_ENV)
        if named == "off":
            return None
        if named:
            folder = Path(named)
        else:
            from compactctl.userdirs import user_cache_dir

            folder = user_cache_dir() / "build"
        import _sre

        build = f"{sys.version}|{sys.implementation.name}|{marshal.version}|{_sre.MAGIC}|{_sre.CODESIZE}"
        kind = f"{self.kind}-{self.part}" if self.part else self.kind
        return folder / f"{kind}-{sys.implementation.cache_tag}-{zlib.crc32(build.encode()):08x}.marshal"

    def write(self) -> None:
        """Write what this process added, with what the file already holds (another run's)."""
        path = self.path()
        if path is None or self._known is None:
            return
        payload = marshal.dumps({**read(path), **self._known})
        temporary = path.with_name(f"{path.name}.{os.getpid()}.tmp")
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            temporary.write_bytes(_MAGIC + zlib.crc32(payload).to_bytes(4, "big") + payload)
            os.replace(temporary, path)  # whole or not at all: a run reading it meanwhile sees one or the other
        except OSError:  # a read-only home, a full disk: the next run compiles again, that is all
            temporary.unlink(missing_ok=True)


def read(path: Path) -> dict[Any, Any]:
    """The file's dict, or an empty one: missing, cut short, changed, or not this format."""
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
