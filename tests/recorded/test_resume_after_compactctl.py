"""The real clients resuming a session compactctl compacted take the compacted size for the context's, not the
old calls' usage the file still holds, and so do not compact again at once (tests/fakes/record_compactctl_sessions.py
makes the sessions). Before, both did at a limit between the two sizes: Claude Code 2.1.332 read the last usage after
the boundary (a copied response's, 30,185 tokens for a context of 22.1k) and Codex 0.171.0 the last token_count (the
old call's 14,355 for 10.3k), each paying for a compaction call of its own."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.fakes.anthropic import FakeAnthropic
from tests.fakes.clients import ClaudeCode, Codex, require_client
from tests.fakes.record_compactctl_sessions import claude_code_compacted, claude_run, codex_compacted
from tests.fakes.responses import FakeResponses
from tests.fakes.scenarios import project

pytestmark = pytest.mark.slow  # drives the real clients


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def test_claude_code_resuming_compactctls_session_does_not_compact_it_again(tmp_path: Path):
    with FakeAnthropic() as fake:
        claude = ClaudeCode(require_client("claude"), tmp_path, project(tmp_path), fake)
        _, new = claude_code_compacted(claude)
        # Auto-compact at 14 % of the 180k the client keeps for input: 25,200, between the two sizes.
        claude.extra_env = {**claude.extra_env, "CLAUDE_AUTOCOMPACT_PCT_OVERRIDE": "14"}
        fake.enqueue("After compactctl: CSV.")
        claude_run(claude, "Still CSV?", "--resume", new)
        assert not fake.errors, fake.errors
    records = _lines(claude.session_file(new))
    boundaries = [r["compactMetadata"] for r in records if r.get("subtype") == "compact_boundary"]
    assert [b["trigger"] for b in boundaries] == ["manual"]  # compactctl's only
    answered = [r["message"]["usage"]["input_tokens"] for r in records if r.get("type") == "assistant"][-1]
    assert answered < 25_200 < boundaries[0]["preTokens"]  # the limit lies between what it sent and the old size


@pytest.mark.parametrize(("limit", "compacts"), [(12_000, False), (9_000, True)])
def test_codex_resuming_compactctls_rollout_compacts_only_past_its_limit(tmp_path: Path, limit: int, compacts: bool):
    """The compacted history sends 10.3k tokens, the old call sent 14.3k: at 12,000 Codex must not compact, at 9,000
    it must (the count compactctl writes is the new history's estimate, not nothing)."""
    with FakeResponses() as fake:
        codex = Codex(require_client("codex"), tmp_path, project(tmp_path), fake, model="gpt-5.5")
        _, new = codex_compacted(codex)
        codex.extra_config = f"model_auto_compact_token_limit = {limit}\n"
        fake.enqueue("After compactctl: CSV.", "Still CSV.")
        done = codex.run("Still CSV?", resume=new)
        assert done.returncode == 0, done.stderr[-2000:]
    (rollout,) = [p for p in codex.rollouts() if new in p.name]
    compacted = [line for line in _lines(rollout) if line["type"] == "compacted"]
    assert len(compacted) == 1 + compacts  # compactctl's, and Codex's own only past the limit
