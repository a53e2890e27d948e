"""The turns Gemini CLI's loop detector stopped: two billed calls the chat holds no usage for, estimated.

What 0.61 does (``services/loopDetectionService.ts`` and ``GeminiClient._recoverFromLoop`` in
google-gemini/gemini-cli): while a response streams, the detector watches for the same tool call
``TOOL_CALL_LOOP_THRESHOLD`` (5) times in a row, or a 50-character chunk of text repeated
``CONTENT_LOOP_THRESHOLD`` (10) times close together; on either it cuts the stream and sends the
model its feedback (``System: Potential loop detected. Details: ...``) as a new request, which the
chat records as a ``user`` record (``displayContent`` the prompt). Measured with the real 0.61.0
against the loopback fake (tests/fakes/record_gemini_switch.py, ``gemini_loop_detected_fixture``):
the chat keeps neither the cut response (served 25,843 input, 107 output tokens) nor the answer to
the feedback (25,917 input, 2 output), and a ``$set`` then rolls the turn back. The answer's request
is the history before the prompt and the feedback in its place (25,831 + 86), the cut response's the
history and the prompt (+ 12). Each is estimated as that request: the last recorded call's input and
its response re-sent (no thoughts), then the request's records (cl100k), its cached tokens the history
the call before had (where the chat's calls read the cache); the cut response's output is the repeated
call, or ``CONTENT_LOOP_THRESHOLD`` chunks of the repeated text the feedback quotes; the answer's is
unknown (no record holds it): 0. The detector's model check (``detail`` from its own model call, after
30 turns of one prompt) stops a turn before its request: only the answer to the feedback is estimated.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from compactctl.recorded import ApiUsage, timestamp_of

if TYPE_CHECKING:
    from compactctl.tokens import TokenCounter

# The detector's feedback, sent as a user turn (0.61's ``GeminiClient._recoverFromLoop``).
LOOP_FEEDBACK = "System: Potential loop detected."
REPEATED_CALL = "Details: Repeated tool call: "
REPEATED_TEXT = 'Details: Repeating content detected: "'
CONTENT_LOOP_THRESHOLD, CONTENT_CHUNK_SIZE = 10, 50  # ``loopDetectionService.ts``


@dataclass(frozen=True)
class StoppedCall:
    """A call the loop detector's stopped turn made: its model and its usage, estimated."""

    record: str  # the id of the feedback's record
    model: str | None
    timestamp: float | None
    usage: ApiUsage


def feedback_text(record: dict[str, Any]) -> str | None:
    """The loop detector's feedback a ``user`` record holds, else None."""
    parts = record.get("content")
    if record.get("type") != "user" or not isinstance(parts, list):
        return None
    for part in parts:
        text = part.get("text") if isinstance(part, dict) else None
        if isinstance(text, str) and text.startswith(LOOP_FEEDBACK):
            return text
    return None


def stopped_calls(values: Iterable[Any], usage_of: Callable[[Any], ApiUsage | None]) -> list[StoppedCall]:
    """The calls of each turn the detector stopped (``values``: the chat's records in file order; ``usage_of``: a
    record's ``tokens`` as the usage billed), each estimated from the request it was."""
    from compactctl.tokens import counter_for

    counter = counter_for()
    records = list(_records(values))
    cached_anywhere = any((u := usage_of(r.get("tokens"))) is not None and u.cached_tokens for r in records)
    found: list[StoppedCall] = []
    last: tuple[ApiUsage, str | None] | None = None  # the last recorded call and its model
    request: list[dict[str, Any]] = []  # the user records since it
    seen: set[str] = set()
    for n, record in enumerate(records):
        usage = usage_of(record.get("tokens")) if record.get("type") == "gemini" else None
        if usage is not None:
            model = record.get("model")
            last, request = (usage, model if isinstance(model, str) else None), []
            continue
        text, first = feedback_text(record), record["id"] not in seen
        seen.add(record["id"])
        if text is None:
            if record.get("type") == "user" and first:
                request.append(record)
            continue
        if not first or last is None:
            continue  # a copy of the feedback (a checkpoint's list), or no call before it to count from
        before, model = last
        model = next((m for r in records[n + 1 :] if isinstance(m := r.get("model"), str)), model)
        when = timestamp_of(record.get("timestamp"))
        history = before.input_tokens + before.output_tokens - before.reasoning_tokens
        asked = sum(counter.message({"role": "user", "content": _text(r)}) for r in request)
        answer = history + counter.message({"role": "user", "content": text})
        output = _cut_output(text, counter)
        if output is not None:  # the stream it cut: the history and the request
            cut = ApiUsage(history + asked, before.input_tokens if cached_anywhere else 0, output_tokens=output)
            found.append(StoppedCall(f"{record['id']}#cut", model, when, cut))
        answered = ApiUsage(answer, history if cached_anywhere else 0)
        found.append(StoppedCall(f"{record['id']}#answer", model, when, answered))
        request = []
    return found


def _records(values: Iterable[Any]) -> Iterable[dict[str, Any]]:
    """The message records in file order: each line's, or the one-document chat's list (a ``$set``'s list is a
    copy of records already written)."""
    for value in values:
        if not isinstance(value, dict):
            continue
        if isinstance(value.get("id"), str):
            yield value
        elif isinstance(value.get("sessionId"), str) and isinstance(value.get("messages"), list):
            yield from (m for m in value["messages"] if isinstance(m, dict) and isinstance(m.get("id"), str))


def _text(record: dict[str, Any]) -> str:
    parts = record.get("content")
    if isinstance(parts, str):
        return parts
    return "".join(
        str(p.get("text")) if isinstance(p, dict) and "text" in p else json.dumps(p, default=str)
        for p in parts or []
        if isinstance(p, dict)
    )


def _cut_output(feedback: str, counter: TokenCounter) -> int | None:
    """The cut response's output tokens the feedback tells: the repeated call, or the repeated text's chunks;
    None where the detector's model check stopped the turn before its request (no response cut)."""
    if REPEATED_CALL in feedback:
        call = feedback.split(REPEATED_CALL, 1)[1].split(". Please take a step back", 1)[0]
        return int(counter(call.replace(" with arguments ", "", 1)))
    if REPEATED_TEXT in feedback:
        quoted = feedback.split(REPEATED_TEXT, 1)[1].split('...". Please', 1)[0]
        per_char = counter(quoted) / max(len(quoted), 1)
        return round(per_char * CONTENT_LOOP_THRESHOLD * CONTENT_CHUNK_SIZE)
    return None
