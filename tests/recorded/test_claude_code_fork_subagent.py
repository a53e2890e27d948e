"""Claude Code's forked subagent (the Agent tool's ``subagent_type: "fork"``), as the real client wrote it
(tests/fakes/record_subagents.py), 2.1.332 and 2.1.337: its file opens on a ``fork-context-ref`` and a copy of the
session's Agent call, which the session's file bills. Replay bills each response the fake served once; the file reads
as valid. 2.1.337 also writes ``api-request-route`` records (which provider and credential the requests went to; no
``uuid``, ``parentUuid`` or ``timestamp``), one per run and route, which are no part of the conversation."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
import pytest
from typer.testing import CliRunner

from compactctl.cli.main import app
from compactctl.formats.records import parse_records
from compactctl.recorded import claude_code
from tests.replay.test_price_conditions import _served, _served_cost

DATA = Path(__file__).parent / "data"
RELEASES = ("2.1.332", "2.1.337")


@dataclass(frozen=True)
class Recorded:
    name: str  # claude-code-<release>-fork-subagent, the fixture's folder and its .served.json
    folder: Path
    session: Path
    fork: Path


def _recorded(release: str) -> Recorded:
    name = f"claude-code-{release}-fork-subagent"
    folder = DATA / name
    (session,) = folder.glob("*.jsonl")
    (fork,) = folder.glob("*/subagents/agent-*.jsonl")
    return Recorded(name, folder, session, fork)


@pytest.fixture(params=RELEASES)
def recorded(request: pytest.FixtureRequest) -> Recorded:
    return _recorded(request.param)


def _replayed(path: Path) -> dict[str, Any]:
    result = CliRunner().invoke(app, ["replay", str(path), "-t", "100000", "--json", "-q"])
    assert result.exit_code == 0, result.stderr
    return dict(orjson.loads(result.stdout))


def test_the_forks_copy_of_the_agent_call_is_billed_once_in_the_session(recorded: Recorded):
    path = recorded.session
    session = claude_code.read(parse_records(path.read_bytes(), str(path))[0], str(path))
    fork = next(c for c in session.contexts if c.label.startswith("subagent"))
    assert [call.copied for call in fork.calls] == [True, False, False]  # the copy, then its own two calls
    assert session.copied_from == (path.stem,)
    served = _served(recorded.name)
    assert session.usage_total().input_tokens == sum(
        r["usage"]["input_tokens"] + r["usage"]["cache_read_input_tokens"] + r["usage"]["cache_creation_input_tokens"]
        for r in served
    )


@pytest.mark.parametrize("whole", [False, True])
def test_replay_bills_every_response_served_once(recorded: Recorded, whole: bool):
    none = _replayed(recorded.folder if whole else recorded.session)["total"]["settings"][0]
    assert none["calls"] == len(_served(recorded.name)) == 6
    assert none["cost"] == pytest.approx(_served_cost(recorded.name, "anthropic"), rel=1e-6)


def test_the_forks_file_opens_on_the_models_turn_and_is_valid_as_its_client_sends_it(recorded: Recorded):
    # The client sends the session's context before it: opening on the copied Agent call is no fault there.
    result = CliRunner().invoke(app, ["report", str(recorded.fork), "--json"])
    (entry,) = orjson.loads(result.stdout)["files"]
    assert entry["valid_before"] is True, entry
    first = orjson.loads(recorded.fork.read_bytes().splitlines()[0])
    assert first["type"] == "fork-context-ref" and first["parentSessionId"] == recorded.session.stem


def _routes(data: bytes) -> list[bytes]:
    return [line for line in data.splitlines() if line.startswith(b'{"type":"api-request-route"')]


def test_the_2_1_337_route_records_are_no_messages_and_compact_keeps_them(tmp_path: Path):
    """The same session by both releases reads as the same conversation, and compact writes 2.1.337's route records
    back as they were (the client, resuming, reads the first; 2.1.337 resumes compactctl's output)."""
    old, new = (_recorded(release) for release in RELEASES)
    routes = _routes(new.session.read_bytes())
    assert len(routes) > 1 and not _routes(old.session.read_bytes())
    assert orjson.loads(routes[0]) == {
        "type": "api-request-route", "provider": "customEndpoint", "credential": "key", "sessionId": new.session.stem,
    }  # fmt: skip
    kept = ("messages_before", "messages_after", "valid_before", "valid_after")
    reports = []
    for recorded in (old, new):
        out = tmp_path / recorded.session.name
        args = ["compact", str(recorded.session), "-o", str(out), "-s", "window", "--keep-recent", "2", "--json", "-q"]
        result = CliRunner().invoke(app, args)
        assert result.exit_code == 0, result.stderr
        (entry,) = orjson.loads(result.stdout)["files"]
        reports.append({key: entry[key] for key in kept})
        if recorded is new:
            assert _routes(out.read_bytes()) == routes
    assert reports[0] == reports[1], reports
