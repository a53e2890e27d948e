"""``--on-error skip`` means one thing in every command: a bad line is left out, listed with its
file, line and what was wrong (``skipped`` in ``--json``, one ``skipped:`` line each on stderr),
and the rest of the file is read; a file with no good line is a failed file (exit 2).

Every command (compact, prune, report, replay, review, eval) x every kind of bad line (the cut
last line a killed Claude Code or Codex leaves, a NUL line, a line that is not JSON, a record of
the wrong shape) x the formats whose record is one line (chat, dataset, Claude Code, Codex).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import orjson
import pytest

from compactctl.errors import EXIT_INPUT
from tests.formats.fixtures import FILES

FORMATS = ("chat", "dataset", "claude-code", "codex")
BAD_LINES = ("cut-last-line", "nul-line", "not-json", "wrong-shape")
PROBLEM = {
    "cut-last-line": "malformed JSON: unexpected end of data",
    "nul-line": "NUL bytes, not JSON text",
    "not-json": "malformed JSON",
}
WRONG_SHAPE = {  # a record each format's reader refuses wherever it stands, and what it says
    "chat": ({"role": "robot", "content": "beep"}, "unknown role 'robot'"),
    "dataset": ({"messages": [{"role": "robot", "content": "beep"}]}, "messages[0]: unknown role 'robot'"),
    "claude-code": (
        {"type": "user", "uuid": "u-bad", "sessionId": "s", "message": {"role": "user", "content": "hi"}},
        "a user record has no parentUuid",
    ),
    "codex": ({"type": "response_item", "timestamp": "2025-01-01T00:00:00Z"}, "a response_item line has no payload"),
}
INSERTED_AT = 3  # the line a mid-file bad line lands on


def good_lines(fmt: str, agent_messages: list[dict]) -> list[bytes]:
    if fmt == "chat":
        return [orjson.dumps(m) for m in agent_messages]
    if fmt == "dataset":
        return [orjson.dumps({"messages": agent_messages, "id": n}) for n in range(3)]
    return FILES[fmt].read_bytes().splitlines()


def with_bad_line(fmt: str, kind: str, lines: list[bytes]) -> tuple[bytes, int, str]:
    """The file's bytes with one bad line of ``kind``, the line it is on, and what the error says of it."""
    if kind == "cut-last-line":  # a writer killed mid-line: no newline, half a record
        return b"\n".join([*lines, lines[-1][: len(lines[-1]) // 2]]), len(lines) + 1, PROBLEM[kind]
    bad, problem = {
        "nul-line": (b"\x00\x00\x00", PROBLEM["nul-line"]),
        "not-json": (b'{"role": "user", "content": ', PROBLEM["not-json"]),
        "wrong-shape": (orjson.dumps(WRONG_SHAPE[fmt][0]), WRONG_SHAPE[fmt][1]),
    }[kind]
    return b"\n".join([*lines[: INSERTED_AT - 1], bad, *lines[INSERTED_AT - 1 :]]) + b"\n", INSERTED_AT, problem


Command = Callable[[Path, Path, Path], list[str | Path]]  # (input, a clean copy, a folder) -> arguments
COMMANDS: dict[str, Command] = {
    "compact": lambda given, clean, out: ["compact", given, "-o", out / "c.jsonl", "-s", "trim-tools"],
    "prune": lambda given, clean, out: ["prune", given, "-o", out / "p.jsonl"],
    "report": lambda given, clean, out: ["report", given],
    "replay": lambda given, clean, out: ["replay", given, "--threshold", "50"],
    "review": lambda given, clean, out: ["review", given, "-o", out / "page.html", "-s", "window"],
    "eval": lambda given, clean, out: ["eval", given, clean],
}


@pytest.mark.parametrize("kind", BAD_LINES)
@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("command", COMMANDS)
def test_a_bad_line_is_skipped_and_listed_the_same_way_in_every_command(
    cli, tmp_path, agent_messages, command, fmt, kind
):
    lines = good_lines(fmt, agent_messages)
    data, line, problem = with_bad_line(fmt, kind, lines)
    given, clean, out = tmp_path / "in.jsonl", tmp_path / "clean.jsonl", tmp_path / "out"
    given.write_bytes(data)
    clean.write_bytes(b"\n".join(lines) + b"\n")
    out.mkdir()
    arguments = COMMANDS[command](given, clean, out)

    refused = cli(*arguments, "--json")
    assert refused.exit_code == EXIT_INPUT, refused.output
    assert f"{given}:{line}" in refused.stderr and problem in refused.stderr
    # A cut last line is what a session still being written looks like: the error says how to read the rest.
    hint = "the last line is cut short (a session still being written?): --on-error skip leaves it out"
    assert (hint in " ".join(refused.stderr.split())) == (kind == "cut-last-line"), refused.stderr
    assert list(out.iterdir()) == []  # a failed file writes nothing

    result = cli(*arguments, "--on-error", "skip", "--json")
    assert result.exit_code in (0, 1), result.output  # 1: a gate (a lost fact), never the bad line
    assert "Traceback" not in result.output
    (entry,) = orjson.loads(result.stdout)["files"]
    assert entry["status"] == "skipped-lines"
    assert entry["skipped_lines"] == [line]
    (skipped,) = entry["skipped"]
    assert skipped["line"] == line and problem in skipped["problem"]
    assert f"line {line}: {problem}" in entry["reason"]
    assert orjson.loads(result.stdout)["total"]["skipped_lines"] == 1
    # On stderr, in every command and with --json too: the file, the line and what was wrong.
    assert f"skipped: {given}:{line}: {problem}" in " ".join(result.stderr.split())


# A file of these alone: a record the reader refuses even as the first of its file.
ONLY_WRONG_SHAPE = {
    **{fmt: record for fmt, (record, _) in WRONG_SHAPE.items()},
    "claude-code": {"type": "user", "uuid": "u", "parentUuid": None, "message": {"role": "user", "content": 5}},
}
NO_GOOD_LINE = {
    "only-a-cut-line": lambda fmt, lines: lines[0][: len(lines[0]) // 2],
    "only-nul-lines": lambda fmt, lines: b"\x00\n\x00\x00\n",
    "only-bad-json": lambda fmt, lines: b'{"role": \n{"a"\n',
    "only-wrong-shapes": lambda fmt, lines: b"\n".join([orjson.dumps(ONLY_WRONG_SHAPE[fmt])] * 2),
}


@pytest.mark.parametrize("kind", NO_GOOD_LINE)
@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("command", COMMANDS)
def test_a_file_with_no_good_line_is_a_failed_file_with_skip_too(cli, tmp_path, agent_messages, command, fmt, kind):
    given, out = tmp_path / "in.jsonl", tmp_path / "out"
    given.write_bytes(NO_GOOD_LINE[kind](fmt, good_lines(fmt, agent_messages)))
    out.mkdir()
    result = cli(*COMMANDS[command](given, given, out), "--on-error", "skip", "--json")
    assert result.exit_code == EXIT_INPUT, result.output
    (entry,) = orjson.loads(result.stdout)["files"]
    assert entry["status"] == "failed" and str(given) in entry["reason"]
    assert "error:" in result.stderr and str(given) in " ".join(result.stderr.split())
    assert list(out.iterdir()) == []


def test_a_bad_line_in_the_after_file_is_listed_with_that_file(cli, tmp_path, agent_messages):
    before, after = tmp_path / "before.jsonl", tmp_path / "after.jsonl"
    lines = [orjson.dumps(m) for m in agent_messages]
    before.write_bytes(b"\n".join(lines) + b"\n")
    after.write_bytes(b"\n".join([*lines, b"{cut"]) + b"\n")
    for command in ("report", "eval"):
        result = cli(command, before, after, "--on-error", "skip", "--json")
        assert result.exit_code in (0, 1), result.output
        (entry,) = orjson.loads(result.stdout)["files"]
        (skipped,) = entry["skipped"]
        assert (skipped["line"], skipped["file"]) == (len(lines) + 1, str(after))
        assert f"skipped: {after}:{len(lines) + 1}: malformed JSON" in " ".join(result.stderr.split())


def test_many_skipped_lines_are_listed_up_to_a_limit_on_stderr_and_all_in_json(cli, tmp_path, agent_messages):
    given = tmp_path / "in.jsonl"
    lines = [orjson.dumps(m) for m in agent_messages] + [b"{cut %d" % n for n in range(30)]
    given.write_bytes(b"\n".join(lines) + b"\n")
    result = cli("report", given, "--on-error", "skip", "--json")
    assert result.exit_code == 0, result.output
    assert len(orjson.loads(result.stdout)["files"][0]["skipped"]) == 30
    assert result.stderr.count("skipped: ") == 21  # 20 lines, then how many more
    assert "10 more line(s)" in result.stderr
