"""``--on-error skip`` applies to every line: a line that parses but holds a record of the wrong
shape is left out and counted (file:line and what), in compact, prune, report and replay, for
the formats whose record is one line (chat, dataset, Claude Code, Codex). Without skip it is
the one-line error, exit 2."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from compactctl.errors import EXIT_INPUT, EXIT_OK
from tests.formats.fixtures import FILES


def with_bad_lines(lines: list[bytes], bad: dict[int, object]) -> bytes:
    """``lines`` with each ``bad`` record inserted to land on its (1-based) line number."""
    out = list(lines)
    for number in sorted(bad):
        out.insert(number - 1, orjson.dumps(bad[number]))
    return b"\n".join(out) + b"\n"


def chat_file(tmp_path: Path, agent_messages) -> tuple[Path, dict[int, str]]:
    bad = {3: {"role": "robot", "content": "beep"}, 6: {"role": "user", "content": 5}}
    path = tmp_path / "chat.jsonl"
    path.write_bytes(with_bad_lines([orjson.dumps(m) for m in agent_messages], bad))
    return path, {3: "unknown role 'robot'", 6: "user 'content' is int"}


def dataset_file(tmp_path: Path, agent_messages) -> tuple[Path, dict[int, str]]:
    good = orjson.dumps({"messages": agent_messages, "id": "a"})
    path = tmp_path / "dataset.jsonl"
    broken = {"messages": [{"role": "robot", "content": "x"}], "id": "b"}
    path.write_bytes(with_bad_lines([good, good], {2: broken}))
    return path, {2: "messages[0]: unknown role 'robot'"}


def producer_file(tmp_path: Path, name: str) -> tuple[Path, dict[int, str]]:
    lines = FILES[name].read_bytes().splitlines()
    if name == "codex":
        bad = {6: {"type": "response_item", "timestamp": "2025-01-01T00:00:00Z"}}
        what = {6: "a response_item line has no payload"}
    else:
        bad = {6: {"type": "user", "uuid": "u-bad", "sessionId": "s", "message": {"role": "user", "content": "hi"}}}
        what = {6: "a user record has no parentUuid"}
    path = tmp_path / f"{name}.jsonl"
    path.write_bytes(with_bad_lines(lines, bad))
    return path, what


@pytest.fixture(params=["chat", "dataset", "claude-code", "codex"])
def bad_file(request, tmp_path, agent_messages) -> tuple[Path, dict[int, str]]:
    if request.param == "chat":
        return chat_file(tmp_path, agent_messages)
    if request.param == "dataset":
        return dataset_file(tmp_path, agent_messages)
    return producer_file(tmp_path, request.param)


COMMANDS = {
    "compact": ["compact", "-s", "trim-tools", "--tool-max-tokens", "50"],
    "prune": ["prune"],
    "report": ["report"],
    "replay": ["replay", "--threshold", "50"],
}


@pytest.mark.parametrize("command", COMMANDS)
def test_without_skip_a_bad_shape_is_the_one_line_error(cli, bad_file, command, tmp_path):
    path, what = bad_file
    first = min(what)
    result = cli(
        *COMMANDS[command][:1],
        path,
        *COMMANDS[command][1:],
        *(["-o", tmp_path / "out"] if command in ("compact", "prune") else []),
    )
    assert result.exit_code == EXIT_INPUT, result.output
    assert f"{path.name}:{first}: {what[first]}" in result.stderr
    assert "Traceback" not in result.output
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("command", COMMANDS)
def test_with_skip_a_bad_shape_is_a_skipped_counted_line(cli, bad_file, command, tmp_path):
    path, what = bad_file
    out = ["-o", tmp_path / "out"] if command in ("compact", "prune") else []
    result = cli(*COMMANDS[command][:1], path, *COMMANDS[command][1:], *out, "--on-error", "skip", "--json")
    assert result.exit_code in (EXIT_OK, 1), result.output  # 1: a gate, never the bad line
    (entry,) = orjson.loads(result.stdout)["files"]
    assert entry["skipped_lines"] == sorted(what)
    assert [s["line"] for s in entry["skipped"]] == sorted(what)
    for skipped in entry["skipped"]:
        assert what[skipped["line"]] in skipped["problem"]
    assert orjson.loads(result.stdout)["total"]["skipped_lines"] == len(what)
    assert f"line {min(what)}: {what[min(what)]}" in entry["reason"]
    assert f"skipped: {path}:{min(what)}: {what[min(what)]}" in " ".join(result.stderr.split())
    if command in ("compact", "prune"):
        written = (tmp_path / "out").read_bytes()
        assert b"robot" not in written and b"u-bad" not in written


def test_report_says_each_skipped_line_with_its_file(cli, tmp_path, agent_messages):
    path, _ = chat_file(tmp_path, agent_messages)
    result = cli("report", path, "--on-error", "skip")
    assert result.exit_code == EXIT_OK, result.output
    said = " ".join(result.stderr.split())
    assert f"skipped: {path}:3: unknown role 'robot'" in said and f"skipped: {path}:6: user 'content' is int" in said
    assert "messages_before" not in result.output  # the table, not JSON
    assert orjson.loads(cli("report", path, "--on-error", "skip", "--json").stdout)["files"][0][
        "messages_before"
    ] == len(agent_messages)


def test_a_file_whose_every_line_is_bad_still_fails(cli, tmp_path):
    path = tmp_path / "robots.jsonl"
    path.write_bytes(b'{"role": "robot", "content": "a"}\n{"role": "robot", "content": "b"}\n')
    result = cli("compact", path, "-s", "window", "--on-error", "skip", "-o", tmp_path / "out.jsonl")
    assert "robots.jsonl:2: unknown role 'robot'" in result.stderr
    assert not (tmp_path / "out.jsonl").exists()
