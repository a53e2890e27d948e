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

from array import array
from bisect import bisect_left
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from itertools import accumulate, compress
from typing import Any, TypeVar

from compactctl.facts import FactMatcher
from compactctl.strategies.base import Fate, StepContext, StepResult
from compactctl.strategies.prune_columns import KeyMemo, Round, Transcript
from compactctl.strategies.prune_rows import STUB_PREFIX
from compactctl.strategies.settings import PruneOptions
from compactctl.transcript import (
    Message,
    tool_calls_of,
    with_text,
)

_LIVE = bytes([1, 0]).ljust(256, b"\0")  # a stub column translated: 1 where there is no stub
Tag = TypeVar("Tag")


def stub_text(kind: str, target: int) -> str:
    """The stub a pruned message's content becomes; ``target`` is the message it defers to."""
    verb = "superseded by" if kind == "superseded" else "duplicate of"
    return f"{STUB_PREFIX}{verb} message #{target}]"


@dataclass
class PrunePlan:
    """What a prune does, by input index: which messages stay (in order), which become a
    stub, which assistants keep only some of their calls, and why (``fates``).

    Applied to the messages it gives the output (``applied``, or ``walked`` over the input
    read once more, for a transcript that is not held).
    """

    origins: Sequence[int]  # per output message, the input message it is (a range: each in place)
    stubs: dict[int, tuple[str, int]]  # input index -> its stub's kind and the input index it names
    calls: dict[int, tuple[int, ...]]  # assistant -> positions (in its input tool_calls) it keeps
    fates: dict[int, Fate]

    @classmethod
    def identity(cls, n: int) -> PrunePlan:
        return cls(range(n), {}, {}, {})

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
        # The kept messages taken as they are, then the few edited ones replaced (origins ascend).
        origins = self.origins
        output = list(messages) if len(origins) == len(messages) else list(map(messages.__getitem__, origins))
        for index in self.stubs.keys() | self.calls.keys():
            at = bisect_left(origins, index)
            if at < len(origins) and origins[at] == index:
                output[at] = self.edited(index, messages[index])
        return output

    def walked(self, items: Iterable[tuple[Message, Tag]]) -> Iterator[tuple[int, Message, Tag]]:
        """The output one message at a time, from the input messages given in order (each with
        a tag of the caller's, passed along): (input index, output message, its input's tag)."""
        origins, at = self.origins, 0
        for i, (message, tag) in enumerate(items):
            if at < len(origins) and origins[at] == i:
                at += 1
                yield i, self.edited(i, message), tag

    def then(self, step: Round) -> PrunePlan:
        """This plan followed by a round on its output."""
        origins = self.origins
        if not self.stubs and not self.calls and (not origins or origins[-1] == len(origins) - 1):
            # The first round: positions are input indices already.
            first = step.origins if isinstance(step.origins, range) else array("i", step.origins)
            return PrunePlan(first, step.stubs, step.calls, self.fates)
        stubs, calls = dict(self.stubs), dict(self.calls)
        for position, stub in step.stubs.items():
            stubs[origins[position]] = stub
        for position, kept in step.calls.items():
            index = origins[position]
            before = calls.get(index)
            calls[index] = kept if before is None else tuple(before[p] for p in kept)
        return PrunePlan(array("i", map(origins.__getitem__, step.origins)), stubs, calls, self.fates)


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
    should hold is pruned in memory bounded by what is kept per message (see ``Transcript``).

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
    memo = KeyMemo({})
    # Without ``facts``, the first walk finds the facts the messages declare too.
    given = None if facts is None else FactMatcher(facts)
    first = current = Transcript(walk(), walk, given, memo, stub_mode, options.require)
    matcher = first.facts
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

        current = Transcript.after(current, step, again) or Transcript(again(), again, matcher, memo, stub_mode)
    if not stub_mode:
        _count_dropped_calls(first, plan)
    return plan


def _count_dropped_calls(first: Transcript, plan: PrunePlan) -> None:
    """Over several rounds an assistant may lose calls more than once: say how many in all."""
    present = set(plan.origins)
    for index, kept in plan.calls.items():
        before, after = first.calls[index], len(kept)
        if index in present and after < before:
            plan.fates[index] = Fate("elided", f"{before - after} tool call(s) removed with their results")


