"""``swe-agent``: a ``.traj`` JSON object whose ``history`` is the message list.

SWE-agent answers tool calls with a ``tool_call_ids`` list; the canonical form wants
``tool_call_id``, so the reader adds it and the writer takes it off again (items that
already had one keep it: unchanged items are written back exactly as read). Text-mode
files (actions fenced in assistant text, observations as ``user`` messages, old files
without ``message_type``) have no tool structure and read as plain messages.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from compactctl.errors import InputError
from compactctl.formats.base import Native, Transcript, is_unchanged, native_of, sources
from compactctl.formats.records import Record, check_message, dumps_document

NAME = "swe-agent"


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
    native = SweAgentNative(tuple(history), tuple(dict(m) for m in messages), records[0].raw)
    return [Transcript(messages, envelope=document, native=native, origins=tuple(range(len(messages))))]


def _native(message: dict[str, Any], item: dict[str, Any] | None, same: bool) -> dict[str, Any]:
    """The history item: as read when unchanged, else without the ``tool_call_id`` the reader added."""
    if same and item is not None:
        return item
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
