"""The call after a producer's compaction is replayed with what the client sent, not the summary alone.

The real Claude Code 2.1.332 wrote this session against the loopback fake (bench/client_audit.py): after
``/compact`` the log holds, between the boundary and the next call, the command's caveat and output, the
re-attached file the session had read, the deferred-tool, agent and skill listings, the environment and the next
prompt: all sent with the summary (the usage counts 22,425 tokens). The estimate of what the producer did rebuilt
the context at that call as the summary alone and dropped them: 19,184 tokens, the live thread's estimate -2.1 %
under the bill.
"""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from typer.testing import CliRunner

from compactctl.cli.main import app

REAL_CLIENTS = Path(__file__).resolve().parents[1] / "formats" / "data" / "real-clients"
SESSION = REAL_CLIENTS / "claude-code-2.1.332-current-models" / "9b8324b4-a8f6-468d-9353-53e74396bdf6.jsonl"


def test_what_the_log_holds_between_a_compaction_and_the_next_call_is_sent_with_the_summary():
    result = CliRunner().invoke(app, ["replay", str(SESSION), "-t", "100000", "--json", "-q"])
    assert result.exit_code == 0, result.output
    (entry,) = orjson.loads(result.stdout)["files"]
    api = entry["api"]
    assert api["producer_compactions"] == 1
    # The estimate simulates the live thread; the bill also holds the calls a rewind left off it and the
    # compaction's own call, which no message of the log is.
    live = api["bill_cost"] - api["unpaired_cost"] - api["off_thread"]["cost"]
    assert api["live_thread_bill_cost"] == pytest.approx(live, abs=1e-9)
    assert api["recorded_estimate_cost"] == pytest.approx(live, rel=0.005)


BRANCHES = REAL_CLIENTS / "claude-code-2.1.332-branches" / "a6b8705d-055c-4dac-8b9a-9741f0961deb.jsonl"


def test_the_estimate_of_what_the_producer_did_is_set_beside_the_bill_of_the_same_calls():
    """A rewind left one billed call off the live thread (the real 2.1.332 branches fixture): bill_cost holds it,
    the estimate simulates the live thread, so recorded_estimate_cost was 13.0 % under bill_cost with nothing to
    say why. live_thread_bill_cost is the bill of the calls the estimate simulates."""
    result = CliRunner().invoke(app, ["replay", str(BRANCHES), "-t", "100000", "--json", "-q"])
    (entry,) = orjson.loads(result.stdout)["files"]
    api = entry["api"]
    assert api["off_thread"]["calls"] == 1
    assert api["live_thread_bill_cost"] == pytest.approx(api["bill_cost"] - api["off_thread"]["cost"], abs=1e-9)
    assert api["recorded_estimate_cost"] == pytest.approx(api["live_thread_bill_cost"], rel=0.005)
    assert api["recorded_estimate_cost"] < 0.9 * api["bill_cost"]
