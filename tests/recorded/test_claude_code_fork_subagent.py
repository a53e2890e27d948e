"""Claude Code 2.1.332's forked subagent (the Agent tool's ``subagent_type: "fork"``), as the real client wrote it
(tests/fakes/record_subagents.py): its file opens on a ``fork-context-ref`` and a copy of the session's Agent call,
which the session's file bills. Replay bills each response the fake served once; the file reads as valid."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest
from typer.testing import CliRunner

from compactctl.cli.main import app
from compactctl.formats.records import parse_records
from compactctl.recorded import claude_code
from tests.replay.test_price_conditions import _served, _served_cost

FOLDER = Path(__file__).parent / "data" / "claude-code-2.1.332-fork-subagent"
(SESSION,) = FOLDER.glob("*.jsonl")
(FORK,) = FOLDER.glob("*/subagents/agent-*.jsonl")
NAME = "claude-code-2.1.332-fork-subagent"


def _replayed(path: Path) -> dict[str, Any]:
    result = CliRunner().invoke(app, ["replay", str(path), "-t", "100000", "--json", "-q"])
    assert result.exit_code == 0, result.stderr
    return dict(orjson.loads(result.stdout))


def test_the_forks_copy_of_the_agent_call_is_billed_once_in_the_session():
    session = claude_code.read(parse_records(SESSION.read_bytes(), str(SESSION))[0], str(SESSION))
    fork = next(c for c in session.contexts if c.label.startswith("subagent"))
    assert [call.copied for call in fork.calls] == [True, False, False]  # the copy, then its own two calls
    assert session.copied_from == (SESSION.stem,)
    served = _served(NAME)
    assert session.usage_total().input_tokens == sum(
        r["usage"]["input_tokens"] + r["usage"]["cache_read_input_tokens"] + r["usage"]["cache_creation_input_tokens"]
        for r in served
    )


@pytest.mark.parametrize("given", [SESSION, FOLDER])
def test_replay_bills_every_response_served_once(given: Path):
    none = _replayed(given)["total"]["settings"][0]
    assert none["calls"] == len(_served(NAME)) == 6
    assert none["cost"] == pytest.approx(_served_cost(NAME, "anthropic"), rel=1e-6)


def test_the_forks_file_opens_on_the_models_turn_and_is_valid_as_its_client_sends_it():
    # The client sends the session's context before it: opening on the copied Agent call is no fault there.
    result = CliRunner().invoke(app, ["report", str(FORK), "--json"])
    (entry,) = orjson.loads(result.stdout)["files"]
    assert entry["valid_before"] is True, entry
    first = orjson.loads(FORK.read_bytes().splitlines()[0])
    assert first["type"] == "fork-context-ref" and first["parentSessionId"] == SESSION.stem
