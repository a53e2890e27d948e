"""The records of a compacted Gemini CLI chat (``formats.gemini``'s writer): a ``gemini`` record per
assistant message, its calls as ``functionCall`` parts in ``content`` (no ``toolCalls``), the responses
gathered in the ``user`` record after it, thoughts back in ``thoughts``: the one layout Gemini CLI 0.61
resumes with every response once (``formats/gemini.py`` says why).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from compactctl.digests import uuid5
from compactctl.formats.base import Transcript, sources
from compactctl.transcript import Message, content_text, function_of, is_thinking, thinking_text, tool_calls_of

if TYPE_CHECKING:
    from compactctl.formats.gemini import GeminiNative, Source

NAMESPACE = uuid.UUID("1d6c2f0e-6a57-4c39-9a0c-5e2b9e0d1f4a")  # the ids of what compactctl writes


def thought_text(thought: dict[str, Any]) -> str:
    """A ``thoughts`` entry as the thinking text it is read as."""
    subject, description = thought.get("subject"), str(thought.get("description", ""))
    return f"**{subject}** {description}" if subject else description


def chat_records(transcript: Transcript, native: GeminiNative | None, seed: str) -> Iterator[dict[str, Any]]:
    """The message records of a compacted chat: a ``gemini`` record per assistant message, its
    calls in ``content``, the responses gathered in the ``user`` record after it."""
    used: set[str] = set()
    written = list(sources(transcript, native))
    calls: dict[str, tuple[str, dict[str, Any]]] = {}  # call id -> (name, its native functionCall part)
    n = 0
    while n < len(written):
        message, unit, same = written[n]
        role = message.get("role")
        if role == "tool":
            results = []
            while n < len(written) and written[n][0].get("role") == "tool":
                results.append(written[n])
                n += 1
            yield _responses(results, calls, used, seed)
            continue
        n += 1
        if role == "assistant":
            record = _model_record(message, unit, same, calls)
        else:
            base = unit.record if unit and unit.record.get("type") == "user" else {}
            content = list(unit.parts) if same and unit else _user_content(message)
            record = {**_envelope(base), "type": "user", "content": content}
        record["id"] = _fresh(record.get("id"), used, seed)
        yield record


def _fresh(wanted: Any, used: set[str], seed: str) -> str:
    """The record's own id, or a new one where none was read or another record of this list took it
    (the client keys messages by id: two records of one id would be one)."""
    found = wanted if isinstance(wanted, str) and wanted not in used else None
    while found is None or found in used:
        found = str(uuid5(NAMESPACE, f"{seed}/{wanted}/{len(used)}"))
        wanted = found
    used.add(found)
    return found


def _envelope(record: dict[str, Any]) -> dict[str, Any]:
    """A record's own fields that still hold when its content is rewritten."""
    drop = ("content", "displayContent", "toolCalls")
    return {k: v for k, v in record.items() if k not in drop}


def _model_record(
    message: Message, unit: Source | None, same: bool, calls: dict[str, tuple[str, dict[str, Any]]]
) -> dict[str, Any]:
    base = unit.record if unit and unit.record.get("type") == "gemini" else {}
    native_calls = {
        p["functionCall"].get("id"): p for p in (unit.parts if unit else ()) if isinstance(p.get("functionCall"), dict)
    }
    if same and unit:
        parts = [dict(p) for p in unit.parts]
    else:
        parts = [{"text": text} for text in _texts(message) if text]
        for call in tool_calls_of(message):
            function = function_of(call)
            try:
                args = json.loads(function.get("arguments") or "{}")
            except ValueError:
                args = {"arguments": function.get("arguments")}
            template = native_calls.get(call.get("id"), {})
            part = {**template, "functionCall": {**template.get("functionCall", {}), "id": call.get("id")}}
            part["functionCall"].update(name=function.get("name"), args=args)
            parts.append(part)
    read_ids = [c["id"] for c in tool_calls_of(message)]
    for n, part in enumerate(p for p in parts if isinstance(p.get("functionCall"), dict)):
        call = part["functionCall"]
        call_id = call.get("id")
        if not isinstance(call_id, str):  # an older record's call without id: the id it was read under
            call_id = read_ids[n] if n < len(read_ids) else ""
        calls[call_id] = (str(call.get("name", "")), part)
    record = {**_envelope(base), "type": "gemini", "content": parts}
    record.setdefault("timestamp", _timestamp(base))
    record["thoughts"] = _thoughts(message, base)
    return record


def _texts(message: Message) -> list[str]:
    content = message.get("content")
    if isinstance(content, str):
        return [content]
    if isinstance(content, list):
        return [str(p.get("text", "")) for p in content if isinstance(p, dict) and p.get("type") == "text"]
    return []


