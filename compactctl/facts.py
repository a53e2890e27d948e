"""Facts: the strings a compaction must keep, matched the way people write them, kept by copy.

A fact is found in a message when its *folded* text occurs in the message's folded text:
Unicode ``casefold`` and every run of whitespace read as one space, so "L'appareil se
connecte" written in a chunk matches the fact "l'appareil  se connecte" a labeler typed.

A fact needs one surviving copy, not every copy: when a file is read 14 times and every
read holds the fact, 13 reads may go. ``keepers`` says which messages must stay so that
every fact found in the input keeps a copy: nothing when a kept message already holds it,
else its latest holder (the most current copy, which is what a stub defers to).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Sequence
from typing import Any

from compactctl.message_memo import by_message
from compactctl.transcript import ANNOTATION_KEY, Message, annotations_of, facts_of, message_text, message_texts


def fold(text: str) -> str:
    """Case and whitespace folded text: what facts (and duplicate texts) are compared on."""
    return " ".join(text.split()).casefold()


def unique_facts(facts: Iterable[str]) -> list[str]:
    """One fact per folded spelling, as first written; empty ones left out."""
    seen: dict[str, str] = {}
    for fact in facts:
        folded = fold(fact)
        if folded:
            seen.setdefault(folded, fact)
    return list(seen.values())


def declared_facts(messages: Iterable[Message], required: Iterable[str] = ()) -> list[str]:
    """The facts to keep: ``required`` ones, then those the messages' annotations declare."""
    # ``annotations_of`` inline: most messages have none, and a compaction reads every message of its context.
    return unique_facts(
        [*required, *(fact for message in messages if message.get(ANNOTATION_KEY) for fact in facts_of(message))]
    )


MEMO_MAX_ENTRIES = 10_000
MEMO_MAX_CHARS = 16_000_000  # the memo holds each text and its folding: at most about 64 MB
# Shared by every matcher: a replay matches the same messages against the same facts at every compaction.
_FOLDED: dict[str, str] = {}
# folded facts -> text -> the facts it holds; a matcher looks its facts' memo up once, as a tuple of
# a hundred facts is hashed anew at every lookup (tuples keep no hash).
_FOUND: dict[tuple[str, ...], dict[str, list[int]]] = {}
_memo_chars = 0


def _remember(memo: dict[Any, Any], key: Any, value: Any, chars: int) -> Any:
    global _memo_chars
    if len(memo) >= MEMO_MAX_ENTRIES or _memo_chars >= MEMO_MAX_CHARS:
        # A walk over a huge transcript must not keep every text.
        _FOLDED.clear()
        _FOUND.clear()
        memo.clear()  # a matcher's own memo, which it holds beside _FOUND
        _memo_chars = 0
    memo[key] = value
    _memo_chars += chars
    return value


def remembered_fold(text: str) -> str:
    """``fold(text)``, kept by the text in the matchers' memo: a replay folds each message's text
    for its figures and again when a compaction looks for the facts it holds."""
    found = _FOLDED.get(text)
    return _remember(_FOLDED, text, fold(text), len(text)) if found is None else found


class FactMatcher:
    """Which facts a text holds, on folded text; folded texts are memoized by the text."""

    def __init__(self, facts: Sequence[str]) -> None:
        self.facts = list(facts)
        self.folded = [fold(fact) for fact in self.facts]
        self._folded = tuple(self.folded)
        self._found = _FOUND.setdefault(self._folded, {})
        self._number: dict[str, int] | None = None  # folded fact -> its index (the first, for a repeat)

    def __bool__(self) -> bool:
        return bool(self.facts)

    def fold(self, text: str) -> str:
        return remembered_fold(text)

    def found_in(self, text: str, among: Iterable[int] | None = None) -> list[int]:
        """Indices (into ``facts``) of the facts ``text`` holds (of those ``among``, if given)."""
        if not text:
            return []
        if among is None:
            found = self._found.get(text)
            if found is None:
                folded = self.fold(text)
                found = [n for n, fact in enumerate(self.folded) if fact in folded]
                _remember(self._found, text, found, len(text))
            return list(found)
        folded = self.fold(text)
        return [n for n in among if self.folded[n] in folded]

    def declared_in(self, message: Message) -> list[int]:
        """Indices of the facts the message's ``compactctl.facts`` declare, each once."""
        if not annotations_of(message):
            return []
        if self._number is None:
            self._number = {fact: n for n, fact in reversed(list(enumerate(self.folded)))}
        number = self._number
        return [n for n in dict.fromkeys(number.get(fact, -1) for fact in by_message(_folded_facts, message)) if n >= 0]

    def declarers(self, messages: Sequence[Message]) -> list[list[int]]:
        """Per fact, the indices of the messages whose ``compactctl.facts`` declare it."""
        found: list[list[int]] = [[] for _ in self.facts]
        for i, message in enumerate(messages):
            # ``declared_in``'s own test, inline: most messages carry no annotations, and a
            # compaction asks this of every message of its context.
            if not message.get(ANNOTATION_KEY):
                continue
            for n in self.declared_in(message):
                found[n].append(i)
        return found

    def holders(self, messages: Sequence[Message], text: Callable[[Message], str] = message_text) -> list[list[int]]:
        """Per fact, the indices of the messages holding it, in order."""
        found: list[list[int]] = [[] for _ in self.facts]
        if not self.facts:
            return found
        # The texts of a context's messages, the memo looked up once (a compaction reads them all).
        texts = message_texts(messages) if text is message_text else map(text, messages)
        memo = self._found
        for i, held in enumerate(texts):
            # ``found_in``'s memo read in place, not copied: a compaction asks this of every message.
            facts = memo.get(held) if held else ()
            for n in self.found_in(held) if facts is None else facts:
                found[n].append(i)
        return found


def _folded_facts(message: Message) -> tuple[str, ...]:
    """The facts a message's annotations declare, folded."""
    return tuple(fold(fact) for fact in facts_of(message))


def keepers(
    holders: Sequence[Sequence[int]], kept: Callable[[int], bool], declarers: Sequence[Sequence[int]] = ()
) -> list[int]:
    """Messages to keep so every fact keeps a copy: for a fact no kept message holds, its latest holder.

    Facts are served in order, and a message kept for one fact serves every fact it holds.
    With ``declarers`` (per fact, the messages whose annotations declare it), the copy kept
    is the latest that also declares the fact, where one does: a compaction that removes
    messages, run again on its own output, then still knows the fact and keeps the same copy.
    """
    chosen: set[int] = set()
    out: list[int] = []
    for n, found in enumerate(holders):
        if not found or any(i in chosen or kept(i) for i in found):
            continue
        marked = set(declarers[n]) if n < len(declarers) else set()
        latest = next((i for i in reversed(found) if i in marked), found[-1])
        chosen.add(latest)
        out.append(latest)
    return out


def absent(holders: Sequence[Collection[int]], facts: Sequence[str]) -> list[str]:
    """The facts no message holds."""
    return [fact for fact, found in zip(facts, holders, strict=True) if not found]


def keep_fact_units(
    messages: Sequence[Message], units: Sequence[range], kept: list[bool], required: Iterable[str] = ()
) -> None:
    """Mark kept (``kept`` has one flag per unit) the units holding the one copy of a fact no kept unit holds."""
    matcher = FactMatcher(declared_facts(messages, required))
    if not matcher:
        return
    unit_of = [0] * len(messages)
    for number, unit in enumerate(units):
        for i in unit:
            unit_of[i] = number
    for i in keepers(matcher.holders(messages), lambda i: kept[unit_of[i]], matcher.declarers(messages)):
        kept[unit_of[i]] = True
