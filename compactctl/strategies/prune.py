"""``prune``: the deterministic three passes (expired, duplicates, dependencies).

1. *Expired*: among messages sharing a key (the ``compactctl.key`` annotation, else
   for a tool result its tool name plus its arguments as canonical JSON) only the
   latest stays current; the earlier ones are superseded by it.
2. *Duplicates*: a tool result or ``kind: "retrieval"`` message whose text, case and
   whitespace folded, equals an earlier one still kept, whichever call fetched either: one
   copy stays, the first (what the latest answer of a call superseded then names that copy).
3. *Dependencies*: a kept message that ``references`` a key no kept earlier message
   ``defines`` gets the latest removed definer back, to a fixed point. Then facts, by
   copy: a declared fact (folded, see ``compactctl.facts``) that no kept message holds
   any more gets its latest holder back, with what that one references. Pinned messages
   are never touched at all.

``stub`` mode keeps every message in place and replaces a pruned one's content with a
short stub naming the message it defers to, so every index stays the same and the
stub's ``#N`` is right in the input and the output alike. ``drop`` mode removes a
pruned tool result together with its call, and an assistant left with nothing.

Idempotence is built in rather than hoped for. A stub from an earlier run is seen as
already elided (it is never a duplicate, never a duplicate's original, and its
references no longer count); a stub always names a message that stays (a superseded one
names the first copy of its latest answer's text when that answer is itself a duplicate); whether a reference is already
satisfied is judged on what the first two passes kept, not on the order restorations
happen in. With those, one round in stub mode that brought no fact back is its own
fixed point. Otherwise (and always in drop mode) rounds run until the output stops
changing: removing a message can make another the latest of its key or the first of its
text, and a copy brought back for a fact can be pruned again once another copy of it is
seen kept. A round only ever adds stubs or drops, so this ends.
"""

from __future__ import annotations

import hashlib
from array import array
from bisect import bisect_left
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from itertools import accumulate
from typing import Any, NamedTuple, TypeVar

import orjson

from compactctl import jsonbytes, lazyre
from compactctl.facts import FactMatcher, declared_facts, fold, keepers
from compactctl.settings import Options, setting
from compactctl.strategies.base import Fate, StepContext, StepResult
from compactctl.transcript import (
    ANNOTATION_KEY,
    OBSERVATION_KIND,
    Message,
    content_text,
    message_text,
    tool_calls_of,
    with_text,
)

MODES = ("stub", "drop")
Tag = TypeVar("Tag")
STUB_PREFIX = "[compactctl: "
_STUB = lazyre.compile(r"\[compactctl: (?:superseded by|duplicate of) message #\d+\]")


@dataclass(frozen=True)
class PruneOptions(Options):
    mode: str = setting(
        "stub",
        help="stub: a pruned tool result keeps its place as a short stub; drop: the call and its result go.",
        choices=MODES,
        metavar="stub|drop",
        panel="Pruning",
    )
    require: tuple[str, ...] = ()  # the run's --require facts: one copy of each stays


def stub_text(kind: str, target: int) -> str:
    """The stub a pruned message's content becomes; ``target`` is the message it defers to."""
    verb = "superseded by" if kind == "superseded" else "duplicate of"
    return f"{STUB_PREFIX}{verb} message #{target}]"


def is_stub(message: Message) -> bool:
    """True for a message an earlier prune already elided."""
    content = message.get("content")
    text = content if isinstance(content, str) else content_text(message) if isinstance(content, list) else ""
    return text.startswith(STUB_PREFIX) and _STUB.fullmatch(text) is not None


def canonical(value: Any) -> str:
    """A stable spelling of a key or of call arguments (sorted keys; unparsable text as it is)."""
    if isinstance(value, str):
        text = value
        try:
            value = orjson.loads(text)
        except orjson.JSONDecodeError:
            return text
    try:
        return jsonbytes.dumps(value, sort_keys=True).decode()
    except TypeError:
        return repr(value)


def _key_list(value: Any) -> list[str]:
    if value is None:
        return []
    items = value if isinstance(value, list) else [value]
    return [item if isinstance(item, str) else canonical(item) for item in items]


class _Note(NamedTuple):
    """What the passes read of a message's annotations (kept small: one per annotated message)."""

    pin: bool
    defines: tuple[str, ...]
    references: tuple[str, ...]
    cites: bool  # it references something (a kept one is checked from the start)


