"""Record a Gemini CLI session whose model delegates to a subagent, with the real client against the loopback fake,
with what the fake served (``<fixture>.served.json``): the bill.

    PATH=<.ci/cache/npm/node_modules/.bin>:$PATH python -m tests.fakes.record_gemini_subagents [NAME...]

Gemini CLI 0.61.0 (agents on by default) on gemini-3.1-pro-preview: the main agent calls ``invoke_agent`` for the
built-in ``generalist``, which reads notes.txt and finishes with ``complete_task``; the main agent answers. The
subagent's chat is written in a folder named by the session's id beside the session's file
(``chats/<session id>/<agent id>.jsonl``); the fake answers the subagent from a script of its own (its requests
declare ``complete_task``). The fixture goes to tests/recorded/data/ (README.md there says what it holds).
"""

from __future__ import annotations

from pathlib import Path

from tests.fakes.clients import Gemini, require_client
from tests.fakes.gemini import SUBAGENT, FakeGemini
from tests.fakes.record_copies import RECORDED, _serving, record_named
from tests.fakes.record_fixtures import ANSWER, _version
from tests.fakes.record_tiers import _kept
from tests.fakes.scenarios import project
from tests.fakes.server import Reply, ToolCall

# A model named, not ``auto``: the router's classifier call (recorded nowhere) stays out of what was served.
PINNED = {"model": {"name": "gemini-3.1-pro-preview"}}
TASK = "Read notes.txt and say what it says."


def gemini_subagent_session(gemini: Gemini) -> str:
    """Two calls of the main agent (``invoke_agent``, the answer) and two of the ``generalist`` it started (a
    ``read_file``, ``complete_task``): the session's chat and the subagent's. Returns the session id."""
    fake = gemini.fake
    fake.enqueue(
        Reply(text="Asking the generalist.",
              tool_calls=(ToolCall("invoke_agent", {"agent_name": "generalist", "prompt": TASK}),)),
        f"The generalist says: {ANSWER}",
    )  # fmt: skip
    fake.enqueue(
        Reply(thinking="Read the notes first.", tool_calls=(ToolCall("read_file", {"file_path": "notes.txt"}),)),
        Reply(tool_calls=(ToolCall("complete_task", {"result": {"response": ANSWER}}),)),
        agent=SUBAGENT,
    )
    session = gemini.run("Have a subagent read the notes and tell me what they say.")
    assert not fake.errors and not fake.script and not any(fake.agent_scripts.values()), fake.errors
    assert len(subagent_chats(gemini, session)) == 1, subagent_chats(gemini, session)
    return session


def subagent_chats(gemini: Gemini, session: str) -> list[Path]:
    return sorted((gemini.home / ".gemini" / "tmp").glob(f"*/chats/{session}/*.jsonl"))


def gemini_subagent_fixture(root: Path) -> list[Path]:
    """``gemini_subagent_session``, kept with what the fake served: the session's file and, beside it, the folder
    named by its id that holds the subagent's chat, as the client laid them out."""
    client = require_client("gemini")
    with _serving() as served, FakeGemini(implicit_cache=True) as fake:
        gemini = Gemini(client, root, project(root), fake, PINNED)
        session = gemini_subagent_session(gemini)
        chat = gemini.chat(session)
        files = {chat.name: chat.read_bytes()}
        files |= {f"{session}/{path.name}": path.read_bytes() for path in subagent_chats(gemini, session)}
        return _kept(RECORDED / f"gemini-cli-{_version(client.version)}-subagent", files, root, served)


if __name__ == "__main__":
    record_named((gemini_subagent_fixture,))
