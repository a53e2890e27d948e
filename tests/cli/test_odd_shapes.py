"""No input shape is a traceback: integers of any size in --json, odd field types a one-line error.

From the library an odd field is an ``InputError`` naming the file, the line and the field;
from the CLI the same line, exit 2, with or without --json.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

import compactctl
from compactctl.cli.main import app
from compactctl.errors import InputError
from compactctl.jsonbytes import dumps

runner = CliRunner()
DATA = Path(__file__).resolve().parent.parent / "formats" / "data"
HUGE = 2**70


def records(name: str) -> list[dict]:
    return [json.loads(line) for line in (DATA / name).read_text().splitlines() if line.strip()]


def with_change(name: str, change) -> bytes:
    """The fixture with ``change`` applied to every record it fits; the line numbers stay the same."""
    out = []
    for record in records(name):
        change(record)
        out.append(json.dumps(record))
    return ("\n".join(out) + "\n").encode()


def claude_usage(value):
    def change(record):
        usage = record.get("message", {}).get("usage") if isinstance(record.get("message"), dict) else None
        if isinstance(usage, dict):
            usage["input_tokens"] = value
            usage["cache_read_input_tokens"] = value

    return change


def test_integers_past_64_bits_are_written_as_they_are():
    assert dumps({"n": HUGE}) == b'{"n":1180591620717411303424}'
    assert json.loads(dumps({"n": [HUGE, -HUGE]}, indent=True)) == {"n": [HUGE, -HUGE]}


@pytest.mark.parametrize("command", ["compact", "report", "replay", "prune"])
def test_a_usage_count_past_64_bits_is_no_traceback_with_json(tmp_path, command):
    source = tmp_path / "big.jsonl"
    source.write_bytes(with_change("claude-code.jsonl", claude_usage(HUGE)))
    args = [command, str(source), "--json"]
    if command in ("compact", "prune"):
        args += ["-o", str(tmp_path / "out.jsonl")]
    result = runner.invoke(app, args)
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert result.exit_code in (0, 1), result.output
    assert json.loads(result.stdout)["command"] == command


def model_list(record):
    if isinstance(record.get("message"), dict) and "model" in record["message"]:
        record["message"]["model"] = ["claude"]


def payload_type_object(record):
    if isinstance(record.get("payload"), dict) and "type" in record["payload"]:
        record["payload"]["type"] = {"kind": "message"}


ODD = {
    "model a list": ("claude-code.jsonl", model_list, "message.model is a list, expected a string"),
    "usage a word": (
        "claude-code.jsonl",
        claude_usage("tool"),
        "message.usage.input_tokens is the string 'tool', expected a whole number",
    ),
    "payload.type an object": ("codex.jsonl", payload_type_object, "payload.type is an object, expected a string"),
}


@pytest.mark.parametrize("case", ODD, ids=list(ODD))
def test_an_odd_field_is_an_input_error_from_the_library(case):
    fixture, change, said = ODD[case]
    with pytest.raises(InputError) as raised:
        compactctl.load(with_change(fixture, change), "odd.jsonl")
    assert raised.value.path == "odd.jsonl" and raised.value.line is not None
    assert str(raised.value) == f"odd.jsonl:{raised.value.line}: {said}"


@pytest.mark.parametrize("command", ["compact", "report", "replay", "prune", "review"])
@pytest.mark.parametrize("case", ODD, ids=list(ODD))
def test_an_odd_field_is_one_line_and_exit_2_from_every_command(tmp_path, case, command):
    fixture, change, said = ODD[case]
    source = tmp_path / "odd.jsonl"
    source.write_bytes(with_change(fixture, change))
    args = [command, str(source)]
    if command in ("compact", "prune"):
        args += ["-o", str(tmp_path / "out.jsonl")]
    if command == "review":
        args += ["-o", str(tmp_path / "page.html")]
    for extra in ([], ["--json"]) if command != "review" else ([],):
        result = runner.invoke(app, [*args, *extra])
        assert result.exit_code == 2, result.output
        shown = result.stdout if extra else result.stderr
        assert said in shown and "Error" not in shown.replace(said, ""), shown
        assert "cannot process" not in result.output and "Traceback" not in result.output


def _drop_result_ids(record):
    message = record.get("message")
    if record.get("type") == "user" and isinstance(message, dict) and isinstance(message.get("content"), list):
        for block in message["content"]:
            if isinstance(block, dict) and block.get("type") == "tool_result":
                block.pop("tool_use_id", None)


@pytest.mark.parametrize("command", ["report", "replay"])
def test_a_claude_code_tool_result_without_its_id_is_no_crash_of_the_recorded_usage(tmp_path, command):
    # Found by the CLI fuzz (bench/fuzz_bench.py): the recorded calls' index read b["tool_use_id"].
    source = tmp_path / "no-ids.jsonl"
    source.write_bytes(with_change("claude-code.jsonl", _drop_result_ids))
    assert b"tool_use_id" not in source.read_bytes()
    result = runner.invoke(app, [command, str(source), "--json"])
    assert "cannot process this file" not in result.output and "Traceback" not in result.output
    assert result.exit_code in (0, 2), result.output
