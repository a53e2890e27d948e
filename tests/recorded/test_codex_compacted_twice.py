"""A Codex thread compacted by hand twice (the TUI's ``/compact``, ``thread/compact/start``), as the real 0.171.0
wrote it (tests/fakes/record_compacted_twice.py): both compaction calls billed once, at the usage served, with the
turns'."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest
from typer.testing import CliRunner

from compactctl.cli.main import app
from tests.replay.test_price_conditions import _served, _served_cost

NAME = "codex-0.171.0-compacted-twice"
FOLDER = Path(__file__).parent / "data" / NAME


def _api() -> dict[str, Any]:
    result = CliRunner().invoke(app, ["replay", str(FOLDER), "-t", "100000", "--json", "-q"])
    assert result.exit_code == 0, result.stderr
    (file,) = orjson.loads(result.stdout)["files"]
    return dict(file["api"])


def test_the_rollout_records_two_compactions_and_no_usage_of_their_calls():
    (rollout,) = FOLDER.glob("rollout-*.jsonl")
    lines = [orjson.loads(line) for line in rollout.read_bytes().splitlines() if line.strip()]
    assert sum(1 for v in lines if v.get("type") == "compacted") == 2
    assert len(_served(NAME)) == 7  # 3 turns (5 calls: two ran a command) and 2 compactions


def test_replay_bills_both_compactions_and_every_turn_as_served():
    api = _api()
    assert api["producer_compactions"] == 2 and api["compaction_estimate"] is None
    assert api["bill_cost"] == pytest.approx(_served_cost(NAME, "openai"), rel=1e-6)
    assert api["bill_cost"] == pytest.approx(0.347975, abs=1e-6)
    assert 0 < api["unpaired_cost"] < api["bill_cost"] / 2  # the two compactions' calls, which no message records
