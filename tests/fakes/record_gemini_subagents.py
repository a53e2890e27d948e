"""Record a Gemini CLI session whose model delegates to a subagent, with the real client against the loopback fake,
with what the fake served (``<fixture>.served.json``): the bill.

    PATH=<.ci/cache/npm/node_modules/.bin>:$PATH python -m tests.fakes.record_gemini_subagents [NAME...]

Gemini CLI 0.61.0 (agents on by default) on gemini-3.1-pro-preview: the main agent calls ``invoke_agent`` for the
built-in ``generalist``, which reads notes.txt and finishes with ``complete_task``; the main agent answers. The
subagent's chat is written in a folder named by the session's id beside the session's file
(``chats/<session id>/<agent id>.jsonl``); the fake answers the subagent from a script of its own (its requests
declare ``complete_task``). The fixture goes to tests/recorded/data/ (README.md there says what it holds).

Two more stop the client while the subagent waits for its second answer (the fake holds it: ``HELD``): Esc in the
interactive client (``gemini_cancelled_subagent_fixture``) and SIGINT of ``gemini -p``
(``gemini_interrupted_subagent_fixture``). Neither session's file names the subagent's chat (no ``agentId``).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

from tests.fakes.clients import TIMEOUT, Gemini, require_client
from tests.fakes.gemini import HELD, SUBAGENT, FakeGemini
from tests.fakes.record_copies import RECORDED, _serving, record_named
from tests.fakes.record_fixtures import ANSWER, _version
from tests.fakes.record_tiers import _kept
from tests.fakes.scenarios import project
from tests.fakes.server import Reply, ToolCall

# A model named, not ``auto``: the router's classifier call (recorded nowhere) stays out of what was served.
PINNED = {"model": {"name": "gemini-3.1-pro-preview"}}
TASK = "Read notes.txt and say what it says."
PROMPT = "Have a subagent read the notes and tell me what they say."


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
    session = gemini.run(PROMPT)
    assert not fake.errors and not fake.script and not any(fake.agent_scripts.values()), fake.errors
    assert len(subagent_chats(gemini, session)) == 1, subagent_chats(gemini, session)
    return session


def subagent_chats(gemini: Gemini, session: str) -> list[Path]:
    return sorted((gemini.home / ".gemini" / "tmp").glob(f"*/chats/{session}/*.jsonl"))


def _held_subagent(gemini: Gemini) -> None:
    """The main agent's ``invoke_agent``, the ``generalist``'s ``read_file``; its next call held (never answered)."""
    gemini.fake.enqueue(
        Reply(text="Asking the generalist.",
              tool_calls=(ToolCall("invoke_agent", {"agent_name": "generalist", "prompt": TASK}),)),
    )  # fmt: skip
    gemini.fake.enqueue(
        Reply(thinking="Read the notes first.", tool_calls=(ToolCall("read_file", {"file_path": "notes.txt"}),)),
        HELD,
        agent=SUBAGENT,
    )
    gemini.configure()


def _until(done: Callable[[], bool], seconds: float = TIMEOUT) -> None:
    end = time.time() + seconds
    while not done():
        assert time.time() < end, f"waited {seconds} s"
        time.sleep(0.2)


def _held_and_written(gemini: Gemini, known: set[Path], wait: Callable[[Callable[[], bool]], None] = _until) -> Path:
    """Once the subagent's second call is held: its chat, the first call's tool result written in it (the chat is
    written as it goes: what it holds when the client is stopped is what it was sent). ``wait`` waits for a condition
    (the interactive client's reads its screen meanwhile: a terminal nobody reads stops the client writing)."""
    wait(gemini.fake.holding.is_set)

    def chats() -> list[Path]:
        return [p for p in (gemini.home / ".gemini" / "tmp").glob("*/chats/*/*.jsonl") if p not in known]

    wait(lambda: any(b'"functionResponse"' in p.read_bytes() for p in chats()))
    (chat,) = chats()
    return chat


def _new_session(gemini: Gemini, known: set[Path]) -> str:
    (chat,) = set(gemini.chats()) - known
    return str(json.loads(chat.read_bytes().splitlines()[0])["sessionId"])


def gemini_cancelled_subagent_session(gemini: Gemini) -> str:
    """The interactive client (a pseudo-terminal): the prompt, the ``generalist`` started, Esc while its second call
    waits, ``/quit``. The client records the cancelled ``invoke_agent`` call, with no ``agentId``, on a record of its
    own with no ``tokens``. Returns the session id."""
    from tests.fakes.terminal import Terminal

    _held_subagent(gemini)
    known = {*gemini.chats(), *(gemini.home / ".gemini" / "tmp").glob("*/chats/*/*.jsonl")}
    screen = Terminal([str(gemini.client.binary), "--yolo"], gemini.cwd, gemini.env())
    try:
        screen.wait_for(lambda: b"Type your message" in screen.screen)
        screen.type(PROMPT)
        _held_and_written(gemini, known, screen.wait_for)
        os.write(screen.master, b"\x1b")  # Esc: the turn cancelled
        session = _new_session(gemini, known)
        main = next(p for p in gemini.chats() if p not in known)
        screen.wait_for(lambda: b'"status":"cancelled"' in main.read_bytes(), 30)
        screen.type("/quit")
        screen.wait_for(lambda: screen.process.poll() is not None, 30)
    finally:
        screen.close()
    _check_held(gemini)
    return session


def gemini_interrupted_subagent_session(gemini: Gemini) -> str:
    """``gemini -p`` sent SIGINT (a Ctrl-C from the shell) while the ``generalist``'s second call waits: the client
    exits and the session's file records no tool call at all. Returns the session id."""
    _held_subagent(gemini)
    known = {*gemini.chats(), *(gemini.home / ".gemini" / "tmp").glob("*/chats/*/*.jsonl")}
    args = [str(gemini.client.binary), "-p", PROMPT, "--output-format", "json", "--yolo"]
    running = subprocess.Popen(
        args, cwd=gemini.cwd, env=gemini.env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        _held_and_written(gemini, known)
        running.send_signal(signal.SIGINT)
        running.wait(TIMEOUT)
    finally:
        if running.poll() is None:
            running.kill()
            running.wait()
    _check_held(gemini)
    return _new_session(gemini, known)


def _check_held(gemini: Gemini) -> None:
    fake = gemini.fake
    assert not fake.errors and not fake.script and not any(fake.agent_scripts.values()), fake.errors
    assert len(fake.served) == 2, fake.served  # the main agent's call and the subagent's first: the second held


def _subagent_fixture(root: Path, name: str, recorded: Callable[[Gemini], str]) -> list[Path]:
    """``recorded``'s session kept with what the fake served: the session's file and, beside it, the folder named
    by its id that holds the subagent's chat, as the client laid them out."""
    client = require_client("gemini")
    with _serving() as served, FakeGemini(implicit_cache=True) as fake:
        gemini = Gemini(client, root, project(root), fake, PINNED)
        session = recorded(gemini)
        chat = gemini.chat(session)
        files = {chat.name: chat.read_bytes()}
        files |= {f"{session}/{path.name}": path.read_bytes() for path in subagent_chats(gemini, session)}
        return _kept(RECORDED / f"gemini-cli-{_version(client.version)}-{name}", files, root, served)


def gemini_subagent_fixture(root: Path) -> list[Path]:
    return _subagent_fixture(root, "subagent", gemini_subagent_session)


def gemini_cancelled_subagent_fixture(root: Path) -> list[Path]:
    return _subagent_fixture(root, "subagent-cancelled", gemini_cancelled_subagent_session)


def gemini_interrupted_subagent_fixture(root: Path) -> list[Path]:
    return _subagent_fixture(root, "subagent-interrupted", gemini_interrupted_subagent_session)


if __name__ == "__main__":
    record_named((gemini_subagent_fixture, gemini_cancelled_subagent_fixture, gemini_interrupted_subagent_fixture))
