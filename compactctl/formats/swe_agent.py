"""``swe-agent``: a ``.traj`` JSON object whose ``history`` is the message list.

SWE-agent answers tool calls with a ``tool_call_ids`` list; the canonical form wants
``tool_call_id``, so the reader adds it and the writer takes it off again.
"""

from __future__ import annotations

from typing import Any

from compactctl.formats.records import Record, Transcript, check_message, dumps_document

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
    document = records[0].value
    messages = [
        check_message(_canonical(item), path, None, f"history[{i}]") for i, item in enumerate(document["history"])
    ]
    return [Transcript(messages, envelope=document)]


def _native(message: dict[str, Any]) -> dict[str, Any]:
    if "tool_call_ids" in message and "tool_call_id" in message:
        return {key: value for key, value in message.items() if key != "tool_call_id"}
    return message


def write(transcripts: list[Transcript]) -> bytes:
    (transcript,) = transcripts
    document = {**(transcript.envelope or {}), "history": [_native(m) for m in transcript.messages]}
    return dumps_document(document)
