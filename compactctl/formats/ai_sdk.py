"""``ai-sdk``: Vercel AI SDK ``UIMessage`` arrays (``packages/ai/src/ui/ui-messages.ts``), read and write.

A UIMessage is ``{id, role, metadata?, parts}``; an assistant UIMessage holds a whole agent
turn, its model calls separated by ``step-start`` parts. Each step becomes one canonical
assistant message (text parts as content, finished tool parts as ``tool_calls``) followed
by one ``tool`` message per finished tool part (``output-available``: its output;
``output-error``: its ``errorText``). Tool parts still waiting (``input-streaming``,
``input-available``, ``approval-*``), reasoning, files, sources and ``data-*`` parts stay in
the content as the parts they are, and are written back as they were.

The file is a JSON array (as ``JSON.stringify(messages)`` saves it) or one UIMessage per
line. Written as ``JSON.stringify`` writes (compact), so an unchanged file saved that way
comes back byte for byte; a changed one keeps every untouched
UIMessage and step as read, and rebuilds only what a strategy changed (a pruned tool
output replaces the part's ``output``).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import orjson

from compactctl import jsonbytes
from compactctl.errors import InputError
from compactctl.formats.base import Native, Signature, Transcript, is_unchanged, native_of, sources
from compactctl.formats.records import Layout, Record, collapse_text, document_layout
from compactctl.transcript import Message, function_of

NAME = "ai-sdk"
SIGNATURE = Signature((("id",), ("role",), ("parts",)), "UIMessage objects with 'id', 'role' and 'parts'")
UI_ROLES = ("system", "user", "assistant")
FINISHED = frozenset({"output-available", "output-error"})
KNOWN_PARTS = frozenset(
    {"text", "reasoning", "file", "source-url", "source-document", "step-start", "dynamic-tool", "reasoning-file"}
)


@dataclass(frozen=True)
class Unit:
    """What a canonical message was read from: a UIMessage, and for an assistant step its parts."""

    message: int  # index of the UIMessage
    parts: tuple[int, ...] = ()  # the step's parts (all of them for a user or system message)
    step_start: bool = False  # the step began with a ``step-start`` part
    tool_call_id: str | None = None  # for a tool message: the tool part it is the result of


@dataclass(frozen=True)
class AiSdkNative(Native[Unit]):
    """What an AI SDK file was read from: its UIMessages as read, and whether it was one JSON document."""

    messages: tuple[dict[str, Any], ...] = ()  # the UIMessages as read
    layout: Layout = "json"


def _is_tool(part: dict[str, Any]) -> bool:
    kind = str(part.get("type", ""))
    return kind.startswith("tool-") or kind == "dynamic-tool"


def _is_ui_message(value: Any) -> bool:
    if not isinstance(value, dict) or value.get("role") not in UI_ROLES or "id" not in value:
        return False
    parts = value.get("parts")
    return isinstance(parts, list) and all(
        isinstance(p, dict) and (p.get("type") in KNOWN_PARTS or _is_tool(p) or str(p.get("type")).startswith("data-"))
        for p in parts
    )


def detect(records: list[Record]) -> bool:
    return bool(records) and all(_is_ui_message(record.value) for record in records[:20])


# -- reading ----------------------------------------------------------------------------------


def tool_name(part: dict[str, Any]) -> str:
    return str(part.get("toolName", "")) if part.get("type") == "dynamic-tool" else str(part["type"])[len("tool-") :]


def _arguments(value: Any) -> str:
    return jsonbytes.dumps_text(value if value is not None else {})


def _output_text(part: dict[str, Any]) -> str:
    if part.get("state") == "output-error":
        return str(part.get("errorText", ""))
    output = part.get("output")
    return output if isinstance(output, str) else jsonbytes.dumps_text(output)


def _user_part(part: dict[str, Any]) -> dict[str, Any]:
    if part.get("type") == "text":
        return {"type": "text", "text": str(part.get("text", ""))}
    if part.get("type") == "file" and str(part.get("mediaType", "")).startswith("image/"):
        return {"type": "image_url", "image_url": {"url": str(part.get("url", ""))}}
    return part


def _steps(parts: list[dict[str, Any]]) -> Iterator[tuple[tuple[int, ...], bool]]:
    """The assistant's parts split at ``step-start``: (part indexes without it, whether it began one)."""
    current: list[int] = []
    started = False
    for index, part in enumerate(parts):
        if part.get("type") == "step-start":
            if current or started:
                yield tuple(current), started
            current, started = [], True
        else:
            current.append(index)
    if current or started:
        yield tuple(current), started


