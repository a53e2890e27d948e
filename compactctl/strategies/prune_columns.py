"""What prune's passes know of each message, gathered in one walk: columns, not messages.

Per message a few flags and numbers, a digest of its folded text where it may be a
duplicate, its annotations where it has some (``Transcript``); a drop round's output is
worked out from these columns where they say it all (``Transcript.after``). The passes
themselves, and what they make of these columns, are ``prune.py``'s.
"""

from __future__ import annotations

import itertools
from array import array
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from compactctl.facts import FactMatcher, keepers, unique_facts
from compactctl.message_memo import replay_state
from compactctl.strategies.base import Fate
from compactctl.strategies.prune_rows import Columns, remembered_columns, walked_columns
from compactctl.transcript import (
    Message,
    content_text,
    facts_of,
    message_text,
    shared_prefix,
    tool_calls_of,
)


@dataclass(frozen=True)
class KeyMemo:
    """Each distinct call key held once, shared by the messages that make it."""

    keys: dict[tuple[str, ...], tuple[str, ...]]  # each distinct call key, held once


class Transcript:
    """What the passes need to know about each message, gathered in one walk over them.

    Only that is kept, never the messages: per message a few flags and numbers, a digest
    of its folded text where it may be a duplicate, its annotations where it has some. So
    a transcript too large to hold (a 300 MB chat file is one transcript) is walked, not
    held: ``walk`` gives the same messages again, for the rare pass that must read their
    text (facts no kept message holds any more). ``memo`` is shared by the rounds of one
    prune, so equal call keys are one tuple.
    """

    def __init__(
        self,
        messages: Iterable[Message],
        walk: Callable[[], Iterable[Message]],
        facts: FactMatcher | None,
        memo: KeyMemo,
        stub_mode: bool,
        required: Sequence[str] = (),
    ) -> None:
        self.walk = walk
        self.memo = memo
        self.stub_mode = stub_mode
        # Inside a replay, the columns of the longest run of leading messages this transcript shares
        # with one of the last ones are taken as they are (``_earlier``): each is worked out from
        # its message and the ones before it only.
        kept = replay_state(_KEPT)
        earlier, start = None, 0
        listed: list[Message] = []
        if kept is not None:
            messages = listed = list(messages)
            earlier, start = _earlier(listed, kept)
        self.held: dict[int, list[int]] = {}  # a declaring message -> the facts its text holds
        # Each message's fact text's facts, where it holds any (worked out when first needed).
        self.holding: list[tuple[int, list[int]]] | None = None
        self.holding_from = 0  # ``holding`` below this position is ``earlier``'s
        if kept is None:  # a prune on its own: nothing to keep rows for (``prune_rows``)
            columns = walked_columns(messages, memo.keys)
        else:
            before = None if earlier is None else Columns(*map(earlier.__getattribute__, Columns._fields))
            columns = remembered_columns(listed, before, start, memo.keys)
        # Per message: its annotations where they say something to the passes (``notes``), its key,
        # a tool result's assistant (``owner``) and its call's position there (``call_at``);
        # assistants with calls whose annotations would give them a key or make them a chunk once
        # they have no call left (``keyed_callers``); the messages declaring facts, each with the
        # calls of the assistant it answers (``declaring``); characters of its content text
        # (``length``); has content (``filled``: not None, "" or []); a stub; a tool result (an
        # assistant's results follow it: ``results``); an assistant's number of calls (0: none);
        # a tool result or a retrieved chunk (``candidate``: may be a duplicate); tool output read
        # as a user message (``observation``: no call to go with it); a candidate's folded text
        # as a 128-bit digest in two halves (0, 0: no text to compare).
        (
            self.notes,
            self.keys,
            self.owner,
            self.call_at,
            self.keyed_callers,
            self.declaring,
            self.length,
            self.filled,
            self.stub,
            self.tool,
            self.calls,
            self.candidate,
            self.observation,
            self.digest_high,
            self.digest_low,
        ) = columns
        if facts is None:  # the facts to keep: ``required``, then those the messages declare (``declared_facts``)
            declared = (f for _, message, _ in self.declaring for f in facts_of(message))
            facts = FactMatcher(unique_facts([*required, *declared]))
        self.facts = facts
        self.declarers: list[list[int]] = [[] for _ in facts.facts]  # per fact, the messages declaring it
        for i, message, owner_calls in self.declaring:
            declared_here = facts.declared_in(message)
            for f in declared_here:
                self.declarers[f].append(i)
            if declared_here:
                self.held[i] = facts.found_in(self._fact_text(i, message, owner_calls))
        self.n = len(self.stub)
        # The same fact texts (the mode) and the same facts: ``earlier``'s holders stand where they were.
        same_facts = earlier is not None and earlier.stub_mode == stub_mode and earlier.facts.folded == facts.folded
        if earlier is not None and earlier.holding is not None and same_facts:
            self.holding_from = min(start, earlier.holding_from)  # never a tool result
            self.holding = [(i, held) for i, held in earlier.holding if i < self.holding_from]
        if kept is not None:
            _remember(kept, listed, self)

    @classmethod
    def after(cls, t: Transcript, step: Round, walk: Callable[[], Iterable[Message]]) -> Transcript | None:
        """``t``'s output after a drop round, worked out from ``t``'s columns, not from the messages
        walked again (a round is the cost of a walk): what a walk would find for every kept message,
        or None where the columns cannot say it and the output must be walked.

        A kept message keeps its text, key, digest, annotations and facts; an assistant may lose
        calls, and each kept result's call moves to its new position. The output is walked when a
        message became a stub, when an assistant left without calls has a key or is a chunk by its
        annotations (it then reads as a message of its own), or when a tool result would meet a
        different message before it.
        """
        if step.stubs:
            return None
        new = cls.__new__(cls)
        new.walk, new.facts, new.memo, new.stub_mode = walk, t.facts, t.memo, t.stub_mode
        origins = step.origins
        at = dict(zip(origins, range(len(origins)), strict=True))
        for column in ("tool", "stub", "filled", "candidate", "observation"):
            setattr(new, column, bytearray(map(getattr(t, column).__getitem__, origins)))
        for column in ("calls", "owner", "call_at", "length", "digest_high", "digest_low"):
            kept_column = getattr(t, column)
            setattr(new, column, array(kept_column.typecode, map(kept_column.__getitem__, origins)))
        new.keys = list(map(t.keys.__getitem__, origins))
        kept_calls: dict[int, dict[int, int]] = {}  # assistant -> old call position -> new one
        for p, kept in step.calls.items():
            if not kept and p in t.keyed_callers:
                return None
            kept_calls[p] = {old: j for j, old in enumerate(kept)}
            new.calls[at[p]] = len(kept)
        for j in itertools.compress(range(len(origins)), new.tool):  # the kept tool results
            p = origins[j]
            owner = t.owner[p]
            if owner < 0:
                before = p - 1
                while before >= 0 and t.tool[before]:  # the nearest earlier message that is not a tool result
                    before -= 1
                if before >= 0 and before not in at:
                    return None
                continue
            if owner not in at:  # a second result of one call, whose assistant went with the first
                return None
            new.owner[j] = at[owner]
            moved = kept_calls.get(owner)
            if moved is not None:
                position = moved.get(t.call_at[p])
                if position is None:
                    return None
                new.call_at[j] = position
        new.notes = {at[p]: note for p, note in t.notes.items() if p in at}
        new.declarers = [[at[p] for p in found if p in at] for found in t.declarers]
        new.held = {at[p]: held for p, held in t.held.items() if p in at}
        new.keyed_callers = {at[p] for p in t.keyed_callers if p in at and new.calls[at[p]]}
        new.declaring, new.holding, new.holding_from = [], None, 0  # never an earlier transcript of another
        new.n = len(origins)
        return new

    def results(self, a: int) -> list[int]:
        """The tool results answering assistant ``a``'s calls (they follow it, before any other message)."""
        found, i = [], a + 1
        while i < self.n and self.tool[i]:
            if self.owner[i] == a:
                found.append(i)
            i += 1
        return found

    def digest(self, i: int) -> tuple[int, int] | None:
        """Message ``i``'s folded text, digested, where it may be a duplicate and has text."""
        high, low = self.digest_high[i], self.digest_low[i]
        return (high, low) if high or low else None

    def protected(self, i: int) -> bool:
        """Pinned: never pruned. (A fact-bearing message is not: one copy of each fact suffices.)"""
        note = self.notes.get(i)
        return note is not None and note.pin

    def _fact_text(self, i: int, message: Message, owner_calls: list[dict[str, Any]]) -> str:
        """What message ``i`` will hold in the output, as facts are looked for in it.

        In drop mode a call goes with its result, so a call's name and arguments count as
        the result's text; in stub mode an assistant is never changed and holds its own.
        ``owner_calls`` are the calls of the assistant a tool result answers.
        """
        if self.stub[i]:
            return ""
        if self.calls[i]:
            return message_text(message) if self.stub_mode else content_text(message)
        if not self.stub_mode and self.owner[i] >= 0:
            call = owner_calls[self.call_at[i]]
            function = call.get("function") if isinstance(call, dict) else None
            if isinstance(function, dict):
                return f"{content_text(message)}\n{function.get('name', '')}\n{function.get('arguments', '')}"
        return content_text(message)

    def _holding(self) -> list[tuple[int, list[int]]]:
        """Each message holding facts in its fact text, with those facts, in order; the messages
        walked once more (from ``holding_from``: the columns before it are an earlier transcript's)."""
        if self.holding is not None and self.holding_from >= self.n:
            return self.holding
        holding = self.holding if self.holding is not None else []
        start = self.holding_from if self.holding is not None else 0
        owner_calls: list[dict[str, Any]] = []
        walked = self.walk()
        # The start is never a tool result (``_earlier``): no owner's calls are needed from before it.
        for i, message in enumerate(itertools.islice(walked, start, None) if start else walked, start):
            if self.calls[i]:
                owner_calls = tool_calls_of(message)
            # All the facts a text holds are kept by the text (a replay looks at the same texts again).
            found = self.facts.found_in(self._fact_text(i, message, owner_calls if self.owner[i] >= 0 else []))
            if found:
                holding.append((i, found))
        self.holding, self.holding_from = holding, self.n
        return holding

    def facts_to_bring_back(self, active: bytearray) -> list[tuple[int, list[int]]]:
        """The messages to give back so that every fact keeps a copy, each with the facts it serves.

        Cheap where it can be: a fact whose declaring message stays and holds it is served
        without looking anywhere else; only the others are looked for in the other messages
        (one more walk over them).
        """
        facts = self.facts
        if not facts:
            return []
        wanted = [
            f for f in range(len(facts.facts)) if not any(active[i] and f in self.held[i] for i in self.declarers[f])
        ]
        if not wanted:
            return []
        holders: list[list[int]] = [[] for _ in facts.facts]
        served: set[int] = set()  # by a message that stays
        looked_for = set(wanted)
        for i, found in self._holding():
            for f in found:
                if f not in looked_for:
                    continue
                if active[i]:
                    served.add(f)
                else:
                    holders[f].append(i)
        wanted = [f for f in wanted if f not in served]
        if not wanted:
            return []
        for f in served:
            holders[f] = []
        # Stubs keep their annotations; dropped messages take theirs with them (see ``keepers``).
        chosen = keepers(holders, lambda i: False, () if self.stub_mode else self.declarers)
        return [(i, [f for f in wanted if i in holders[f]]) for i in chosen]


