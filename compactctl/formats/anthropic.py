"""``anthropic``: Anthropic Messages, as JSON Lines of ``{role, content}`` or as request objects.

Two layouts read: one MessageParam per line (or a JSON array of them) with the system
prompt as its own ``{"system": ...}`` record, or one request object per line
(``{model, system?, messages, ...}``, each read as one transcript, its other keys kept).

``tool_use`` blocks become ``tool_calls`` (``input`` object <-> ``arguments`` string),
each ``tool_result`` block a ``tool`` message; images become ``image_url`` data URLs.
``thinking`` and ``redacted_thinking`` blocks are carried as content parts of their
assistant message, exactly as read (signature included), so strategies can count and
clear them (``clear-thinking``); a block still there is written back unmodified, in its
place, as the API requires. Claude Code sessions (``claude_code.py``) reuse this mapping.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

import orjson

from compactctl import jsonbytes
from compactctl.errors import InputError
from compactctl.formats.api_rules import ANTHROPIC_CARRIED, anthropic_violations
from compactctl.formats.base import Native, Signature, Transcript, is_unchanged, native_of, sources
from compactctl.formats.records import (
    Layout,
    Record,
    collapse_text,
    document_layout,
    dumps_document,
    raw_line,
    shape_of,
)
from compactctl.transcript import Message, content_text, function_of, is_thinking, one_of

NAME = "anthropic"
ROLES = ("user", "assistant", "system")  # a MessageParam's (the system prompt is also a field of its own)
SIGNATURE = Signature((("role",), ("content",)), "messages with 'role' user/assistant and content blocks")
OPENS_ON_USER = True  # the Messages API rejects a conversation that opens on the model's turn
UNIQUE_CALL_IDS = True  # the Messages API: "`tool_use` ids must be unique", across the request
CARRIED_PARTS = ANTHROPIC_CARRIED
violations = anthropic_violations  # its API's rules, held to what it writes

ANTHROPIC_BLOCKS = frozenset({"tool_use", "tool_result", "thinking", "redacted_thinking", "server_tool_use"})
KEPT_BLOCKS = frozenset({"thinking", "redacted_thinking"})
# The results a server tool writes into the assistant turn of its ``server_tool_use`` (by ``tool_use_id``).
SERVER_RESULTS = frozenset(
    {
        "advisor_tool_result",
        "web_search_tool_result",
        "web_fetch_tool_result",
        "code_execution_tool_result",
        "bash_code_execution_tool_result",
        "text_editor_code_execution_tool_result",
        "tool_search_tool_result",
    }
)


def _has_blocks(message: Any) -> bool:
    content = message.get("content") if isinstance(message, dict) else None
    return isinstance(content, list) and any(
        isinstance(block, dict)
        and (one_of(block.get("type"), ANTHROPIC_BLOCKS) or (block.get("type") == "image" and "source" in block))
        for block in content
    )


def _is_system_record(value: Any) -> bool:
    return isinstance(value, dict) and "system" in value and "role" not in value and "messages" not in value


def _is_request(value: Any) -> bool:
    if not isinstance(value, dict) or not isinstance(value.get("messages"), list):
        return False
    return "system" in value or "max_tokens" in value or any(_has_blocks(m) for m in value["messages"][:50])


def detect(records: list[Record]) -> bool:
    first = [record.value for record in records[:50]]
    if first and _is_request(first[0]):
        return True
    return any(_is_system_record(value) or _has_blocks(value) for value in first) and all(
        _is_system_record(value) or (isinstance(value, dict) and value.get("role") in ROLES) for value in first
    )


# -- blocks <-> canonical ---------------------------------------------------------------


def block_to_part(block: Any) -> Any:
    if not isinstance(block, dict):
        return block
    if block.get("type") == "image" and isinstance(block.get("source"), dict):
        source = block["source"]
        if source.get("type") == "base64":
            return {
                "type": "image_url",
                "image_url": {"url": f"data:{source.get('media_type')};base64,{source.get('data')}"},
            }
        if source.get("type") == "url":
            return {"type": "image_url", "image_url": {"url": source.get("url", "")}}
    if block.get("type") == "text":
        return {"type": "text", "text": block.get("text", "")}
    return block


def part_to_block(part: Any) -> Any:
    if not isinstance(part, dict):
        return part
    if part.get("type") == "image_url" and isinstance(part.get("image_url"), dict):
        url = str(part["image_url"].get("url", ""))
        if url.startswith("data:") and ";base64," in url:
            media_type, data = url[5:].split(";base64,", 1)
            return {"type": "image", "source": {"type": "base64", "media_type": media_type, "data": data}}
        return {"type": "image", "source": {"type": "url", "url": url}}
    if part.get("type") == "text":
        return {"type": "text", "text": part.get("text", "")}
    return part


def blocks_to_content(blocks: Any) -> Any:
    if not isinstance(blocks, list):
        return blocks
    return collapse_text([block_to_part(block) for block in blocks])


def content_to_blocks(content: Any) -> list[Any]:
    if content is None or content == "":
        return []
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    if not isinstance(content, list):
        raise InputError(f"a message's content is {shape_of(content)}, expected a string or a list of blocks")
    return [part_to_block(part) for part in content]


def tool_use_to_call(block: dict[str, Any]) -> dict[str, Any]:
    arguments = block.get("input", {})
    return {
        "id": block.get("id"),
        "type": "function",
        "function": {"name": block.get("name", ""), "arguments": jsonbytes.dumps(arguments).decode()},
    }


def assistant_message(blocks: Any) -> Message:
    """One canonical assistant message from an Anthropic assistant message's content."""
    if isinstance(blocks, str):
        return {"role": "assistant", "content": blocks}
    texts = [block for block in blocks if isinstance(block, dict) and block.get("type") in ("text", *KEPT_BLOCKS)]
    calls = [
        tool_use_to_call(b) for b in blocks if isinstance(b, dict) and b.get("type") in ("tool_use", "server_tool_use")
    ]
    # Thinking stays a part, in its place among the text parts (never collapsed into a string).
    content: Any = blocks_to_content(texts) if texts else None
    message: Message = {"role": "assistant", "content": content}
    if calls:
        message["tool_calls"] = calls
    return message