@dataclass(frozen=True)
class _Memo:
    keys: dict[tuple[str, ...], tuple[str, ...]]  # each distinct call key, held once


class _Transcript:
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
        facts: FactMatcher,
        memo: _Memo,
        stub_mode: bool,
    ) -> None:
        self.walk = walk
        self.facts = facts
        self.memo = memo
        self.stub_mode = stub_mode
        self.notes: dict[int, _Note] = {}  # only for messages whose annotations say something to the passes
        # Columns, one entry per message: machine integers and bytes, not Python objects.
        self.calls = array("i")  # an assistant's number of tool calls (0: none)
        self.owner = array("i")  # tool result -> the assistant message holding its call
        self.call_at = array("i")  # tool result -> the position of its call in that message
        self.tool = bytearray()  # a tool result (an assistant's results follow it: ``results``)
        self.stub = bytearray()
        self.filled = bytearray()  # has content (not None, "" or [])
        self.length = array("i")  # characters of its content text
        self.keys: list[tuple[str, ...] | None] = []
        self.candidate = bytearray()  # a tool result or a retrieved chunk: may be a duplicate
        self.observation = bytearray()  # tool output read as a user message (no call to go with it)
        # A candidate's folded text, as a 128-bit digest in two halves (0, 0: no text to compare).
        self.digest_high, self.digest_low = array("Q"), array("Q")
        self.declarers: list[list[int]] = [[] for _ in facts.facts]  # per fact, the messages declaring it
        self.held: dict[int, list[int]] = {}  # a declaring message -> the facts its text holds
        current, ids, calls_there = -1, dict[Any, int](), list[dict[str, Any]]()
        for i, message in enumerate(messages):
            note = message.get(ANNOTATION_KEY)
            if not isinstance(note, dict):
                note = {}
            pin, defines, references = note.get("pin") is True, note.get("defines"), note.get("references")
            if pin or defines is not None or references is not None:
                self.notes[i] = _Note(pin, tuple(_key_list(defines)), tuple(_key_list(references)), bool(references))
            content = message.get("content")
            text = content_text(message)
            self.length.append(len(text))
            self.filled.append(content not in (None, "", []))
            if isinstance(content, str):
                self.stub.append(content.startswith(STUB_PREFIX) and _STUB.fullmatch(content) is not None)
            else:
                self.stub.append(isinstance(content, list) and is_stub(message))
            role = message.get("role")
            owner, position, key = -1, -1, None
            calls = tool_calls_of(message) if role == "assistant" else []
            candidate = observation = False
            if role == "tool":
                candidate = True
                call_id = message.get("tool_call_id")
                found = ids.get(call_id) if current >= 0 and isinstance(call_id, str) else None
                if found is not None:
                    owner, position = current, found
                if note.get("key") is not None:
                    key = self._annotated_key(note["key"])
                elif found is not None:
                    key = self._call_key(calls_there[found])
                calls = []
            else:
                current = i if calls else -1
                if calls:
                    # An assistant carrying calls has no key of its own: its calls expire through their results.
                    ids, calls_there = {}, calls
                    for at, call in enumerate(calls):
                        if isinstance(call, dict) and isinstance(call.get("id"), str):
                            ids.setdefault(call["id"], at)
                elif note:
                    if note.get("key") is not None:
                        key = self._annotated_key(note["key"])
                    # An observation a text-mode agent got as a user message is tool output: a
                    # duplicate candidate. It has no key: "scroll_down" twice is two different views.
                    observation = role == "user" and note.get("kind") == OBSERVATION_KIND
                    candidate = note.get("kind") == "retrieval" or observation
            self.calls.append(len(calls))
            self.tool.append(role == "tool")
            self.owner.append(owner)
            self.call_at.append(position)
            self.keys.append(key)
            self.candidate.append(candidate)
            self.observation.append(observation)
            folded = fold(text) if candidate and text and not self.stub[i] else ""
            digest = (
                hashlib.blake2b(folded.encode("utf-8", "surrogatepass"), digest_size=16).digest() if folded else b""
            )
            self.digest_high.append(int.from_bytes(digest[:8]) if digest else 0)
            self.digest_low.append(int.from_bytes(digest[8:]) if digest else 0)
            declared = facts.declared_in(message) if note.get("facts") else []
            for f in declared:
                self.declarers[f].append(i)
            if declared:
                self.held[i] = facts.found_in(self._fact_text(i, message, calls_there if owner >= 0 else []))
        self.n = len(self.stub)

    @classmethod
    def after(cls, t: _Transcript, step: _Round, walk: Callable[[], Iterable[Message]]) -> _Transcript | None:
        """``t``'s output after a drop round, worked out from ``t``'s columns, not from the messages
        walked again (a round is the cost of a walk): what a walk would find for every kept message,
        or None where the columns cannot say it and the output must be walked.

        A kept message keeps its text, key, digest, annotations and facts; an assistant may lose
        calls, and each kept result's call moves to its new position. The output is walked when a
        message became a stub, when an assistant left without calls has annotations (it then reads
        as a message of its own), or when a tool result would meet a different message before it.
        """
        if step.stubs:
            return None
        new = cls.__new__(cls)
        new.walk, new.facts, new.memo, new.stub_mode = walk, t.facts, t.memo, t.stub_mode
        origins = step.origins
        at = {p: j for j, p in enumerate(origins)}
        for column in ("tool", "stub", "filled", "candidate", "observation"):
            setattr(new, column, bytearray(map(getattr(t, column).__getitem__, origins)))
        for column in ("calls", "owner", "call_at", "length", "digest_high", "digest_low"):
            kept_column = getattr(t, column)
            setattr(new, column, array(kept_column.typecode, map(kept_column.__getitem__, origins)))
        new.keys = list(map(t.keys.__getitem__, origins))
        kept_calls: dict[int, dict[int, int]] = {}  # assistant -> old call position -> new one
        for p, kept in step.calls.items():
            if not kept and p in t.notes:
                return None
            kept_calls[p] = {old: j for j, old in enumerate(kept)}
            new.calls[at[p]] = len(kept)
        for j, p in enumerate(origins):
            if not t.tool[p]:
                continue
            owner = t.owner[p]
            if owner < 0:
                before = p - 1
                while before >= 0 and t.tool[before]:  # the nearest earlier message that is not a tool result
                    before -= 1
                if before >= 0 and before not in at:
                    return None
                continue
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
        new.n = len(origins)
        return new

    def _annotated_key(self, key: Any) -> tuple[str, ...]:
        return ("key", key if isinstance(key, str) else canonical(key))

    def _call_key(self, call: Any) -> tuple[str, ...] | None:
        function = call.get("function") if isinstance(call, dict) else None
        if not isinstance(function, dict):
            return None
        # The arguments digested: an edit's arguments hold a whole file, and the key outlives the message.
        spelled = canonical(function.get("arguments", "")).encode("utf-8", "surrogatepass")
        key = ("call", str(function.get("name", "")), hashlib.blake2b(spelled, digest_size=16).hexdigest())
        return self.memo.keys.setdefault(key, key)  # one tuple per distinct call

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

    def _fact_texts(self) -> Iterator[tuple[int, str]]:
        """Each message's fact text, walking the messages once more."""
        owner_calls: list[dict[str, Any]] = []
        for i, message in enumerate(self.walk()):
            if self.calls[i]:
                owner_calls = tool_calls_of(message)
            yield i, self._fact_text(i, message, owner_calls if self.owner[i] >= 0 else [])

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
        for i, text in self._fact_texts():
            for f in facts.found_in(text, wanted):
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


