"""``otel``: OpenTelemetry GenAI traces (read only; write with ``--to chat`` or another format).

Two layouts: OTLP JSON as the collector's file exporter writes it (one
``ExportTraceServiceRequest`` per line or one document: ``resourceSpans`` / ``scopeSpans`` /
``spans``, attributes as typed ``AnyValue``s, ids in hex), and one span per line (the Python
SDK's ``span.to_json()``, or an OTLP span object). A model call is a span with
``gen_ai.input.messages`` / ``gen_ai.output.messages`` (semantic conventions
``gen-ai-input-messages.json``: role + parts), ``gen_ai.system_instructions``, or the older
per-message span events (``gen_ai.user.message``, ``gen_ai.choice``, ...).

Spans are grouped into one transcript per ``gen_ai.conversation.id`` (else per trace id) and
ordered by start time. A call whose input extends the conversation so far adds its new
messages and its output; a call whose input does not (the producer compacted, or an agent
started afresh) starts the context over from its input, as the model saw it. Each output
message carries the call's reported ``usage``, so ``report`` compares counts with it.
Content capture is opt-in: spans without content are an error naming them, never an empty
conversation.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import orjson

from compactctl import jsonbytes
from compactctl.errors import InputError
from compactctl.formats.base import Signature, Transcript
from compactctl.formats.records import Record, collapse_text
from compactctl.transcript import Message

NAME = "otel"
SIGNATURE = Signature((("resourceSpans", "spans", "attributes"), ("traceId", "scopeSpans")), "OTLP gen_ai spans")
WRITES = False  # a trace is what a collector saw, not a file an app resumes from

INPUT, OUTPUT, INSTRUCTIONS = "gen_ai.input.messages", "gen_ai.output.messages", "gen_ai.system_instructions"
MODEL_OPERATIONS = frozenset({"chat", "text_completion", "generate_content"})
# The per-message span events of the conventions before gen_ai.input.messages.
EVENT_ROLES = {
    "gen_ai.system.message": "system",
    "gen_ai.user.message": "user",
    "gen_ai.assistant.message": "assistant",
    "gen_ai.tool.message": "tool",
}
CHOICE_EVENT = "gen_ai.choice"
HOW_TO_CAPTURE = "content capture is off: set OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"


@dataclass(frozen=True)
class Span:
    """One span of a trace: its ids, when it started, its attributes and events, and the line it was read from."""

    trace_id: str
    span_id: str
    start: int  # nanoseconds since the epoch
    attributes: dict[str, Any]
    events: list[tuple[str, dict[str, Any]]]
    line: int

    @property
    def where(self) -> str:
        return f"span {self.span_id}"

    def is_genai(self) -> bool:
        return any(key.startswith("gen_ai.") for key in self.attributes) or any(
            name in EVENT_ROLES or name == CHOICE_EVENT for name, _ in self.events
        )

    def is_model_call(self) -> bool:
        has_messages = any(key in self.attributes for key in (INPUT, OUTPUT, INSTRUCTIONS))
        return has_messages or self.attributes.get("gen_ai.operation.name") in MODEL_OPERATIONS


# -- detection and spans ----------------------------------------------------------------------


def _is_otlp_span(value: Any) -> bool:
    return isinstance(value, dict) and "spanId" in value and isinstance(value.get("attributes", []), list)


def _is_sdk_span(value: Any) -> bool:
    context = value.get("context") if isinstance(value, dict) else None
    return isinstance(context, dict) and "span_id" in context and isinstance(value.get("attributes", {}), dict)


def detect(records: list[Record]) -> bool:
    for record in records[:20]:
        value = record.value
        if isinstance(value, dict) and isinstance(value.get("resourceSpans"), list):
            return True
        if (_is_otlp_span(value) or _is_sdk_span(value)) and "gen_ai." in jsonbytes.dumps_text(value):
            return True
    return False


def any_value(value: Any) -> Any:
    """An OTLP ``AnyValue`` ({"stringValue": ...}, {"arrayValue": {"values": [...]}}, ...) as plain JSON."""
    if not isinstance(value, dict):
        return value
    if "stringValue" in value:
        return value["stringValue"]
    if "intValue" in value:
        return int(value["intValue"])  # int64 is a JSON string in OTLP JSON
    if "doubleValue" in value:
        return float(value["doubleValue"])
    if "boolValue" in value:
        return bool(value["boolValue"])
    if "arrayValue" in value:
        return [any_value(item) for item in (value["arrayValue"] or {}).get("values", [])]
    if "kvlistValue" in value:
        return key_values((value["kvlistValue"] or {}).get("values", []))
    if "bytesValue" in value:
        return value["bytesValue"]
    return None  # an empty AnyValue


def key_values(items: Any) -> dict[str, Any]:
    return {
        item["key"]: any_value(item.get("value")) for item in items or [] if isinstance(item, dict) and "key" in item
    }


def _hex_id(value: Any) -> str:
    """OTLP JSON ids are hex; protobuf's own JSON mapping writes them in base64: accept both."""
    text = str(value or "").removeprefix("0x")
    if len(text) in (16, 32) and all(c in "0123456789abcdefABCDEF" for c in text):
        return text.lower()
    try:
        return base64.b64decode(text, validate=True).hex()
    except (binascii.Error, ValueError):
        return text


