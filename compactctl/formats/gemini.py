"""``gemini``: Gemini CLI chats (``~/.gemini/tmp/<project>/chats/session-<time>-<id8>.jsonl``).

The file is append-only JSON Lines (``packages/core/src/services/chatRecordingService.ts``
in google-gemini/gemini-cli): a header ``{sessionId, projectHash, startTime, lastUpdated,
kind}``, message records ``{id, timestamp, type, content, ...}`` (``type`` ``user``,
``gemini``, ``info``, ``error``, ``warning``; a ``gemini`` one also ``thoughts``,
``tokens``, ``model``, ``toolCalls``), ``{"$set": {...}}`` metadata updates and
``{"$rewindTo": id}``. It is read as the client's ``loadConversationRecord`` reads it: the
last copy of a message id wins, in the place of its first; ``$rewindTo`` drops that message
and all after it; a ``$set`` holding ``messages`` replaces the whole list (a checkpoint).
The older layout, one JSON document holding the same record with its ``messages``, is read
too (the client still resumes it).

The messages are then what the client sends when it resumes
(``convertSessionToClientHistory``): ``info``/``error``/``warning`` records and user
records it skips (``<session_context>``, slash commands, empty) are not model input; a
``gemini`` record's parts are its ``content`` (text, ``functionCall``), its ``thoughts``
read as thinking parts, and its ``toolCalls`` as calls when the content has none. Tool
results are the ``functionResponse`` parts of the user records after it, else the
``toolCalls[].result``: each once. (Gemini CLI 0.61 replays both, so its own sessions with
tool calls resume with every response twice, and the API refuses them: issue #29365 in
google-gemini/gemini-cli.) ``tokens`` (the API's usage of the call) goes on the assistant
message as ``usage``.

Writing: unchanged chats come back byte for byte. A compacted chat keeps every line and
ends with one ``$set`` of ``messages`` (and ``lastUpdated``), the checkpoint the client
itself appends when it rewrites its history (``updateMessagesFromHistory``, as after its own
compression). In it a ``gemini`` record holds its calls as ``functionCall`` parts in
``content`` and no ``toolCalls``, and the responses follow in a ``user`` record: the one
layout that 0.61 resumes with every response once, and resumes again after it rewrote the
file itself (it copies a result it finds in ``toolCalls`` back into the history on each
resume). Thoughts go back into ``thoughts``: the client does not send them to the model.
New summaries are ``user`` records. A compacted one-document chat (0.4-0.38) is written in that
older layout instead, which each of those releases resumes (0.20 reads a model turn's calls from
``toolCalls`` alone and a user record as its text, so calls in ``content`` went back as "[Function
Call: ...]" text, measured with the real 0.20.2): each call a ``toolCalls`` entry with its
``functionResponse`` parts as ``result``, no user record of responses; and the lists before the
compaction stay in ``compactctlEarlier`` (their calls were billed), which the client keeps.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from compactctl import jsonbytes
from compactctl.digests import sha256, uuid5
from compactctl.errors import InputError
from compactctl.formats.base import AutoCompact, Native, Signature, Transcript, is_unchanged, native_of
from compactctl.formats.gemini_records import NAMESPACE, chat_records, document_records, thought_text
from compactctl.formats.records import Record, collapse_text, document_layout, raw_line
from compactctl.transcript import Message, tool_calls_of

NAME = "gemini"
SIGNATURE = Signature((("projectHash",), ("sessionId",)), "a chat with 'projectHash' and 'sessionId'")
RESUMABLE = True  # ``gemini --resume`` (``compactctl.sessions.gemini``)
# Where Gemini CLI compresses on its own: ``DEFAULT_COMPRESSION_TOKEN_THRESHOLD = 0.5`` of
# ``tokenLimit(model)`` (``packages/core/src/context/chatCompressionService.ts:41``, google-gemini/gemini-cli
# @ 5411f11; the ``model.compressionThreshold`` setting defaults to 0.5 too,
# ``packages/cli/src/config/settingsSchema.ts:1116``; the 0.61.0 bundle in .ci/cache ships 0.5).
AUTO_COMPACT = AutoCompact("Gemini CLI", share=0.5, usual_window=1_000_000, provider="google")
# The field ``compact --session`` names the session that made (and billed) a response in, on each ``gemini`` record it
# copies into the new session (``compactctl.sessions.gemini``): Gemini CLI has no mark of its own for a copy.
COPIED_FROM = "compactctlCopiedFrom"
# The field of a compacted one-document chat that keeps its message lists before each compaction, oldest first (their
# usage was billed): the older layout has no lines to keep them in.
EARLIER = "compactctlEarlier"
CARRIES_USAGE = True  # a response's ``tokens`` are the API's usage of its call (``compactctl.recorded``)

# User records the client leaves out when it resumes (``isIgnoredUserContent``).
IGNORED_PREFIXES = ("/", "?", "<session_context>", "<hook_context>")


def detect(records: list[Record]) -> bool:
    for record in records[:5]:
        value = record.value
        if not isinstance(value, dict):
            return False
        if isinstance(value.get("projectHash"), str) and isinstance(value.get("sessionId"), str):
            return True
        if "$rewindTo" in value or isinstance(value.get("$set"), dict):
            return True
        if value.get("type") == "gemini" and isinstance(value.get("id"), str):
            return True
    return False


@dataclass(frozen=True)
class Source:
    """What one canonical message was read from: a message record and, for a user record, which parts."""

    record: dict[str, Any]  # the message record (its last copy)
    parts: tuple[dict[str, Any], ...] = ()  # the native parts this message holds (model parts, or user parts)


@dataclass(frozen=True)
class GeminiNative(Native[Source]):
    """What a Gemini CLI session was read from: its records, and which of its two layouts."""

    records: tuple[Record, ...] = ()
    layout: str = "jsonl"  # "json": the older one-document chat


def _parts(content: Any) -> list[dict[str, Any]]:
    """A record's content as parts (``ensurePartArray``): a string is one text part."""
    if isinstance(content, str):
        return [{"text": content}]
    if isinstance(content, dict):
        return [content]
    if isinstance(content, list):
        return [{"text": p} if isinstance(p, str) else p for p in content if isinstance(p, (str, dict))]
    return []