@dataclass
class PrunePlan:
    """What a prune does, by input index: which messages stay (in order), which become a
    stub, which assistants keep only some of their calls, and why (``fates``).

    Applied to the messages it gives the output (``applied``, or ``walked`` over the input
    read once more, for a transcript that is not held).
    """

    origins: array[int]  # per output message, the input message it is
    stubs: dict[int, tuple[str, int]]  # input index -> its stub's kind and the input index it names
    calls: dict[int, tuple[int, ...]]  # assistant -> positions (in its input tool_calls) it keeps
    fates: dict[int, Fate]

    @classmethod
    def identity(cls, n: int) -> PrunePlan:
        return cls(array("i", range(n)), {}, {}, {})

    def edited(self, index: int, message: Message) -> Message:
        """Input message ``index`` as the output holds it (the same object when unchanged)."""
        kept = self.calls.get(index)
        if kept is not None:
            calls = tool_calls_of(message)
            chosen = [calls[position] for position in kept]
            # Rebuilt in place so the keys keep their order; an empty tool_calls list is rejected.
            message = {k: chosen if k == "tool_calls" else v for k, v in message.items() if chosen or k != "tool_calls"}
        stub = self.stubs.get(index)
        if stub is not None:
            message = {**message, "content": with_text(message.get("content"), stub_text(*stub))}
        return message

    def applied(self, messages: Sequence[Message]) -> list[Message]:
        return [self.edited(i, messages[i]) for i in self.origins]

    def walked(self, items: Iterable[tuple[Message, Tag]]) -> Iterator[tuple[int, Message, Tag]]:
        """The output one message at a time, from the input messages given in order (each with
        a tag of the caller's, passed along): (input index, output message, its input's tag)."""
        origins, at = self.origins, 0
        for i, (message, tag) in enumerate(items):
            if at < len(origins) and origins[at] == i:
                at += 1
                yield i, self.edited(i, message), tag

    def then(self, step: _Round) -> PrunePlan:
        """This plan followed by a round on its output."""
        origins = self.origins
        if not self.stubs and not self.calls and (not origins or origins[-1] == len(origins) - 1):
            # The first round: positions are input indices already.
            return PrunePlan(array("i", step.origins), step.stubs, step.calls, self.fates)
        stubs, calls = dict(self.stubs), dict(self.calls)
        for position, stub in step.stubs.items():
            stubs[origins[position]] = stub
        for position, kept in step.calls.items():
            index = origins[position]
            before = calls.get(index)
            calls[index] = kept if before is None else tuple(before[p] for p in kept)
        return PrunePlan(array("i", (origins[p] for p in step.origins)), stubs, calls, self.fates)


