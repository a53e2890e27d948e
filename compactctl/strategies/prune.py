"""``prune``: the deterministic three passes (expired, duplicates, dependencies).

1. *Expired*: among messages sharing a key (the ``compactctl.key`` annotation, else
   for a tool result its tool name plus its arguments as canonical JSON) only the
   latest stays current; the earlier ones are superseded by it.
2. *Duplicates*: a tool result or ``kind: "retrieval"`` message whose text, case and
   whitespace folded, equals an earlier one still kept.
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
references no longer count); a message that supersedes others is never itself pruned
as a duplicate (so what a stub defers to stays); whether a reference is already
satisfied is judged on what the first two passes kept, not on the order restorations
happen in. With those, one round in stub mode that brought no fact back is its own
fixed point. Otherwise (and always in drop mode) rounds run until the output stops
changing: removing a message can make another the latest of its key or the first of its
text, and a copy brought back for a fact can be pruned again once another copy of it is
seen kept. A round only ever adds stubs or drops, so this ends.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections import deque
from dataclasses import dataclass
from itertools import accumulate
from typing import Any

import orjson

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
STUB_PREFIX = "[compactctl: "
_STUB = re.compile(r"\[compactctl: (?:superseded by|duplicate of) message #\d+\]")


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
        return orjson.dumps(value, option=orjson.OPT_SORT_KEYS).decode()
    except TypeError:
        return repr(value)


def _key_list(value: Any) -> list[str]:
    if value is None:
        return []
    items = value if isinstance(value, list) else [value]
    return [item if isinstance(item, str) else canonical(item) for item in items]


@dataclass(frozen=True)
class _Memo:
    folded: dict[str, str]  # text -> fold(text)
    arguments: dict[str, str]  # call arguments -> canonical(arguments)


class _Transcript:
    """What the passes need to know about each message, computed in one walk.

    ``memo`` is shared by the rounds of one prune, so a text or an argument string seen
    in an earlier round is not folded or parsed again.
    """

    def __init__(self, messages: list[Message], facts: FactMatcher, memo: _Memo) -> None:
        n = len(messages)
        self.messages = messages
        self.facts = facts
        self.memo = memo
        self.notes: list[dict[str, Any]] = [{}] * n
        self.calls: list[list[dict[str, Any]]] = [[]] * n
        self.owner = [-1] * n  # tool result -> the assistant message holding its call
        self.call_at = [-1] * n  # tool result -> the position of its call in that message
        self.results: dict[int, list[int]] = {}  # assistant -> its tool results
        self.stub = [False] * n
        self.keys: list[tuple[str, ...] | None] = [None] * n
        self.candidate = [False] * n  # a tool result or a retrieved chunk: may be a duplicate
        self.observation = [False] * n  # tool output read as a user message (no call to go with it)
        current, ids = -1, dict[Any, int]()
        for i, message in enumerate(messages):
            note = message.get(ANNOTATION_KEY)
            if isinstance(note, dict):
                self.notes[i] = note
            else:
                note = {}
            content = message.get("content")
            if isinstance(content, str):
                self.stub[i] = content.startswith(STUB_PREFIX) and _STUB.fullmatch(content) is not None
            elif isinstance(content, list):
                self.stub[i] = is_stub(message)
            role = message.get("role")
            if role == "tool":
                self.candidate[i] = True
                position = ids.get(message.get("tool_call_id")) if current >= 0 else None
                if position is not None:
                    self.owner[i], self.call_at[i] = current, position
                    self.results[current].append(i)
                if note.get("key") is not None:
                    self.keys[i] = self._annotated_key(note["key"])
                elif position is not None:
                    self.keys[i] = self._call_key(self.calls[current][position])
                continue
            calls = tool_calls_of(message) if role == "assistant" else []
            current = i if calls else -1
            if calls:
                # An assistant carrying calls has no key of its own: its calls expire through their results.
                self.calls[i] = calls
                self.results[i] = []
                ids = {}
                for position, call in enumerate(calls):
                    if isinstance(call, dict):
                        ids.setdefault(call.get("id"), position)
                continue
            if note:
                if note.get("key") is not None:
                    self.keys[i] = self._annotated_key(note["key"])
                # An observation a text-mode agent got as a user message is tool output: a
                # duplicate candidate. It has no key: "scroll_down" twice is two different views.
                self.observation[i] = role == "user" and note.get("kind") == OBSERVATION_KIND
                self.candidate[i] = note.get("kind") == "retrieval" or self.observation[i]

    @staticmethod
    def _annotated_key(key: Any) -> tuple[str, ...]:
        return ("key", key if isinstance(key, str) else canonical(key))

    def _call_key(self, call: Any) -> tuple[str, ...] | None:
        function = call.get("function") if isinstance(call, dict) else None
        if not isinstance(function, dict):
            return None
        arguments = function.get("arguments", "")
        if isinstance(arguments, str):
            spelled = self.memo.arguments.get(arguments)
            if spelled is None:
                spelled = self.memo.arguments[arguments] = canonical(arguments)
        else:
            spelled = canonical(arguments)
        return ("call", str(function.get("name", "")), spelled)

    def folded(self, i: int) -> str:
        content = self.messages[i].get("content")
        text = content if isinstance(content, str) else content_text(self.messages[i])
        found = self.memo.folded.get(text)
        if found is None:
            found = self.memo.folded[text] = fold(text)
        return found

    def protected(self, i: int) -> bool:
        """Pinned: never pruned. (A fact-bearing message is not: one copy of each fact suffices.)"""
        return self.notes[i].get("pin") is True

    def fact_text(self, i: int, stub_mode: bool) -> str:
        """What message ``i`` will hold in the output, as facts are looked for in it.

        In drop mode a call goes with its result, so a call's name and arguments count as
        the result's text; in stub mode an assistant is never changed and holds its own.
        """
        if self.stub[i]:
            return ""
        message = self.messages[i]
        if self.calls[i]:
            return message_text(message) if stub_mode else content_text(message)
        if not stub_mode and self.owner[i] >= 0:
            call = self.calls[self.owner[i]][self.call_at[i]]
            function = call.get("function") if isinstance(call, dict) else None
            if isinstance(function, dict):
                return f"{content_text(message)}\n{function.get('name', '')}\n{function.get('arguments', '')}"
        return content_text(message)

    def facts_to_bring_back(self, active: list[bool], stub_mode: bool) -> list[tuple[int, list[int]]]:
        """The messages to give back so that every fact keeps a copy, each with the facts it serves.

        Cheap where it can be: a fact whose declaring message stays and holds it is served
        without looking anywhere else; only the others are looked for in the other messages.
        """
        facts = self.facts
        if not facts:
            return []
        n = len(self.messages)
        declarers = facts.declarers(self.messages)
        wanted = [
            f
            for f in range(len(facts.facts))
            if not any(active[i] and self._holds(i, f, stub_mode) for i in declarers[f])
        ]
        if not wanted:
            return []
        # Served by any message that stays?
        for i in range(n):
            if active[i]:
                held = facts.found_in(self.fact_text(i, stub_mode), wanted)
                if held:
                    wanted = [f for f in wanted if f not in held]
                    if not wanted:
                        return []
        holders: list[list[int]] = [[] for _ in facts.facts]
        for i in range(n):
            if not active[i]:
                for f in facts.found_in(self.fact_text(i, stub_mode), wanted):
                    holders[f].append(i)
        # Stubs keep their annotations; dropped messages take theirs with them (see ``keepers``).
        chosen = keepers(holders, lambda i: False, () if stub_mode else declarers)
        return [(i, [f for f in wanted if i in holders[f]]) for i in chosen]

    def _holds(self, i: int, fact: int, stub_mode: bool) -> bool:
        return fact in self.facts.found_in(self.fact_text(i, stub_mode), (fact,))


def prune(messages: list[Message], options: PruneOptions, context: StepContext) -> StepResult:
    """Supersede, deduplicate, restore what is still referenced; stub or drop what is left out.

    In drop mode the three passes are repeated on their own output until it stops changing
    (twice for most transcripts), which makes ``prune(prune(x)) == prune(x)`` hold by
    construction: a drop can make a message the latest of its key or the first of its text,
    and the next round must then see what a second run would see. Stub mode keeps every
    message in place, so its first round is already the fixed point.
    """
    stub_mode = options.mode == "stub"
    facts = FactMatcher(declared_facts(messages, options.require))
    memo = _Memo({}, {})
    current, origins = messages, list(range(len(messages)))
    fates: dict[int, Fate] = {}
    # Every round that changes something drops at least one more message or call, so this ends.
    for _ in range(len(messages) + 1):
        step, for_facts = _once(_Transcript(current, facts, memo), stub_mode, origins)
        for index, fate in step.fates.items():
            fates[origins[index]] = fate
        if (stub_mode and not for_facts) or step.messages == current:
            # Stub mode keeps every index and every key, and a stub is never restored, so with
            # no copy brought back for a fact a second round would find exactly what the first did.
            current = step.messages
            break
        origins = [origins[o] for o in step.origins if o is not None]
        current = step.messages
    if not stub_mode:
        _count_dropped_calls(messages, current, origins, fates)
    kept_from: list[int | None] = list(origins)
    return StepResult(current if current is not messages else list(messages), kept_from, fates)


def _count_dropped_calls(
    messages: list[Message], out: list[Message], origins: list[int], fates: dict[int, Fate]
) -> None:
    """Over several rounds an assistant may lose calls more than once: say how many in all."""
    for message, index in zip(out, origins, strict=True):
        before, after = len(tool_calls_of(messages[index])), len(tool_calls_of(message))
        if after < before:
            fates[index] = Fate("elided", f"{before - after} tool call(s) removed with their results")


def _once(t: _Transcript, stub_mode: bool, labels: list[int]) -> tuple[StepResult, bool]:
    """One round of the three passes; ``labels`` maps a position to the index reasons name.

    Also says whether a copy was brought back for a fact (then the round may not be a fixed point).
    """
    messages, n = t.messages, len(t.messages)

    def worth_pruning(i: int, kind: str, target: int) -> bool:
        if t.stub[i]:
            return False
        # A stub longer than what it replaces would grow the transcript. In drop mode the same
        # bar holds for duplicates: dropping a short "[]" answer of another call loses that call
        # and what it asked, to save a few tokens (a superseded call is asked again later).
        if (stub_mode or kind == "duplicate") and len(stub_text(kind, labels[target])) >= len(
            content_text(messages[i])
        ):
            return False
        return not t.protected(i)

    # 1. Expired: only the latest message of each key stays current.
    keys = t.keys
    latest: dict[tuple[str, ...], int] = {}
    for i, key in enumerate(keys):
        if key is not None:
            latest[key] = i
    pruned: dict[int, tuple[str, int]] = {}  # index -> (kind, the message it defers to)
    superseding: set[int] = set()
    for i, key in enumerate(keys):
        if key is not None and latest[key] != i:
            superseding.add(latest[key])
            if worth_pruning(i, "superseded", latest[key]):
                pruned[i] = ("superseded", latest[key])

    # 2. Duplicates of an earlier kept tool result or retrieved chunk. What a stub defers
    # to (the latest of a key) stays itself, so a stub never points at another stub.
    first: dict[str, int] = {}
    for i in range(n):
        if not t.candidate[i] or i in pruned or t.stub[i]:
            continue
        text = t.folded(i)
        if not text:
            continue
        original = first.setdefault(text, i)
        if original != i and i not in superseding and worth_pruning(i, "duplicate", original):
            pruned[i] = ("duplicate", original)

    # 3. Dependencies, to a fixed point.
    restored, for_facts = _restore(t, pruned, stub_mode, labels)
    return _build(t, pruned, restored, stub_mode, labels), for_facts


def _assistant_live(t: _Transcript, a: int, pruned: dict[int, Any]) -> bool:
    """An assistant still says something: content, or at least one call whose answer stays."""
    return _has_content(t.messages[a]) or any(r not in pruned for r in t.results[a]) or not t.results[a]


def _has_content(message: Message) -> bool:
    content = message.get("content")
    return content not in (None, "", [])


def _restore(
    t: _Transcript, pruned: dict[int, tuple[str, int]], stub_mode: bool, labels: list[int]
) -> tuple[dict[int, str], bool]:
    """Give back what a kept message relies on, then a copy of each fact no kept message holds.

    Returns index -> reason, and whether any copy came back for a fact.
    """
    n = len(t.messages)
    stub = t.stub
    if stub_mode:
        active = [not stub[i] and i not in pruned for i in range(n)]
    else:
        active = [
            not stub[i] and i not in pruned and (not t.calls[i] or _assistant_live(t, i, pruned)) for i in range(n)
        ]
    definers: dict[str, list[int]] = {}
    for i, note in enumerate(t.notes):
        if note and note.get("defines") is not None:
            for key in _key_list(note["defines"]):
                definers.setdefault(key, []).append(i)
    # How many of a key's first j definers the first two passes kept: fixed before any
    # restoration, so the order the work is done in cannot change what is satisfied.
    active_at_start = list(active)
    kept_before = {key: [0, *accumulate(int(active[d]) for d in found)] for key, found in definers.items()}
    restored: dict[int, str] = {}
    queue: deque[int] = deque(i for i, note in enumerate(t.notes) if note and active[i] and note.get("references"))

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
        if t.calls[i] and not _assistant_live(t, i, {r: 0 for r in t.results[i] if r in pruned and r not in restored}):
            for result in t.results[i]:
                keep(result, f"call in #{labels[i]}")

    if not stub_mode:
        # A pinned assistant keeps every call, so its results stay too.
        for a, results in t.results.items():
            if t.protected(a):
                for result in results:
                    if result in pruned:
                        keep(result, f"call in pinned #{labels[a]}")

    def drain() -> None:
        while queue:
            satisfy(queue.popleft())

    def satisfy(k: int) -> None:
        for key in _key_list(t.notes[k].get("references")):
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
    brought = t.facts_to_bring_back(active, stub_mode)
    for i, served in brought:
        keep(i, f"last copy of fact {', '.join(repr(t.facts.facts[f]) for f in served)}")
    drain()
    return restored, bool(brought)


def _build(
    t: _Transcript, pruned: dict[int, tuple[str, int]], restored: dict[int, str], stub_mode: bool, labels: list[int]
) -> StepResult:
    fates: dict[int, Fate] = {}
    for i, reason in restored.items():
        fates[i] = Fate("restored", reason)
    gone = {i: mark for i, mark in pruned.items() if i not in restored}
    for i, (kind, target) in gone.items():
        reason = f"superseded by #{labels[target]}" if kind == "superseded" else f"duplicate of #{labels[target]}"
        fates[i] = Fate("elided" if stub_mode else "removed", reason)
    if stub_mode:
        out = list(t.messages)
        for i, (kind, target) in gone.items():
            out[i] = {**out[i], "content": with_text(out[i].get("content"), stub_text(kind, labels[target]))}
        return StepResult(out, list(range(len(out))), fates)
    messages: list[Message] = []
    origins: list[int | None] = []
    for i, message in enumerate(t.messages):
        if i in gone and t.observation[i]:
            # No call goes with it, and dropping it would leave its action unanswered: a stub.
            kind, target = gone[i]
            messages.append({**message, "content": with_text(message.get("content"), stub_text(kind, labels[target]))})
            origins.append(i)
            fates[i] = Fate("elided", fates[i].reason)
            continue
        if i in gone:
            continue
        if t.calls[i]:
            dropped = {t.call_at[r] for r in t.results[i] if r in gone}
            if dropped:
                calls = [c for position, c in enumerate(t.calls[i]) if position not in dropped]
                if not calls and not _has_content(message):
                    fates[i] = Fate("removed", "no content and no calls left")
                    continue
                # Rebuilt in place so the keys keep their order; an empty tool_calls list is rejected.
                message = {
                    k: calls if k == "tool_calls" else v for k, v in message.items() if calls or k != "tool_calls"
                }
        messages.append(message)
        origins.append(i)
    return StepResult(messages, origins, fates)
