"""Record a Gemini CLI session that switches model part-way, with the real client against the loopback fake, with
what the fake served (``<fixture>.served.json``): the bill.

    PATH=<.ci/cache/npm/node_modules/.bin>:$PATH python -m tests.fakes.record_gemini_switch

Gemini CLI 0.61.0, its ``model.name`` set per run (as ``/model`` or ``--model`` switches it): two turns on
gemini-3.1-pro-preview (a pasted log, then a question), then two resumed on gemini-3-flash-preview (a question, then
one run of tool calls, which 0.61 refuses to resume past: gemini-cli#29365), on a low compression threshold
(``model.compressionThreshold``): the client compresses once, on Flash, in the last run (its two compression calls on
Flash). ``gemini_loop_detected_fixture``: the same, the first answer on Flash repeating itself.
``gemini_compressed_twice_fixture``: the interactive client on gemini-3.1-pro-preview, ``/compress`` twice, then
``gemini -p --resume``. The fixtures go to
tests/recorded/data/ (README.md there says what each holds).
"""

from __future__ import annotations

from pathlib import Path

from tests.fakes.clients import Gemini, require_client
from tests.fakes.gemini import FakeGemini
from tests.fakes.record_copies import RECORDED, _serving, record_named
from tests.fakes.record_fixtures import ANSWER, _version
from tests.fakes.record_tiers import _kept
from tests.fakes.scenarios import project
from tests.fakes.server import Reply, ToolCall

MODELS = ("gemini-3.1-pro-preview", "gemini-3-flash-preview")
SUMMARY = "On the faster model now: the log counts up to 6000 with no error and no warning."
# A sentence said over and over: 0.61's loop detector (``services/loopDetectionService.ts``, a chunk repeated 10
# times in the stream) stops the turn, and the client keeps neither the cut response nor the one it asks for next.
LOOPING = "On the faster model now. " + "The log is clean. " * 20
THRESHOLD = 0.016  # of the model's window (0.5 by default): the history passes it in the last run


def _on(gemini: Gemini, model: str) -> None:
    gemini.settings = {"model": {"name": model, "compressionThreshold": THRESHOLD}}


def bug_hunt(gemini: Gemini, session: str) -> None:
    """The turn both Gemini recorders resume with: a read with a thought, a command and a read with none, an answer."""
    gemini.fake.enqueue(
        Reply(thinking="Read the code.", tool_calls=(ToolCall("read_file", {"file_path": "app.py"}),)),
        Reply(tool_calls=(ToolCall("run_shell_command", {"command": "python3 app.py"}),)),
        Reply(tool_calls=(ToolCall("read_file", {"file_path": "notes.txt"}),)),
        f"add() returns a - b, so it prints -1. {ANSWER}",
    )
    gemini.run("What is wrong with app.py? Read it, run it, and read the notes.", resume=session)


def gemini_model_switch_session(gemini: Gemini, summary: str = SUMMARY) -> str:
    """Returns the session id. ``summary`` is the first answer on the second model."""
    fake = gemini.fake
    _on(gemini, MODELS[0])
    fake.enqueue(Reply(thinking="A long log.", text="The log counts from 1 to 6000. Ask me about app.py."))
    log = "\n".join(str(n) for n in range(1, 6001))
    session = gemini.run(f"Here is the build log:\n{log}")
    fake.enqueue(Reply(thinking="Recall it.", text="It ends at 6000; nothing failed."))
    gemini.run("Did anything fail in the log?", resume=session)
    _on(gemini, MODELS[1])
    fake.enqueue(Reply(text=summary))
    gemini.run("Summarise the log again, briefly.", resume=session)
    bug_hunt(gemini, session)
    assert not fake.errors and not fake.script, (fake.errors, fake.script)
    return session


def _switch_fixture(root: Path, name: str, summary: str) -> list[Path]:
    from tests.fakes.server import text_tokens

    client = require_client("gemini")
    with _serving() as served, FakeGemini(count=text_tokens, implicit_cache=True) as fake:
        gemini = Gemini(client, root, project(root), fake)
        session = gemini_model_switch_session(gemini, summary)
        chat = gemini.chat(session)
        files = {chat.name: chat.read_bytes()}
        return _kept(RECORDED / f"gemini-cli-{_version(client.version)}-{name}", files, root, served)


def gemini_model_switch_fixture(root: Path) -> list[Path]:
    return _switch_fixture(root, "model-switch", SUMMARY)


def gemini_loop_detected_fixture(root: Path) -> list[Path]:
    """The same session, the first answer on Flash a loop: 2 responses served that the chat holds nothing of."""
    return _switch_fixture(root, "loop-detected", LOOPING)


def gemini_compressed_twice_session(gemini: Gemini) -> str:
    """The interactive client (a pseudo-terminal): a long answer, ``/compress`` (its two calls), another long answer,
    ``/compress`` again, a short answer, ``/quit``; then ``gemini -p --resume`` with one more prompt. No tool call:
    0.61 refuses to resume past one (gemini-cli#29365). Returns the session id."""
    import json

    from tests.fakes.terminal import Terminal

    fake = gemini.fake
    gemini.configure()
    known = set(gemini.chats())
    screen = Terminal([str(gemini.client.binary), "--yolo"], gemini.cwd, gemini.env())
    try:
        screen.wait_for(lambda: b"Type your message" in screen.screen)
        served = len(fake.served)

        def turn(line: str, calls: int) -> None:
            screen.type(line)
            screen.wait_for(lambda: len(fake.served) >= served + calls)

        rows = " ".join(f"Row {n} stays in CSV." for n in range(600))
        fake.enqueue(f"The notes: {rows}")
        turn("What do the notes say? From memory, at length.", 1)
        turn("/compress", 3)  # the summary and its check
        fake.enqueue(f"The interface: {rows}")
        turn("And the interface, at length?", 4)
        turn("/compress", 6)
        fake.enqueue("After two compressions: CSV.")
        turn("In one word?", 7)
        screen.type("/quit")
        screen.wait_for(lambda: screen.process.poll() is not None, 30)
    finally:
        screen.close()
    (chat,) = set(gemini.chats()) - known
    session = str(json.loads(chat.read_bytes().splitlines()[0])["sessionId"])
    fake.enqueue("Resumed: still CSV.")
    gemini.run("Still CSV?", resume=session)
    assert not fake.errors and not fake.script, (fake.errors, fake.script)
    return session


def gemini_compressed_twice_fixture(root: Path) -> list[Path]:
    from tests.fakes.server import text_tokens

    client = require_client("gemini")
    with _serving() as served, FakeGemini(count=text_tokens, implicit_cache=True) as fake:
        gemini = Gemini(client, root, project(root), fake, {"model": {"name": MODELS[0]}})
        session = gemini_compressed_twice_session(gemini)
        chat = gemini.chat(session)
        files = {chat.name: chat.read_bytes()}
        return _kept(RECORDED / f"gemini-cli-{_version(client.version)}-compressed-twice", files, root, served)


if __name__ == "__main__":
    record_named((gemini_model_switch_fixture, gemini_loop_detected_fixture, gemini_compressed_twice_fixture))