def _nanoseconds(value: Any, path: str, line: int, where: str) -> int:
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.isdigit():
        return int(value)
    if isinstance(value, str):
        try:
            moment = datetime.fromisoformat(value)
        except ValueError:
            pass
        else:
            return int(moment.timestamp()) * 1_000_000_000 + moment.microsecond * 1000
    raise InputError(f"{where}: start time {value!r} is not a timestamp", path, line)


def _otlp_span(value: dict[str, Any], path: str, line: int) -> Span:
    span_id = _hex_id(value.get("spanId"))
    where = f"span {span_id}"
    if not isinstance(value.get("attributes", []), list):
        raise InputError(f"{where}: 'attributes' is not a list of key/value pairs", path, line)
    events = [(str(e.get("name", "")), key_values(e.get("attributes"))) for e in value.get("events") or []]
    start = _nanoseconds(value.get("startTimeUnixNano", 0), path, line, where)
    return Span(_hex_id(value.get("traceId")), span_id, start, key_values(value.get("attributes")), events, line)


def _sdk_span(value: dict[str, Any], path: str, line: int) -> Span:
    context = value["context"]
    span_id = _hex_id(context.get("span_id"))
    events = [(str(e.get("name", "")), dict(e.get("attributes") or {})) for e in value.get("events") or []]
    start = _nanoseconds(value.get("start_time", 0), path, line, f"span {span_id}")
    return Span(_hex_id(context.get("trace_id")), span_id, start, dict(value.get("attributes") or {}), events, line)


def spans_of(records: list[Record], path: str) -> Iterator[Span]:
    for record in records:
        value = record.value
        if isinstance(value, dict) and "resourceSpans" in value:
            for resource in value.get("resourceSpans") or []:
                for scope in (resource or {}).get("scopeSpans") or []:
                    for span in (scope or {}).get("spans") or []:
                        if not isinstance(span, dict):
                            raise InputError("a span is not an object", path, record.line)
                        yield _otlp_span(span, path, record.line)
        elif _is_otlp_span(value):
            yield _otlp_span(value, path, record.line)
        elif _is_sdk_span(value):
            yield _sdk_span(value, path, record.line)
        else:
            raise InputError("expected OTLP JSON (resourceSpans) or one span per line", path, record.line)


# -- GenAI messages ---------------------------------------------------------------------------


def _json_attribute(span: Span, key: str, path: str) -> list[Any] | None:
    """A messages attribute: a JSON string (most SDKs) or a structured array (the conventions allow both)."""
    value = span.attributes.get(key)
    if value is None:
        return None
    if isinstance(value, str):
        try:
            value = orjson.loads(value)
        except orjson.JSONDecodeError as error:
            raise InputError(f"{span.where}: {key} is not JSON ({error})", path, span.line) from None
    if not isinstance(value, list):
        raise InputError(f"{span.where}: {key} is {type(value).__name__}, expected a list", path, span.line)
    return value


def _arguments(value: Any) -> str:
    return value if isinstance(value, str) else jsonbytes.dumps_text(value)


def _part_to_canonical(part: dict[str, Any]) -> dict[str, Any]:
    kind = part.get("type")
    if kind == "text":
        return {"type": "text", "text": str(part.get("content", ""))}
    if kind == "uri" and part.get("modality") == "image":
        return {"type": "image_url", "image_url": {"url": part.get("uri", "")}}
    return part  # reasoning, blob, file, compaction, generic: kept as they came


def genai_messages(value: list[Any], span: Span, key: str, path: str) -> list[Message]:
    """GenAI messages (role + parts) as canonical messages: tool calls on the assistant, responses as tools."""
    messages: list[Message] = []
    for position, item in enumerate(value):
        where = f"{span.where}: {key}[{position}]"
        if not isinstance(item, dict) or not isinstance(item.get("parts"), list):
            raise InputError(f"{where} is not a message with a 'parts' list", path, span.line)
        role = item.get("role", "assistant" if key == OUTPUT else None)
        if role not in ("system", "developer", "user", "assistant", "tool"):
            raise InputError(f"{where} has unknown role {role!r}", path, span.line)
        content: list[Any] = []
        calls: list[dict[str, Any]] = []
        for part in item["parts"]:
            if not isinstance(part, dict):
                raise InputError(f"{where}: a part is {type(part).__name__}, expected an object", path, span.line)
            if part.get("type") == "tool_call":
                calls.append(
                    {
                        "id": part.get("id"),
                        "type": "function",
                        "function": {"name": part.get("name", ""), "arguments": _arguments(part.get("arguments"))},
                    }
                )
            elif part.get("type") == "tool_call_response":
                response = part.get("response")
                text = response if isinstance(response, str) else jsonbytes.dumps_text(response)
                messages.append({"role": "tool", "tool_call_id": part.get("id"), "content": text})
            else:
                content.append(_part_to_canonical(part))
        if role == "tool" and not content and not calls:
            continue  # a tool message is its responses, already added
        message: Message = {"role": "assistant" if calls else role}
        message["content"] = collapse_text(content) if content else (None if calls else "")
        if calls:
            message["tool_calls"] = calls
        messages.append(message)
    return messages


