"""What a replay holds of each message and of each setting's context: ``Figures`` (a message's
tokens, facts, keys and stage end, worked out once for every setting), ``Context`` (the messages a
call would send, with running token sums) and ``KnownTokens`` (what a compaction's steps need not
count again). The simulation itself is ``simulate``'s.
"""

from __future__ import annotations

import re
from array import array
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from compactctl.calibration.features import is_attachment
from compactctl.facts import fold, remembered_fold
from compactctl.tokens import TokenCounter
from compactctl.transcript import Message, annotations_of, message_text, shared_prefix


@dataclass(frozen=True)
class Figures:
    """What one message costs and holds, worked out once per replay and shared by every setting."""

    tokens: int
    facts: tuple[str, ...]  # the run's tracked facts found in its text (folded)
    defines: tuple[str, ...]  # dependency keys it defines
    references: tuple[str, ...]  # dependency keys it references
    ends_stage: bool
    # What its role makes it, read once here rather than by every setting it is added to: a model call
    # (an assistant message the client did not write itself), or a user turn's start (no harness reminder).
    is_call: bool = False
    opens_turn: bool = False


class FigureCounter:
    """How a replay works out a message's ``Figures``: its counter, the run's facts and the stage marker."""

    def __init__(self, counter: TokenCounter, facts: Iterable[str], marker: re.Pattern[str] | None) -> None:
        self.counter = counter
        self.facts = tuple(dict.fromkeys(folded for folded in map(fold, facts) if folded))  # matched folded
        self.marker = marker
        # text -> the tracked facts it holds: a transcript's texts repeat (an agent reads the same files).
        self._held: dict[str, tuple[str, ...]] = {}

    def figures(self, message: Message) -> Figures:
        marks = annotations_of(message)
        text = message_text(message) if self.facts or self.marker is not None else ""
        found: tuple[str, ...] = ()
        if self.facts:
            held = self._held.get(text)
            if held is None:
                if len(self._held) >= 10_000:  # a long transcript's texts are not all kept
                    self._held.clear()
                folded = remembered_fold(text)  # the compactions' fact matchers fold the same texts
                held = self._held[text] = tuple([f for f in self.facts if f in folded])
            found = held
        ends = marks.get("stage_end") is True or (self.marker is not None and self.marker.search(text) is not None)
        role = message.get("role")
        return Figures(
            self.counter.message(message),
            found,
            # Most messages carry no annotations: no key lists to read.
            tuple(keys_of(marks.get("defines"))) if marks else (),
            tuple(keys_of(marks.get("references"))) if marks else (),
            ends,
            # Codex relaying a review's findings writes an assistant message that is no model call.
            role == "assistant" and marks.get("kind") != "harness",
            role == "user" and not is_attachment(message),
        )


class Context:
    """The messages a call would send, with running token prefix sums and what they hold.

    ``keep_messages=False`` (a setting that never compacts) keeps only the sums and counts:
    such a context only grows, so nothing ever needs its messages again.
    """

    def __init__(self, keep_messages: bool = True) -> None:
        self.keep_messages = keep_messages
        self.messages: list[Message] = []
        self.figures: list[Figures] = []  # beside ``messages``: what each costs and holds
        self.length = 0
        self.prefix = array("q", [0])  # prefix[k] = tokens of the first k messages (8 bytes each, not an int object)
        self.facts: Counter[str] = Counter()  # tracked facts found in the text, with multiplicity
        self.keys: Counter[str] = Counter()  # dependency keys defined by messages present

    @classmethod
    def rebuilt(cls, messages: Sequence[Message], old: Context, counts: FigureCounter) -> Context:
        """The context a compaction left: a message it kept keeps its figures, a new one is worked out.

        Its leading messages that are ``old``'s, in place (most of a context a compaction
        stubbed here and there), keep their sums and counts as they are: only the rest is appended.
        """
        before = old.messages
        shared = shared_prefix(list(map(id, messages)), list(map(id, before)))  # the same objects (both alive)
        context = cls()
        context.messages, context.figures = before[:shared], old.figures[:shared]
        context.length, context.prefix = shared, old.prefix[: shared + 1]
        context.facts, context.keys = Counter(old.facts), Counter(old.keys)
        for gone in old.figures[shared:]:  # what the messages no longer there held (counts are read by key)
            if gone.facts:
                context.facts.subtract(gone.facts)
            if gone.defines:
                context.keys.subtract(gone.defines)
        known = {id(message): figures for message, figures in zip(before[shared:], old.figures[shared:], strict=True)}
        for message in messages[shared:]:
            # ``old`` holds its messages, so an id is still theirs (one of its leading messages again
            # further on is worked out again: the same figures).
            figures = known.get(id(message))
            context.append(message, figures if figures is not None else counts.figures(message))
        return context

    @property
    def tokens(self) -> int:
        return self.prefix[-1]

    def append(self, message: Message, figures: Figures) -> None:
        if self.keep_messages:
            self.messages.append(message)
            self.figures.append(figures)
        self.length += 1
        self.prefix.append(self.prefix[-1] + figures.tokens)
        if figures.facts:  # most messages hold none: Counter.update is a Python call even for nothing
            self.facts.update(figures.facts)
        if figures.defines:
            self.keys.update(figures.defines)

    def shared_prefix_tokens(self, previous: Context, previous_length: int) -> int:
        """Tokens of the leading messages this context shares with ``previous``'s first messages."""
        if previous is self:  # nothing was compacted: the whole previous context is a prefix
            return self.prefix[previous_length]
        limit = min(previous_length, self.length)
        return self.prefix[shared_prefix(self.messages[:limit], previous.messages[:limit])]


class KnownTokens(Mapping[int, int]):
    """``id(message)`` -> its tokens, for a context's messages: the table is made when a step first
    counts a message (``prune`` counts none, and a context is thousands of messages)."""

    def __init__(self, context: Context) -> None:
        self.context = context
        self.table: dict[int, int] | None = None

    def _table(self) -> dict[int, int]:
        if self.table is None:
            pairs = zip(self.context.messages, self.context.figures, strict=True)
            self.table = {id(message): figures.tokens for message, figures in pairs}
            # From now on ``get`` is the table's own (an instance attribute wins over the method):
            # a compaction's steps count each message of the context several times.
            self.get = self.table.get  # type: ignore[method-assign, assignment]
        return self.table

    def __getitem__(self, key: int) -> int:
        return self._table()[key]

    def get(self, key: int, default: Any = None) -> Any:  # what ``KnownCounter`` asks, as fast as a dict's
        return self._table().get(key, default)

    def __iter__(self) -> Iterator[int]:
        return iter(self._table())

    def __len__(self) -> int:
        return len(self._table())


def keys_of(value: Any) -> list[str]:
    if isinstance(value, str):  # one key written without its list, as prune reads it too
        return [value]
    return [key for key in value if isinstance(key, str)] if isinstance(value, list) else []