def _once(t: Transcript, stub_mode: bool, labels: Sequence[int], reasons: bool = True) -> tuple[Round, bool]:
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
    keys, stub = t.keys, t.stub
    latest = dict(zip(keys, range(n), strict=True))  # each key's latest position (None's too: never read)
    pruned: dict[int, tuple[str, int]] = {}  # index -> (kind, the message it defers to)
    marks: dict[tuple[str, int], tuple[str, int]] = {}  # one tuple for all that defer to one message

    def mark(kind: str, target: int) -> tuple[str, int]:
        return marks.setdefault((kind, target), (kind, target))

    # ``worth_pruning`` written out: this loop meets every message, at every compaction of a replay.
    length, notes = t.length, t.notes
    bars: dict[int, int] = {}  # the length of a stub naming each latest message
    for i, key in enumerate(keys):
        if key is None or stub[i]:  # a stub is never pruned again
            continue
        target = latest[key]
        if target == i:
            continue
        if stub_mode:
            bar = bars.get(target)
            if bar is None:
                bar = bars[target] = len(stub_text("superseded", labels[target]))
            if bar >= length[i]:
                continue
        note = notes.get(i)
        if note is None or not note.pin:
            pruned[i] = mark("superseded", target)

    # 2. Duplicates: one copy of each folded text among the tool results and retrieved chunks
    # pass 1 left, whatever call fetched it (ten queries answered by one manual section keep one
    # copy of it). The first copy stays: it is where the reader met the text, stubs point back,
    # and a transcript that grows never changes what an earlier run of prune kept, so the
    # prompt cache's prefix holds.
    first: dict[tuple[int, int], int] = {}  # digest of a folded text -> the first message holding it
    duplicates = False
    high, low = t.digest_high, t.digest_low
    for i in compress(range(n), t.candidate):
        if i in pruned or stub[i] or not (high[i] or low[i]):  # (0, 0): no text to compare
            continue
        original = first.setdefault((high[i], low[i]), i)
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


def _assistant_live(t: Transcript, a: int, pruned: dict[int, Any]) -> bool:
    """An assistant still says something: content, or at least one call whose answer stays."""
    results = t.results(a)
    return bool(t.filled[a]) or any(r not in pruned for r in results) or not results


def _restore(
    t: Transcript, pruned: dict[int, tuple[str, int]], stub_mode: bool, labels: Sequence[int]
) -> tuple[dict[int, str], bool]:
    """Give back what a kept message relies on, then a copy of each fact no kept message holds.

    Returns index -> reason, and whether any copy came back for a fact.
    """
    n = t.n
    stub = t.stub
    active = stub.translate(_LIVE)  # not a stub, and not pruned by the first two passes
    for i in pruned:
        active[i] = False
    if not stub_mode:  # nor an assistant with calls whose every answer goes and nothing else to say
        for i in compress(range(n), t.calls):
            if active[i] and not _assistant_live(t, i, pruned):
                active[i] = False
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
    t: Transcript,
    pruned: dict[int, tuple[str, int]],
    restored: dict[int, str],
    stub_mode: bool,
    labels: Sequence[int],
    reasons: bool,
) -> Round:
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
        return Round(range(t.n), stubs, {}, fates)
    # Only what goes is looked at: a dropped result takes its call from its assistant.
    keep = bytearray(b"\1") * t.n
    observed: list[int] = []
    dropped: dict[int, set[int]] = {}  # assistant -> the positions of the calls that go
    for i in gone:
        if t.observation[i]:
            observed.append(i)
            continue
        keep[i] = 0
        owner = t.owner[i]
        if owner >= 0:
            dropped.setdefault(owner, set()).add(t.call_at[i])
    stubs = {}
    for i in sorted(observed):
        # No call goes with it, and dropping it would leave its action unanswered: a stub.
        kind, target = gone[i]
        stubs[i] = (kind, labels[target])
        if reasons:
            fates[i] = Fate("elided", fates[i].reason)
    calls: dict[int, tuple[int, ...]] = {}
    for a in sorted(dropped):
        kept = tuple(position for position in range(t.calls[a]) if position not in dropped[a])
        if not kept and not t.filled[a]:
            fates[a] = Fate("removed", "no content and no calls left")
            keep[a] = 0
            continue
        calls[a] = kept
    origins = list(compress(range(t.n), keep))
    return Round(origins, stubs, calls, fates)
