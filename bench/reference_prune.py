"""A reference pruner that keeps one copy of each fact: what ``prune`` is measured against.

Written apart from ``compactctl.strategies.prune`` and as plainly as possible (quadratic
where that is simpler), it removes everything the prune rules allow: every superseded
tool result or keyed message, every tool result or retrieved chunk whose folded text
equals an earlier kept one; then it gives back, to a fixed point, the latest holder of a
fact no kept message holds and the latest definer before a kept message's reference
that has none left. Pinned messages stay. ``stub`` replaces a removed message's content
with compactctl's stub (when shorter); ``drop`` removes a tool result with its call, an
assistant left empty, a chunk outright.

It is not idempotent and does not care whether a stub points at a kept message: an upper
bound on what a pruner keeping one copy of each fact can remove, with every output
API-valid and every fact kept (the bench checks both). With ``short_answers=False`` it
shares one rule of ``prune`` that has nothing to do with facts: a duplicate answer shorter
than a stub is not removed (in drop mode that would remove its call, e.g. an edit whose
answer is "ok", to save two tokens); with ``True`` it removes those too.
"""

from __future__ import annotations

from typing import Any

from compactctl.facts import declared_facts, fold
from compactctl.strategies.prune import stub_text
from compactctl.strategies.prune_rows import canonical
from compactctl.transcript import annotations_of, content_text, message_text, tool_calls_of, with_text


def _keys(value: Any) -> list[str]:
    items = value if isinstance(value, list) else [value] if value is not None else []
    return [item if isinstance(item, str) else canonical(item) for item in items]


def reference_prune(
    messages: list[dict[str, Any]], mode: str, require: tuple[str, ...] = (), short_answers: bool = False
) -> list[dict[str, Any]]:
    n = len(messages)
    owner: dict[int, tuple[int, int]] = {}  # tool result -> (assistant, call position)
    key: dict[int, tuple[str, ...]] = {}
    candidate: set[int] = set()
    calls: dict[str, tuple[int, int, dict[str, Any]]] = {}
    for i, message in enumerate(messages):
        note = annotations_of(message)
        if message.get("role") == "assistant":
            calls = {c.get("id"): (i, p, c) for p, c in enumerate(tool_calls_of(message)) if isinstance(c, dict)}
        if message.get("role") == "tool":
            candidate.add(i)
            found = calls.get(message.get("tool_call_id"))
            if found:
                owner[i] = found[:2]
                function = found[2].get("function") or {}
                key[i] = ("call", str(function.get("name", "")), canonical(function.get("arguments", "")))
        elif note.get("kind") == "retrieval":
            candidate.add(i)
        if note.get("key") is not None:
            key[i] = ("key", _keys(note["key"])[0])
    latest = {k: i for i, k in key.items()}
    removed = {i for i, k in key.items() if latest[k] != i and not annotations_of(messages[i]).get("pin")}
    first: dict[str, int] = {}
    for i in sorted(candidate - removed):
        text = fold(content_text(messages[i]))
        worth = short_answers or len(stub_text("duplicate", i)) < len(content_text(messages[i]))
        if text and text in first and worth and not annotations_of(messages[i]).get("pin"):
            removed.add(i)
        else:
            first.setdefault(text, i)
    facts = [fold(f) for f in declared_facts(messages, require)]
    texts = [fold(message_text(m)) for m in messages]
    holders = [[i for i in range(n) if fact in texts[i]] for fact in facts]
    definers: dict[str, list[int]] = {}
    for i, message in enumerate(messages):
        for k in _keys(annotations_of(message).get("defines")):
            definers.setdefault(k, []).append(i)
    changed = True
    while changed:
        changed = False
        for found in holders:
            if found and all(i in removed for i in found):
                removed.discard(found[-1])
                changed = True
        for i in range(n):
            if i in removed:
                continue
            for k in _keys(annotations_of(messages[i]).get("references")):
                before = [d for d in definers.get(k, []) if d < i] or [d for d in definers.get(k, []) if d != i]
                if before and all(d in removed for d in before):
                    removed.discard(before[-1])
                    changed = True
    if mode == "stub":
        out = list(messages)
        for i in removed:
            stub = stub_text("superseded", latest.get(key.get(i, ()), i))
            if len(stub) < len(content_text(messages[i])):
                out[i] = {**messages[i], "content": with_text(messages[i].get("content"), stub)}
        return out
    gone_calls: dict[int, set[int]] = {}
    for i in removed:
        if i in owner:
            assistant, position = owner[i]
            gone_calls.setdefault(assistant, set()).add(position)
    out = []
    for i, message in enumerate(messages):
        if i in removed:
            continue
        if i in gone_calls:
            kept = [c for p, c in enumerate(tool_calls_of(message)) if p not in gone_calls[i]]
            if not kept and message.get("content") in (None, "", []):
                continue
            message = {k: v for k, v in message.items() if k != "tool_calls"}
            if kept:
                message["tool_calls"] = kept
        out.append(message)
    return out
