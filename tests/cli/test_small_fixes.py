"""The audit's smaller findings, one test each: an input never overwritten through stdin,
integers past 64 bits kept exact, Python-written chat and dataset files back byte for
byte, and a side file that cannot be written failing the run before any output is."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli.conftest import write_jsonl

BIG = 123456789012345678901234567890  # past 64 bits: orjson alone would read a float


@pytest.mark.slow  # a console script in a fresh interpreter
def test_stdin_that_is_the_output_file_is_refused(tmp_path, agent_messages):
    source = write_jsonl(tmp_path / "in.jsonl", agent_messages)
    before = source.read_bytes()
    with source.open("rb") as stdin:
        done = subprocess.run(
            [sys.executable, "-m", "compactctl", "compact", "-", "-o", str(source), "-s", "prune"],
            stdin=stdin, capture_output=True, text=True, timeout=60,
        )  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert "stdin is this file" in done.stderr and "Traceback" not in done.stderr
    assert source.read_bytes() == before


def test_integers_past_64_bits_come_back_exact(cli, tmp_path, agent_messages):
    messages = [{**agent_messages[0], "id": BIG}, *agent_messages[1:]]
    source = python_written(tmp_path / "in.jsonl", messages)
    # Converted to dataset lines, every message is written afresh: nothing is copied from the input.
    result = cli("compact", source, "-o", tmp_path / "out.jsonl", "-s", "prune", "--to", "dataset")
    assert result.exit_code == 0, result.output
    line = (tmp_path / "out.jsonl").read_text()
    assert json.loads(line)["messages"][0]["id"] == BIG and str(BIG) in line


def python_written(path: Path, records: list) -> Path:
    # json.dumps' own spacing (", " and ": ") and ASCII escapes, as Python tools save JSON Lines.
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def test_python_written_chat_and_dataset_files_come_back_byte_for_byte(cli, tmp_path, agent_messages):
    messages = [*agent_messages, {"role": "user", "content": "café, 東京"}]
    for name, records in (("chat.jsonl", messages), ("data.jsonl", [{"messages": messages, "id": 1}] * 2)):
        source = python_written(tmp_path / name, records)
        out = tmp_path / f"out-{name}"
        result = cli("compact", source, "-o", out, "-s", "window", "--keep-recent", "100", "--write-unchanged")
        assert result.exit_code == 0, result.output
        assert out.read_bytes() == source.read_bytes(), name


def test_a_changed_message_is_written_fresh_beside_unchanged_ones(cli, tmp_path, agent_messages):
    source = python_written(tmp_path / "chat.jsonl", agent_messages)
    out = tmp_path / "out.jsonl"
    assert cli("compact", source, "-o", out, "-s", "window", "--keep-recent", "3").exit_code == 0
    lines = out.read_bytes().splitlines(keepends=True)
    original = source.read_bytes().splitlines(keepends=True)
    assert lines[0] == original[0] and lines[-3:] == original[-3:]


def test_a_manifest_that_cannot_be_written_fails_before_any_output(cli, tmp_path, agent_messages):
    source = write_jsonl(tmp_path / "in.jsonl", agent_messages)
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where a folder would have to be")
    for manifest in (blocker / "manifest.jsonl", tmp_path):
        out = tmp_path / "out.jsonl"
        result = cli("compact", source, "-o", out, "-s", "prune", "--manifest", manifest)
        assert result.exit_code == 2, result.output
        assert "--manifest" in result.stderr and not out.exists()


BAD_LINES = (
    b'{"role": "user", "content": \n{"role":"user","content":"hi"}\n{"role":"assistant","content":"yo"}\nnot json\n'
)


def test_replay_skips_unreadable_lines_with_on_error_skip_and_counts_them(cli, tmp_path):
    source = tmp_path / "bad.jsonl"
    source.write_bytes(BAD_LINES)
    failed = cli("replay", source, "--threshold", "5")
    assert failed.exit_code == 2 and f"{source}:1:" in failed.stderr  # the bad first line, by its number
    skipped = cli("replay", source, "--threshold", "5", "--on-error", "skip", "--json")
    assert skipped.exit_code == 0, skipped.output
    (file,) = json.loads(skipped.stdout)["files"]
    assert file["skipped_lines"] == [1, 4] and file["settings"][0]["calls"] == 1


def test_the_summary_deadline_and_fail_after_are_settings_with_bounds(cli, tmp_path, agent_messages):
    source = write_jsonl(tmp_path / "in.jsonl", agent_messages)
    for flag, value in (("--summary-deadline", "0"), ("--summary-fail-after", "0")):
        result = cli("compact", source, "-o", tmp_path / "out.jsonl", flag, value)
        assert result.exit_code == 2 and flag.lstrip("-") in result.stderr.replace("_", "-"), result.output
    config = tmp_path / "compactctl.toml"
    config.write_text("summary_deadline = 30\nsummary_fail_after = 2\n")
    result = cli("compact", source, "-o", tmp_path / "out.jsonl", "--config", config, "--dry-run")
    assert result.exit_code == 0, result.output