def _replayed(records: list[Record], path: str) -> list[dict[str, Any]]:
    """The chat's message records as the client loads them (last copy wins, rewinds, checkpoints)."""
    messages: dict[str, dict[str, Any]] = {}

    def add(value: Any) -> None:
        if isinstance(value, dict) and isinstance(value.get("id"), str):
            messages[value["id"]] = value  # an id seen before keeps its place, as in a JS Map

    for record in records:
        value = record.value
        if not isinstance(value, dict):
            raise InputError(f"expected a Gemini CLI chat record object, got {type(value).__name__}", path, record.line)
        if isinstance(value.get("$rewindTo"), str):
            ids = list(messages)
            cut = ids.index(value["$rewindTo"]) if value["$rewindTo"] in messages else 0
            for gone in ids[cut:]:
                del messages[gone]
        elif isinstance(value.get("id"), str):
            if value.get("type") is not None and not isinstance(value.get("type"), str):
                raise InputError("a message record's type must be a string", path, record.line)
            add(value)
        elif isinstance(value.get("$set"), dict):
            if isinstance(value["$set"].get("messages"), list):
                messages = {}
                for message in value["$set"]["messages"]:
                    add(message)
        elif isinstance(value.get("messages"), list):  # the header of the one-document layout holds them
            for message in value["messages"]:
                add(message)
    return list(messages.values())


def _ignored(record: dict[str, Any]) -> bool:
    """A user record the client does not send when it resumes."""
    parts = _parts(record.get("content"))
    if any(set(part) - {"text"} for part in parts):
        return False  # a response or an image reads as "[Function Response: ...]", never ignored
    return ignored_text("".join(str(part.get("text", "")) for part in parts))


def ignored_text(text: str) -> bool:
    """A user text the client does not send when it resumes: empty, a command, its own context."""
    return not text.strip() or text.strip().startswith(IGNORED_PREFIXES)


def _call(part: dict[str, Any], fallback_id: str) -> dict[str, Any]:
    call = part["functionCall"]
    call_id = call.get("id") if isinstance(call.get("id"), str) else fallback_id
    arguments = jsonbytes.dumps(call.get("args") or {}).decode()
    return {"id": call_id, "type": "function", "function": {"name": str(call.get("name", "")), "arguments": arguments}}


def _model_parts(record: dict[str, Any]) -> tuple[list[dict[str, Any]], list[str]]:
    """A ``gemini`` record's parts as the client rebuilds them (thoughts apart), and its thoughts."""
    content = [p for p in _parts(record.get("content")) if not (p.get("text") == "" and len(p) == 1)]
    in_content = [str(p.get("text", "")) for p in content if p.get("thought")]
    parts = [p for p in content if not p.get("thought")]
    # The client's own checkpoints hold the thoughts as parts too: read them once, from there.
    found = record.get("thoughts")
    metadata: list[Any] = found if isinstance(found, list) else []
    thoughts = in_content or [thought_text(t) for t in metadata if isinstance(t, dict)]
    calls = record.get("toolCalls")
    if not any("functionCall" in p for p in parts) and isinstance(calls, list):
        for call in calls:  # older records keep their calls only in toolCalls
            if isinstance(call, dict) and isinstance(call.get("name"), str):
                parts.append({"functionCall": {"id": call.get("id"), "name": call["name"], "args": call.get("args")}})
    return parts, thoughts


