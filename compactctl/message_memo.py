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

from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, TypeVar

Value = TypeVar("Value")
LIMIT = 200_000


class _Memo:
    """One replay's memo: per function, ``id(message)`` -> (message, value), and ``size`` entries in all.

    A table per function, keyed by an int: a key was a (function, id) tuple, built and hashed at every
    look-up in one dict of every function's values (a replay looks up some 60,000 times)."""

    __slots__ = ("size", "states", "tables")

    def __init__(self) -> None:
        self.tables: dict[Any, dict[int, tuple[Any, Any]]] = {}
        self.size = 0
        self.states: dict[str, dict[Any, Any]] = {}  # ``replay_state``'s

    def table(self, function: Any) -> dict[int, tuple[Any, Any]]:
        found = self.tables.get(function)
        if found is None:
            found = self.tables[function] = {}
        return found

    def clear(self) -> None:
        """Start afresh (the tables handed out stay the memo's, emptied)."""
        for table in self.tables.values():
            table.clear()
        self.states.clear()
        self.size = 0


_MEMO: ContextVar[_Memo | None] = ContextVar("message_memo", default=None)


@contextmanager
def remembering() -> Iterator[None]:
    """Keep what ``by_message`` works out until the block ends (nested blocks share the outer memo)."""
    if _MEMO.get() is not None:
        yield
        return
    token = _MEMO.set(_Memo())
    try:
        yield
    finally:
        _MEMO.reset(token)


def replaying() -> bool:
    """Whether a replay's memo is open here (``by_message`` keeps what it works out)."""
    return _MEMO.get() is not None


def by_message(function: Callable[[Any], Value], message: Any) -> Value:
    """``function(message)``, for a pure function of a message; kept by identity inside ``remembering()``."""
    memo = _MEMO.get()
    if memo is None:
        return function(message)
    table = memo.tables.get(function)  # ``_Memo.table`` inline: a replay asks this some 20,000 times
    if table is None:
        table = memo.table(function)
    found = table.get(id(message))
    if found is not None and found[0] is message:
        value: Value = found[1]
        return value
    if memo.size >= LIMIT:
        memo.clear()
    value = function(message)
    table[id(message)] = (message, value)
    memo.size += 1
    return value


def values_of(function: Callable[[Any], Value], messages: Iterable[Any]) -> Iterator[tuple[Any, Value]]:
    """``(message, by_message(function, message))`` for each message in order, the memo looked up once."""
    listed = list(messages)
    return zip(listed, each_by_message(function, listed), strict=True)


def each_by_message(function: Callable[[Any], Value], messages: Iterable[Any]) -> list[Value]:
    """``[by_message(function, message) for message in messages]``, the memo looked up once: ``values_of``
    for a caller that needs only the values, as a list (no generator resumed and no pair built per
    message: a replay asks this of every message of every span, some 30,000 times)."""
    memo = _MEMO.get()
    if memo is None:
        return [function(message) for message in messages]
    table = memo.table(function)
    get = table.get
    out: list[Value] = []
    for message in messages:
        found = get(id(message))
        if found is not None and found[0] is message:
            out.append(found[1])
            continue
        if memo.size >= LIMIT:
            memo.clear()
        value = function(message)
        table[id(message)] = (message, value)
        memo.size += 1
        out.append(value)
    return out


def replay_state(owner: str) -> dict[Any, Any] | None:
    """A dict ``owner`` keeps its own things in while the replay runs; None outside ``remembering()``
    (it goes when the memo starts afresh, like every value in it)."""
    memo = _MEMO.get()
    if memo is None:
        return None
    found = memo.states.get(owner)
    if found is None:
        found = memo.states[owner] = {}
    return found
