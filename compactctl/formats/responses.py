"""``responses``: OpenAI Responses API input items, one per line or one JSON array.

Messages become canonical messages; an assistant message and the ``function_call`` /
``custom_tool_call`` items after it become one assistant message with ``tool_calls``;
``*_output`` items become ``tool`` messages. A ``reasoning`` item before an assistant
message (or its calls) is carried whole as the first content part of that message, so
strategies can count and clear it (``clear-thinking``); one still there is written back
unmodified, before its message, as a reasoning item must be passed back with its
following item. ``compaction`` and every other item the model reads but compactctl
cannot count are kept opaque: they travel with the message after them and are written
back unmodified. Codex rollouts (``codex.py``) reuse this mapping.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import orjson

from compactctl import jsonbytes
from compactctl.errors import InputError
from compactctl.formats.api_rules import RESPONSES_CARRIED, responses_violations
from compactctl.formats.base import Native, Signature, Transcript, is_unchanged, native_of, sources
from compactctl.formats.records import (
    Layout,
    Record,
    annotate,
    collapse_text,
    document_layout,
    dumps_document,
    raw_line,
)
from compactctl.transcript import ROLES, Message, function_of, is_thinking, one_of

NAME = "responses"
SIGNATURE = Signature((("type",), ("role", "call_id", "output")), "Responses items with a 'type'")
CARRIED_PARTS = RESPONSES_CARRIED
violations = responses_violations  # its API's rules, held to what it writes

CALLS = {"function_call": "arguments", "custom_tool_call": "input", "tool_search_call": "arguments"}
OUTPUTS = {
    "function_call_output": "function_call",
    "custom_tool_call_output": "custom_tool_call",
    "tool_search_output": "tool_search_call",
}
# A tool search (gpt-5.4+; Codex 0.171 defers MCP tools behind it): the call's ``arguments`` is an object, and
# its output's ``tools`` are the schemas of the tools it loaded, sent to the model on every later call. They are
# read as a tool call and its tool message (the schemas as JSON text), so every count of the model's input
# counts them, and written back as the items they were.
TOOL_SEARCH = "tool_search_call"
TOOL_SEARCH_NAME = "tool_search"
# Codex's multi-agent messages (0.171, ``multi_agent_v2``): a task one agent sends another, a subagent's answer to
# its parent; sent to the model as input items of their own (``author``, ``recipient``, input parts). Read as a
# user message, the input they are, and written back as the item they were.
AGENT_MESSAGE = "agent_message"
ITEM_TYPES = frozenset(
    {
        "message",
        *CALLS,
        *OUTPUTS,
        "reasoning",
        "compaction",
        "compaction_summary",
        "local_shell_call",
        "local_shell_call_output",
        "web_search_call",
        "file_search_call",
        "computer_call",
        "computer_call_output",
        "image_generation_call",
        "code_interpreter_call",
        "mcp_list_tools",
        "mcp_approval_request",
        "mcp_approval_response",
        "mcp_call",
        "item_reference",
        "ghost_snapshot",
        AGENT_MESSAGE,
    }
)
RESPONSES_PARTS = frozenset({"input_text", "output_text", "input_image", "input_file"})
TEXT_PARTS = frozenset({"input_text", "output_text", "text"})
# Harness text Codex and other agents inject as user/developer messages.
HARNESS_PREFIXES = (
    "<environment_context>",
    "<user_instructions>",
    "<permissions instructions>",
    "<collaboration_mode>",
    "# AGENTS.md instructions",
    "<INSTRUCTIONS>",
    "<model_switch>",
    "<turn_aborted>",
    "<user_shell_command>",
)


def is_item(value: Any) -> bool:
    if not isinstance(value, dict) or "payload" in value:
        return False
    kind = value.get("type")
    if one_of(kind, ITEM_TYPES) and (kind != "message" or "role" in value):
        return True
    content = value.get("content")
    return (
        "role" in value
        and isinstance(content, list)
        and any(isinstance(part, dict) and one_of(part.get("type"), RESPONSES_PARTS) for part in content)
    )


def detect(records: list[Record]) -> bool:
    return any(is_item(record.value) for record in records[:20])


# -- parts ----------------------------------------------------------------------------


def part_to_canonical(part: Any) -> Any:
    if not isinstance(part, dict):
        return part
    kind = part.get("type")
    if one_of(kind, TEXT_PARTS):
        return {"type": "text", "text": part.get("text", "")}
    if kind == "input_image" and isinstance(part.get("image_url"), str):
        image = {"url": part["image_url"]}
        if part.get("detail"):
            image["detail"] = part["detail"]
        return {"type": "image_url", "image_url": image}
    return part


def content_to_canonical(content: Any) -> Any:
    """Text parts become one string where there is just one; images become ``image_url`` parts."""
    if not isinstance(content, list):
        return content
    return collapse_text([part_to_canonical(part) for part in content])


def part_to_native(part: Any, text_type: str, text_template: dict[str, Any]) -> Any:
    if not isinstance(part, dict):
        return part
    kind = part.get("type")
    if kind == "text":
        return {**text_template, "type": text_type, "text": part.get("text", "")}
    if kind == "image_url" and isinstance(part.get("image_url"), dict):
        image = part["image_url"]
        return {"type": "input_image", "image_url": image.get("url", ""), "detail": image.get("detail", "auto")}
    return part


def content_to_native(content: Any, text_type: str, template: Any = None) -> list[Any]:
    text_template = next(
        (
            {key: value for key, value in part.items() if key not in ("type", "text")}
            for part in (template if isinstance(template, list) else [])
            if isinstance(part, dict) and part.get("type") == text_type
        ),
        {},
    )
    if content is None:
        return []
    if isinstance(content, str):
        return [{**text_template, "type": text_type, "text": content}]
    return [part_to_native(part, text_type, text_template) for part in content]


def output_to_native(content: Any) -> Any:
    """A tool output stays a string where it can; parts become input parts."""
    if content is None or isinstance(content, str):
        return content or ""
    return content_to_native(content, "input_text")


# -- reading --------------------------------------------------------------------------


@dataclass(frozen=True)
class Item:
    """One native item a message was read from."""

    value: dict[str, Any]
    record: int | None = None  # the line holding exactly this item, written back byte for byte


Unit = tuple[Item, ...]  # the items one canonical message was read from, opaque ones before it included


@dataclass(frozen=True)
class ResponsesNative(Native[Unit]):
    """What a Responses file was read from: its records, the items after the last message, its layout."""

    trailing: Unit = ()  # opaque items after the last message
    records: tuple[Record, ...] = ()
    layout: Layout = "jsonl"


class ItemReader:
    """Builds canonical messages from items fed in order, remembering each message's items."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.messages: list[Message] = []
        self.origins: list[int] = []  # per message: its index in ``units``
        self.units: list[list[Item]] = []
        self.pending: list[Item] = []  # opaque items waiting for the message they precede
        self.open_assistant: int | None = None  # the assistant message calls still join

    def add(self, message: Message, unit: list[Item], **annotations: Any) -> Message:
        if message.get("role") == "assistant":
            reasoning = [item.value for item in self.pending if item.value.get("type") == "reasoning"]
            if reasoning:
                message["content"] = [*reasoning, *_parts(message.get("content"))]
        self.origins.append(len(self.units))
        self.units.append([*self.pending, *unit])
        self.pending = []
        self.messages.append(annotate(message, **annotations))
        return message

    def restart(self, kept: Sequence[int]) -> None:
        """Only the messages at positions ``kept`` stay live (a checkpoint replaced the rest)."""
        self.messages = [self.messages[i] for i in kept]
        self.origins = [self.origins[i] for i in kept]
        self.open_assistant = None

    def feed(self, item: Any, item_of: Item | None = None, line: int | None = None) -> None:
        """Read one item; ``item_of`` is how the writer finds it again (default: the item itself)."""
        if not isinstance(item, dict):
            raise InputError(f"expected a Responses item object, got {type(item).__name__}", self.path, line)
        native = item_of if item_of is not None else Item(item)
        kind = item.get("type", "message" if "role" in item else None)
        if kind == "message":
            self._message(item, native, line)
        elif kind == AGENT_MESSAGE:
            self.open_assistant = None
            self.add({"role": "user", "content": content_to_canonical(item.get("content"))}, [native])
        elif one_of(kind, CALLS):
            self._call(item, native, str(kind))
        elif context_output(item):
            self.open_assistant = None
            self.add({"role": "user", "content": output_content(item)}, [native], kind="harness")
        elif one_of(kind, OUTPUTS):
            self.open_assistant = None
            self.add({"role": "tool", "tool_call_id": item.get("call_id"), "content": output_content(item)}, [native])
        else:
            if kind == "reasoning":
                self.open_assistant = None  # a new model call starts
            self.pending.append(native)

    def _message(self, item: dict[str, Any], native: Item, line: int | None) -> None:
        role = item.get("role")
        if not one_of(role, ROLES) or role == "tool":
            raise InputError(f"message item has unknown role {str(role)[:60]!r}", self.path, line)
        content = content_to_canonical(item.get("content"))
        if content is not None and not isinstance(content, (str, list)):
            raise InputError(f"{role} message content is {type(content).__name__}", self.path, line)
        at = self.open_assistant
        joined = self.messages[at] if at is not None else None
        if role == "assistant" and at is not None and joined is not None and not _said(joined):
            # The calls came first in the response and its text after them (the API pairs outputs by call_id, and
            # a model may write so): one turn, its items kept in their order for the writer.
            reasoning = _parts(joined.get("content"))
            joined["content"] = [*reasoning, *_parts(content)] if reasoning else content
            self.units[self.origins[at]].extend([*self.pending, native])
            self.pending = []
            return
        message: Message = {"role": role, "content": content}
        annotations = {}
        if role in ("user", "developer") and is_harness(content):
            annotations["kind"] = "harness"
        self.add(message, [native], **annotations)
        self.open_assistant = len(self.messages) - 1 if role == "assistant" else None

    def _call(self, item: dict[str, Any], native: Item, kind: str) -> None:
        arguments = item.get(CALLS[kind])
        call = {
            "id": item.get("call_id"),
            "type": "function",
            "function": {
                "name": item.get("name", TOOL_SEARCH_NAME if kind == TOOL_SEARCH else ""),
                "arguments": arguments if isinstance(arguments, str) else jsonbytes.dumps(arguments).decode(),
            },
        }
        if self.open_assistant is None:
            self.add({"role": "assistant", "content": None, "tool_calls": [call]}, [native])
            self.open_assistant = len(self.messages) - 1
            return
        message = self.messages[self.open_assistant]
        message.setdefault("tool_calls", []).append(call)
        self.units[self.origins[self.open_assistant]].extend([*self.pending, native])
        self.pending = []

    def finish(self) -> tuple[tuple[Unit, ...], tuple[Message | None, ...]]:
        """The native units and the messages as read, indexed alike."""
        # Messages a Codex ``compacted`` line replaced have no original.
        originals: list[Message | None] = [None] * len(self.units)
        for message, index in zip(self.messages, self.origins, strict=True):
            originals[index] = _copy(message)
        return tuple(tuple(unit) for unit in self.units), tuple(originals)


