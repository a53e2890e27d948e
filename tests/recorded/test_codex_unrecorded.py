"""Codex's model calls that no rollout records, as the real 0.171.0 made them (tests/fakes/record_side_calls.py):
its memories' calls at a session's start and the terminal UI's thread titles. No bill holds them; replay names them
where a file shows them (the memory summary in the session's instructions, the memories database beside
``sessions/`` naming the session; a terminal UI rollout whose title ``session_index.jsonl`` holds)."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import orjson
import pytest
from typer.testing import CliRunner

from compactctl.cli.main import app
from compactctl.recorded.codex_unrecorded import carries_memories, jobs_run_by, memories_note, title_note
from tests.fakes.clients import Codex, require_client
from tests.fakes.responses import FakeResponses
from tests.fakes.scenarios import project
from tests.recorded.test_codex_subagents import _openai_cost
from tests.replay.test_price_conditions import _served

HOME = Path(__file__).parent / "data" / "codex-0.171.0-memories"
SESSIONS = HOME / "sessions"
# The IDE's thread (its start consolidated), the exec whose start extracted a memory from it, the exec after.
FIRST, SECOND, THIRD = sorted(SESSIONS.rglob("rollout-*.jsonl"))
MEMORY_CALLERS = {"memory", "memory_consolidation"}


def _replayed(*paths: Path) -> dict[str, Any]:
    result = CliRunner().invoke(app, ["replay", *map(str, paths), "-t", "100000", "--json", "-q"])
    assert result.exit_code == 0, result.output
    return dict(orjson.loads(result.stdout))


def _thread(path: Path) -> str:
    return str(orjson.loads(path.read_bytes().splitlines()[0])["payload"]["id"])


def _response_ids(path: Path) -> set[str]:
    records = [orjson.loads(line) for line in path.read_bytes().splitlines()]
    return {r["payload"]["response_id"] for r in records if r.get("type") == "token_usage_record"}


def test_the_memory_calls_are_in_no_rollout_and_every_other_served_call_is_billed_once():
    served = _served("codex-0.171.0-memories")
    memory = [r for r in served if r.get("caller") in MEMORY_CALLERS]
    assert [r["caller"] for r in memory] == ["memory_consolidation", "memory_consolidation", "memory"]
    recorded = set().union(*(_response_ids(path) for path in (FIRST, SECOND, THIRD)))
    assert recorded == {r["id"] for r in served} - {r["id"] for r in memory}
    report = _replayed(SESSIONS)
    bills = [entry["api"]["bill_cost"] for entry in report["files"]]
    assert sum(bills) == pytest.approx(sum(_openai_cost(r) for r in served if r not in memory), rel=1e-6)
    assert report["total"]["settings"][0]["calls"] == len(served) - len(memory) == 5


def test_replay_names_the_memory_calls_of_each_session_the_files_show():
    notes = {path: _replayed(path)["files"][0]["api"]["notes"] for path in (FIRST, SECOND, THIRD)}
    (first,), (second,), (third,) = notes.values()
    assert first.startswith("not in the bill: Codex's memories")
    assert first.endswith("names this session's start the last to run the consolidation (an agent's calls)")
    assert second.endswith("the last to run the extraction of 1 earlier thread(s) (a call each)")
    assert third.endswith("names no job of this session's")  # its instructions carry the summary


def test_the_memories_database_names_the_session_whose_start_ran_each_job():
    assert jobs_run_by(str(FIRST), _thread(FIRST)) == (0, True)
    assert jobs_run_by(str(SECOND), _thread(SECOND)) == (1, False)
    assert jobs_run_by(str(THIRD), _thread(THIRD)) == (0, False)


def test_a_rollout_away_from_its_home_shows_memories_only_by_its_instructions(tmp_path: Path):
    for path in (FIRST, THIRD):
        shutil.copy(path, tmp_path / path.name)
    assert memories_note(str(tmp_path / FIRST.name), _thread(FIRST), in_use=False) is None
    (entry,) = _replayed(tmp_path / FIRST.name)["files"]
    assert entry["api"]["notes"] == []  # nothing in the file shows the feature
    (entry,) = _replayed(tmp_path / THIRD.name)["files"]
    assert entry["api"]["notes"][0].endswith("names no job of this session's")


def test_a_developer_message_that_injects_the_memory_summary_shows_the_feature_on():
    kinds = {"content_item_kinds": ["memories.instructions", "permissions.instructions"]}
    assert carries_memories({"role": "developer", "content": [], "internal_chat_message_metadata_passthrough": kinds})
    text = [{"type": "input_text", "text": "## Memory\n========= MEMORY_SUMMARY BEGINS =========\nv1"}]
    assert carries_memories({"role": "developer", "content": text})
    assert not carries_memories({"role": "user", "content": text})
    assert not carries_memories({"role": "developer", "content": [{"type": "input_text", "text": "## Memory"}]})


@pytest.mark.slow  # drives the real Codex
def test_the_real_clients_memory_calls_are_served_written_nowhere_and_named(tmp_path: Path) -> None:
    from tests.fakes.record_copies import _serving
    from tests.fakes.record_side_calls import MEMORIES, codex_memories_session

    client = require_client("codex")
    with _serving() as served, FakeResponses() as fake:
        codex = Codex(client, tmp_path, project(tmp_path), fake, model="gpt-5.5", extra_config=MEMORIES)
        codex_memories_session(codex, fake)
    memory = [r for r in served if r.get("caller") in MEMORY_CALLERS]
    assert sorted(r["caller"] for r in memory) == ["memory", "memory_consolidation", "memory_consolidation"]
    report = _replayed(codex.codex_home / "sessions")
    bills = [entry["api"]["bill_cost"] for entry in report["files"]]
    assert sum(bills) == pytest.approx(sum(_openai_cost(r) for r in served if r not in memory), rel=1e-6)
    said = [entry["api"]["notes"][0] for entry in report["files"]]
    assert all(note.startswith("not in the bill: Codex's memories") for note in said)


TITLED = Path(__file__).parent / "data" / "codex-0.171.0-thread-title"
(TITLED_ROLLOUT,) = sorted(TITLED.rglob("rollout-*.jsonl"))


def test_the_terminal_uis_title_call_is_in_no_rollout_and_named():
    served = _served("codex-0.171.0-thread-title")
    title = [r for r in served if r.get("caller") == "thread_title"]
    assert len(title) == 1 and title[0]["usage"]["input_tokens"] > served[0]["usage"]["input_tokens"] / 2
    assert _response_ids(TITLED_ROLLOUT) == {r["id"] for r in served} - {title[0]["id"]}
    (entry,) = _replayed(TITLED / "sessions")["files"]
    assert entry["api"]["bill_cost"] == pytest.approx(sum(_openai_cost(r) for r in served if r not in title), rel=1e-6)
    (note,) = entry["api"]["notes"]
    assert note.startswith("not in the bill: the terminal UI's title of this thread ('Read the notes' in ")


def test_only_a_terminal_ui_rollout_with_its_title_in_the_index_names_the_title_call(tmp_path: Path):
    thread = _thread(TITLED_ROLLOUT)
    assert title_note(str(TITLED_ROLLOUT), thread, "cli") is not None
    assert title_note(str(TITLED_ROLLOUT), thread, "exec") is None  # codex exec asks for no title
    assert title_note(str(TITLED_ROLLOUT), "another-thread", "cli") is None
    shutil.copy(TITLED_ROLLOUT, tmp_path / TITLED_ROLLOUT.name)  # away from its home: no index to show it
    assert title_note(str(tmp_path / TITLED_ROLLOUT.name), thread, "cli") is None


@pytest.mark.slow  # drives the real Codex's terminal UI
def test_the_real_terminal_ui_asks_for_a_title_that_no_rollout_records(tmp_path: Path) -> None:
    from tests.fakes.record_copies import _serving
    from tests.fakes.record_side_calls import codex_thread_title_session

    client = require_client("codex")
    with _serving() as served, FakeResponses() as fake:
        codex = Codex(client, tmp_path, project(tmp_path), fake, model="gpt-6.2-sol")
        codex_thread_title_session(codex, fake)
    title = [r for r in served if r.get("caller") == "thread_title"]
    assert len(title) == 1
    (entry,) = _replayed(codex.codex_home / "sessions")["files"]
    assert entry["api"]["bill_cost"] == pytest.approx(sum(_openai_cost(r) for r in served if r not in title), rel=1e-6)
    assert entry["api"]["notes"][0].startswith("not in the bill: the terminal UI's title of this thread")
