"""Real OpenTelemetry GenAI traces: the ``openai`` client, instrumented by
``opentelemetry-instrumentation-openai-v2``, calling the loopback server, exported by the SDK.

``record_agent_run`` plays a small tool-using agent (two traces: a tool loop and a short
follow-up conversation) and returns the finished spans; ``otlp_json`` and ``span_lines``
write them the two ways traces are saved.
"""

from __future__ import annotations

import io
import json
from collections.abc import Sequence
from typing import Any

import pytest

from tests.needs import needs
from tests.summarizers.openai_server import Behaviour, ServerThread

openai_v2 = needs("otel")

from google.protobuf.json_format import MessageToDict  # noqa: E402
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans  # noqa: E402
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider  # noqa: E402
from opentelemetry.sdk.trace.export import ConsoleSpanExporter, SimpleSpanProcessor  # noqa: E402
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter  # noqa: E402

CALL = {"id": "call_lookup_1", "type": "function", "function": {"name": "get_order", "arguments": '{"id": "A-17"}'}}
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_order",
            "description": "Look an order up",
            "parameters": {"type": "object", "properties": {"id": {"type": "string"}}},
        },
    }
]


def record_agent_run(monkeypatch: pytest.MonkeyPatch, capture_content: bool = True) -> Sequence[ReadableSpan]:
    import openai

    monkeypatch.setenv("OTEL_SEMCONV_STABILITY_OPT_IN", "gen_ai_latest_experimental")
    monkeypatch.setenv(
        "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "SPAN_ONLY" if capture_content else "NO_CONTENT"
    )
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    instrumentor = openai_v2.OpenAIInstrumentor()
    instrumentor.instrument(tracer_provider=provider)
    server = ServerThread()
    try:
        client = openai.OpenAI(base_url=server.state.url, api_key="test", max_retries=0)
        tracer = provider.get_tracer("agent")
        with tracer.start_as_current_span("invoke_agent support"):
            messages: list[Any] = [
                {"role": "system", "content": "You are a support agent. Look orders up before answering."},
                {"role": "user", "content": "Where is my order A-17?"},
            ]
            server.state.enqueue(Behaviour(tool_calls=[CALL]))
            client.chat.completions.create(model="gpt-4o-mini", messages=messages, tools=TOOLS)
            messages.append({"role": "assistant", "content": None, "tool_calls": [CALL]})
            messages.append({"role": "tool", "tool_call_id": CALL["id"], "content": '{"status": "shipped"}'})
            server.state.enqueue(Behaviour(text="Order A-17 shipped yesterday."))
            reply = client.chat.completions.create(model="gpt-4o-mini", messages=messages, tools=TOOLS)
            messages.append({"role": "assistant", "content": reply.choices[0].message.content})
            messages.append({"role": "user", "content": "Thanks. When will it arrive?"})
            server.state.enqueue(Behaviour(text="It should arrive on Friday."))
            client.chat.completions.create(model="gpt-4o-mini", messages=messages, tools=TOOLS)
        with tracer.start_as_current_span("invoke_agent greeter"):
            server.state.enqueue(Behaviour(text="Hello!"))
            client.chat.completions.create(model="gpt-4o-mini", messages=[{"role": "user", "content": "Hi"}])
    finally:
        server.stop()
        instrumentor.uninstrument()
    provider.shutdown()
    return exporter.get_finished_spans()


def _hex_ids(value: Any) -> Any:
    """protobuf's JSON mapping writes bytes in base64; OTLP JSON (and the collector) writes ids in hex."""
    import base64

    if isinstance(value, dict):
        return {
            key: base64.b64decode(item).hex()
            if key in ("traceId", "spanId", "parentSpanId") and item
            else _hex_ids(item)
            for key, item in value.items()
        }
    if isinstance(value, list):
        return [_hex_ids(item) for item in value]
    return value


def otlp_json(spans: Sequence[ReadableSpan], hex_ids: bool = True) -> bytes:
    """One ``ExportTraceServiceRequest`` per line, as the collector's file exporter writes it."""
    document = MessageToDict(encode_spans(spans))
    return (json.dumps(_hex_ids(document) if hex_ids else document) + "\n").encode()


def span_lines(spans: Sequence[ReadableSpan]) -> bytes:
    """One span per line, through the SDK's own ConsoleSpanExporter."""
    out = io.StringIO()
    exporter = ConsoleSpanExporter(out=out, formatter=lambda span: span.to_json(indent=None) + "\n")
    exporter.export(spans)
    return out.getvalue().encode()