@dataclass(frozen=True)
class _Round:
    """One round's changes, by position in that round's input."""

    origins: Sequence[int]
    stubs: dict[int, tuple[str, int]]
    calls: dict[int, tuple[int, ...]]
    fates: dict[int, Fate]

    def changes_nothing(self, n: int) -> bool:
        return not self.stubs and not self.calls and len(self.origins) == n


def prune(messages: list[Message], options: PruneOptions, context: StepContext) -> StepResult:
    """Supersede, deduplicate, restore what is still referenced; stub or drop what is left out."""
    plan = prune_plan(lambda: messages, options)
    return StepResult(plan.applied(messages), list(plan.origins), plan.fates)


def prune_plan(
    walk: Callable[[], Iterable[Message]],
    options: PruneOptions,
    reasons: bool = True,
    facts: Sequence[str] | None = None,
) -> PrunePlan:
    """What ``prune`` does to the messages ``walk`` gives (each call gives them again, in order).

    The messages are walked a few times and never held, so a transcript larger than memory
    should hold is pruned in memory bounded by what is kept per message (see ``_Transcript``).

    In drop mode the three passes are repeated on their own output until it stops changing
    (twice for most transcripts), which makes ``prune(prune(x)) == prune(x)`` hold by
    construction: a drop can make a message the latest of its key or the first of its text,
    and the next round must then see what a second run would see. Stub mode keeps every
    message in place, so its first round is already the fixed point.

    Without ``reasons`` the plan's fates leave out the pruned messages (a caller that writes
    no manifest need not hold a reason for each of them). ``facts``, when given, are what
    ``declared_facts(messages, options.require)`` gives (a caller that has them saves a walk).
    """
    stub_mode = options.mode == "stub"
    matcher = FactMatcher(declared_facts(walk(), options.require) if facts is None else facts)
    memo = _Memo({})
    first = current = _Transcript(walk(), walk, matcher, memo, stub_mode)
    plan = PrunePlan.identity(first.n)
    # Every round that changes something drops at least one more message or call, so this ends.
    for _ in range(first.n + 1):
        step, for_facts = _once(current, stub_mode, plan.origins, reasons)
        if current is first:  # positions are input indices
            plan.fates.update(step.fates)
        for index, fate in step.fates.items() if current is not first else ():
            plan.fates[plan.origins[index]] = fate
        done = (stub_mode and not for_facts) or step.changes_nothing(current.n)
        plan = plan.then(step)
        if done:
            # Stub mode keeps every index and every key, and a stub is never restored, so with
            # no copy brought back for a fact a second round would find exactly what the first did.
            break

        def again(plan: PrunePlan = plan) -> Iterator[Message]:
            return (message for _, message, _ in plan.walked((message, None) for message in walk()))

        current = _Transcript.after(current, step, again) or _Transcript(again(), again, matcher, memo, stub_mode)
    if not stub_mode:
        _count_dropped_calls(first, plan)
    return plan