def user_messages(content: Any) -> list[tuple[Message, list[int]]]:
    """Canonical messages from a user message's content: tool results first, then the rest."""
    if not isinstance(content, list):
        return [({"role": "user", "content": content}, [])]
    out: list[tuple[Message, list[int]]] = []
    rest: list[int] = []
    for j, block in enumerate(content):
        if isinstance(block, dict) and block.get("type") == "tool_result":
            result = block.get("content", "")
            out.append(
                ({"role": "tool", "tool_call_id": block.get("tool_use_id"), "content": blocks_to_content(result)}, [j])
            )
        else:
            rest.append(j)
    if rest:
        out.append(({"role": "user", "content": blocks_to_content([content[j] for j in rest])}, rest))
    return out


def call_input(call: dict[str, Any], template: dict[str, Any] | None) -> Any:
    arguments = function_of(call).get("arguments", "")
    try:
        return orjson.loads(arguments) if arguments else {}
    except orjson.JSONDecodeError:
        # Arguments cut by a strategy are no longer JSON; the original object is the honest answer.
        return template.get("input", {}) if template else {"arguments": arguments}


def assistant_blocks(message: Message, template: list[Any] | None) -> list[Any]:
    """Blocks for a changed or new assistant message, from the message, in the template's order.

    A thinking block the message still carries goes back where it was, unmodified; one a
    strategy cleared is gone; text and calls come from the message.
    """
    template = template or []
    calls = {call.get("id"): call for call in message.get("tool_calls") or [] if isinstance(call, dict)}
    everything = content_to_blocks(message.get("content"))
    thinking = [block for block in everything if is_thinking(block)]
    text = [block for block in everything if not is_thinking(block)]
    blocks: list[Any] = []
    wrote_text = False
    served: set[Any] = set()  # the server tools' calls kept
    for block in template:
        kind = block.get("type") if isinstance(block, dict) else None
        if one_of(kind, KEPT_BLOCKS):
            if block in thinking:
                thinking.remove(block)
                blocks.append(block)
        elif kind == "text" and not wrote_text:
            blocks.extend(text)
            wrote_text = True
        elif kind in ("tool_use", "server_tool_use") and block.get("id") in calls:
            call = calls.pop(block["id"])
            function = function_of(call)
            blocks.append({**block, "name": function.get("name", ""), "input": call_input(call, block)})
            if kind == "server_tool_use":
                served.add(block["id"])
        elif one_of(kind, SERVER_RESULTS) and block.get("tool_use_id") in served:
            # A server tool's result (the advisor's advice) is no call of its own: it stays after its call, as
            # written, and goes with it (the API wants an advisor_tool_result after its server_tool_use).
            blocks.append(block)
    if not wrote_text:
        position = next((i for i, b in enumerate(blocks) if b.get("type") not in KEPT_BLOCKS), len(blocks))
        blocks[position:position] = text
    blocks[0:0] = thinking  # a new message's thinking opens it, as the API writes it
    for call in calls.values():
        function = function_of(call)
        blocks.append(
            {
                "type": "tool_use",
                "id": call.get("id"),
                "name": function.get("name", ""),
                "input": call_input(call, None),
            }
        )
    return blocks