def _said(message: Message) -> bool:
    """Whether a message holds text or parts beyond its reasoning."""
    return any(not is_thinking(part) for part in _parts(message.get("content")))


def _parts(content: Any) -> list[Any]:
    if content is None or content == "":
        return []
    return [{"type": "text", "text": content}] if isinstance(content, str) else list(content)


def _copy(message: Message) -> Message:
    # Strategies never mutate their input, so a shallow copy with copied call lists is enough
    # to compare against later.
    copied = dict(message)
    if "tool_calls" in copied:
        copied["tool_calls"] = list(copied["tool_calls"])
    return copied


def is_harness(content: Any) -> bool:
    text = content if isinstance(content, str) else ""
    if isinstance(content, list) and content and isinstance(content[0], dict):
        text = str(content[0].get("text", ""))
    return text.lstrip().startswith(HARNESS_PREFIXES)


def read(records: list[Record], path: str) -> list[Transcript]:
    reader = ItemReader(path)
    for index, record in enumerate(records):
        value = record.value
        reader.feed(value, Item(value, index) if isinstance(value, dict) else None, record.line)
    units, originals = reader.finish()
    native = ResponsesNative(
        units, originals, tuple(reader.pending), records=tuple(records), layout=document_layout(records)
    )
    return [Transcript(reader.messages, native=native, origins=tuple(reader.origins))]


