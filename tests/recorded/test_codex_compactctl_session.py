"""A session compactctl wrote (``compact --session ID``: a new rollout beside the original), then continued by the
real Codex 0.171.0 with two turns (tests/fakes/record_compactctl_sessions.py). The new rollout opens on a copy of the
original's lines, its responses made and paid for there, marked as Codex marks the items a thread copies from
another (``forked_from_id``, ``inherited_user_message``): replayed alone it bills only the two turns the client added,
and with the original every response the fake served once. Before, it billed every copy again: 7 calls $0.442 for
the 2 served ($0.106) alone, 12 calls $0.778 for the 7 served ($0.442) with the original."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import orjson
import pytest
from genai_prices import Usage, calc_price
from typer.testing import CliRunner

from compactctl.cli.main import app
from tests.replay.test_bill import openai_counts

DATA = Path(__file__).parent / "data"
NAME = "codex-0.171.0-compactctl-session"
FOLDER = DATA / NAME
SESSIONS = json.loads((DATA / f"{NAME}.sessions.json").read_text())  # which thread is which
ORIGINAL_CALLS = 5  # the original rollout's responses, served first; the new rollout's 2 after


def _rollout(thread: str, folder: Path = FOLDER) -> Path:
    (path,) = folder.glob(f"**/rollout-*-{thread}.jsonl")
    return path


def _served() -> list[dict[str, Any]]:
    return list(orjson.loads((DATA / f"{NAME}.served.json").read_bytes()))


def _cost(responses: list[dict[str, Any]]) -> float:
    def counts(usage: dict[str, Any]) -> dict[str, int]:
        return openai_counts({**usage, "cached_input_tokens": usage["input_tokens_details"]["cached_tokens"]})

    return sum(
        float(calc_price(Usage(**counts(r["usage"])), r["model"], provider_id="openai").total_price) for r in responses
    )


def _bill(path: Path) -> tuple[int, float]:
    """Replay's bill of a file or folder: its calls and cost, summed over the files' ``bill`` rows."""
    result = CliRunner().invoke(app, ["replay", str(path), "-t", "100000", "--json", "-q"])
    assert result.exit_code == 0, result.output
    rows = [row for f in json.loads(result.stdout)["files"] for row in f["settings"] if row.get("basis") == "bill"]
    return sum(row["calls"] for row in rows), sum(row["cost"] for row in rows)


def test_the_new_rollout_alone_bills_only_the_turns_its_client_added():
    calls, cost = _bill(_rollout(SESSIONS["new"]))
    added = _served()[ORIGINAL_CALLS:]
    assert calls == len(added) == 2
    assert cost == pytest.approx(_cost(added), rel=1e-6)


def test_with_the_original_every_response_served_is_billed_once():
    calls, cost = _bill(FOLDER)
    assert calls == len(_served()) == 7
    assert cost == pytest.approx(_cost(_served()), rel=1e-6)


def test_compact_by_id_marks_the_new_rollouts_lines_as_the_originals(tmp_path: Path, monkeypatch):
    """compactctl's own new rollout of the original, before any turn of the client's: every response in it is the
    original's (no row bills one), and beside the original it adds nothing to the bill."""
    day = tmp_path / ".codex" / "sessions" / "2026" / "12" / "06"
    day.mkdir(parents=True)
    original = _rollout(SESSIONS["original"])
    (day / original.name).write_bytes(original.read_bytes())
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / ".codex"))
    done = CliRunner().invoke(app, ["compact", "--session", SESSIONS["original"], "--client", "codex",
                                    "--force", "--json", "-q"])  # fmt: skip
    assert done.exit_code == 0, done.output
    new = _rollout(json.loads(done.stdout)["session"]["new_id"], tmp_path / ".codex")
    assert _bill(new)[0] == 0
    calls, cost = _bill(tmp_path / ".codex" / "sessions")
    assert calls == ORIGINAL_CALLS
    assert cost == pytest.approx(_cost(_served()[:ORIGINAL_CALLS]), rel=1e-6)
    assert json.loads(new.read_bytes().splitlines()[0])["payload"]["forked_from_id"] == SESSIONS["original"]
