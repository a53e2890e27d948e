"""Record the fixture of Claude Code's advisor tool with the real client against the loopback fake, with what the
fake served (``<fixture>.served.json``: each response's model and usage, its ``usage.iterations`` among it): the bill.

    PATH=<.ci/cache/npm/node_modules/.bin>:$PATH python -m tests.fakes.record_advisor [NAME...]

Claude Code 2.1.332 on claude-sonnet-4-6 with claude-opus-4-7 as its advisor (``--advisor``, and
``CLAUDE_CODE_ENABLE_EXPERIMENTAL_ADVISOR_TOOL=1``, without which a feature gate, off here, keeps the tool out of
its requests): two responses that consult the advisor (tests/fakes/advisor.py), then a resumed turn that sends
the advice back in its history. The fixture goes to tests/recorded/data/ (README.md there says what it holds).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.fakes.advisor import TOOL_TYPE, advised_reply
from tests.fakes.anthropic import FakeAnthropic
from tests.fakes.clients import ClaudeCode, require_client
from tests.fakes.record_copies import RECORDED, _serving, record_named
from tests.fakes.record_fixtures import ANSWER, _claude_print, _version
from tests.fakes.record_tiers import _kept
from tests.fakes.scenarios import project
from tests.fakes.server import ToolCall

EXECUTOR, ADVISOR = "claude-sonnet-4-6", "claude-opus-4-7"
ADVISING = {"CLAUDE_CODE_ENABLE_EXPERIMENTAL_ADVISOR_TOOL": "1"}
# What the advisor thinks beside each advice, billed as its output (the docs: 1,400 to 1,800 tokens in all).
ADVISOR_THINKING = 1_000
FLAGS = ("--model", EXECUTOR, "--advisor", ADVISOR, "--allowedTools", "Read")


def advised_session(root: Path, served: list[dict[str, Any]]) -> tuple[ClaudeCode, str]:
    """A turn on claude-sonnet-4-6 whose two responses each consult claude-opus-4-7 first (the first then Reads the
    notes, the second answers), then ``--resume`` with a prompt answered at once: 3 responses served (into
    ``served``), 2 of them with an ``advisor_message`` in ``usage.iterations``. The client and the session's id."""
    client = require_client("claude")
    with FakeAnthropic(advisor_thinking=ADVISOR_THINKING) as fake:
        claude = ClaudeCode(client, root, project(root), fake, extra_env=ADVISING)
        notes = str(claude.cwd / "notes.txt")
        fake.enqueue(
            advised_reply("Read notes.txt before changing anything.", "Reading the notes.",
                          (ToolCall("Read", {"file_path": notes}),)),
            advised_reply("The notes answer it: say so and stop.", ANSWER),
        )  # fmt: skip
        session = _claude_print(claude, "What do the notes say? Ask the advisor first.", *FLAGS)
        fake.enqueue("Keep the public interface of add().")
        _claude_print(claude, "And the second line?", *FLAGS, "--resume", session)
        assert not fake.errors and not fake.script, fake.errors
        bodies = fake.model_calls()
        offered = [[t for t in b["tools"] if t.get("type") == TOOL_TYPE] for b in bodies]
        assert all(tools == [{"type": TOOL_TYPE, "name": "advisor", "model": ADVISOR}] for tools in offered), offered
        # The resumed request sends both advices back, as the API takes them, in the assistant turns that made them.
        sent = [block for m in bodies[-1]["messages"] if m["role"] == "assistant" for block in m["content"]]
        assert sum(block.get("type") == "advisor_tool_result" for block in sent) == 2, json.dumps(sent)[:2000]
    assert len(served) == 3, served
    return claude, session


def claude_code_advisor_fixture(root: Path) -> list[Path]:
    """The advised session (:func:`advised_session`) and what the fake served."""
    with _serving() as served:
        claude, session = advised_session(root, served)
        files = {f"{session}.jsonl": claude.session_file(session).read_bytes()}
        return _kept(RECORDED / f"claude-code-{_version(claude.client.version)}-advisor", files, root, served)


if __name__ == "__main__":
    record_named((claude_code_advisor_fixture,))
