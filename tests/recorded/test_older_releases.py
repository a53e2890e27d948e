"""Sessions older client releases wrote against the loopback fakes (tests/fakes/record_older_releases.py): the real
Claude Code 2.0.76 (a Task subagent, ``/compact``, every turn a ``--resume``) and Codex 0.100.0 (two local
auto-compactions). Read from the fixtures: the releases are not installed in CI."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from typer.testing import CliRunner

from compactctl.cli.main import app
from compactctl.errors import EXIT_OK
from compactctl.files.io import is_resume_stub, read_with_its_session
from tests.recorded.served import anthropic_cost as _cost_of


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
    tokens for it; with the prefix counted in, the estimate was 20,841; with 2.1.332's instructions' size, 3,053."""
    result = cli("replay", SESSION, "--json")
    assert result.exit_code == EXIT_OK, result.output
    estimate = orjson.loads(result.stdout)["files"][0]["api"]["compaction_estimate"]
    assert estimate == {"calls": 1, "input_tokens": 3439, "cached_tokens": 0, "output_tokens": 67, "cost": 0.011322}


def _held_ids(folder: Path) -> set[str]:
    """The message ids of the responses the fixture's files hold (any file of the project's folder)."""
    held = set()
    for path in folder.glob("*.jsonl"):
        for line in path.read_bytes().splitlines():
            message = orjson.loads(line).get("message")
            if isinstance(message, dict) and message.get("role") == "assistant":
                held.add(message.get("id"))
    return held


@pytest.mark.parametrize("given", [SESSION, CLAUDE_2_0])
def test_2_0s_subagents_files_beside_the_session_are_billed_with_it_once(given: Path):
    """2.0.76 writes each subagent's transcript (the Task's and the Warmup sidechains at each start) as
    ``agent-<id>.jsonl`` in the project's folder, joined by ``sessionId``: 10 of the 24 responses served are in 9 such
    files, 8 in the session's. Before, the session's replay billed its 8 ($0.448221) and a folder billed each agent
    file again on its own; now the session bills all 18 once, and says 10 were subagents'."""
    result = cli("replay", given, "--json", "-q")
    assert result.exit_code == EXIT_OK, result.output
    doc = orjson.loads(result.stdout)
    (entry,) = doc["files"]  # the agent files are read with their session, not as files of their own
    assert Path(entry["file"]).name == SESSION.name
    none, recorded = doc["total"]["settings"][:2]  # the session compacted: none is an estimate, recorded the bill
    assert none["calls"] == recorded["calls"] == 18 and recorded["input_tokens"] == 176_546
    assert recorded["trigger"] == "recorded" and recorded["cost"] == 0.528912
    assert entry["api"]["bill_cost"] == 0.528912 and entry["api"]["bill_input_tokens"] == 176_546
    assert entry["api"]["subagents"] == {"calls": 10, "input_tokens": 28_539, "output_tokens": 134, "cost": 0.080691}
    assert any(note.startswith("10 of the 18 billed calls, $0.0807, 15.3% of the bill are subagents'")
               for note in entry["api"]["notes"])  # fmt: skip
    served = orjson.loads((DATA / f"{CLAUDE_2_0.name}.served.json").read_bytes())
    held = [r for r in served if r["id"] in _held_ids(CLAUDE_2_0)]
    assert len(held) == 18 and entry["api"]["bill_cost"] == pytest.approx(_cost_of(held), abs=1e-6)
    # What no file holds: the /compact request (estimated apart) and five side calls on the small model.
    unheld = [r for r in served if r["id"] not in _held_ids(CLAUDE_2_0)]
    assert [r["usage"]["input_tokens"] for r in unheld if "sonnet" in r["model"]] == [3289]
    assert len(unheld) == 6 and sum("haiku" in r["model"] for r in unheld) == 5


def test_report_calibrates_2_0s_subagents_calls_with_the_session_once():
    alone = cli("report", SESSION, "--json")
    assert alone.exit_code == EXIT_OK, alone.output
    (entry,) = orjson.loads(alone.stdout)["files"]
    assert entry["api_calibration"]["calls"] == 18 and entry["api_calibration"]["reported_input_tokens"] == 176_546
    folder = cli("report", CLAUDE_2_0, "--json")
    assert folder.exit_code == EXIT_OK, folder.output
    entries = orjson.loads(folder.stdout)["files"]
    assert len(entries) == 10  # each file's own tokens, the session's calibration once
    calibrated = {e["name"]: e["api_calibration"]["calls"] for e in entries if e["api_calibration"]}
    assert calibrated == {SESSION.name: 18}
    assert all("its session's report" in e["notes"][0] for e in entries if e["name"].startswith("agent-"))


def test_an_agent_file_is_joined_by_the_last_session_it_names():
    # A 2.0.x resume's Warmup opens under the resuming run's own id (an empty stub's) and answers under the session's.
    warmup = CLAUDE_2_0 / "agent-a4e4ee4.jsonl"
    first, last = (orjson.loads(line)["sessionId"] for line in warmup.read_bytes().splitlines())
    assert first != last == SESSION.stem and (CLAUDE_2_0 / f"{first}.jsonl").stat().st_size == 0
    assert read_with_its_session(str(warmup), {str(warmup), str(SESSION)})
    assert not read_with_its_session(str(warmup), {str(warmup)})
    alone = cli("replay", warmup, "--json", "-q")  # named on its own it is still replayed, its one call
    assert orjson.loads(alone.stdout)["total"]["settings"][0]["calls"] == 1


CODEX_0_100 = DATA / "codex-0.100.0-compacted"


def test_0_100s_local_compaction_keeps_the_initial_context_once_and_the_users_own_prompts():
    """Codex's local compaction rebuilds the history as the turn's initial context, the user's own messages and the
    summary (codex-rs ``compact.rs``); measured on the real 0.100 with its requests kept: the permissions, AGENTS.md and
    environment once, both prompts, the summary. Read as every user message kept (AGENTS.md and the environment three
    times each), each compacted context's fitted hidden prefix fell by a third (3,198 -> 2,216 -> 1,645): the context
    counted ~1,000 API tokens more than was sent. Now each compaction's prefix is the first context's (the same
    instructions and tools)."""
    from compactctl.calibration import calibrate
    from compactctl.formats.records import parse_records
    from compactctl.recorded import read_recorded
    from compactctl.transcript import content_text

    (path,) = CODEX_0_100.glob("*.jsonl")
    session = read_recorded("codex", parse_records(path.read_bytes(), str(path))[0], str(path))
    assert session is not None
    first = session.contexts[0].compactions[0].replacement
    texts = [content_text(m)[:26] for m in first]
    assert [m["role"] for m in first] == ["system", "developer", "user", "user", "user", "user", "user"]
    assert texts[1:6] == [
        "<permissions instructions>",
        "# AGENTS.md instructions f",
        "<environment_context>\n  <c",
        "What do the notes say?",
        "What does app.py print?",
    ]
    assert texts[6].startswith("Another language model")
    prefix = calibrate(session, "codex").prefix
    assert prefix == {"main": 3198, "main@5": 3291, "main@6": 3294}
