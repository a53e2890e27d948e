"""``swe-agent``: a ``.traj`` JSON object whose ``history`` is the message list.

SWE-agent answers tool calls with a ``tool_call_ids`` list; the canonical form wants
``tool_call_id``, so the reader adds it and the writer takes it off again (items that
already had one keep it: unchanged items are written back exactly as read). Text-mode
files (actions fenced in assistant text, observations as ``user`` messages, old files
without ``message_type``) have no tool structure and read as plain messages.
"""

from __future__ import annotations

from typing import Any

from compactctl.errors import InputError
from compactctl.formats.records import (
    Record,
    Transcript,
    check_message,
    dumps_document,
    is_unchanged,
    original,
    tag,
    untagged,
)

NAME = "swe-agent"


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
    messages = [
        tag(dict(check_message(_canonical(item), path, None, f"history[{i}]")), i) for i, item in enumerate(history)
    ]
    extra = {"units": history, "originals": [dict(m) for m in messages], "raw": records[0].raw}
    return [Transcript(messages, envelope=document, extra=extra)]


def _native(transcript: Transcript, message: dict[str, Any]) -> dict[str, Any]:
    """The history item: as read when unchanged, else without the ``tool_call_id`` the reader added."""
    item, same = original(transcript, message)
    if same:
        return item
    message = untagged(message)
    if "tool_call_ids" in message and (item is None or "tool_call_id" not in item):
        return {key: value for key, value in message.items() if key != "tool_call_id"}
    return message


def write(transcripts: list[Transcript]) -> bytes:
    (transcript,) = transcripts
    raw = transcript.extra.get("raw")
    if raw is not None and is_unchanged(transcript):
        return raw
    document = {**(transcript.envelope or {}), "history": [_native(transcript, m) for m in transcript.messages]}
    return dumps_document(document, raw)
