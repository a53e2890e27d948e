"""``compactctl eval BEFORE AFTER``: the table, --json, folders, and a judge through the loopback server."""

from __future__ import annotations

import orjson

from compactctl.errors import EXIT_INPUT, EXIT_OK
from tests.cli.conftest import write_jsonl
from tests.summarizers.openai_server import Behaviour
from tests.test_evaluate import SESSION

FILE_KEYS = {
    "file",
    "name",
    "output",
    "after",
    "status",
    "reason",
    "skipped_lines",
    "skipped",
    "format",
    "families",
    "score",
    "probes",
}


def test_eval_scores_a_compaction_against_a_bare_window_in_folders(cli, tmp_path):
    before = write_jsonl(tmp_path / "before" / "a" / "s.jsonl", SESSION)
    structured = tmp_path / "structured"
    window = tmp_path / "window"
    assert (
        cli("compact", tmp_path / "before", "-o", structured, "-q", "--keep-turns", "1", "--keep-recent", "2").exit_code
        == 0
    )
    assert cli("compact", tmp_path / "before", "-o", window, "-q", "-s", "window", "--keep-recent", "2").exit_code == 0
    kept = orjson.loads(cli("eval", tmp_path / "before", structured, "--json").stdout)
    cut = orjson.loads(cli("eval", tmp_path / "before", window, "--json").stdout)
    assert set(kept) == {"version", "command", "exit_code", "error", "files", "failed", "gates", "total"}
    assert kept["command"] == "eval"
    (file,) = kept["files"]
    assert set(file) == FILE_KEYS and file["name"] == "a/s.jsonl" and file["format"] == "chat"
    assert file["file"] == str(tmp_path / "before" / "a" / "s.jsonl") and file["status"] == "ok"
    assert set(file["families"]) == {"recall", "artifact", "continuation", "decision"}
    assert set(file["probes"][0]) == {"family", "question", "answer", "present"}
    assert kept["total"]["score"]["passed"] > cut["total"]["score"]["passed"]
    assert kept["total"]["score"]["total"] == cut["total"]["score"]["total"] == len(file["probes"])
    table = cli("eval", before, structured / "a" / "s.jsonl")
    assert table.exit_code == EXIT_OK and "continuation" in table.stdout and "decision" in table.stdout


def test_eval_with_a_judge_asks_the_loopback_server_and_reports_both_scores(cli, tmp_path, openai_server):
    before = write_jsonl(tmp_path / "s.jsonl", SESSION)
    after = write_jsonl(tmp_path / "after.jsonl", SESSION[:1] + SESSION[-2:])
    probes = orjson.loads(cli("eval", before, after, "--json").stdout)["files"][0]["probes"]
    replies = [Behaviour(text=r) for _ in probes for r in ("an answer", "no")]
    replies[1] = Behaviour(text="yes")  # the first probe's answer is graded right
    openai_server.enqueue(*replies)
    args = ["--judge", "openai", "--judge-model", "judge-1", "--base-url", openai_server.url, "--json", "--no-cache"]
    result = cli("eval", before, after, *args)
    assert result.exit_code == EXIT_OK, result.stderr
    file = orjson.loads(result.stdout)["files"][0]
    assert set(file) == FILE_KEYS | {"judged_families", "judged_score"}
    assert file["judged_score"] == {"passed": 1, "total": len(probes), "score": 1 / len(probes)}
    assert [p["judged"] for p in file["probes"]] == [True] + [False] * (len(probes) - 1)
    assert len(openai_server.requests) == 2 * len(probes)
    assert {r.body["model"] for r in openai_server.requests} == {"judge-1"}
    assert "<history>" in openai_server.requests[0].body["messages"][1]["content"]


def test_eval_of_a_missing_after_is_a_one_line_error(cli, tmp_path):
    before = write_jsonl(tmp_path / "s.jsonl", SESSION)
    result = cli("eval", before, tmp_path / "nope.jsonl")
    assert result.exit_code == EXIT_INPUT and "nope.jsonl" in result.stderr and "Traceback" not in result.stderr


def test_a_judge_with_no_key_is_called_the_judge_not_the_summarizer(cli, tmp_path, monkeypatch):
    """eval has no summarizer: its errors name what the user asked for, --judge openai."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    before = write_jsonl(tmp_path / "s.jsonl", SESSION)
    result = cli("eval", before, before, "--judge", "openai")
    assert result.exit_code == EXIT_INPUT
    assert "the openai judge needs OPENAI_API_KEY" in result.stderr and "summarizer" not in result.stderr