def _assistant(record: dict[str, Any], parts: list[dict[str, Any]], thoughts: list[str]) -> Message:
    pieces: list[dict[str, Any]] = [{"type": "thinking", "thinking": text} for text in thoughts]
    pieces += [{"type": "text", "text": p["text"]} for p in parts if isinstance(p.get("text"), str)]
    calls = [
        _call(p, f"{record['id']}-call-{n}") for n, p in enumerate(parts) if isinstance(p.get("functionCall"), dict)
    ]
    content: Any = pieces if thoughts else collapse_text(pieces) if pieces else ("" if not calls else None)
    message: Message = {"role": "assistant", "content": content}
    if calls:
        message["tool_calls"] = calls
    tokens = record.get("tokens")
    if isinstance(tokens, dict) and isinstance(tokens.get("input"), int):
        message["usage"] = {
            "input_tokens": tokens["input"],
            "output_tokens": tokens.get("output", 0),
            "cached_content_tokens": tokens.get("cached", 0),
            "thoughts_tokens": tokens.get("thoughts", 0),
            "total_tokens": tokens.get("total", 0),
        }
    return message


def _response_text(response: dict[str, Any]) -> str:
    """A ``functionResponse`` as the text of a tool message: its ``output`` (or ``error``), else its JSON."""
    body = response.get("response")
    if isinstance(body, dict) and len(body) == 1:
        (value,) = body.values()
        if isinstance(value, str):
            return value
    return json.dumps(body, ensure_ascii=False) if body is not None else ""


def _user_part(part: dict[str, Any]) -> dict[str, Any]:
    if isinstance(part.get("text"), str):
        return {"type": "text", "text": part["text"]}
    data = part.get("inlineData")
    if isinstance(data, dict) and str(data.get("mimeType", "")).startswith("image/"):
        return {"type": "image_url", "image_url": {"url": f"data:{data['mimeType']};base64,{data.get('data', '')}"}}
    return {"type": "text", "text": f"[{next(iter(part), 'part')}]"}


class _Reader:
    def __init__(self) -> None:
        self.messages: list[Message] = []
        self.units: list[Source] = []
        self.pending: dict[str, str] = {}  # calls of the last model turn not answered yet: id -> name
        self.answered: set[str] = set()

    def add(self, message: Message, unit: Source) -> None:
        self.messages.append(message)
        self.units.append(unit)

    def model(self, record: dict[str, Any], later: list[dict[str, Any]]) -> None:
        parts, thoughts = _model_parts(record)
        message = _assistant(record, parts, thoughts)
        if not parts and not thoughts:
            return  # nothing the client would send
        self.add(message, Source(record, tuple(parts)))
        self.pending = {call["id"]: call["function"]["name"] for call in tool_calls_of(message)}
        # Results the client keeps in toolCalls, for calls no user record after it answers.
        durable = {
            part["functionResponse"].get("id")
            for user in later
            for part in _parts(user.get("content"))
            if isinstance(part.get("functionResponse"), dict)
        }
        for call in record.get("toolCalls") or []:
            if isinstance(call, dict) and call.get("id") in self.pending and call["id"] not in durable:
                for part in _result_parts(call):
                    self.response(record, part)

    def response(self, record: dict[str, Any], part: dict[str, Any]) -> bool:
        """A functionResponse answering a pending call: a tool message. False when it answers nothing."""
        response = part["functionResponse"]
        call_id = response.get("id")
        if call_id in self.answered:
            return True  # a copy of a response already read: the client's duplicate
        if call_id not in self.pending:  # no id (older chats): the first unanswered call of that name
            call_id = next((c for c, name in self.pending.items() if name == response.get("name")), None)
        if call_id is None:
            return False
        self.answered.add(call_id)
        del self.pending[call_id]
        message = {"role": "tool", "tool_call_id": call_id, "content": _response_text(response)}
        self.add(message, Source(record, (part,)))
        return True

    def user(self, record: dict[str, Any]) -> None:
        rest = []
        for part in _parts(record.get("content")):
            if isinstance(part.get("functionResponse"), dict) and self.response(record, part):
                continue
            rest.append(part)
        if rest:
            self.pending = {}
            content = collapse_text([_user_part(part) for part in rest])
            self.add({"role": "user", "content": content}, Source(record, tuple(rest)))


def _result_parts(call: dict[str, Any]) -> list[dict[str, Any]]:
    """The functionResponse parts of a ``toolCalls`` entry's ``result`` (a string is its output)."""
    result = call.get("result")
    if isinstance(result, str):
        return [{"functionResponse": {"id": call.get("id"), "name": call.get("name"), "response": {"output": result}}}]
    return [p for p in _parts(result) if isinstance(p.get("functionResponse"), dict)]


