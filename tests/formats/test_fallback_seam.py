"""A model fallback's seam as the real Claude Code writes it: when the API answers a response partly on another model
(its ``fallbacks`` chain, a refusal on the first model), the response opens on a ``fallback`` block, which Claude
Code 2.1.332 writes as a record of its own and leaves out when it sends the history again. The session is API-valid,
compactctl's output keeps it where the client put it, and the client resumes that output with no request refused."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from tests.fakes.anthropic import FakeAnthropic
from tests.fakes.clients import ClaudeCode, require_client
from tests.fakes.resume import resume_claude_code, run_compactctl
from tests.fakes.scenarios import Recorded, project
from tests.fakes.server import Reply, ToolCall

SEAM = {"type": "fallback", "from": {"model": "claude-opus-5"}, "to": {"model": "claude-sonnet-5"},
        "trigger": {"type": "refusal", "category": None}}  # fmt: skip


def _blocks(data: bytes) -> list[list[str]]:
    """The block types of each assistant record, in order."""
    records = [orjson.loads(line) for line in data.splitlines() if line.strip()]
    return [[b["type"] for b in r["message"]["content"]] for r in records if r.get("type") == "assistant"]


@pytest.mark.slow  # drives the real Claude Code
def test_a_fallback_seam_claude_code_wrote_is_valid_kept_and_resumed(tmp_path: Path) -> None:
    client = require_client("claude")
    with FakeAnthropic() as fake:
        claude = ClaudeCode(client, tmp_path, project(tmp_path), fake)
        notes = str(claude.cwd / "notes.txt")
        read = ToolCall("Read", {"file_path": notes})
        fake.enqueue(Reply(text="Reading.", blocks=(SEAM,), tool_calls=(read,)), "The notes say CSV.")
        session = claude.run("What do the notes say?")
        fake.enqueue(Reply(text="Reading again.", tool_calls=(read,)), "Still CSV.")
        claude.run("Read them again?", resume=session)
        assert not fake.errors and not fake.script, fake.errors
        sent = [m for r in fake.model_calls()[1:] for m in r["messages"]]
    recorded = Recorded(claude.home, claude.cwd, session, claude.session_file(session))
    source = recorded.path.read_bytes()
    assert _blocks(source)[0] == ["fallback"]  # a record of its own
    assert not any(b.get("type") == "fallback" for m in sent if isinstance(m["content"], list) for b in m["content"])

    # The second Read of the notes supersedes the first: prune stubs the first result.
    compacted = run_compactctl(recorded.path, tmp_path / "out.jsonl", ["prune", "--mode", "stub"])
    report = compacted.report
    assert (
        report["status"] == "ok"
        and report["tokens_after"] < report["tokens_before"]
        and report["valid_before"]
        and report["valid_after"]
    ), report
    assert _blocks(compacted.data)[0] == ["fallback"]
    resumed = resume_claude_code(client, recorded, compacted.data)
    assert not resumed.rejected, resumed.rejected
