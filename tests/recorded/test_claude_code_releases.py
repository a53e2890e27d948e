"""The same scripted session (a tool loop, a Task subagent, ``/compact``, every turn a ``--resume``) recorded with the
real Claude Code 2.0.30, 2.1.9, 2.1.50 and 2.1.83 against the loopback fake (tests/fakes/record_older_releases.py
``claude_code_release_fixture``): what each release changed in the files, read from the fixtures."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from typer.testing import CliRunner

from compactctl.cli.main import app
from compactctl.files.io import is_sidecar

DATA = Path(__file__).parent / "data"


def _replayed(release: str) -> dict:
    result = CliRunner().invoke(
        app, ["replay", str(DATA / f"claude-code-{release}-compacted-subagent"), "--json", "-q"]
    )
    assert result.exit_code == 0, result.output
    return dict(orjson.loads(result.stdout))


def test_2_1s_sessions_index_is_no_transcript():
    """2.1.9 writes ``sessions-index.json`` beside its sessions: a folder replay failed on it (exit 2) before."""
    index = DATA / "claude-code-2.1.9-compacted-subagent" / "sessions-index.json"
    assert is_sidecar(index)
    doc = _replayed("2.1.9")
    assert not doc["failed"] and len(doc["files"]) == 1


@pytest.mark.parametrize(
    ("release", "estimated", "served"), [("2.1.9", 3290, 3290), ("2.1.50", 3317, 3427), ("2.1.83", 3324, 3407)]
)
def test_2_1s_summarizing_request_is_estimated_without_the_prefix_it_did_not_send(release, estimated, served):
    """Before 2.1.84 the summarizing request holds the history alone: read as 2.1.332's, 21,349, 22,056 and 27,447."""
    estimate = _replayed(release)["files"][0]["api"]["compaction_estimate"]
    assert estimate["calls"] == 1 and estimate["input_tokens"] == estimated
    assert abs(estimated - served) / served < 0.05


@pytest.mark.parametrize(("release", "output", "cost"), [("2.1.9", 220, 0.526716), ("2.1.50", 220, 0.545022)])
def test_output_logged_at_the_stream_start_is_counted_from_what_the_response_said(release, output, cost):
    """2.1.9 and 2.1.50 log every response's output as 1 token (no stop reason): 10 for the 334 served, before."""
    doc = _replayed(release)
    recorded = doc["total"]["settings"][1]
    assert recorded["trigger"] == "recorded" and recorded["calls"] == 10
    assert recorded["output_tokens"] == output and recorded["cost"] == cost
    notes = doc["files"][0]["api"]["notes"]
    assert any(n.startswith("10 response(s) logged their usage as the stream started") for n in notes)
    assert any(n.startswith("3 Bash command(s) ran") for n in notes)


def test_2_1_83_logs_the_final_output_and_asks_nothing_of_bash_commands():
    doc = _replayed("2.1.83")
    recorded = doc["total"]["settings"][1]
    assert recorded["calls"] == 10 and recorded["output_tokens"] == 334 and recorded["cost"] == 0.689175
    assert not any("Bash command" in n or "stream started" in n for n in doc["files"][0]["api"]["notes"])


def test_2_0_30s_warmups_and_task_are_billed_with_the_session():
    doc = _replayed("2.0.30")
    (entry,) = doc["files"]
    assert doc["total"]["settings"][1]["calls"] == 18 and entry["api"]["bill_cost"] == 0.449326
    assert entry["api"]["subagents"]["calls"] == 10


@pytest.mark.parametrize(
    ("release", "queries", "summary"),
    [("2.0.30", 5, 3264), ("2.0.76", 5, 3289), ("2.1.9", 4, 3290), ("2.1.50", 3, 3427), ("2.1.83", 0, 3407)],
)
def test_the_sweep_tells_the_responses_no_file_records_and_finds_the_bill_right(release, queries, summary, tmp_path):
    """bench/consistency_sweep.py compared every served response with the bill, though these releases record neither
    their summarizing request (estimated apart) nor the small model's Bash queries (in a note): a "1 bill" row on all
    five ($0.449326 replayed for $0.464116 served on 2.0.30). It now tells them by the message ids no file holds."""
    from bench.consistency_sweep import check, unrecorded_responses

    session = DATA / f"claude-code-{release}-compacted-subagent"
    unrecorded = unrecorded_responses(session)
    assert sum("haiku" in r["model"] for r in unrecorded) == queries
    assert [r["usage"]["input_tokens"] for r in unrecorded if "haiku" not in r["model"]] == [summary]
    assert check(session, tmp_path) == []
