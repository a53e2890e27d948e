"""``swe-agent``: a ``.traj`` JSON object whose ``history`` is the message list.

SWE-agent answers tool calls with a ``tool_call_ids`` list; the canonical form wants
``tool_call_id``, so the reader adds it and the writer takes it off again (items that
already had one keep it: unchanged items are written back exactly as read). Text-mode
files (actions fenced in assistant text, observations as ``user`` messages, old files
without ``message_type``) have no tool structure: there a ``user`` message answering an
assistant ``action`` (or marked ``message_type: "observation"``) is tool output, read
as ``compactctl.kind: "observation"`` so prune, trim and masking treat it as one, and
written back in place without that mark.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from compactctl.errors import InputError
from compactctl.formats.base import Native, Signature, Transcript, is_unchanged, native_of, sources
from compactctl.formats.records import Record, annotate, check_message, dumps_document
from compactctl.transcript import ANNOTATION_KEY, OBSERVATION_KIND, annotations_of

NAME = "swe-agent"
SIGNATURE = Signature((("history",), ("trajectory", "info")), "one JSON object with a 'history' list")
SUFFIXES = (".traj", ".json")


@dataclass(frozen=True)
class SweAgentNative(Native[dict[str, Any]]):
    """Units are the ``history`` items as read."""

    raw: bytes | None = None  # the file as read


def detect(records: list[Record]) -> bool:
    first = records[0].value if records else None
    return len(records) == 1 and isinstance(first, dict) and isinstance(first.get("history"), list)


def _canonical(item: Any) -> Any:
    if isinstance(item, dict) and "tool_call_id" not in item and isinstance(item.get("tool_call_ids"), list):
        ids = item["tool_call_ids"]
        return {**item, "tool_call_id": ids[0] if ids else None}
    return item


def read(records: list[Record], path: str) -> list[Transcript]:
    document = records[0].value if len(records) == 1 else None
    history = document.get("history") if isinstance(document, dict) else None
    if not isinstance(history, list):
        raise InputError("expected a SWE-agent trajectory: one JSON object with a 'history' list", path)
    messages = [dict(check_message(_canonical(item), path, None, f"history[{i}]")) for i, item in enumerate(history)]
    for i, message in enumerate(messages):
        if i and _is_observation(history[i], history[i - 1]):
            annotate(message, kind=OBSERVATION_KIND)
    native = SweAgentNative(tuple(history), tuple(dict(m) for m in messages), records[0].raw)
    return [Transcript(messages, envelope=document, native=native, origins=tuple(range(len(messages))))]


def _is_observation(item: Any, previous: Any) -> bool:
    """A text-mode observation: a user item answering an assistant's action."""
    if not isinstance(item, dict) or item.get("role") != "user":
        return False
    if item.get("message_type") == "observation":
        return True
    action = previous.get("action") if isinstance(previous, dict) and previous.get("role") == "assistant" else None
    return isinstance(action, str) and bool(action.strip()) and "message_type" not in item


def _native(message: dict[str, Any], item: dict[str, Any] | None, same: bool) -> dict[str, Any]:
    """The history item: as read when unchanged, else without what the reader added
    (``tool_call_id``, the observation mark)."""
    if same and item is not None:
        return item
    note = annotations_of(message)
    if note.get("kind") == OBSERVATION_KIND and (item is None or ANNOTATION_KEY not in item):
        rest = {key: value for key, value in note.items() if key != "kind"}
        message = {key: value for key, value in message.items() if key != ANNOTATION_KEY}
        if rest:
            message[ANNOTATION_KEY] = rest
    if "tool_call_ids" in message and (item is None or "tool_call_id" not in item):
        return {key: value for key, value in message.items() if key != "tool_call_id"}
    return message


def write(transcripts: list[Transcript]) -> bytes:
    (transcript,) = transcripts
    native = native_of(transcript, SweAgentNative)
    raw = native.raw if native is not None else None
    if raw is not None and is_unchanged(transcript, native):
        return raw
    history = [_native(*source) for source in sources(transcript, native)]
    return dumps_document({**(transcript.envelope or {}), "history": history}, raw)