def tool_result_block(message: Message, template: dict[str, Any] | None) -> dict[str, Any]:
    content = message.get("content")
    native = content if isinstance(content, str) or content is None else content_to_blocks(content)
    block = {
        **(template or {"type": "tool_result"}),
        "tool_use_id": message.get("tool_call_id"),
        "content": native or "",
    }
    return block


def system_text(value: Any) -> Any:
    return blocks_to_content(value) if isinstance(value, list) else value


# -- reading --------------------------------------------------------------------------

SYSTEM = -1  # Param.index of a request's system prompt


@dataclass(frozen=True)
class Param:
    """What one canonical message was read from."""

    index: int  # the MessageParam or system record: a line of the file, or one of a request's messages
    blocks: tuple[int, ...] | None = None  # the user content blocks it holds; None: the whole content


@dataclass(frozen=True)
class AnthropicNative(Native[Param]):
    """What an Anthropic file holds besides the messages: its records and layout."""

    records: tuple[Record, ...] = ()  # the file's lines (a request's messages live in its envelope)
    layout: Layout = "jsonl"
    raw: bytes | None = None  # a request's line as read


def _read_params(
    params: list[tuple[int, Any]], path: str, line_of: dict[int, int]
) -> tuple[list[Message], list[Param]]:
    """Canonical messages from (index, MessageParam or system record) pairs, and what each came from."""
    messages: list[Message] = []
    units: list[Param] = []
    for index, value in params:
        line = line_of.get(index)
        if _is_system_record(value):
            messages.append({"role": "system", "content": system_text(value["system"])})
            units.append(Param(index))
            continue
        if not isinstance(value, dict) or value.get("role") not in ROLES:
            role = value.get("role") if isinstance(value, dict) else type(value).__name__
            raise InputError(
                f"expected an Anthropic message with role user, assistant or system, got {role!r}", path, line
            )
        content = value.get("content")
        if not isinstance(content, (str, list)):
            raise InputError(f"{value['role']} content must be a string or a list of blocks", path, line)
        if value["role"] == "system":  # instructions in the conversation, where they were given
            messages.append({"role": "system", "content": blocks_to_content(content)})
            units.append(Param(index))
            continue
        if value["role"] == "assistant":
            messages.append(assistant_message(content))
            units.append(Param(index))
            continue
        for message, blocks in user_messages(content):
            messages.append(message)
            units.append(Param(index, tuple(blocks) if isinstance(content, list) else None))
    return messages, units


def _transcript(messages: list[Message], units: list[Param], **native: Any) -> Transcript:
    state = AnthropicNative(tuple(units), tuple(dict(m) for m in messages), **native)
    return Transcript(messages, native=state, origins=tuple(range(len(messages))))


def read(records: list[Record], path: str) -> list[Transcript]:
    if records and _is_request(records[0].value):
        transcripts = []
        for record in records:
            request = record.value
            if not _is_request(request):
                raise InputError("expected an Anthropic request object with a 'messages' list", path, record.line)
            params = list(enumerate(request["messages"]))
            if "system" in request:
                params.insert(0, (SYSTEM, {"system": request["system"]}))
            transcript = _transcript(*_read_params(params, path, {}), raw=record.raw)
            label = f"line {record.line}" if len(records) > 1 else ""
            transcripts.append(dataclasses.replace(transcript, label=label, envelope=request))
        return transcripts
    params = [(i, r.value) for i, r in enumerate(records)]
    messages, units = _read_params(params, path, {i: r.line for i, r in enumerate(records)})
    return [_transcript(messages, units, records=tuple(records), layout=document_layout(records))]


# -- writing --------------------------------------------------------------------------


def _native_param(transcript: Transcript, native: AnthropicNative, index: int) -> Any:
    envelope = transcript.envelope
    if envelope is not None:
        return {"system": envelope.get("system")} if index == SYSTEM else envelope["messages"][index]
    return native.records[index].value