def _layout(records: list[Record]) -> str:
    """``json`` for the older chat, one JSON document (pretty-printed by the client) holding the messages."""
    if len(records) != 1:
        return document_layout(records)
    first = records[0]
    whole = isinstance(first.value, dict) and isinstance(first.value.get("messages"), list)
    return "json" if whole and (first.raw is None or b"\n" in first.raw.strip()) else document_layout(records)


def read(records: list[Record], path: str) -> list[Transcript]:
    messages, units = converted(_replayed(records, path))
    native = GeminiNative(tuple(units), tuple(dict(m) for m in messages), tuple(records), _layout(records))
    return [Transcript(messages, native=native, origins=tuple(range(len(messages))))]


def converted(records: list[dict[str, Any]]) -> tuple[list[Message], list[Source]]:
    """The messages the client sends for these message records (in order), each with what it was read from."""
    chat = [m for m in records if m.get("type") in ("user", "gemini")]
    reader = _Reader()
    for n, record in enumerate(chat):
        if record["type"] == "gemini":
            later = []
            for following in chat[n + 1 :]:
                if following["type"] == "gemini":
                    break
                later.append(following)
            reader.model(record, later)
        elif not _ignored(record):
            reader.user(record)
    return reader.messages, reader.units


# -- writing --------------------------------------------------------------------------


def write(transcripts: list[Transcript]) -> bytes:
    out: list[bytes] = []
    for transcript in transcripts:
        native = native_of(transcript, GeminiNative)
        if native is None:
            out.append(new_chat(transcript.messages))
        elif is_unchanged(transcript, native):
            out.extend(r.raw if native.layout == "json" and r.raw else raw_line(r) for r in native.records)
        elif native.layout == "json":
            document = dict(native.records[0].value)
            messages = list(chat_records(transcript, native, str(document.get("sessionId", ""))))
            document["messages"] = document_records(messages, _tool_calls(native.records[0].value))
            # The lists before, as a JSON Lines chat keeps every line: their records' ``tokens`` were billed, and
            # ``compactctl.recorded.gemini`` reads each list in turn before ``messages``. The client reads
            # ``messages`` alone and writes the document back with the fields it does not know.
            earlier = native.records[0].value.get(EARLIER)
            lists = [m for m in earlier if isinstance(m, list)] if isinstance(earlier, list) else []
            document[EARLIER] = [*lists, native.records[0].value.get("messages") or []]
            out.append(json.dumps(document, indent=2, ensure_ascii=False).encode() + b"\n")
        else:
            out.extend(raw_line(record) for record in native.records)
            messages = list(chat_records(transcript, native, _session_id(native.records)))
            checkpoint: dict[str, Any] = {"messages": messages}
            updated = _last_updated(native.records)
            if updated:
                checkpoint["lastUpdated"] = updated
            out.append(jsonbytes.dumps({"$set": checkpoint}) + b"\n")
    return b"".join(out)


def _tool_calls(document: dict[str, Any]) -> dict[Any, dict[str, Any]]:
    """The document's ``toolCalls`` entries by call id, the last copy of each (the current list's)."""
    earlier = document.get(EARLIER)
    lists = [m for m in earlier if isinstance(m, list)] if isinstance(earlier, list) else []
    found: dict[Any, dict[str, Any]] = {}
    for messages in [*lists, document.get("messages") or []]:
        for record in messages if isinstance(messages, list) else []:
            for call in (record.get("toolCalls") or []) if isinstance(record, dict) else []:
                if isinstance(call, dict):
                    found[call.get("id")] = call
    return found


def _session_id(records: tuple[Record, ...]) -> str:
    values = (r.value for r in records if isinstance(r.value, dict))
    return next((v["sessionId"] for v in values if isinstance(v.get("sessionId"), str)), "")


def _last_updated(records: tuple[Record, ...]) -> str | None:
    for record in reversed(records):
        value = record.value if isinstance(record.value, dict) else {}
        found = value.get("$set", {}).get("lastUpdated") if isinstance(value.get("$set"), dict) else None
        found = found or value.get("lastUpdated") or value.get("timestamp")
        if isinstance(found, str):
            return found
    return None


def new_chat(messages: list[Message]) -> bytes:
    """A chat for messages from another format: the header, then one record a message."""
    session = str(uuid5(NAMESPACE, "session"))
    header = {
        "sessionId": session,
        "projectHash": sha256(b"compactctl").hexdigest(),  # the client requires one to load the file
        "startTime": "1970-01-01T00:00:00.000Z",
        "lastUpdated": "1970-01-01T00:00:00.000Z",
        "kind": "main",
    }
    transcript = Transcript(messages)
    records = chat_records(transcript, None, session)
    return b"".join(jsonbytes.dumps(line) + b"\n" for line in (header, *records))
