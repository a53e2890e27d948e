"""A session compactctl wrote (``compact --session ID``: a new session beside the original), then continued by the real
client with two turns (tests/fakes/record_compactctl_sessions.py: Claude Code 2.1.332, Codex 0.171.0, Gemini CLI
0.61.0). The new session opens on a copy of the original's responses, made and paid for there, and compactctl marks
them so, as each client marks its own forks' copies (Claude Code ``requestSessionId``; Codex ``forked_from_id`` and
``inherited_user_message``; Gemini CLI, which has no mark, ``compactctlCopiedFrom``): replayed alone it bills only
the two turns the client added, and with the original every response the fake served once. Before, it billed every
copy again: alone 9 / 7 / 6 calls for the 2 served, with the original 9 / 12 / 10 for the 7 / 7 / 6 served."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest
from genai_prices import Usage, calc_price
from typer.testing import CliRunner

from compactctl.cli.main import app
from tests.replay.test_bill import anthropic_counts, google_counts, openai_counts

DATA = Path(__file__).parent / "data"


def _codex_counts(usage: dict[str, Any]) -> dict[str, int]:
    return openai_counts({**usage, "cached_input_tokens": usage["input_tokens_details"]["cached_tokens"]})


@dataclasses.dataclass(frozen=True)
class Client:
    """One client's fixture: where its sessions are found, how its usage is priced, where it keeps sessions."""

    name: str  # --client
    fixture: str
    original_calls: int  # the original session's responses, served first; the new session's 2 after
    provider: str
    counts: Callable[[dict[str, Any]], dict[str, int]]
    pattern: Callable[[str], str]  # a session id -> the glob of its file
    home: str  # the folder, under HOME, the original is put in
    kept: str  # the folder, under HOME, the client keeps every session in (a new Codex rollout goes in today's)

    def file(self, session: str, folder: Path | None = None) -> Path:
        (path,) = (folder or DATA / self.fixture).glob(self.pattern(session))
        return path

    def served(self) -> list[dict[str, Any]]:
        return list(orjson.loads((DATA / f"{self.fixture}.served.json").read_bytes()))

    def sessions(self) -> dict[str, str]:  # which file is which
        return dict(json.loads((DATA / f"{self.fixture}.sessions.json").read_text()))

    def cost(self, responses: list[dict[str, Any]]) -> float:
        return sum(
            float(calc_price(Usage(**self.counts(r["usage"])), r["model"], provider_id=self.provider).total_price)
            for r in responses
        )


CLIENTS = [
    Client("claude-code", "claude-code-2.1.332-compactctl-session", 5, "anthropic", anthropic_counts,
           lambda session: f"**/{session}.jsonl", ".claude/projects/-home-user-project", ".claude/projects"),
    Client("codex", "codex-0.171.0-compactctl-session", 5, "openai", _codex_counts,
           lambda thread: f"**/rollout-*-{thread}.jsonl", ".codex/sessions/2026/12/06", ".codex/sessions"),
    Client("gemini", "gemini-cli-0.61.0-compactctl-session", 4, "google", google_counts,
           lambda session: f"**/session-*-{session[:8]}.jsonl", ".gemini/tmp/project/chats", ".gemini/tmp"),
]  # fmt: skip


def _bill(path: Path) -> tuple[int, float]:
    """Replay's bill of a file or folder: its calls and cost, summed over the files' ``bill`` rows."""
    result = CliRunner().invoke(app, ["replay", str(path), "-t", "100000", "--json", "-q"])
    assert result.exit_code == 0, result.output
    rows = [row for f in json.loads(result.stdout)["files"] for row in f["settings"] if row.get("basis") == "bill"]
    return sum(row["calls"] for row in rows), sum(row["cost"] for row in rows)


@pytest.mark.parametrize("client", CLIENTS, ids=lambda c: c.name)
def test_the_new_session_alone_bills_only_the_turns_its_client_added(client: Client):
    calls, cost = _bill(client.file(client.sessions()["new"]))
    added = client.served()[client.original_calls :]
    assert calls == len(added) == 2
    assert cost == pytest.approx(client.cost(added), rel=1e-6)