@dataclass
class _Param:
    """A MessageParam being written: consecutive user messages from one param (or tool results) join."""

    index: int | None  # the param read, when it is written back as read
    role: str  # "prompt" (the system prompt's record), "system" (a system message), "assistant" or "user"
    blocks: list[Any]
    messages: list[Message]
    unchanged: bool  # every message in it is as read


def params_of(transcript: Transcript) -> list[tuple[int | None, dict[str, Any]]]:
    """(record index when written back as read, else None; MessageParam or system record)."""
    native = native_of(transcript, AnthropicNative)
    groups: list[_Param] = []
    for message, unit, same in sources(transcript, native):
        role = message.get("role")
        index = unit.index if unit is not None else None
        param = _native_param(transcript, native, index) if native is not None and index is not None else None
        if role in ("system", "developer") and param is not None and param.get("role") == "system":
            kept = param.get("content")
            given = (kept if isinstance(kept, list) else [kept]) if same else content_to_blocks(message.get("content"))
            groups.append(_Param(index, "system", list(given), [message], same))
            continue
        if role in ("system", "developer"):
            groups.append(_Param(index if same else None, "prompt", [message], [message], same))
            continue
        if role == "assistant":
            template = param.get("content") if param else None
            blocks = template if same else assistant_blocks(message, template if isinstance(template, list) else None)
            groups.append(_Param(index, "assistant", blocks if isinstance(blocks, list) else [blocks], [message], same))
            continue
        block_indices = unit.blocks if unit is not None else None
        if role == "tool":
            template = param["content"][block_indices[0]] if param and block_indices else None
            blocks = [template if same else tool_result_block(message, template)]
        elif same and param is not None:
            native_content = param["content"]
            blocks = [native_content[j] for j in block_indices] if block_indices is not None else [native_content]
        else:
            blocks = (
                content_to_blocks(message.get("content"))
                if role == "user"
                else [{"type": "text", "text": str(message.get("content") or "")}]
            )
        last = groups[-1] if groups else None
        only_results = last is not None and all(
            isinstance(b, dict) and b.get("type") == "tool_result" for b in last.blocks
        )
        if (
            last is not None
            and last.role == "user"
            and ((index is not None and last.index == index) or (role == "tool" and only_results))
        ):
            last.blocks.extend(blocks)
            last.messages.append(message)
            last.unchanged = last.unchanged and same
        else:
            groups.append(_Param(index, "user", blocks, [message], same))
    out: list[tuple[int | None, dict[str, Any]]] = []
    for group in groups:
        if group.role == "prompt":  # the system prompt's record (a new system message goes there too)
            text = group.messages[0].get("content")
            out.append((group.index, {"system": text if isinstance(text, str) else content_to_blocks(text)}))
            continue
        index = group.index
        param = _native_param(transcript, native, index) if native is not None and index is not None else None
        content: Any = group.blocks
        if len(group.blocks) == 1 and isinstance(group.blocks[0], str):
            content = group.blocks[0]
        written = {**(param or {}), "role": group.role, "content": content}
        out.append((index if param is not None and written == param and group.unchanged else None, written))
    return out


def write(transcripts: list[Transcript]) -> bytes:
    lines: list[bytes] = []
    layout = "jsonl"
    for transcript in transcripts:
        if transcript.envelope is not None:
            lines.append(_write_request(transcript))
            continue
        native = native_of(transcript, AnthropicNative)
        records = native.records if native is not None else ()
        layout = native.layout if native is not None else layout
        if is_unchanged(transcript, native):
            lines.extend(raw_line(record) for record in records)
            continue
        for index, param in params_of(transcript):
            lines.append(raw_line(records[index]) if index is not None else jsonbytes.dumps(param) + b"\n")
    if layout == "json":
        return dumps_document([orjson.loads(line) for line in lines])
    return b"".join(lines)


def _write_request(transcript: Transcript) -> bytes:
    native = native_of(transcript, AnthropicNative)
    if native is not None and native.raw is not None and is_unchanged(transcript, native):
        return native.raw + b"\n"
    request = dict(transcript.envelope or {})
    params = params_of(transcript)
    systems = [param["system"] for _, param in params if "system" in param and "role" not in param]
    request["messages"] = [param for _, param in params if "role" in param]
    if len(systems) == 1:
        request["system"] = systems[0]
    elif systems:
        # A request has one system prompt: a summary placed after it joins it there.
        request["system"] = "\n\n".join(s if isinstance(s, str) else content_text({"content": s}) for s in systems)
    return jsonbytes.dumps(request) + b"\n"
