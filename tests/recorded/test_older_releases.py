"""Sessions older client releases wrote against the loopback fakes (tests/fakes/record_older_releases.py): the real
Claude Code 2.0.76 (a Task subagent, ``/compact``, every turn a ``--resume``) and Codex 0.100.0 (two local
auto-compactions). Read from the fixtures: the releases are not installed in CI."""

from __future__ import annotations

from pathlib import Path

import orjson
from typer.testing import CliRunner

from compactctl.cli.main import app
from compactctl.errors import EXIT_OK
from compactctl.files.io import is_resume_stub


def cli(*args):
    return CliRunner().invoke(app, [str(a) for a in args])


DATA = Path(__file__).parent / "data"
CLAUDE_2_0 = DATA / "claude-code-2.0.76-compacted-subagent"
SESSION = CLAUDE_2_0 / "f0d54158-4882-49fe-a221-77e9dab53256.jsonl"


def test_a_folder_leaves_out_the_empty_files_2_0s_resume_leaves():
    stubs = sorted(path for path in CLAUDE_2_0.glob("*.jsonl") if not path.stat().st_size)
    assert len(stubs) == 3 and all(is_resume_stub(path) for path in stubs)
    assert not is_resume_stub(SESSION)
    result = cli("replay", CLAUDE_2_0, "--json")
    assert result.exit_code == EXIT_OK, result.output
    replayed = {Path(entry["file"]).name for entry in orjson.loads(result.stdout)["files"]}
    assert SESSION.name in replayed and not {stub.name for stub in stubs} & replayed


def test_2_0s_compact_call_is_estimated_without_the_prefix_it_did_not_send():
    """2.0.76 sends the summary request without the session's system prompt and tools: the fake served 3,289 input
    tokens for it; with the prefix counted in, the estimate was 20,841."""
    result = cli("replay", SESSION, "--json")
    assert result.exit_code == EXIT_OK, result.output
    estimate = orjson.loads(result.stdout)["files"][0]["api"]["compaction_estimate"]
    assert estimate == {"calls": 1, "input_tokens": 3053, "cached_tokens": 0, "output_tokens": 67, "cost": 0.010164}
