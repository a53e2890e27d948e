"""A session compactctl wrote (``compact --session ID``: a new session beside the original), then continued by the
real Gemini CLI 0.61.0 with two turns (tests/fakes/record_compactctl_sessions.py). The new session opens on a copy of
the original's records, its responses made and paid for there, each ``gemini`` record with usage naming that session
(``compactctlCopiedFrom``): replayed alone it bills only the two turns the client added, and with the original every
response the fake served once. Before, it billed every copy again: 6 calls $0.252 for the 2 served ($0.047) alone,
10 calls $0.457 for the 6 served ($0.252) with the original."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import orjson
import pytest
from genai_prices import Usage, calc_price
from typer.testing import CliRunner

from compactctl.cli.main import app
from tests.replay.test_bill import google_counts

DATA = Path(__file__).parent / "data"
NAME = "gemini-cli-0.61.0-compactctl-session"
FOLDER = DATA / NAME
SESSIONS = json.loads((DATA / f"{NAME}.sessions.json").read_text())  # which session is which
ORIGINAL_CALLS = 4  # the original session's responses, served first; the new session's 2 after


def _chat(session: str, folder: Path = FOLDER) -> Path:
    (path,) = folder.glob(f"**/session-*-{session[:8]}.jsonl")
    return path


def _served() -> list[dict[str, Any]]:
    return list(orjson.loads((DATA / f"{NAME}.served.json").read_bytes()))


def _cost(responses: list[dict[str, Any]]) -> float:
    return sum(
        float(calc_price(Usage(**google_counts(r["usage"])), r["model"], provider_id="google").total_price)
        for r in responses
    )


def _bill(path: Path) -> tuple[int, float]:
    """Replay's bill of a file or folder: its calls and cost, summed over the files' ``bill`` rows."""
    result = CliRunner().invoke(app, ["replay", str(path), "-t", "100000", "--json", "-q"])
    assert result.exit_code == 0, result.output
    rows = [row for f in json.loads(result.stdout)["files"] for row in f["settings"] if row.get("basis") == "bill"]
    return sum(row["calls"] for row in rows), sum(row["cost"] for row in rows)


def test_the_new_session_alone_bills_only_the_turns_its_client_added():
    calls, cost = _bill(_chat(SESSIONS["new"]))
    added = _served()[ORIGINAL_CALLS:]
    assert calls == len(added) == 2
    assert cost == pytest.approx(_cost(added), rel=1e-6)


def test_with_the_original_every_response_served_is_billed_once():
    calls, cost = _bill(FOLDER)
    assert calls == len(_served()) == 6
    assert cost == pytest.approx(_cost(_served()), rel=1e-6)


def test_compact_by_id_names_the_session_that_made_each_copied_response(tmp_path: Path, monkeypatch):
    """compactctl's own new session of the original, before any turn of the client's: every response in it is the
    original's (no row bills one), and beside the original it adds nothing to the bill."""
    chats = tmp_path / ".gemini" / "tmp" / "project" / "chats"
    chats.mkdir(parents=True)
    original = _chat(SESSIONS["original"])
    (chats / original.name).write_bytes(original.read_bytes())
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("GEMINI_CLI_HOME", raising=False)
    done = CliRunner().invoke(app, ["compact", "--session", SESSIONS["original"], "--client", "gemini",
                                    "--force", "--json", "-q"])  # fmt: skip
    assert done.exit_code == 0, done.output
    new = _chat(json.loads(done.stdout)["session"]["new_id"], chats)
    assert _bill(new)[0] == 0
    calls, cost = _bill(chats)
    assert calls == ORIGINAL_CALLS
    assert cost == pytest.approx(_cost(_served()[:ORIGINAL_CALLS]), rel=1e-6)