def _instructions(span: Span, path: str) -> list[Message]:
    value = _json_attribute(span, INSTRUCTIONS, path)
    if not value:
        return []
    texts = [str(part.get("content", "")) for part in value if isinstance(part, dict) and part.get("type") == "text"]
    return [{"role": "system", "content": "\n".join(texts)}]


def _event_messages(span: Span) -> tuple[list[Message], list[Message]]:
    """Input and output messages from the older per-message span events."""
    inputs: list[Message] = []
    outputs: list[Message] = []
    for name, attributes in span.events:
        if name in EVENT_ROLES:
            message: Message = {"role": EVENT_ROLES[name], "content": attributes.get("content")}
            if name == "gen_ai.tool.message":
                message["tool_call_id"] = attributes.get("id")
            calls = attributes.get("tool_calls")
            if isinstance(calls, str):
                calls = orjson.loads(calls)
            if calls:
                message["tool_calls"] = calls
            inputs.append(message)
        elif name == CHOICE_EVENT:
            choice = attributes.get("message")
            if isinstance(choice, str):
                choice = orjson.loads(choice)
            if isinstance(choice, dict):
                outputs.append({"role": "assistant", **choice})
    return inputs, outputs


def _usage(span: Span) -> dict[str, int] | None:
    attributes = span.attributes
    if not isinstance(attributes.get("gen_ai.usage.input_tokens"), int):
        return None
    # The conventions count cached tokens inside input_tokens: the whole prompt, as prompt_tokens is.
    usage = {"prompt_tokens": attributes["gen_ai.usage.input_tokens"]}
    if isinstance(attributes.get("gen_ai.usage.output_tokens"), int):
        usage["completion_tokens"] = attributes["gen_ai.usage.output_tokens"]
    for key in ("gen_ai.usage.cache_read.input_tokens", "gen_ai.usage.cache_creation.input_tokens"):
        if isinstance(attributes.get(key), int):
            usage[key.removeprefix("gen_ai.usage.").replace(".", "_")] = attributes[key]
    return usage


def call_messages(span: Span, path: str) -> tuple[list[Message], list[Message]] | None:
    """A model call's input and output messages, or None when the span holds no content."""
    inputs = _json_attribute(span, INPUT, path)
    outputs = _json_attribute(span, OUTPUT, path)
    if inputs is None and outputs is None and INSTRUCTIONS not in span.attributes:
        events = _event_messages(span)
        return events if events[0] or events[1] else None
    context = [*_instructions(span, path), *genai_messages(inputs or [], span, INPUT, path)]
    return context, genai_messages(outputs or [], span, OUTPUT, path)


# -- transcripts ------------------------------------------------------------------------------


def read(records: list[Record], path: str) -> list[Transcript]:
    calls = sorted((s for s in spans_of(records, path) if s.is_model_call()), key=lambda s: s.start)
    if not calls:
        raise InputError("no GenAI model-call span (gen_ai.operation.name chat, or gen_ai.*.messages)", path)
    conversations: dict[str, list[Span]] = {}
    for span in calls:
        key = span.attributes.get("gen_ai.conversation.id")
        label = f"conversation {key}" if key else f"trace {span.trace_id}"
        conversations.setdefault(label, []).append(span)
    transcripts = []
    without: list[Span] = []
    for label, spans in conversations.items():
        messages: list[Message] = []
        read_any = False
        for span in spans:
            found = call_messages(span, path)
            if found is None:
                without.append(span)
                continue
            read_any = True
            context, output = found
            usage = _usage(span)
            if usage is not None:
                for message in output[-1:]:
                    message["usage"] = usage
            grown = len(context) >= len(messages) and list(map(_key, context[: len(messages)])) == list(
                map(_key, messages)
            )
            messages = [*(messages if grown else []), *context[len(messages) if grown else 0 :], *output]
        if read_any:
            transcripts.append(Transcript(messages, label=label))
    if not transcripts:
        ids = ", ".join(span.span_id for span in without[:5]) + (", ..." if len(without) > 5 else "")
        raise InputError(f"{len(without)} GenAI spans without content ({ids}); {HOW_TO_CAPTURE}", path)
    return transcripts


def _key(message: Message) -> bytes:
    """A message as a later call's input repeats it: without the usage, arguments as parsed JSON."""
    calls = [
        {**call, "function": {**call["function"], "arguments": _parsed(call["function"].get("arguments"))}}
        for call in message.get("tool_calls") or []
    ]
    return jsonbytes.dumps({**message, "usage": None, "tool_calls": calls}, sort_keys=True)


def _parsed(arguments: Any) -> Any:
    try:
        return orjson.loads(arguments) if isinstance(arguments, str) else arguments
    except orjson.JSONDecodeError:
        return arguments


def write(transcripts: list[Transcript]) -> bytes:
    raise InputError("OpenTelemetry traces are read, not written: convert with `to` chat (or responses, dataset)")
