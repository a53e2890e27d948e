"""A Codex thread compacted by hand twice (the TUI's ``/compact``, ``thread/compact/start``), and a thread compactctl
compacted (``compact --session``) that Codex then compacted itself, as the real 0.171.0 wrote them
(tests/fakes/record_compacted_twice.py): every compaction call billed once, at the usage served, with the turns'."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest
from genai_prices import Usage, calc_price
from typer.testing import CliRunner

from compactctl.cli.main import app
from tests.replay.test_bill import openai_counts
from tests.replay.test_price_conditions import _served, _served_cost

DATA = Path(__file__).parent / "data"
NAME = "codex-0.171.0-compacted-twice"
FOLDER = DATA / NAME
THEN = "codex-0.171.0-compactctl-then-compacted"


def _files(*paths: Path) -> list[dict[str, Any]]:
    result = CliRunner().invoke(app, ["replay", *map(str, paths), "-t", "100000", "--json", "-q"])
    assert result.exit_code == 0, result.stderr
    return list(orjson.loads(result.stdout)["files"])


def _api() -> dict[str, Any]:
    (file,) = _files(FOLDER)
    return dict(file["api"])


def _priced(responses: list[dict[str, Any]]) -> float:
    return sum(
        float(calc_price(Usage(**openai_counts(r["usage"])), r["model"], provider_id="openai").total_price)
        for r in responses
    )


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


def _rollout(thread: str) -> Path:
    (path,) = (DATA / THEN).glob(f"rollout-*-{thread}.jsonl")
    return path


def test_compactctls_new_thread_compacted_by_codex_bills_what_was_served():
    which = orjson.loads((DATA / f"{THEN}.sessions.json").read_bytes())
    served = _served(THEN)  # 5 in the original, then the new thread's turn (2), Codex's compaction, a last turn
    assert len(served) == 9
    files = {Path(f["file"]).name: f["api"] for f in _files(DATA / THEN)}
    original, new = files[_rollout(which["original"]).name], files[_rollout(which["new"]).name]
    assert original["bill_cost"] == pytest.approx(_priced(served[:5]), rel=1e-6)
    assert new["bill_cost"] == pytest.approx(_priced(served[5:]), rel=1e-6)
    assert original["bill_cost"] + new["bill_cost"] == pytest.approx(_served_cost(THEN, "openai"), rel=1e-6)
    assert new["producer_compactions"] == 2  # compactctl's and Codex's
    (alone,) = _files(_rollout(which["new"]))
    assert alone["api"]["bill_cost"] == pytest.approx(new["bill_cost"], rel=1e-9)
    assert alone["api"]["bill_cost"] == pytest.approx(0.212135, abs=1e-6)