def _check(value: Any, position: int, path: str, line: int) -> dict[str, Any]:
    where = f"message {position}"
    if not isinstance(value, dict):
        raise InputError(f"{where}: expected a UIMessage object, got {type(value).__name__}", path, line)
    where = f"message {position} (id {value.get('id')!r})"
    if value.get("role") not in UI_ROLES:
        raise InputError(
            f"{where}: unknown role {value.get('role')!r} (expected system, user or assistant)", path, line
        )
    if not isinstance(value.get("parts"), list):
        raise InputError(f"{where}: 'parts' is not a list", path, line)
    for index, part in enumerate(value["parts"]):
        if not isinstance(part, dict) or not isinstance(part.get("type"), str):
            raise InputError(f"{where}: parts[{index}] is not a part with a 'type'", path, line)
        if _is_tool(part) and not isinstance(part.get("toolCallId"), str):
            raise InputError(f"{where}: parts[{index}] ({part['type']}) has no toolCallId", path, line)
    return value


def read(records: list[Record], path: str) -> list[Transcript]:
    ui_messages = [_check(record.value, n, path, record.line) for n, record in enumerate(records)]
    messages: list[Message] = []
    units: list[Unit] = []
    for index, ui in enumerate(ui_messages):
        parts = ui["parts"]
        if ui["role"] != "assistant":
            text = collapse_text([_user_part(part) for part in parts])
            messages.append({"role": ui["role"], "content": text if parts else ""})
            units.append(Unit(index, tuple(range(len(parts)))))
            continue
        for step, started in _steps(parts):
            content: list[Any] = []
            calls: list[dict[str, Any]] = []
            results: list[tuple[Message, Unit]] = []
            for part in (parts[i] for i in step):
                if part.get("type") == "text":
                    content.append({"type": "text", "text": str(part.get("text", ""))})
                elif _is_tool(part) and part.get("state") in FINISHED:
                    call_id = part["toolCallId"]
                    function = {"name": tool_name(part), "arguments": _arguments(part.get("input"))}
                    calls.append({"id": call_id, "type": "function", "function": function})
                    result = {"role": "tool", "tool_call_id": call_id, "content": _output_text(part)}
                    results.append((result, Unit(index, tool_call_id=call_id)))
                else:
                    content.append(part)  # reasoning, files, sources, data, tools still waiting: as they are
            message: Message = {"role": "assistant", "content": collapse_text(content) if content else None}
            if calls:
                message["tool_calls"] = calls
            messages.append(message)
            units.append(Unit(index, step, started))
            for result, unit in results:
                messages.append(result)
                units.append(unit)
    native = AiSdkNative(
        tuple(units), tuple(dict(m) for m in messages), messages=tuple(ui_messages), layout=document_layout(records)
    )
    return [Transcript(messages, native=native, origins=tuple(range(len(messages))))]


# -- writing ----------------------------------------------------------------------------------


def _text_part(text: str, template: dict[str, Any] | None) -> dict[str, Any]:
    return {**(template or {}), "type": "text", "text": text}


def _content_parts(content: Any, template: dict[str, Any] | None, role: str) -> list[dict[str, Any]]:
    if content is None or content == "":
        return []
    if isinstance(content, str):
        return [_text_part(content, template)]
    parts = []
    for part in content:
        if not isinstance(part, dict):
            continue
        if part.get("type") == "text":
            parts.append(_text_part(str(part.get("text", "")), template))
        elif part.get("type") == "image_url" and role == "user":
            url = (part.get("image_url") or {}).get("url", "")
            parts.append({"type": "file", "mediaType": _media_type(url), "url": url})
        else:
            parts.append(part)
    return parts


def _media_type(url: str) -> str:
    return url[len("data:") : url.index(";")] if url.startswith("data:") and ";" in url else "image/png"


