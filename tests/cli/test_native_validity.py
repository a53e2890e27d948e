"""``report`` and ``compact`` hold a Responses or Anthropic file to its own API's rules."""

from __future__ import annotations

import re
from pathlib import Path

import orjson

from compactctl.errors import EXIT_OK
from tests.formats.fixtures import FILES
from tests.formats.test_api_rules import GOOD_ITEMS, GOOD_PARAMS, lines, with_block, with_item

RECORDED = Path(__file__).resolve().parent.parent / "recorded" / "data"


def test_report_says_a_native_file_its_api_rejects_is_not_valid_and_why(cli, tmp_path):
    cases = {
        "responses.jsonl": (GOOD_ITEMS, with_item(2, arguments={"x": 1}), "input[2]: function_call.arguments is dict"),
        "anthropic.jsonl": (GOOD_PARAMS, with_block(2, 2, input="{}"), "messages.1: content.2: tool_use.input is str"),
    }
    for name, (good, bad, why) in cases.items():
        (tmp_path / name).write_bytes(lines(good))
        fine = cli("report", tmp_path / name)
        assert fine.exit_code == EXIT_OK and "API-valid" in fine.stdout and "│     no" not in fine.stdout
        (tmp_path / name).write_bytes(lines(bad))
        result = cli("report", tmp_path / name)
        assert result.exit_code == EXIT_OK, result.output
        assert "│ API-valid          │     no │" in result.stdout, result.stdout
        assert f"not API-valid before: {tmp_path / name}: {why}" in result.output  # the path as given
        report = orjson.loads(cli("report", tmp_path / name, "--json").stdout)["files"][0]
        assert report["valid_before"] is False and why in report["violation_before"]


def test_window_on_an_anthropic_file_keeps_it_valid_for_its_api(cli, tmp_path):
    out = tmp_path / "out.jsonl"
    result = cli("compact", FILES["anthropic"], "-s", "window", "--keep-recent", "1", "-o", out, "--json")
    assert result.exit_code == EXIT_OK, result.output
    report = orjson.loads(result.stdout)["files"][0]
    assert report["valid_before"] is True and report["valid_after"] is True, report["violation_after"]
    written = [orjson.loads(line) for line in out.read_bytes().splitlines()]
    assert next(r.get("role") for r in written if "role" in r) == "user"


def test_a_claude_code_session_whose_two_calls_share_an_id_is_not_valid(cli, tmp_path):
    """The real Claude Code 2.1.332's session (three tool calls) with the second call's id made the first's,
    as a client's bug once wrote it (anthropics/claude-code#28515): the API refuses the request on resume."""
    session = RECORDED / "claude-code-2.1.332-fast-and-us" / "2dc8f7d2-16fc-4bde-8b29-40c039af690e.jsonl"
    fine = orjson.loads(cli("report", session, "--json").stdout)["files"][0]
    assert fine["valid_before"] is True, fine["violation_before"]
    data = session.read_bytes()
    first, second = re.findall(rb'"type":"tool_use","id":"(toolu_[A-Za-z0-9]+)"', data)[:2]
    (tmp_path / "repeated.jsonl").write_bytes(data.replace(second, first))
    report = orjson.loads(cli("report", tmp_path / "repeated.jsonl", "--json").stdout)["files"][0]
    assert report["valid_before"] is False
    assert f"`tool_use` ids must be unique: {first.decode()!r}" in report["violation_before"]
