"""Record the fixtures of Claude Code sessions that think over several prompts on a model whose API drops earlier
turns' thinking unless asked to keep it, made by the real client against the loopback fake, with what the fake
served (``<fixture>.served.json``) and what each model call asked of it (``<fixture>.requests.json``: the model,
``thinking``, ``context_management`` and the beta header): the truth.

    PATH=<folder holding the client's claude>:$PATH python -m tests.fakes.record_thinking [NAME...]

Claude Code 2.1.84 and later send ``clear_thinking_20251015`` ``keep: "all"`` with each request that thinks, and
2.1.83 sends it only behind a flag the server sets (``tengu_marble_anvil``): record each fixture with the client
it names on the PATH (2.1.83 and 2.1.84 from npm, under a folder of their own). The fake applies the API's rule
(tests/fakes/context_edits.py ``clear_thinking``): on claude-sonnet-4-5 the earlier turns' thinking reaches the
model, and is billed, only where the request asked to keep it. compactctl/recorded/claude_code_thinking.py says
which releases send it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.fakes.anthropic import FakeAnthropic
from tests.fakes.clients import ClaudeCode, require_client
from tests.fakes.record_copies import RECORDED, _serving, record_named
from tests.fakes.record_fixtures import _claude_print, _version
from tests.fakes.record_tiers import _kept
from tests.fakes.scenarios import project
from tests.fakes.server import Reply, ToolCall, text_tokens

MODEL = "claude-sonnet-4-5"
PROMPTS = (
    "What do the notes say?",
    "And what should change first?",
    "Why that one?",
    "What could break?",
    "How would you test it?",
    "Sum it up in a line.",
)


def thought(n: int) -> str:
    """A turn's thinking, long enough (about 1,000 tokens) that an earlier turn's kept or dropped shows in the input."""
    return " ".join(f"Step {n}.{k}: weigh the notes again, the CSV output must stay as it is." for k in range(72))


def thinking_session(root: Path) -> tuple[ClaudeCode, str, list[dict[str, Any]]]:
    """``PROMPTS`` on ``MODEL`` with thinking on (``MAX_THINKING_TOKENS``), the first turn reading the notes, each
    later prompt a ``--resume``; every reply thinks. The session's id and what each model call asked."""
    client = require_client("claude")
    fake = FakeAnthropic(count=text_tokens)
    fake.start()
    claude = ClaudeCode(client, root, project(root), fake, extra_env={"MAX_THINKING_TOKENS": "4000"})
    notes = str(claude.cwd / "notes.txt")
    fake.enqueue(
        Reply(thinking=thought(0), text="Reading the notes.", tool_calls=(ToolCall("Read", {"file_path": notes}),)),
        Reply(thinking=thought(1), text="The notes say the results must stay in CSV."),
    )
    model = ("--model", MODEL, "--allowedTools", "Read")
    session = _claude_print(claude, PROMPTS[0], *model)
    for n, prompt in enumerate(PROMPTS[1:], start=2):
        fake.enqueue(Reply(thinking=thought(n), text=f"Answer {n}: keep the CSV output, fix add() first."))
        _claude_print(claude, prompt, *model, "--resume", session)
    fake.stop()
    assert not fake.errors and not fake.script, fake.errors
    asked = [
        {
            "model": r.body.get("model"),
            "thinking": r.body.get("thinking"),
            "context_management": r.body.get("context_management"),
            "anthropic-beta": sorted(
                b for k, v in r.headers.items() if k.lower() == "anthropic-beta" for b in v.split(",")
            ),
        }
        for r in fake.requests
        if isinstance(r.body, dict) and r.body.get("tools") and r.status == 200 and r.error is None
    ]
    return claude, session, asked


def _recorded(root: Path, name: str) -> list[Path]:
    with _serving() as served:
        claude, session, asked = thinking_session(root)
    folder = RECORDED / f"claude-code-{_version(claude.client.version)}-{name}"
    written = _kept(folder, {f"{session}.jsonl": claude.session_file(session).read_bytes()}, root, served)
    (folder.parent / f"{folder.name}.requests.json").write_text(json.dumps(asked, indent=1) + "\n")
    return written


def claude_code_thinking_fixture(root: Path) -> list[Path]:
    """Six prompts on claude-sonnet-4-5, each reply thinking: ``claude-code-<version>-thinking``."""
    return _recorded(root, "thinking")


if __name__ == "__main__":
    record_named((claude_code_thinking_fixture,))
