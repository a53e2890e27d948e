"""A session whose usage reports no prompt caching is estimated as billed: no cache writes.

The real Claude Code 2.1.332 wrote these sessions against the loopback fake with its caching off
(tests/fakes/anthropic.py, ``cache_writes=None``): every call's usage is plain ``input_tokens``, no
``cache_read_input_tokens`` or ``cache_creation_input_tokens``, as a proxy or a provider that never
caches reports it. The bill prices every input token plain. Replay's estimates used to bill what no
call read from the cache as a cache write (1.25x input at Anthropic), which no call of such a
session pays: its calibrated estimate of what the session did was +24.7 % over the bill.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest
from typer.testing import CliRunner

from compactctl.cli.main import app

REAL_CLIENTS = Path(__file__).resolve().parents[1] / "formats" / "data" / "real-clients"
NO_CACHE = REAL_CLIENTS / "claude-code-2.1.332-model-switch.jsonl"  # 12 calls, no cache fields used
CACHED = REAL_CLIENTS / "claude-code-2.1.332-cache-1h-long-context.jsonl"  # every write kept one hour


def _replay(path: Path, *options: str) -> dict[str, Any]:
    result = CliRunner().invoke(app, ["replay", str(path), *options, "--json", "-q"])
    assert result.exit_code == 0, result.output
    (entry,) = orjson.loads(result.stdout)["files"]
    return dict(entry)


def _usages(path: Path) -> list[dict[str, Any]]:
    records = [orjson.loads(line) for line in path.read_bytes().splitlines() if line.strip()]
    return [r["message"]["usage"] for r in records if r.get("type") == "assistant" and r["message"].get("usage")]


def test_a_session_with_no_cache_reported_is_estimated_with_no_cache_writes():
    usages = _usages(NO_CACHE)
    assert usages and not any(u.get("cache_read_input_tokens") or u.get("cache_creation_input_tokens") for u in usages)
    entry = _replay(NO_CACHE, "-t", "20000")
    api = entry["api"]
    # The calibrated replay of what the session did, against what its usage says it cost.
    assert api["recorded_estimate_cost"] == pytest.approx(api["bill_cost"], rel=0.01)
    assert api["baseline_estimate_cost"] == pytest.approx(api["bill_cost"], rel=0.01)
    compacted = [row for row in entry["settings"] if row["compactions"]]
    assert compacted  # a setting that compacts: still no writes, every input token plain
    assert all(row["cache_write_tokens"] == 0 for row in entry["settings"])


def test_a_session_whose_usage_reports_writes_is_still_estimated_with_them():
    entry = _replay(CACHED, "-t", "300000")
    api = entry["api"]
    assert api["recorded_estimate_cost"] == pytest.approx(api["bill_cost"], rel=0.01)
    assert all(row["cache_write_tokens"] > 0 for row in entry["settings"])


# Sessions the producer compacted against a fake that never caches: Codex's remote compaction on a low limit,
# the same across a model switch, and the parent a fork was made from after its compaction.
COMPACTED = [
    REAL_CLIENTS / "codex-0.171.0-compacted.jsonl",
    REAL_CLIENTS / "codex-0.171.0-model-switch-compacted.jsonl",
    REAL_CLIENTS / "codex-0.171.0-fork-after-compaction" / "parent.jsonl",
    REAL_CLIENTS / "claude-code-2.1.332-compacted.jsonl",
]


@pytest.mark.parametrize("path", COMPACTED, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_the_call_after_a_producer_compaction_reads_what_its_usage_says(path: Path):
    # The estimate of what the producer did replays its compaction; the call after it sends a new history, whose
    # cache reads no earlier call's hit rate describes. It read what its usage says (here nothing), not the
    # prefix the simulation shares with the call before: that priced 9,633 tokens as cached on
    # codex-0.171.0-compacted, -28.6 % under the bill (the fork's parent -43.4 %, the model switch -16.0 %).
    api = _replay(path, "-t", "300000")["api"]
    assert api["producer_compactions"] >= 1
    # The producer's own compaction calls are in the bill but no message of the log: not estimated.
    billed = api["bill_cost"] - api["unpaired_cost"]
    assert api["recorded_estimate_cost"] == pytest.approx(billed, rel=0.01)


@pytest.mark.parametrize("path", COMPACTED, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_no_row_of_a_session_that_never_caches_reads_the_cache(path: Path):
    # No call of these sessions read from the cache (the fake never caches), so the uncompacted history the none
    # row and the threshold rows replay reads nothing at the call after the producer's compaction either. They
    # assumed the call read the prefix it shares with the call before: codex-0.171.0-compacted's baseline priced
    # 9,633 tokens as cached, $0.1051 for $0.1484 (the model switch 15,501, the fork's parent 9,446). Re-pinned
    # for it: none (bench/commands_golden.py cases of shared/ are unchanged: all of them cache).
    assert not any(u.get("cached_input_tokens") or u.get("cache_read_input_tokens") for u in _all_usages(path))
    entry = _replay(path, "-t", "300000")
    assert [row["cached_tokens"] for row in entry["settings"]] == [0] * len(entry["settings"])
    api = entry["api"]
    assert api["baseline_estimate_cost"] == entry["settings"][0]["cost"]


def _all_usages(path: Path) -> list[dict[str, Any]]:
    """Every usage a Claude Code record or a Codex token_count reports."""
    records = [orjson.loads(line) for line in path.read_bytes().splitlines() if line.strip()]
    found = [r["message"]["usage"] for r in records if r.get("type") == "assistant" and r["message"].get("usage")]
    counts = [r["payload"].get("info") for r in records if (r.get("payload") or {}).get("type") == "token_count"]
    return found + [info["last_token_usage"] for info in counts if isinstance(info, dict)]
