"""One compaction, one page: ``review`` shows the bytes ``compact`` writes, and a written compaction is
reviewed as it is, without compacting again."""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter

import pytest

from tests.cli.conftest import write_jsonl
from tests.conftest import SHARED_TRANSCRIPTS, needs_transcripts
from tests.review.conftest import session

# A Claude Code session, and two Codex ones (one of them is where review and compact used to part ways:
# 6,206 tokens in 2 calls on the page against compact's 5,843 in 1).
REAL = [
    "claude-code/kcosr__chat-to-html/claude.jsonl",
    "codex/kcosr__chat-to-html/codex.jsonl",
    "codex/yoavf__ai-sessions/codex-pomodor-timer.jsonl",
]
DEAD_SERVER = "http://127.0.0.1:9/v1"  # nothing listens: any summary request would fail with exit 3


def sha256(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.slow  # a real transcript, compacted and reviewed
@needs_transcripts
@pytest.mark.parametrize("name", REAL)
def test_side_a_is_the_compaction_compact_writes_byte_for_byte(cli, tmp_path, name):
    source = SHARED_TRANSCRIPTS / name
    out = tmp_path / source.name
    compacted = cli("compact", source, "-o", out, "--json", "-q")
    assert compacted.exit_code == 0, compacted.output
    report = json.loads(compacted.stdout)["files"][0]
    reviewed = cli("review", source, "-o", tmp_path / "page.html", "--json", "-q")
    assert reviewed.exit_code == 0, reviewed.output
    side = json.loads(reviewed.stdout)["files"][0]["sides"]["A"]
    assert side["output_sha256"] == sha256(out)
    for figure in ("tokens_before", "tokens_after", "messages_before", "messages_after", "summarizer_calls"):
        assert side[figure] == report[figure], figure
    page = (tmp_path / "page.html").read_text()
    assert re.search(rf'data-figure="tokens after"><td>[^<]*</td><td>{report["tokens_after"]:,}<', page)


def fates_on(page: str) -> Counter[str]:
    return Counter({a: int(n) for a, n in re.findall(r'<span data-action="(\w+)" data-count="(\d+)">', page)})


@needs_transcripts
def test_a_written_compaction_is_reviewed_without_compacting_again(cli, tmp_path):
    source = SHARED_TRANSCRIPTS / REAL[2]
    out, manifest = tmp_path / "compacted.jsonl", tmp_path / "manifest.jsonl"
    assert cli("compact", source, "-o", out, "--manifest", manifest, "-q").exit_code == 0
    written = Counter(json.loads(line)["action"] for line in manifest.read_text().splitlines())
    # The openai summarizer at a dead address: a review that compacted again would fail with exit 3.
    dead = ["--summarizer", "openai", "--base-url", DEAD_SERVER, "--summary-retries", "0"]
    for extra, fates_from in ((["--manifest", manifest], "manifest"), ([], "matching")):
        page = tmp_path / f"{fates_from}.html"
        result = cli("review", source, "--compacted", out, *extra, *dead, "-o", page, "--json", "-q")
        assert result.exit_code == 0, result.output
        side = json.loads(result.stdout)["files"][0]["sides"]["A"]
        assert side["fates_from"] == fates_from and side["output_sha256"] == sha256(out)
        assert fates_on(page.read_text()) == written  # matching the output finds the manifest's fates
        assert side["whole_summary"]["probes"]["total"] > 0


def test_a_folder_pair_as_a_ci_job_writes_them(cli, tmp_path):
    for name, rounds in (("a.jsonl", 3), ("sub/b.jsonl", 6)):
        write_jsonl(tmp_path / "logs" / name, session(rounds=rounds))
    logs, compacted, manifest = tmp_path / "logs", tmp_path / "compacted", tmp_path / "manifest.jsonl"
    done = cli("compact", logs, "-o", compacted, "--manifest", manifest, "--encoding", "approx", "-q")
    assert done.exit_code == 0, done.output
    pages = tmp_path / "pages"
    result = cli("review", logs, "--compacted", compacted, "--manifest", manifest, "-o", pages, "--json", "-q")
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in pages.iterdir()) == ["a.jsonl.review.html", "index.html", "sub__b.jsonl.review.html"]
    files = {f["name"]: f["sides"]["A"] for f in json.loads(result.stdout)["files"]}
    assert set(files) == {"a.jsonl", "sub/b.jsonl"} and {s["fates_from"] for s in files.values()} == {"manifest"}
    assert files["sub/b.jsonl"]["output_sha256"] == sha256(compacted / "sub" / "b.jsonl")


def test_two_written_compactions_side_by_side(cli, tmp_path):
    source = write_jsonl(tmp_path / "s.jsonl", session(rounds=6))
    for name, strategy in (("a.jsonl", "structured"), ("b.jsonl", "window")):
        assert cli("compact", source, "-o", tmp_path / name, "-s", strategy, "--keep-recent", "4", "-q").exit_code == 0
    page = tmp_path / "ab.html"
    args = ["review", source, "--compacted", tmp_path / "a.jsonl", "--vs-compacted", tmp_path / "b.jsonl"]
    result = cli(*args, "-o", page, "--json", "-q")
    assert result.exit_code == 0, result.output
    body = json.loads(result.stdout)["files"][0]
    assert set(body["sides"]) == {"A", "B"} and body["own_text_difference_pp"] < 0  # a window writes no summary
    assert page.read_text().count('<div class="side" data-side=') == 2


def test_a_manifest_of_another_input_or_a_missing_counterpart_is_a_usage_error(cli, tmp_path):
    source = write_jsonl(tmp_path / "s.jsonl", session(rounds=4))
    other = write_jsonl(tmp_path / "o.jsonl", session(rounds=5))
    manifest = tmp_path / "m.jsonl"
    assert cli("compact", other, "-o", tmp_path / "o.out.jsonl", "--manifest", manifest, "-q").exit_code == 0
    assert cli("compact", source, "-o", tmp_path / "s.out.jsonl", "-q").exit_code == 0
    lines = [json.loads(line) for line in manifest.read_text().splitlines()]
    manifest.write_text("".join(json.dumps({**e, "file": "s.jsonl"}) + "\n" for e in lines))
    wrong = cli("review", source, "--compacted", tmp_path / "s.out.jsonl", "--manifest", manifest, "-o", tmp_path / "p")
    assert wrong.exit_code == 2 and "the manifest" in wrong.stderr and "Traceback" not in wrong.stderr
    missing = cli("review", source, "--compacted", tmp_path / "nope.jsonl", "-o", tmp_path / "p.html")
    assert missing.exit_code == 2 and "no compacted counterpart" in missing.stderr
    mixed = cli("review", source, "--compacted", tmp_path / "s.out.jsonl", "--vs-strategy", "window")
    assert mixed.exit_code == 2 and "--vs-compacted" in mixed.stderr