def _count_dropped_calls(first: _Transcript, plan: PrunePlan) -> None:
    """Over several rounds an assistant may lose calls more than once: say how many in all."""
    present = set(plan.origins)
    for index, kept in plan.calls.items():
        before, after = first.calls[index], len(kept)
        if index in present and after < before:
            plan.fates[index] = Fate("elided", f"{before - after} tool call(s) removed with their results")


def _once(t: _Transcript, stub_mode: bool, labels: Sequence[int], reasons: bool = True) -> tuple[_Round, bool]:
    """One round of the three passes; ``labels`` maps a position to the index reasons name.

    Also says whether a copy was brought back for a fact (then the round may not be a fixed point).
    """
    n = t.n

    def worth_pruning(i: int, kind: str, target: int) -> bool:
        if t.stub[i]:
            return False
        # A stub longer than what it replaces would grow the transcript. In drop mode the same
        # bar holds for duplicates: dropping a short "[]" answer of another call loses that call
        # and what it asked, to save a few tokens (a superseded call is asked again later).
        if (stub_mode or kind == "duplicate") and len(stub_text(kind, labels[target])) >= t.length[i]:
            return False
        return not t.protected(i)

    # 1. Expired: only the latest message of each key stays current.
    keys = t.keys
    latest: dict[tuple[str, ...], int] = {}
    for i, key in enumerate(keys):
        if key is not None:
            latest[key] = i
    pruned: dict[int, tuple[str, int]] = {}  # index -> (kind, the message it defers to)
    marks: dict[tuple[str, int], tuple[str, int]] = {}  # one tuple for all that defer to one message

    def mark(kind: str, target: int) -> tuple[str, int]:
        return marks.setdefault((kind, target), (kind, target))

    for i, key in enumerate(keys):
        if key is not None and latest[key] != i and worth_pruning(i, "superseded", latest[key]):
            pruned[i] = mark("superseded", latest[key])

    # 2. Duplicates: one copy of each folded text among the tool results and retrieved chunks
    # pass 1 left, whatever call fetched it (ten queries answered by one manual section keep one
    # copy of it). The first copy stays: it is where the reader met the text, stubs point back,
    # and a transcript that grows never changes what an earlier run of prune kept, so the
    # prompt cache's prefix holds.
    first: dict[tuple[int, int], int] = {}  # digest of a folded text -> the first message holding it
    duplicates = False
    for i in range(n):
        if not t.candidate[i] or i in pruned or t.stub[i]:
            continue
        digest = t.digest(i)
        if digest is None:
            continue
        original = first.setdefault(digest, i)
        if original != i and worth_pruning(i, "duplicate", original):
            pruned[i] = mark("duplicate", original)
            duplicates = True
    if duplicates:
        # The latest answer of a call may be a copy of an earlier text: what it superseded then
        # names that earlier copy, which stays, so a stub never points at another stub.
        for i, (kind, target) in list(pruned.items()):
            if kind == "superseded" and target in pruned:
                held = pruned[target][1]
                if worth_pruning(i, "superseded", held):
                    pruned[i] = mark("superseded", held)
                else:
                    del pruned[i]

    # 3. Dependencies, to a fixed point.
    restored, for_facts = _restore(t, pruned, stub_mode, labels)
    return _build(t, pruned, restored, stub_mode, labels, reasons), for_facts


def _assistant_live(t: _Transcript, a: int, pruned: dict[int, Any]) -> bool:
    """An assistant still says something: content, or at least one call whose answer stays."""
    results = t.results(a)
    return bool(t.filled[a]) or any(r not in pruned for r in results) or not results