_KEPT = "prune transcripts"  # a replay's last transcripts (``message_memo.replay_state``)
KEEP_TRANSCRIPTS = 6  # a few settings compact in turn, each on what its last compaction left


def _earlier(messages: list[Message], kept: dict[Any, Any]) -> tuple[Transcript | None, int]:
    """The kept transcript sharing the longest run of leading messages with ``messages`` (equal
    messages have equal rows), and where this transcript's own walk starts: before that run ends,
    at a message that is not a tool result (a tool result's owner and key are the messages' before it)."""
    best, shared = None, 0
    for before, transcript in kept.get("recent", ()):
        same = shared_prefix(messages, before)
        if same > shared:
            best, shared = transcript, same
    start = shared
    while start > 0 and start < len(messages) and messages[start].get("role") == "tool":
        start -= 1
    return (best, start) if start else (None, 0)


def _remember(kept: dict[Any, Any], messages: list[Message], transcript: Transcript) -> None:
    recent = kept.setdefault("recent", [])
    recent.insert(0, (messages, transcript))
    del recent[KEEP_TRANSCRIPTS:]


@dataclass(frozen=True)
class Round:
    """One round's changes, by position in that round's input."""

    origins: Sequence[int]
    stubs: dict[int, tuple[str, int]]
    calls: dict[int, tuple[int, ...]]
    fates: dict[int, Fate]

    def changes_nothing(self, n: int) -> bool:
        return not self.stubs and not self.calls and len(self.origins) == n
