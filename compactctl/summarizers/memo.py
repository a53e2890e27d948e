"""What the summarizers found in a message or a text, remembered: a replay asks again and again.

A replay summarizes the same messages under every setting and at every compaction that
takes them in; what a pure function finds in one message or one text is found once, in a
memo that starts afresh past its size (it never grows with the input).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import orjson

from compactctl.digests import blake2b
from compactctl.message_memo import replaying
from compactctl.transcript import Message


class Memo(dict[Any, Any]):
    """Results of pure functions of a message or a text, kept while there are fewer than ``limit``
    (then it starts afresh: a report streams files larger than memory)."""

    def __init__(self, limit: int) -> None:
        super().__init__()
        self.limit = limit
        _MEMOS.append(self)

    def keep(self, key: Any, value: Any) -> Any:
        if len(self) >= self.limit:
            self.clear()
        self[key] = value
        return value

    def found(self, key: Any, function: Callable[..., Any], *arguments: Any) -> Any:
        """What is kept under ``key``, else ``function(*arguments)`` kept there; a ``None`` key is never kept."""
        if key is None:
            return function(*arguments)
        found = self.get(key, self)
        return self.keep(key, function(*arguments)) if found is self else found


_MEMOS: list[Memo] = []
MEMO_ENTRIES = 50_000
# function -> text -> what the function found in the text: a memo per function, keyed by the text itself
# (a (function, text) key was a tuple built and hashed at every look-up: a replay asks 30,000 times).
_TEXT_MEMOS: dict[Callable[[str], Any], Memo] = {}


def _text_memo(function: Callable[[str], Any]) -> Memo:
    memo = _TEXT_MEMOS.get(function)
    if memo is None:
        memo = _TEXT_MEMOS[function] = Memo(MEMO_ENTRIES)
    return memo


def remembered(function: Callable[[str], Any], text: str) -> Any:
    """``function(text)``, for a pure function of a text returning an immutable value, found once."""
    memo = _TEXT_MEMOS.get(function)  # Memo.found, inline: a replay asks this for every string of every span
    if memo is None:
        memo = _text_memo(function)
    found = memo.get(text, memo)
    return memo.keep(text, function(text)) if found is memo else found


def known(function: Callable[[str], Any], text: str, value: Any) -> None:
    """Note that ``function(text)`` is ``value``, found another way (``remembered`` gives it from now on)."""
    _text_memo(function).keep(text, value)


def message_key(message: Message) -> bytes | None:
    """A digest of the whole message: equal messages, equal keys (None: not JSON, not remembered).

    None inside a replay too: what its callers work out from a message is kept there by the message
    object already (``message_memo``: a replay's spans are the same messages, and their redacted
    copies, compaction after compaction), and a digest of every message (its JSON, hashed) was 3 %
    of a replay of the 2,000-turn tool agent, for no hit (equal messages are rare in a transcript)."""
    if replaying():
        return None
    return _digest(message)


def _digest(message: Message) -> bytes | None:
    try:
        spelled = orjson.dumps(message, option=orjson.OPT_NON_STR_KEYS)
    except TypeError:
        return None
    return blake2b(spelled, digest_size=16).digest()


def forget() -> None:
    """Empty the memos (a benchmark times a replay from cold with it)."""
    for memo in _MEMOS:
        memo.clear()
