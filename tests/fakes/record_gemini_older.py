"""Record a session of Gemini CLI releases older than the pinned 0.61 (real users' chats come from many), with the
real older client against the loopback fake and what the fake served (``<fixture>.served.json``): the bill.

    GEMINI_OLDER=<bin/gemini of npm @google/gemini-cli@0.20.2> python -m tests.fakes.record_gemini_older
    GEMINI_OLDER=<bin/gemini of npm @google/gemini-cli@0.38.2> python -m tests.fakes.record_gemini_older

Both releases write the older layout, one JSON document (``chats/session-<time>-<id8>.json``, rewritten whole on
every change; 0.39 moved to JSON Lines). 0.20 keeps a response that only calls tools, with no thought, in the
``gemini`` record before it (``recordToolCalls``: 0.32 gave each its own record), and writes no function response
as a user record (it resumes from ``toolCalls[].result``). The same short session with each: a pasted 3,000-line log
and a question, then (``--resume``) a tool loop (a read with a thought, then a command and another read with none, an
answer) on a low ``model.compressionThreshold``, so the client compresses (its call(s) on no record: 0.20 sends a
summary, 0.38 a summary and a check), then (``--resume``) one more prompt. CI installs neither release (tests read the
fixtures). The fixtures go to tests/recorded/data/ (README.md there says what each holds).
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from tests.fakes.clients import Client, Gemini
from tests.fakes.gemini import FakeGemini
from tests.fakes.record_copies import RECORDED, _serving, record_named
from tests.fakes.record_fixtures import _version
from tests.fakes.record_gemini_switch import bug_hunt
from tests.fakes.record_tiers import _kept
from tests.fakes.scenarios import project
from tests.fakes.server import Reply

# Each release on the default model of its day (named: no router call).
MODELS = {"0.20": "gemini-2.5-pro", "0.38": "gemini-2.5-flash"}
THRESHOLD = 0.012  # of the model's window (0.5 by default): the pasted log passes it in the second run


def older_gemini() -> Client:
    """``$GEMINI_OLDER``: the bin/gemini of an npm ``@google/gemini-cli`` release older than the pinned one."""
    binary = Path(os.environ["GEMINI_OLDER"])
    version = subprocess.run([str(binary), "--version"], capture_output=True, text=True, timeout=60).stdout
    return Client("gemini", binary, version.strip())


def _only_session(gemini: Gemini) -> str:
    """The id in the one chat written so far: 0.20's ``--output-format json`` prints none."""
    import json

    (chat,) = gemini.chats()
    return str(json.loads(chat.read_bytes())["sessionId"])


def older_gemini_session(gemini: Gemini) -> str:
    """Returns the session id."""
    fake = gemini.fake
    fake.enqueue(Reply(thinking="A long log.", text="The log counts from 1 to 3000. Ask me about app.py."))
    log = "\n".join(str(n) for n in range(1, 3001))
    session = gemini.run(f"Here is the build log:\n{log}") or _only_session(gemini)
    bug_hunt(gemini, session)
    fake.enqueue("Still CSV, and add() still subtracts.")
    gemini.run("Remind me: what format, and what is the bug?", resume=session)
    assert not fake.errors and not fake.script, (fake.errors, fake.script)
    return session


def gemini_older_fixture(root: Path) -> list[Path]:
    from tests.fakes.server import text_tokens

    client = older_gemini()
    version = _version(client.version)
    model = MODELS[".".join(version.split(".")[:2])]
    settings = {"model": {"name": model, "compressionThreshold": THRESHOLD}}
    with _serving() as served, FakeGemini(count=text_tokens, implicit_cache=True) as fake:
        gemini = Gemini(client, root, project(root), fake, settings)
        session = older_gemini_session(gemini)
        chats = [path for path in gemini.chats() if path.stem.endswith(session[:8])]
        files = {chat.name: chat.read_bytes() for chat in chats}
        return _kept(RECORDED / f"gemini-cli-{version}-older-session", files, root, served)


if __name__ == "__main__":
    record_named((gemini_older_fixture,))