def _restore(
    t: _Transcript, pruned: dict[int, tuple[str, int]], stub_mode: bool, labels: Sequence[int]
) -> tuple[dict[int, str], bool]:
    """Give back what a kept message relies on, then a copy of each fact no kept message holds.

    Returns index -> reason, and whether any copy came back for a fact.
    """
    n = t.n
    stub = t.stub
    if stub_mode:
        active = bytearray(not stub[i] and i not in pruned for i in range(n))
    else:
        active = bytearray(
            not stub[i] and i not in pruned and (not t.calls[i] or _assistant_live(t, i, pruned)) for i in range(n)
        )
    definers: dict[str, list[int]] = {}
    for i, note in t.notes.items():
        for key in note.defines:
            definers.setdefault(key, []).append(i)
    # How many of a key's first j definers the first two passes kept: fixed before any
    # restoration, so the order the work is done in cannot change what is satisfied.
    active_at_start = bytes(active)
    kept_before = {key: [0, *accumulate(int(active[d]) for d in found)] for key, found in definers.items()}
    restored: dict[int, str] = {}
    queue: deque[int] = deque(i for i, note in t.notes.items() if active[i] and note.cites)

    def keep(i: int, reason: str) -> None:
        if i in pruned and i not in restored:
            restored[i] = reason
        if not active[i] and not t.stub[i]:
            active[i] = True
            queue.append(i)
        if stub_mode:
            return
        owner = t.owner[i]
        if owner >= 0 and not active[owner]:
            # Restoring a tool result restores its call, so its assistant speaks again.
            active[owner] = True
            queue.append(owner)
        if t.calls[i] and not _assistant_live(t, i, {r: 0 for r in t.results(i) if r in pruned and r not in restored}):
            for result in t.results(i):
                keep(result, f"call in #{labels[i]}")

    if not stub_mode:
        # A pinned assistant keeps every call, so its results stay too.
        for a in [a for a in t.notes if t.calls[a] and t.protected(a)]:
            for result in t.results(a):
                if result in pruned:
                    keep(result, f"call in pinned #{labels[a]}")

    def drain() -> None:
        while queue:
            satisfy(queue.popleft())

    def satisfy(k: int) -> None:
        note = t.notes.get(k)
        for key in note.references if note is not None else ():
            found = definers.get(key)
            if not found:
                continue
            # What k relied on is the definitions before it; failing those, any other one.
            cut = bisect_left(found, k)
            if cut:
                satisfied, latest = kept_before[key][cut] > 0, found[cut - 1]
            else:
                # Nothing before k defines it; k itself may be the first definer, and does not count.
                itself = found[0] == k
                if len(found) == itself:
                    continue
                satisfied = kept_before[key][-1] - (itself and active_at_start[k]) > 0
                latest = found[-1]
            if not satisfied:
                keep(latest, f"referenced by #{labels[k]}")

    drain()
    # Facts by copy: only where no kept message holds a fact any more, its latest holder
    # comes back (what it references with it), so one copy survives, the most current one.
    brought = t.facts_to_bring_back(active)
    for i, served in brought:
        keep(i, f"last copy of fact {', '.join(repr(t.facts.facts[f]) for f in served)}")
    drain()
    return restored, bool(brought)


def _build(
    t: _Transcript,
    pruned: dict[int, tuple[str, int]],
    restored: dict[int, str],
    stub_mode: bool,
    labels: Sequence[int],
    reasons: bool,
) -> _Round:
    fates: dict[int, Fate] = {}
    for i, reason in restored.items():
        fates[i] = Fate("restored", reason)
    gone = {i: mark for i, mark in pruned.items() if i not in restored} if restored else pruned
    # Many messages defer to one (every earlier read of a file to its latest): one fate for them all.
    said: dict[tuple[str, int], Fate] = {}
    for i, (kind, target) in gone.items() if reasons else ():
        fate = said.get((kind, target))
        if fate is None:
            reason = f"superseded by #{labels[target]}" if kind == "superseded" else f"duplicate of #{labels[target]}"
            fate = said[(kind, target)] = Fate("elided" if stub_mode else "removed", reason)
        fates[i] = fate
    labelled = not labels or labels[-1] == len(labels) - 1  # positions are input indices (the first round)
    if stub_mode:
        stubs = gone if labelled else {i: (kind, labels[target]) for i, (kind, target) in gone.items()}
        return _Round(range(t.n), stubs, {}, fates)
    origins: list[int] = []
    stubs = {}
    calls: dict[int, tuple[int, ...]] = {}
    for i in range(t.n):
        if i in gone and t.observation[i]:
            # No call goes with it, and dropping it would leave its action unanswered: a stub.
            kind, target = gone[i]
            stubs[i] = (kind, labels[target])
            origins.append(i)
            if reasons:
                fates[i] = Fate("elided", fates[i].reason)
            continue
        if i in gone:
            continue
        if t.calls[i]:
            dropped = {t.call_at[r] for r in t.results(i) if r in gone}
            if dropped:
                kept = tuple(position for position in range(t.calls[i]) if position not in dropped)
                if not kept and not t.filled[i]:
                    fates[i] = Fate("removed", "no content and no calls left")
                    continue
                calls[i] = kept
        origins.append(i)
    return _Round(origins, stubs, calls, fates)