# -- writing --------------------------------------------------------------------------


def message_items(message: Message, unit: Unit | None, system_role: str = "system") -> list[dict[str, Any]]:
    """Native items for a changed or new message, keeping what its original items had."""
    values = [item.value for item in unit or ()]
    role = message.get("role")
    opaque = [item for item in values if item.get("type") not in ("message", AGENT_MESSAGE, *CALLS, *OUTPUTS)]
    if role == "tool":
        output = next((item for item in values if one_of(item.get("type"), OUTPUTS)), {"type": "function_call_output"})
        if output.get("type") == "tool_search_output":
            return [*opaque, {**output, "call_id": message.get("tool_call_id"), "tools": _tools(message, output)}]
        return [
            *opaque,
            {**output, "call_id": message.get("tool_call_id"), "output": output_to_native(message.get("content"))},
        ]
    if role == "assistant":
        return _assistant_items(message, values)
    named = next((item for item in values if context_output(item)), None)
    if named is not None:  # the client's own context as the named output it was
        return [*opaque, {**named, "output": output_to_native(message.get("content"))}]
    found = next((item for item in values if item.get("type") in ("message", AGENT_MESSAGE)), None)
    template: dict[str, Any] = (
        {"type": "message", "role": system_role if role == "system" else role}
        if found is None
        else found  # an agent_message keeps its author and recipient, and has no role
        if found.get("type") == AGENT_MESSAGE
        else {**found, "role": role}
    )
    return [
        *opaque,
        {**template, "content": content_to_native(message.get("content"), "input_text", template.get("content"))},
    ]


