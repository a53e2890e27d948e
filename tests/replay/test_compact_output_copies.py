"""``compact``'s output replayed with the session it was made from, on the real clients' own files
(tests/formats/data/real-clients): the run bills the original's calls once, whichever file holds them
(bench/consistency_sweep.py's check 3)."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from typer.testing import CliRunner

from compactctl.cli.main import app

REAL = Path(__file__).parents[1] / "formats" / "data" / "real-clients"


def _bill(*paths: Path) -> tuple[int, float]:
    result = CliRunner().invoke(app, ["replay", *map(str, paths), "-t", "100000", "--json", "-q"])
    assert result.exit_code == 0, result.output
    rows = [r for f in orjson.loads(result.stdout)["files"] for r in f["settings"] if r.get("basis") == "bill"]
    return sum(r["calls"] for r in rows), round(sum(r["cost"] for r in rows), 9)


def _compacted(path: Path, out: Path, *steps: str) -> Path:
    result = CliRunner().invoke(app, ["compact", str(path), "-o", str(out), "-q", "--write-unchanged", *steps])
    assert result.exit_code == 0, result.output
    return out


@pytest.mark.parametrize(
    "name", ["codex-0.171.0-compacted.jsonl", "codex-0.171.0-switch-compaction.jsonl"], ids=lambda n: n[:-6]
)
def test_a_codex_compaction_the_output_copies_is_billed_once(name: str, tmp_path: Path) -> None:
    """Codex records its compaction's own call (a ``token_usage_record`` with no response item); the output holds that
    line as the original does. Before, the run billed it again: 3 calls $0.246405 for the original's $0.197045."""
    path = REAL / name
    out = _compacted(path, tmp_path / name)
    alone = _bill(path)
    assert _bill(out) == alone
    assert _bill(path, out) == alone
