"""Record multi-agent sessions with the real clients against the loopback fakes, with what the fake served
(``<fixture>.served.json``): the bill.

    PATH=<.ci/cache/npm/node_modules/.bin>:$PATH python -m tests.fakes.record_subagents [NAME...]

Codex 0.171.0 on gpt-5.5 with ``multi_agent_v2`` on: the root agent writes a line of commentary after its
``spawn_agent`` call in the same response (the fake streams the call first), the subagent runs a command and
answers, the root waits for it and answers. The subagent's rollout is written beside the root's; the fake
answers each agent from a script of its own (``agent_name`` in the request's turn metadata). Claude Code
2.1.332's forked subagent (``subagent_type: "fork"``). The fixtures go to tests/recorded/data/ (README.md there
says what each holds).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.fakes.anthropic import FakeAnthropic
from tests.fakes.clients import ClaudeCode, Codex, require_client
from tests.fakes.record_copies import RECORDED, _serving, record_named
from tests.fakes.record_fixtures import ANSWER, _claude_print, _version
from tests.fakes.record_tiers import _kept
from tests.fakes.responses import FakeResponses
from tests.fakes.scenarios import project
from tests.fakes.server import Reply, ToolCall

MULTI_AGENT = "[features]\nmulti_agent_v2 = true\n"


def collaboration_call(name: str, call_id: str, **arguments: Any) -> dict[str, Any]:
    """A call of Codex's multi-agent tools, as the API streams it (they are in the ``collaboration`` namespace)."""
    return {"type": "function_call", "id": f"fc_{call_id}", "status": "completed", "call_id": call_id, "name": name,
            "namespace": "collaboration", "arguments": json.dumps(arguments)}  # fmt: skip


def codex_subagent_session(codex: Codex, fake: FakeResponses) -> None:
    """Three calls of the root agent (spawn with commentary after the call, wait, answer) and two of its subagent
    ``/root/reader`` (a command, an answer): two rollouts, the subagent's naming the root's thread as its parent."""
    task, known = "Read notes.txt and say what it says.", set(codex.rollouts())
    fake.enqueue(
        Reply(text="Asking a reader.", blocks=(collaboration_call("spawn_agent", "call_spawn", task_name="reader",
                                                                  message=task, fork_turns="none"),)),
        Reply(blocks=(collaboration_call("wait_agent", "call_wait", timeout_ms=60000),)),
        f"The reader says: {ANSWER}",
    )  # fmt: skip
    fake.enqueue(Reply(tool_calls=(ToolCall("exec_command", {"cmd": "cat notes.txt"}),)), ANSWER, agent="/root/reader")
    codex.run("Have a subagent read the notes and tell me what they say.")
    assert not fake.errors and not fake.script and not any(fake.agent_scripts.values()), fake.errors
    assert len(set(codex.rollouts()) - known) == 2, codex.rollouts()  # the root's and its subagent's


def codex_subagent_fixture(root: Path) -> list[Path]:
    """``codex_subagent_session``, kept with what the fake served."""
    return _recorded(root, codex_subagent_session, "subagent")


def _recorded(root: Path, session: Callable[[Codex, FakeResponses], None], name: str) -> list[Path]:
    """``session`` run by the real Codex with multi-agent on, its rollouts kept as ``codex-<version>-<name>/``."""
    client = require_client("codex")
    with _serving() as served, FakeResponses() as fake:
        codex = Codex(client, root, project(root), fake, model="gpt-5.5", extra_config=MULTI_AGENT)
        session(codex, fake)
        files = {path.name: path.read_bytes() for path in codex.rollouts()}
        return _kept(RECORDED / f"codex-{_version(client.version)}-{name}", files, root, served)


def codex_forked_subagent_session(codex: Codex, fake: FakeResponses) -> None:
    """A turn of the root's (a command, an answer), then a subagent spawned with the thread's turns
    (``fork_turns: "all"``: its rollout opens on a copy of the root's, items marked ``inherited_user_message``,
    the spawning turn cut at the call, which Codex answers "aborted" when it sends the history), a second task
    sent to it (``followup_task``), the root waiting each time: 7 calls of the root's, 4 of the subagent's."""
    known = set(codex.rollouts())
    fake.enqueue(Reply(tool_calls=(ToolCall("exec_command", {"cmd": "cat app.py"}),)), "Read app.py.")
    codex.run("Read app.py first.")
    (rollout,) = set(codex.rollouts()) - known
    spawn = collaboration_call("spawn_agent", "call_spawn", task_name="reader", message="Read notes.txt.",
                               fork_turns="all")  # fmt: skip
    followup = collaboration_call("followup_task", "call_followup", target="/root/reader", message="Now app.py.")
    fake.enqueue(
        Reply(text="Asking a reader.", blocks=(spawn,)),
        Reply(blocks=(collaboration_call("wait_agent", "call_wait", timeout_ms=60000),)),
        Reply(blocks=(followup,)),
        Reply(blocks=(collaboration_call("wait_agent", "call_wait_again", timeout_ms=60000),)),
        f"The reader says: {ANSWER}",
    )
    fake.enqueue(
        Reply(tool_calls=(ToolCall("exec_command", {"cmd": "cat notes.txt"}),)),
        ANSWER,
        Reply(tool_calls=(ToolCall("exec_command", {"cmd": "cat app.py"}),)),
        "app.py defines add().",
        agent="/root/reader",
    )
    codex.run("Have a subagent read the notes, then app.py.", resume=rollout.name[-42:-6])
    assert not fake.errors and not fake.script and not any(fake.agent_scripts.values()), fake.errors
    assert len(set(codex.rollouts()) - known) == 2, codex.rollouts()


def codex_forked_subagent_fixture(root: Path) -> list[Path]:
    """``codex_forked_subagent_session``, kept with what the fake served."""
    return _recorded(root, codex_forked_subagent_session, "subagent-forked")


def claude_code_fork_subagent_fixture(root: Path) -> list[Path]:
    """Claude Code 2.1.332 on claude-opus-4-7: a turn with a Read, then the Agent tool with ``subagent_type:
    "fork"`` in the foreground (a subagent on the session's own context: its file opens on a ``fork-context-ref``
    and a copy of the session's Agent call), which reads the notes and answers; 6 responses served."""
    client = require_client("claude")
    with _serving() as served, FakeAnthropic() as fake:
        claude = ClaudeCode(client, root, project(root), fake)
        notes = str(claude.cwd / "notes.txt")
        fake.enqueue(Reply(text="Reading.", tool_calls=(ToolCall("Read", {"file_path": notes}),)), "Read it.")
        session = _claude_print(claude, "Read the notes.", "--model", "claude-opus-4-7")
        task = {"description": "Check the notes", "prompt": "Say what the notes ask, in one line.",
                "subagent_type": "fork", "run_in_background": False}  # fmt: skip
        fake.enqueue(
            Reply(text="Asking a fork.", tool_calls=(ToolCall("Agent", task),)),
            Reply(tool_calls=(ToolCall("Read", {"file_path": notes}),)),
            "The notes ask for CSV.",
            "The fork confirms: CSV.",
        )
        _claude_print(claude, "Ask a fork to check.", "--model", "claude-opus-4-7", "--resume", session)
        assert not fake.errors and not fake.script, fake.errors
        folder = claude.session_file(session).parent
        files = {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}
        return _kept(RECORDED / f"claude-code-{_version(client.version)}-fork-subagent", files, root, served)


if __name__ == "__main__":
    record_named((codex_subagent_fixture, codex_forked_subagent_fixture, claude_code_fork_subagent_fixture))
