"""Record a Codex thread compacted by hand twice, with the real client against the loopback fake, with what the fake
served (``<fixture>.served.json``): the bill.

    PATH=<.ci/cache/npm/node_modules/.bin>:$PATH python -m tests.fakes.record_compacted_twice

Codex 0.171.0 on gpt-5.5, through ``codex app-server`` for each compaction (``thread/compact/start``, the TUI's
``/compact``): a turn with a command, a compaction, a turn with a command, a second compaction, a last turn (each turn
after the first ``codex exec resume``). ``codex_compactctl_then_compacted_fixture``: a thread compactctl compacted
(``compact --session``: a new thread) that Codex then compacts too. The fixtures go to tests/recorded/data/ (README.md
there says what each holds).
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.fakes.clients import Codex, require_client
from tests.fakes.record_copies import RECORDED, _serving, record_named
from tests.fakes.record_fixtures import ANSWER, _version
from tests.fakes.record_tiers import _kept
from tests.fakes.responses import FakeResponses
from tests.fakes.scenarios import project
from tests.fakes.server import Reply, ToolCall


def codex_compacted_twice_fixture(root: Path) -> list[Path]:
    from bench.client_shapes import _compact_by_app_server

    client = require_client("codex")
    with _serving() as served, FakeResponses() as fake:
        codex = Codex(client, root, project(root), fake, model="gpt-5.5")
        fake.enqueue(Reply(thinking="Read it.", tool_calls=(ToolCall("exec_command", {"cmd": "cat notes.txt"}),)),
                     ANSWER)  # fmt: skip
        codex.run("What do the notes say?")
        (first,) = codex.rollouts()
        thread = first.name.removesuffix(".jsonl")[-36:]
        _compact_by_app_server(codex, thread)
        fake.enqueue(Reply(thinking="Run it.", tool_calls=(ToolCall("exec_command", {"cmd": "python3 app.py"}),)),
                     "It prints -1: add() subtracts.")  # fmt: skip
        codex.run("What does app.py print?", resume=thread)
        _compact_by_app_server(codex, thread)
        fake.enqueue(Reply(thinking="From the summaries.", text="The notes say CSV; app.py prints -1."))
        codex.run("Both answers again?", resume=thread)
        assert not fake.errors and not fake.script, fake.errors
        files = {path.name: path.read_bytes() for path in codex.rollouts()}
        return _kept(RECORDED / f"codex-{_version(client.version)}-compacted-twice", files, root, served)


def codex_compactctl_then_compacted_fixture(root: Path) -> list[Path]:
    """``codex_compacted`` (5 responses in the original, then ``compactctl compact --session``), a turn of the new
    thread with a command, Codex's own compaction of it (``thread/compact/start``), a last turn."""
    from bench.client_shapes import _compact_by_app_server
    from tests.fakes.record_compactctl_sessions import codex_compacted

    client = require_client("codex")
    with _serving() as served, FakeResponses() as fake:
        codex = Codex(client, root, project(root), fake, model="gpt-5.5")
        thread, new = codex_compacted(codex)
        fake.enqueue(Reply(thinking="Run it.", tool_calls=(ToolCall("exec_command", {"cmd": "python3 app.py"}),)),
                     "It prints -1: add() subtracts.")  # fmt: skip
        codex.run("What does app.py print?", resume=new)
        _compact_by_app_server(codex, new)
        fake.enqueue("From both summaries: CSV, and app.py prints -1.")
        codex.run("Both answers again?", resume=new)
        assert not fake.errors and not fake.script, fake.errors
        files = {path.name: path.read_bytes() for path in codex.rollouts()}
        assert len(files) == 2, files
        written = _kept(RECORDED / f"codex-{_version(client.version)}-compactctl-then-compacted", files, root, served)
        which = json.dumps({"original": thread, "new": new}, indent=1)
        (RECORDED / f"codex-{_version(client.version)}-compactctl-then-compacted.sessions.json").write_text(
            which + "\n"
        )
        return written


if __name__ == "__main__":
    record_named((codex_compacted_twice_fixture, codex_compactctl_then_compacted_fixture))
