"""What a 200 from a summarizer server must hold, checked before anything is taken from it.

A proxy's HTML error page, a body cut off mid-JSON or JSON of another shape all come
with status 200; each becomes ``NonConforming`` with a one-line reason (exit 3), never an
``AttributeError`` deep inside a client. Plain functions on the decoded JSON: no ``openai``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import orjson

# finish_reason of a reply cut off by its token limit: OpenAI and vLLM say "length", llama.cpp and
# Ollama servers have been seen to say "max_tokens" / "max_output_tokens".
TRUNCATED_REASONS = frozenset({"length", "max_tokens", "max_output_tokens"})


class NonConforming(Exception):
    """A 200 reply that is not the API's shape; the message says what is wrong, in one line."""


@dataclass(frozen=True)
class Reply:
    text: str
    truncated: bool
    prompt_tokens: int
    completion_tokens: int


def decode(body: bytes, content_type: str | None) -> dict[str, Any]:
    """The JSON object of a reply body, or NonConforming saying what came instead."""
    start = body.lstrip()[:1]
    if start == b"<" or (content_type and "html" in content_type.lower()):
        return _fail(f"an HTML page ({content_type or 'no content type'}, {len(body):,} bytes), not JSON")
    try:
        data = orjson.loads(body)
    except orjson.JSONDecodeError as error:
        return _fail(f"malformed JSON ({error}; {len(body):,} bytes)")
    if not isinstance(data, dict):
        return _fail(f"JSON {type(data).__name__}, not an object")
    return data


def _fail(reason: str) -> Any:
    raise NonConforming(reason)


def _count(usage: Any, key: str) -> int:
    value = usage.get(key) if isinstance(usage, dict) else None
    if value is None:
        return 0
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        _fail(f"usage.{key} is {value!r}, not a count")
    return value


def chat_reply(data: dict[str, Any]) -> Reply:
    """A Chat Completions object: ``choices[0].message.content`` a string (or null), counts integers."""
    if "error" in data and data.get("error"):
        return _fail(f"an error object with status 200: {str(data['error'])[:200]}")
    choices = data.get("choices")
    if not isinstance(choices, list):
        return _fail(f"'choices' is {type(choices).__name__ if choices is not None else 'missing'}, not a list")
    if not choices:
        return _fail("'choices' is empty")
    choice = choices[0]
    message = choice.get("message") if isinstance(choice, dict) else None
    if not isinstance(message, dict):
        return _fail("choices[0] has no message object")
    content = message.get("content")
    if content is not None and not isinstance(content, str):
        return _fail(f"choices[0].message.content is {type(content).__name__}, not a string")
    usage = data.get("usage")
    if usage is not None and not isinstance(usage, dict):
        return _fail(f"'usage' is {type(usage).__name__}, not an object")
    return Reply(
        content or "",
        choice.get("finish_reason") in TRUNCATED_REASONS,
        _count(usage, "prompt_tokens"),
        _count(usage, "completion_tokens"),
    )


def responses_reply(data: dict[str, Any]) -> Reply:
    """A Responses object: the ``output_text`` parts of its ``message`` items, counts integers."""
    if data.get("error"):
        return _fail(f"an error object with status 200: {str(data['error'])[:200]}")
    output = data.get("output")
    if not isinstance(output, list):
        return _fail(f"'output' is {type(output).__name__ if output is not None else 'missing'}, not a list")
    texts = []
    for item in output:
        if not isinstance(item, dict):
            return _fail(f"an output item is {type(item).__name__}, not an object")
        if item.get("type") != "message":
            continue
        content = item.get("content")
        if not isinstance(content, list):
            return _fail("a message item's content is not a list")
        for part in content:
            if isinstance(part, dict) and part.get("type") == "output_text":
                if not isinstance(part.get("text"), str):
                    return _fail("an output_text part has no text string")
                texts.append(part["text"])
    usage = data.get("usage")
    if usage is not None and not isinstance(usage, dict):
        return _fail(f"'usage' is {type(usage).__name__}, not an object")
    return Reply(
        "".join(texts),
        data.get("status") == "incomplete",
        _count(usage, "input_tokens"),
        _count(usage, "output_tokens"),
    )


def with_fences_closed(text: str) -> str:
    """``text`` with a Markdown code fence it left open closed at its end.

    A real model cut by its token limit stops mid-anything, often inside a code block, and small
    models write stray fences; the blocks compactctl appends after the model's text (the verbatim
    ledger, the user's messages, the latest request) would then read as part of that code.
    A fence opens on a line of three or more backticks or tildes (up to three spaces before it)
    and closes on a line of at least as many of the same character with nothing after them.
    """
    opened = ""
    for line in text.splitlines():
        stripped = line.lstrip(" ")
        if len(line) - len(stripped) > 3 or stripped[:3] not in ("```", "~~~"):
            continue
        run = len(stripped) - len(stripped.lstrip(stripped[0]))
        fence = stripped[:run]
        if not opened:
            # A backtick fence's info string holds no backtick (CommonMark): otherwise it is inline code.
            if fence[0] == "~" or "`" not in stripped[run:]:
                opened = fence
        elif fence[0] == opened[0] and run >= len(opened) and not stripped[run:].strip():
            opened = ""
    return f"{text.rstrip()}\n{opened}" if opened else text
