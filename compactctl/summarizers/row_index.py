"""The redaction table's rows indexed by their keys (``secret_rows.redact_rows``): which rows run on
a text is a union of a few lists read off the keys it holds, not 70-odd rows tried one by one."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class RowIndex:
    """A group of rows indexed by their keys: which run on a text is a union of a few lists."""

    folded_keys: frozenset[str]  # keys of the rows that ignore case
    exact_keys: frozenset[str]
    always: tuple[int, ...]  # rows without keys
    by_folded: dict[str, tuple[int, ...]]  # key -> the case-blind rows holding it
    by_exact: dict[str, tuple[int, ...]]

    def to_run(self, folded: list[str], exact: list[str]) -> list[int]:
        chosen = set(self.always)
        for key in folded:
            chosen.update(self.by_folded[key])
        for key in exact:
            chosen.update(self.by_exact[key])
        return sorted(chosen)


_TABLES: dict[int, tuple[Sequence[Any], RowIndex]] = {}  # id(rows) -> their index


def row_index(rows: Sequence[Any]) -> RowIndex:
    """The index of ``rows`` (worked out once per group of rows)."""
    found = _TABLES.get(id(rows))
    if found is not None and found[0] is rows:
        return found[1]
    by: dict[bool, dict[str, list[int]]] = {True: {}, False: {}}
    for index, row in enumerate(rows):
        for key in row.keys:
            by[row.folded].setdefault(key, []).append(index)
    table = RowIndex(
        frozenset(by[True]),
        frozenset(by[False]),
        tuple(index for index, row in enumerate(rows) if not row.keys),
        {key: tuple(indices) for key, indices in by[True].items()},
        {key: tuple(indices) for key, indices in by[False].items()},
    )
    if len(_TABLES) > 16:  # a caller's own groups of rows: never more than a few
        _TABLES.clear()
    _TABLES[id(rows)] = (rows, table)
    return table
