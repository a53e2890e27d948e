"""A producer's compaction call the file records no usage for is estimated apart, never billed.

The real Claude Code 2.1.332 ran ``/compact`` against the loopback fake (which caches nothing) and
wrote the summarizing call's usage into the session only in its ``cost-state`` record. Without that
record (Claude Code 1.0.x writes none; nor does a session copied without it) the file's own usage
holds the responses alone: the bill is that, and the compaction call is estimated from the request
it was, said in a note and in ``api.compaction_estimate``, in no row. The cost-state of the same
session is the truth the estimate is checked against. (Replay used to add the estimate into the bill,
and estimated it as read from a cache this session never used: $0.0145 for a $0.0575 call.)
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest
from typer.testing import CliRunner

from compactctl.cli.main import app

COMPACTED = (
    Path(__file__).resolve().parents[1] / "formats" / "data" / "real-clients" / "claude-code-2.1.332-compacted.jsonl"
)


def _replay(path: Path) -> dict[str, Any]:
    result = CliRunner().invoke(app, ["replay", str(path), "-t", "100000", "--json", "-q"])
    assert result.exit_code == 0, result.output
    (entry,) = orjson.loads(result.stdout)["files"]
    return dict(entry)


def _records(path: Path) -> list[dict[str, Any]]:
    return [orjson.loads(line) for line in path.read_bytes().splitlines() if line.strip()]


def test_a_compaction_call_with_no_usage_in_the_file_is_estimated_apart(tmp_path):
    records = _records(COMPACTED)
    assert any(r.get("type") == "cost-state" for r in records)
    with_state = _replay(COMPACTED)["api"]
    assert with_state["compaction_estimate"] is None  # recorded in the file: in the bill
    truth_cost = with_state["unpaired_cost"]
    (state,) = [r for r in records if r.get("type") == "cost-state"][-1:]
    (usage,) = state["modelUsage"].values()
    responses = {r["message"]["id"]: r["message"]["usage"] for r in records if r.get("type") == "assistant"}
    truth_input = usage["inputTokens"] - sum(u["input_tokens"] for u in responses.values())

    stripped = tmp_path / "no-cost-state.jsonl"
    stripped.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in records if r.get("type") != "cost-state"))
    entry = _replay(stripped)
    api = entry["api"]
    # The bill is the file's own usage: the two responses, nothing estimated in it.
    assert api["unpaired_cost"] == 0
    assert api["bill_cost"] == pytest.approx(with_state["bill_cost"] - truth_cost, rel=1e-6)
    recorded = next(row for row in entry["settings"] if row["basis"] == "bill")
    assert recorded["calls"] == 2 and recorded["cost"] == pytest.approx(api["bill_cost"])
    # The compaction call apart: one, estimated close to what the client recorded of it.
    apart = api["compaction_estimate"]
    assert apart["calls"] == 1
    assert apart["input_tokens"] == pytest.approx(truth_input, rel=0.01)
    assert apart["cached_tokens"] == 0  # the session's usage shows no caching: nothing read from a cache
    assert apart["cost"] == pytest.approx(truth_cost, rel=0.03)
    assert any("1 compaction call(s) record no usage in the log" in note for note in api["notes"])
