"""Reading the head of a session file and rewriting some of its JSON Lines records, the rest byte for byte."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

HEAD_LINES = 50  # where the clients write the session's header and working directory


def values_of(data: bytes) -> list[dict[str, Any]]:
    """The JSON objects of a JSON Lines file (lines that are not one are left out: the reader names them)."""
    found = []
    for line in data.splitlines():
        if line.strip():
            try:
                value = orjson.loads(line)
            except orjson.JSONDecodeError:
                continue
            if isinstance(value, dict):
                found.append(value)
    return found


def first_values(path: Path, wanted: Callable[[dict[str, Any]], bool], lines: int = HEAD_LINES) -> list[dict[str, Any]]:
    """The first record among the file's first ``lines`` that ``wanted`` takes (a one-item list), else []."""
    try:
        with open(path, "rb") as file:
            for number, line in enumerate(file):
                if number >= lines:
                    break
                try:
                    value = orjson.loads(line)
                except orjson.JSONDecodeError:
                    continue
                if isinstance(value, dict) and wanted(value):
                    return [value]
    except OSError:
        return []
    return []


def rewrite_values(data: bytes, change: Callable[[dict[str, Any]], dict[str, Any] | None]) -> bytes:
    """Each JSON Lines record ``change`` returns a new value for, written again (compact, as the clients
    write); every other line kept as it was."""
    out = []
    for line in data.splitlines(keepends=True):
        try:
            value = orjson.loads(line) if line.strip() else None
        except orjson.JSONDecodeError:
            value = None
        changed = change(value) if isinstance(value, dict) else None
        if changed is None:
            out.append(line)
        else:
            out.append(orjson.dumps(changed) + (b"\n" if line.endswith(b"\n") else b""))
    return b"".join(out)
