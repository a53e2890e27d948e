"""What is worked out from one message, kept by the message's identity while a replay runs.

A replay runs the strategy steps on every setting's context at every simulated compaction, and
most of each context is the same message objects as the last time: their text, the facts they
declare, are worked out again and again. Inside ``remembering()`` (one replay), ``by_message``
keeps what a pure function of a message gave, keyed by the function and the message's ``id``,
with the message itself beside it, so a key is never taken for another object that reused the
id. Outside, nothing is kept: a library call works the value out each time. The memo belongs to
the replay that opened it (a context variable: threads and forked workers each have their own)
and starts afresh past ``LIMIT`` entries, so a streamed replay's memory stays bounded.

Messages are read, never changed, by the strategies (tests check it), which is what makes a
value worked out from a message object still right later in the same replay.
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, TypeVar

Value = TypeVar("Value")
LIMIT = 200_000

_MEMO: ContextVar[dict[tuple[Any, int], tuple[Any, Any]] | None] = ContextVar("message_memo", default=None)


@contextmanager
def remembering() -> Iterator[None]:
    """Keep what ``by_message`` works out until the block ends (nested blocks share the outer memo)."""
    if _MEMO.get() is not None:
        yield
        return
    token = _MEMO.set({})
    try:
        yield
    finally:
        _MEMO.reset(token)


def replaying() -> bool:
    """Whether a replay's memo is open here (``by_message`` keeps what it works out)."""
    return _MEMO.get() is not None


@contextmanager
def old_objects_frozen() -> Iterator[None]:
    """Everything the process holds when the block opens (the transcript, the modules) kept out of the
    collector's reach until it closes (``gc.freeze``), unless something froze objects already (a fork's
    parent: ``files.jobs``, ``files.replay_apart``; their own unfreeze stays theirs).

    A replay allocates many small containers and the memo keeps most of them, so the collector runs
    often; a full collection walks every object the process holds, the transcript too, which none of
    them is garbage. The 2,000-turn tool agent, structured + extractive, 3 thresholds: the collector
    took 17 ms of a 335 ms replay (one full collection 10 ms of it), 7 ms with the old objects frozen."""
    if gc.get_freeze_count() or not gc.isenabled():
        yield
        return
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


def by_message(function: Callable[[Any], Value], message: Any) -> Value:
    """``function(message)``, for a pure function of a message; kept by identity inside ``remembering()``."""
    memo = _MEMO.get()
    if memo is None:
        return function(message)
    key = (function, id(message))
    found = memo.get(key)
    if found is not None and found[0] is message:
        value: Value = found[1]
        return value
    if len(memo) >= LIMIT:
        memo.clear()
    value = function(message)
    memo[key] = (message, value)
    return value


def values_of(function: Callable[[Any], Value], messages: Iterable[Any]) -> Iterator[tuple[Any, Value]]:
    """``(message, by_message(function, message))`` for each message in order, the memo looked up once."""
    memo = _MEMO.get()
    if memo is None:
        for message in messages:
            yield message, function(message)
        return
    for message in messages:
        key = (function, id(message))
        found = memo.get(key)
        if found is not None and found[0] is message:
            yield message, found[1]
            continue
        if len(memo) >= LIMIT:
            memo.clear()
        value = function(message)
        memo[key] = (message, value)
        yield message, value


def replay_state(owner: str) -> dict[Any, Any] | None:
    """A dict ``owner`` keeps its own things in while the replay runs; None outside ``remembering()``
    (it goes when the memo starts afresh, like every value in it)."""
    memo = _MEMO.get()
    if memo is None:
        return None
    key = (owner, -1)  # no message's id is negative
    found = memo.get(key)
    if found is None:
        found = memo[key] = (None, {})
    state: dict[Any, Any] = found[1]
    return state