def _thoughts(message: Message, base: dict[str, Any]) -> list[dict[str, Any]]:
    """The message's thinking as the record's ``thoughts``, each one as read where it is unchanged."""
    native = [t for t in base.get("thoughts") or [] if isinstance(t, dict)]
    by_text = {thought_text(t): t for t in native}
    content = message.get("content")
    texts = [thinking_text(p) for p in content if is_thinking(p)] if isinstance(content, list) else []
    return [by_text.get(text) or {"subject": "", "description": text, "timestamp": _timestamp(base)} for text in texts]


def _timestamp(base: dict[str, Any]) -> str:
    found = base.get("timestamp")
    return found if isinstance(found, str) else "1970-01-01T00:00:00.000Z"


def _responses(
    results: list[tuple[Message, Source | None, bool]],
    calls: dict[str, tuple[str, dict[str, Any]]],
    used: set[str],
    seed: str,
) -> dict[str, Any]:
    """One ``user`` record answering a model turn's calls."""
    parts = []
    for message, unit, same in results:
        native = unit.parts[0] if unit and unit.parts else None
        if same and native is not None:
            parts.append(native)
            continue
        call_id = str(message.get("tool_call_id", ""))
        template: dict[str, Any] = native["functionResponse"] if native else {}
        name = calls.get(call_id, (str(template.get("name", "")), {}))[0]
        body = template.get("response")
        key = next(iter(body)) if isinstance(body, dict) and len(body) == 1 else "output"  # "output" or "error"
        response = {**template, "id": call_id, "name": name, "response": {key: content_text(message)}}
        parts.append({"functionResponse": response})
    first = next((u.record for _, u, _ in results if u and u.record.get("type") == "user"), None)
    model_id = next((u.record.get("id") for _, u, _ in results if u and u.record.get("type") == "gemini"), None)
    wanted = first.get("id") if first else f"{model_id}_response" if model_id else None
    base = _envelope(first) if first else {"timestamp": _timestamp(results[0][1].record if results[0][1] else {})}
    return {**base, "id": _fresh(wanted, used, seed), "type": "user", "content": parts}


def _user_content(message: Message) -> list[dict[str, Any]]:
    content = message.get("content")
    if isinstance(content, str):
        return [{"text": content}]
    parts: list[dict[str, Any]] = []
    for part in content if isinstance(content, list) else []:
        if not isinstance(part, dict):
            continue
        url = part.get("image_url", {}).get("url", "") if part.get("type") == "image_url" else ""
        if url.startswith("data:") and ";base64," in url:
            mime, data = url[5:].split(";base64,", 1)
            parts.append({"inlineData": {"mimeType": mime, "data": data}})
        else:
            parts.append({"text": str(part.get("text", ""))})
    return parts or [{"text": content_text(message)}]


def document_records(
    records: list[dict[str, Any]], native_calls: dict[Any, dict[str, Any]] | None = None
) -> list[dict[str, Any]]:
    """The records in the older one-document layout, which every release that wrote it resumes (0.20 reads a model
    turn's calls from ``toolCalls`` alone, and a user record's text alone): a ``gemini`` record's calls in
    ``toolCalls``, each with its ``functionResponse`` parts as ``result``, and no user record of responses.
    ``native_calls``: the ``toolCalls`` entries read, by call id (their display fields kept)."""
    out: list[dict[str, Any]] = []
    n = 0
    while n < len(records):
        record = records[n]
        n += 1
        parts = record.get("content") if record.get("type") == "gemini" else None
        calls = [p for p in parts or [] if isinstance(p, dict) and isinstance(p.get("functionCall"), dict)]
        if not calls:
            out.append(record)
            continue
        answers: dict[Any, list[dict[str, Any]]] = {}
        following = records[n] if n < len(records) else {}
        responses = [p for p in following.get("content") or [] if isinstance(p, dict) and "functionResponse" in p]
        if following.get("type") == "user" and responses and len(responses) == len(following["content"]):
            n += 1  # the responses go into the calls' ``result``
            for part in responses:
                answers.setdefault(part["functionResponse"].get("id"), []).append(part)
        entries = []
        for part in calls:
            call = part["functionCall"]
            read = (native_calls or {}).get(call.get("id"), {})
            entries.append({
                "status": "success",
                "timestamp": record.get("timestamp"),
                **read,
                "id": call.get("id"),
                "name": call.get("name"),
                "args": call.get("args") or {},
                "result": answers.get(call.get("id"), []),
            })  # fmt: skip
        rest = [p for p in parts or [] if p not in calls]
        text = "".join(str(p.get("text", "")) for p in rest if isinstance(p, dict) and isinstance(p.get("text"), str))
        out.append({**record, "content": text, "toolCalls": entries})
    return out