def _assistant_items(message: Message, unit: list[dict[str, Any]]) -> list[dict[str, Any]]:
    calls = {call.get("id"): call for call in message.get("tool_calls") or [] if isinstance(call, dict)}
    content = message.get("content")
    reasoning: list[Any] = []
    if isinstance(content, list):
        # Reasoning parts go back as items (in their place); the rest is the message's text.
        reasoning = [part for part in content if is_thinking(part)]
        if reasoning:
            content = collapse_text([part for part in content if not is_thinking(part)]) or None
    items: list[dict[str, Any]] = [part for part in reasoning if not any(part == item for item in unit)]
    wrote_text = False
    for item in unit:
        kind = item.get("type", "message")
        if kind == "reasoning":
            if item in reasoning:
                items.append(item)
        elif kind == "message":
            if not wrote_text and content not in (None, "", []):
                items.append({**item, "content": content_to_native(content, "output_text", item.get("content"))})
            wrote_text = True
        elif one_of(kind, CALLS):
            call = calls.pop(item.get("call_id"), None)
            if call is not None and kind == TOOL_SEARCH:
                items.append({**item, "arguments": _object(function_of(call).get("arguments"), item.get("arguments"))})
            elif call is not None:
                function = function_of(call)
                items.append({**item, "name": function.get("name", ""), CALLS[kind]: function.get("arguments", "")})
        elif kind not in OUTPUTS:
            items.append(item)
    if not wrote_text and content not in (None, "", []):
        text = {"type": "message", "role": "assistant", "content": content_to_native(content, "output_text")}
        position = next((i for i, item in enumerate(items) if one_of(item.get("type"), CALLS)), len(items))
        items.insert(position, text)
    for call in calls.values():
        function = function_of(call)
        items.append(
            {
                "type": "function_call",
                "call_id": call.get("id"),
                "name": function.get("name", ""),
                "arguments": function.get("arguments", ""),
            }
        )
    return items


def context_output(item: dict[str, Any]) -> bool:
    """A named output of no call: Codex 0.171's own context for the model (an active goal's objective, ``name``
    "goal_objective", ``namespace`` "agent", sent after the ``create_goal`` call's output). Input the client sends,
    answering no call: read as a harness user message, written back as the item it was."""
    return one_of(item.get("type"), OUTPUTS) and item.get("call_id") is None and isinstance(item.get("name"), str)


def output_content(item: dict[str, Any]) -> Any:
    """A result item's tool message content: its output as canonical content (JSON text where it is
    neither text nor parts), or a tool search's tools as the JSON text the model is sent them in."""
    if item.get("type") == "tool_search_output":
        return jsonbytes.dumps_text(item.get("tools"))
    content = content_to_canonical(item.get("output"))
    if content is not None and not isinstance(content, (str, list)):
        content = jsonbytes.dumps_text(content)
    return content


def _object(text: Any, original: Any) -> Any:
    """A tool search's JSON (its arguments, its tools) as the object it was; the original where a step left
    text that is no JSON (the API takes only the object)."""
    try:
        return orjson.loads(text) if isinstance(text, str) else original
    except orjson.JSONDecodeError:
        return original


def _tools(message: Message, output: dict[str, Any]) -> Any:
    tools = _object(message.get("content"), output.get("tools"))
    return tools if isinstance(tools, list) else output.get("tools")


def transcript_items(transcript: Transcript, system_role: str = "system") -> list[Item]:
    """The items of every message: unchanged ones as read, others rebuilt (with no record)."""
    native = native_of(transcript, ResponsesNative)
    out: list[Item] = []
    for message, unit, same in sources(transcript, native):
        if same and unit is not None:
            out.extend(unit)
        else:
            out.extend(Item(item) for item in message_items(message, unit, system_role))
    out.extend(native.trailing if native is not None else ())
    return out


def write(transcripts: list[Transcript]) -> bytes:
    lines: list[bytes] = []
    layout = "jsonl"
    for transcript in transcripts:
        native = native_of(transcript, ResponsesNative)
        records = native.records if native is not None else ()
        layout = native.layout if native is not None else layout
        if is_unchanged(transcript, native):
            lines.extend(raw_line(record) for record in records)
            continue
        for item in transcript_items(transcript):
            lines.append(
                raw_line(records[item.record]) if item.record is not None else jsonbytes.dumps(item.value) + b"\n"
            )
    if layout == "json":
        return dumps_document([orjson.loads(line) for line in lines])
    return b"".join(lines)
