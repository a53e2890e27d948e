"""``compact``'s plain output replayed: the calls it holds are the original's, billed once.

Plain ``compact`` of a Claude Code session writes the session's records, its boundary and summary, and then the kept
tail's responses again under new ids (``msg_compactctl_``), with the usage they were billed with; of a Codex rollout, a
``compacted`` line with no opaque item after the rollout's lines. Before, the Claude Code output replayed alone billed
those copies again (kcosr's 16 calls as 22, $0.5666 as $0.7386), and the Codex one estimated a producer's compaction
call for compactctl's compaction (AcidicSoil's $0.0075). Replayed with the original, the output bills nothing: before,
a Codex output billed its calls again (yoavf's $0.2150 twice).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest
from typer.testing import CliRunner

from compactctl.cli.main import app
from tests.conftest import SHARED_TRANSCRIPTS, needs_transcripts

pytestmark = needs_transcripts


def _sessions() -> list[Path]:
    # bastion-agentique's session records no usage (a GLM model behind Claude Code): it replays as the transcript it
    # reads as, which for the output is what follows the boundary; no bill to compare.
    found = sorted(SHARED_TRANSCRIPTS.glob("claude-code/*/*.jsonl")) + sorted(
        SHARED_TRANSCRIPTS.glob("codex/*/*.jsonl")
    )
    return [path for path in found if "bastion" not in path.parent.name]


def _replay(*paths: Path) -> list[dict[str, Any]]:
    result = CliRunner().invoke(app, ["replay", *map(str, paths), "-t", "50k", "--json"])
    assert result.exit_code == 0, result.stderr
    return orjson.loads(result.stdout)["files"]


def _compacted(path: Path, tmp_path: Path) -> Path:
    out = tmp_path / path.name
    result = CliRunner().invoke(app, ["compact", str(path), "-o", str(out), "-q", "--write-unchanged"])
    assert result.exit_code == 0, result.stderr
    return out


@pytest.mark.parametrize("path", _sessions(), ids=lambda p: f"{p.parent.parent.name}/{p.parent.name[:20]}")
def test_the_output_replayed_alone_bills_the_originals_calls_once(path, tmp_path):
    (original,) = _replay(path)
    (output,) = _replay(_compacted(path, tmp_path))
    assert output["api"]["bill_cost"] == pytest.approx(original["api"]["bill_cost"], abs=1e-9)
    assert output["api"]["bill_input_tokens"] == original["api"]["bill_input_tokens"]
    assert [row["calls"] for row in output["settings"]] == [row["calls"] for row in original["settings"]]
    # compactctl's compaction made no call: nothing is estimated for it, and the bill row is the original's.
    assert output["api"]["compaction_estimate"] == original["api"]["compaction_estimate"]
    assert output["settings"][0]["trigger"] == original["settings"][0]["trigger"]
    assert output["settings"][0]["cost"] == pytest.approx(original["settings"][0]["cost"], abs=1e-9)


@pytest.mark.parametrize("path", _sessions()[:1] + _sessions()[-1:], ids=lambda p: p.parent.parent.name)
def test_with_the_original_the_output_bills_nothing(path, tmp_path):
    original, output = _replay(path, _compacted(path, tmp_path))
    (alone,) = _replay(path)
    assert original["api"]["bill_cost"] == pytest.approx(alone["api"]["bill_cost"], abs=1e-9)
    assert output["api"]["bill_cost"] == 0


def test_a_compaction_that_wrote_no_summary_is_compactctls_by_its_boundary(tmp_path):
    # Masking tool outputs folds nothing into a summary: the boundary's uuid, derived as compactctl's writer derives it,
    # is the only mark. Before, bastion-agentique's output read as the producer's manual /compact.
    from compactctl.formats.records import parse_records
    from compactctl.recorded import COMPACTCTL, read_recorded

    path = SHARED_TRANSCRIPTS / "claude-code" / "bastion-agentique__bastion" / "claude-session.jsonl"
    out = _compacted(path, tmp_path)
    (context,) = read_recorded("claude-code", parse_records(out.read_bytes(), str(out))[0], str(out)).contexts
    assert not any("compactctl summary" in str(m.get("content"))[:200] for m in context.messages)
    assert [c.trigger for c in context.compactions] == [COMPACTCTL]
    (original,) = read_recorded("claude-code", parse_records(path.read_bytes(), str(path))[0], str(path)).contexts
    assert original.compactions == []


def test_a_codex_response_counted_and_never_written_is_billed_once_with_the_output(tmp_path):
    # kcosr's rollout counts a response it never wrote (a token_count with no response item: in the bill as unpaired
    # usage); the output holds that line too. Before, the run billed it twice: 67 calls $0.539919 for 66 $0.532452.
    path = SHARED_TRANSCRIPTS / "codex" / "kcosr__chat-to-html" / "codex.jsonl"
    original, output = _replay(path, _compacted(path, tmp_path))
    (alone,) = _replay(path)
    assert alone["api"]["unpaired_cost"] > 0
    assert original["api"]["bill_cost"] == pytest.approx(alone["api"]["bill_cost"], abs=1e-9)
    assert output["api"]["bill_cost"] == 0
    assert output["settings"][0]["calls"] == 0
