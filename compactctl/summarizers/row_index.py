"""The redaction table's rows (``Row``), indexed by their keys (``secret_rows.redact_rows``): which rows
run on a text is a union of a few lists read off the keys it holds, not 70-odd rows tried one by one.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from compactctl.message_memo import replaying

# (a row's starts, its after) -> where its matches may start in one lower-cased text (``Row.start_positions``)
StartsFound = dict[tuple[tuple[str, ...], bool], set[int]]


@dataclass(frozen=True)
class Row:
    """One kind of secret: its pattern, what replaces it, and when it is tried at all."""

    kind: str
    pattern: re.Pattern[str]
    replacement: str
    # Strings one of which a match must contain (lower-case, and looked for in the lower-cased
    # text, when the row ignores case): a row whose keys are all absent from the text is
    # skipped, which is most rows on most texts, since a substring test costs little.
    keys: tuple[str, ...] = ()
    folded: bool = False
    # Where a match may start, for a row whose pattern would otherwise be tried at every
    # character (a long alternation of words, ignoring case): at each of these strings, looked
    # for in the lower-cased text (or just after it, with ``after``, and at the text's start).
    starts: tuple[str, ...] = ()
    after: bool = False
    # A quick pattern a text must hold for the row to be tried at all (fast where the row's is not).
    gate: re.Pattern[str] | None = None
    # No match is shorter (tests/summarizers/test_redact_prefilter.py checks it against re's parser):
    # the row is not run on a shorter text.
    shortest: int = 0
    # A match starts at most this many characters before a match of the gate starts (and holds it):
    # the row is tried there only, not over the whole text, when its pattern has no class the engine
    # skips to (tests/summarizers/test_redact_gates.py).
    lead: int | None = None

    def sub(self, text: str, lowered: str | None = None, starts_found: StartsFound | None = None) -> tuple[str, int]:
        """The row over ``text``; ``lowered``, when given, is ``text.lower()`` (rows share it), and
        ``starts_found``, when given, holds the start positions rows with the same ``starts`` found in
        ``lowered`` (two secret-assignment rows look for the same 22 words in every text holding a key)."""
        first = None if self.gate is None else self.gate.search(text)
        if self.gate is not None and first is None:
            return text, 0
        if self.lead is not None and first is not None:
            return self._near_gate(text, first.start())
        if not self.starts:
            return self.pattern.subn(self.replacement, text)
        lowered = text.lower() if lowered is None else lowered
        if len(lowered) != len(text):  # a character whose lower case is longer: positions would drift
            return self.pattern.subn(self.replacement, text)
        found: StartsFound = {} if starts_found is None else starts_found
        key = (self.starts, self.after)
        positions = found.get(key)
        if positions is None:
            positions = found[key] = self.start_positions(lowered)
        return self._sub_at(text, positions)

    def start_positions(self, lowered: str) -> set[int]:
        """Every place in ``lowered`` a match of the row may start, read off ``starts`` (and ``after``)."""
        positions = {0} if self.after else set()
        for start in self.starts:
            at = lowered.find(start)
            while at >= 0:
                positions.add(at + len(start) if self.after else at)
                at = lowered.find(start, at + 1)
        return positions

    def _near_gate(self, text: str, first: int) -> tuple[str, int]:
        """``pattern.subn`` over ``text``, the pattern tried only at the ``lead`` characters before each
        place its gate matches (from ``first`` on): the first match from where the last one ended, as subn."""
        assert self.gate is not None and self.lead is not None
        starts: set[int] = set()
        at: int | None = first
        while at is not None:
            starts.update(range(max(0, at - self.lead), at + 1))
            found = self.gate.search(text, at + 1)
            at = None if found is None else found.start()
        return self._sub_at(text, starts)

    def _sub_at(self, text: str, positions: set[int]) -> tuple[str, int]:
        """``pattern.subn`` over ``text`` with the pattern tried only at ``positions`` (every place a match
        can start): the first match from where the last one ended, as subn."""
        pieces: list[str] = []
        last = count = 0
        for at in sorted(positions):
            if at < last:
                continue
            found = self.pattern.match(text, at)
            if found is None:
                continue
            pieces += [text[last:at], found.expand(self.replacement)]
            last = found.end()
            count += 1
        return ("".join(pieces) + text[last:], count) if count else (text, 0)


@dataclass(frozen=True)
class RowIndex:
    """A group of rows indexed by their keys: which run on a text is a union of a few lists."""

    folded_keys: frozenset[str]  # keys of the rows that ignore case
    exact_keys: frozenset[str]
    always: tuple[int, ...]  # rows without keys
    by_folded: dict[str, tuple[int, ...]]  # key -> the case-blind rows holding it
    by_exact: dict[str, tuple[int, ...]]
    # The keys again, for ``held``: those sharing their first two characters with another key behind
    # that prefix (a text without "gl" holds none of the thirteen GitLab keys), the rest one by one.
    folded_groups: tuple[tuple[str, ...], tuple[tuple[str, tuple[str, ...]], ...]] = ((), ())
    exact_groups: tuple[tuple[str, ...], tuple[tuple[str, tuple[str, ...]], ...]] = ((), ())
    keys_across_lines: bool = False  # some key holds a line feed: ``held`` looks in the whole text
    # (lines of long texts -> the keys each holds), ignoring case (True) and not (False)
    _lines_held: dict[bool, dict[str, tuple[str, ...]]] = field(
        default_factory=lambda: {True: {}, False: {}}, compare=False, repr=False
    )
    # (keys held ignoring case, keys held) -> ``to_run``'s rows: most texts hold one of a few sets of keys.
    _runs: dict[tuple[tuple[str, ...], tuple[str, ...]], tuple[int, ...]] = field(
        default_factory=dict, compare=False, repr=False
    )

    def held(self, text: str, folded: bool) -> list[str]:
        """The keys (case-blind rows' with ``folded``, in ``text`` lower-cased) that ``text`` holds:
        ``[key for key in keys if key in text]``, as a set, with a key behind an absent prefix not looked for."""
        if not (self.folded_keys if folded else self.exact_keys):  # the key blocks' rows: none ignores case
            return []
        if len(text) > LINES_ABOVE and not self.keys_across_lines and replaying():
            return self._held_by_lines(text, folded)
        return self._held(text, folded)

    def _held_by_lines(self, text: str, folded: bool) -> list[str]:
        """``held`` of a long text, as the keys its lines hold: no key holds a line feed, so a key is in
        the text exactly where it is in one of its lines, and the lines of long texts repeat (a summary
        carries most of the last one's, a test log its PASSED lines), each looked in once. A replay's
        summaries: 130 K characters scanned for 88 keys one by one (8 ms), most of it lines seen before.

        In a replay only (``held``): one compaction redacts each text once, its lines mostly new, and
        splitting, joining and keeping them cost more than the scans they spare. The keys of the real
        Claude Code sessions' texts (``bench/speed_bench.py``'s five), looked for directly, not by
        lines: kcosr's 19.3 -> 14.5 ms of redaction, yoavf's 21.0 -> 18.8, bastion's 29.7 -> 28.6."""
        memo = self._lines_held[folded]
        found: set[str] = set()
        unseen: dict[str, None] = {}  # lines not in the memo, once each, in order
        for line in text.split("\n"):
            keys = memo.get(line)
            if keys is None:
                unseen[line] = None
            elif keys:
                found.update(keys)
        if unseen:
            # The lines not seen before are looked in together, joined by line feeds (no key holds one,
            # so none is found across a join): one scan of each key over them all, not one per line,
            # where a compact's lines are mostly new (kcosr's session: 1,743 lines, 10 ms -> 2 ms). Each
            # line's own keys are then among the few found: those are the only ones looked for in it.
            in_unseen = self._held("\n".join(unseen), folded)
            if len(memo) + len(unseen) > 16_384:
                memo.clear()
            for line in unseen:
                memo[line] = tuple(key for key in in_unseen if key in line) if in_unseen else ()
            found.update(in_unseen)
        return sorted(found)

    def _held(self, text: str, folded: bool) -> list[str]:
        alone, gated = self.folded_groups if folded else self.exact_groups
        found = [key for key in alone if key in text]
        for prefix, keys in gated:
            if prefix in text:
                found += [key for key in keys if key in text]
        return found

    def to_run(self, folded: Iterable[str], exact: Iterable[str]) -> list[int]:
        """The rows holding one of the keys (and those without keys), in order."""
        key = (tuple(folded), tuple(exact))
        found = self._runs.get(key)
        if found is None:
            if len(self._runs) >= 4096:  # keys held are a text's: bounded, not by the input
                self._runs.clear()
            found = self._runs[key] = tuple(self._to_run(*key))
        return list(found)

    def _to_run(self, folded: Iterable[str], exact: Iterable[str]) -> list[int]:
        chosen = set(self.always)
        for key in folded:
            chosen.update(self.by_folded[key])
        for key in exact:
            chosen.update(self.by_exact[key])
        return sorted(chosen)


LINES_ABOVE = 512  # characters: a longer text's keys are looked for line by line (``RowIndex._held_by_lines``)
_TABLES: dict[int, tuple[Sequence[Any], RowIndex]] = {}  # id(rows) -> their index


def _grouped(keys: Iterable[str]) -> tuple[tuple[str, ...], tuple[tuple[str, tuple[str, ...]], ...]]:
    """(keys looked for one by one, (prefix, the keys starting with it)...): a key is behind a prefix of
    two characters when another key starts with it too (each key holds its prefix, so a text without
    the prefix holds none of them)."""
    by_prefix: dict[str, list[str]] = {}
    for key in sorted(keys):
        by_prefix.setdefault(key[:2], []).append(key)
    alone = tuple(key for group in by_prefix.values() if len(group) == 1 for key in group)
    gated = tuple((prefix, tuple(group)) for prefix, group in by_prefix.items() if len(group) > 1)
    return alone, gated


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
        _grouped(by[True]),
        _grouped(by[False]),
        any("\n" in key for key in (*by[True], *by[False])),
    )
    if len(_TABLES) > 16:  # a caller's own groups of rows: never more than a few
        _TABLES.clear()
    _TABLES[id(rows)] = (rows, table)
    return table
