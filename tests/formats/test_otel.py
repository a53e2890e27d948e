"""OpenTelemetry GenAI traces, recorded by the real instrumentation of the openai client."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from compactctl.errors import EXIT_INPUT, EXIT_OK, InputError
from compactctl.formats import load, write_as
from compactctl.transcript import find_violation
from tests.cli.conftest import Cli
from tests.formats.otel_traces import otlp_json, record_agent_run, span_lines


@pytest.fixture(scope="module")
def spans():
    with pytest.MonkeyPatch.context() as monkeypatch:
        return record_agent_run(monkeypatch)


@pytest.fixture(scope="module")
def spans_without_content():
    with pytest.MonkeyPatch.context() as monkeypatch:
        return record_agent_run(monkeypatch, capture_content=False)


def test_otlp_json_reads_one_transcript_per_trace_with_the_tool_loop_and_usage(spans):
    fmt, transcripts = load(otlp_json(spans), "traces.json")
    assert fmt.name == "otel"
    assert len(transcripts) == 2
    support = next(t for t in transcripts if len(t.messages) > 2)
    assert [m["role"] for m in support.messages] == [
        "system",
        "user",
        "assistant",
        "tool",
        "assistant",
        "user",
        "assistant",
    ]
    call = support.messages[2]["tool_calls"][0]
    assert call["id"] == support.messages[3]["tool_call_id"] == "call_lookup_1"
    assert orjson.loads(call["function"]["arguments"]) == {"id": "A-17"}
    assert support.messages[-1]["content"] == "It should arrive on Friday."
    # Every call's reported usage sits on its output message, in start-time order.
    reported = [m["usage"]["prompt_tokens"] for m in support.messages if "usage" in m]
    assert len(reported) == 3 and reported == sorted(reported)
    assert find_violation(support.messages) is None


def test_span_lines_and_base64_ids_read_as_the_otlp_json_does(spans):
    _, from_otlp = load(otlp_json(spans), "traces.json")
    _, from_lines = load(span_lines(spans), "spans.jsonl")
    _, from_base64 = load(otlp_json(spans, hex_ids=False), "traces.json")
    assert [t.messages for t in from_lines] == [t.messages for t in from_otlp]
    assert [t.label for t in from_base64] == [t.label for t in from_otlp]
    assert all(len(t.label.removeprefix("trace ")) == 32 for t in from_otlp)


def test_spans_without_content_are_an_error_naming_them(spans_without_content):
    data = otlp_json(spans_without_content)
    with pytest.raises(InputError) as raised:
        load(data, "blind.json")
    message = str(raised.value)
    assert (
        "4 GenAI spans without content" in message and "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT" in message
    )
    first_span = orjson.loads(data)["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["spanId"]
    assert first_span in message


def test_a_bad_messages_attribute_names_the_file_span_and_line(spans):
    lines = span_lines(spans).splitlines()
    record = orjson.loads(lines[1])
    record["attributes"]["gen_ai.input.messages"] = '[{"role": "user", "parts": [oops'
    lines[1] = orjson.dumps(record)
    with pytest.raises(InputError) as raised:
        load(b"\n".join(lines) + b"\n", "spans.jsonl")
    message = str(raised.value)
    assert message.startswith("spans.jsonl:2: ")
    assert f"span {record['context']['span_id'].removeprefix('0x')}: gen_ai.input.messages is not JSON" in message


def test_converts_to_chat_and_refuses_to_write_traces_back(spans, tmp_path: Path):
    fmt, transcripts = load(span_lines(spans), "spans.jsonl")
    greeter = [t for t in transcripts if len(t.messages) == 2]
    chat = write_as(greeter, fmt, "chat")
    assert [orjson.loads(line)["content"] for line in chat.splitlines()] == ["Hi", "Hello!"]
    with pytest.raises(InputError, match="read, not written: convert with `to`"):
        write_as(transcripts, fmt)


def test_cli_compacts_traces_into_a_dataset_and_reports_usage(spans, tmp_path: Path):
    source = tmp_path / "traces.json"
    source.write_bytes(otlp_json(spans))
    cli = Cli()
    done = cli("compact", source, "--to", "dataset", "-o", tmp_path / "out.jsonl", "--json")
    assert done.exit_code == EXIT_OK, done.output
    report = orjson.loads(done.stdout)
    (file,) = report["files"]
    assert file["format"] == "otel" and file["transcripts"] == 2
    assert file["api_usage"]["calls"] == 4
    rows = [orjson.loads(line) for line in (tmp_path / "out.jsonl").read_bytes().splitlines()]
    assert [len(row["messages"]) for row in rows] == [7, 2]
    failed = cli("compact", source, "-o", tmp_path / "same.json")
    assert failed.exit_code == EXIT_INPUT and "--to chat" in failed.stderr


def test_forcing_otel_on_a_chat_file_says_so(tmp_path: Path):
    with pytest.raises(InputError, match="expected OTLP JSON"):
        load(b'{"role": "user", "content": "hi"}\n', "chat.jsonl", format="otel")