def _tool_part(call: dict[str, Any], originals: dict[str, dict[str, Any]]) -> dict[str, Any]:
    found = originals.get(str(call.get("id")))
    if found is not None:
        return dict(found)
    function = function_of(call)
    try:
        arguments = orjson.loads(function.get("arguments") or "{}")
    except orjson.JSONDecodeError:
        arguments = function.get("arguments")
    return {
        "type": f"tool-{function.get('name', '')}",
        "toolCallId": call.get("id"),
        "state": "input-available",
        "input": arguments,
    }


def _with_result(part: dict[str, Any], content: Any) -> dict[str, Any]:
    text = content if isinstance(content, str) else jsonbytes.dumps_text(content)
    if part.get("state") == "output-error":
        return {**part, "errorText": text}
    rest = {key: value for key, value in part.items() if key != "errorText"}
    if part.get("state") == "output-available" and not isinstance(part.get("output"), str):
        try:  # an output that was JSON and still parses as JSON stays JSON
            return {**rest, "output": orjson.loads(text)}
        except orjson.JSONDecodeError:
            pass
    return {**rest, "state": "output-available", "output": text}


class _Writer:
    def __init__(self, native: AiSdkNative | None) -> None:
        self.native = native
        self.out: list[dict[str, Any]] = []
        self.current: int | None = None  # the UIMessage (as read) the last one written came from
        self.ids = itertools.count(1)

    def start(self, role: str, unit: Unit | None) -> dict[str, Any]:
        if unit is not None and self.native is not None:
            if self.current != unit.message or not self.out:
                self.out.append({**self.native.messages[unit.message], "parts": []})
                self.current = unit.message
            return self.out[-1]
        ui_role = "system" if role in ("system", "developer") else "user" if role == "user" else "assistant"
        if not (ui_role == "assistant" and self.out and self.out[-1]["role"] == "assistant"):
            self.out.append({"id": f"msg-{next(self.ids)}", "role": ui_role, "parts": []})
            self.current = None
        return self.out[-1]

    def add(self, message: Message, unit: Unit | None, same: bool) -> None:
        role = message.get("role", "user")
        ui = self.start(role, unit)
        original = self.native.messages[unit.message]["parts"] if unit is not None and self.native else []
        if role == "tool":
            self._result(ui, message, same)
            return
        if same and unit is not None:
            ui["parts"].extend(
                [*([{"type": "step-start"}] if unit.step_start else []), *(original[i] for i in unit.parts)]
            )
            return
        step = [original[i] for i in unit.parts] if unit is not None else []
        template = next(({k: v for k, v in p.items() if k != "text"} for p in step if p.get("type") == "text"), None)
        if role == "assistant" and (unit is None or unit.step_start):
            ui["parts"].append({"type": "step-start"})
        ui["parts"].extend(_content_parts(message.get("content"), template, role))
        tools = {str(p.get("toolCallId")): p for p in step if _is_tool(p)}
        ui["parts"].extend(_tool_part(call, tools) for call in message.get("tool_calls") or [])

    def _result(self, ui: dict[str, Any], message: Message, same: bool) -> None:
        call_id = message.get("tool_call_id")
        for position, part in enumerate(ui["parts"]):
            if _is_tool(part) and part.get("toolCallId") == call_id:
                if not same:
                    ui["parts"][position] = _with_result(part, message.get("content"))
                return
        # A result whose call is not in this UIMessage: no part to hold it, so it becomes text.
        ui["parts"].append({"type": "text", "text": str(message.get("content") or "")})


def write(transcripts: list[Transcript]) -> bytes:
    out: list[dict[str, Any]] = []
    layout: Layout = "json"
    for transcript in transcripts:
        native = native_of(transcript, AiSdkNative)
        if native is not None and is_unchanged(transcript, native):
            out.extend(native.messages)
            layout = native.layout
            continue
        layout = native.layout if native is not None else layout
        writer = _Writer(native)
        for message, unit, same in sources(transcript, native):
            writer.add(message, unit, same)
        out.extend(writer.out)
    if layout == "jsonl":
        return b"".join(jsonbytes.dumps(message) + b"\n" for message in out)
    return jsonbytes.dumps(out) + b"\n"  # as JSON.stringify(messages) saves them, plus a final newline