@pytest.mark.parametrize("client", CLIENTS, ids=lambda c: c.name)
def test_with_the_original_every_response_served_is_billed_once(client: Client):
    calls, cost = _bill(DATA / client.fixture)
    assert calls == len(client.served()) == client.original_calls + 2
    assert cost == pytest.approx(client.cost(client.served()), rel=1e-6)


@pytest.mark.parametrize("client", CLIENTS, ids=lambda c: c.name)
def test_compact_by_id_marks_the_copied_responses_as_the_originals(client: Client, tmp_path: Path, monkeypatch):
    """compactctl's own new session of the original, before any turn of the client's: every response in it is the
    original's (no row bills one), and beside the original it adds nothing to the bill."""
    home = tmp_path / client.home
    home.mkdir(parents=True)
    sessions = client.sessions()
    original = client.file(sessions["original"])
    (home / original.name).write_bytes(original.read_bytes())
    monkeypatch.setenv("HOME", str(tmp_path))
    for variable in ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "GEMINI_CLI_HOME"):
        monkeypatch.delenv(variable, raising=False)
    done = CliRunner().invoke(app, ["compact", "--session", sessions["original"], "--client", client.name,
                                    "--force", "--json", "-q"])  # fmt: skip
    assert done.exit_code == 0, done.output
    new = client.file(json.loads(done.stdout)["session"]["new_id"], tmp_path / client.kept)
    assert _bill(new)[0] == 0
    calls, cost = _bill(tmp_path / client.kept)
    assert calls == client.original_calls
    assert cost == pytest.approx(client.cost(client.served()[: client.original_calls]), rel=1e-6)
    if client.name == "codex":  # marked as 0.171 marks a thread's copies from another
        assert json.loads(new.read_bytes().splitlines()[0])["payload"]["forked_from_id"] == sessions["original"]


def _replayed(path: Path) -> dict[str, Any]:
    result = CliRunner().invoke(app, ["replay", str(path), "-t", "100000", "--json", "-q"])
    assert result.exit_code == 0, result.output
    (file,) = json.loads(result.stdout)["files"]
    return dict(file)


@pytest.mark.parametrize("client", CLIENTS, ids=lambda c: c.name)
def test_compactctls_compaction_is_no_producer_call_and_no_evidence_for_the_calibration(client: Client):
    """The compaction compactctl wrote is named as its, and no producer's compaction call is estimated for it (Gemini
    CLI's was: 4 calls, $0.0254). The responses copied after it keep the usage of the history it replaced; taken as
    evidence they made the calibration warn (Claude Code: held-out per-call error 22.9 % median) and the uncompacted
    row come out as small as the compacted one. Now that row, the thread as if never compacted, sends more than the
    original's own largest call did."""
    sessions = client.sessions()
    new, original = _replayed(client.file(sessions["new"])), _replayed(client.file(sessions["original"]))
    api = new["api"]
    assert any("compactctl's own, not the producer's" in note for note in api["notes"])
    assert api["compaction_estimate"] is None
    assert not api["calibration"]["warnings"]
    none = next(row for row in new["settings"] if row["trigger"] == "none")
    billed = next(row for row in original["settings"] if row.get("basis") == "bill")
    assert none["peak_context"] > max(billed["context_per_call"])


@pytest.mark.parametrize("client", CLIENTS[:2], ids=lambda c: c.name)
def test_plain_compacts_output_resumed_in_place_bills_every_response_served_once(client: Client):
    """``<client>-plain-output-resumed``: plain ``compact``'s output moved over the session's file and resumed (two
    turns). Claude Code's holds the original's 5 calls, 2 responses compactctl copied after its boundary, then the
    client's 2: before, the copies were billed again (9 calls, $0.7436 for the $0.5620 served). Codex's holds the
    rollout's lines, compactctl's ``compacted`` line and its ``token_count``, then the client's 2 turns."""
    plain = dataclasses.replace(client, fixture=client.fixture.replace("compactctl-session", "plain-output-resumed"))
    (path,) = (DATA / plain.fixture).glob("*.jsonl")
    calls, cost = _bill(path)
    served = plain.served()
    assert calls == len(served) == 7
    assert cost == pytest.approx(plain.cost(served), rel=1e-6)
    copies = sum(b'"id":"msg_compactctl_' in line for line in path.read_bytes().splitlines())
    assert copies == (
        2 if client.name == "claude-code" else 0
    )  # a stretch between the original's calls and the client's
