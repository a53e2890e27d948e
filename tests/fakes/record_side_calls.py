"""Record Codex 0.171.0's model calls beside the thread's turns, made by the real client against the loopback fake,
with what the fake served (``<fixture>.served.json``): the bill.

    PATH=<.ci/cache/npm/node_modules/.bin>:$PATH python -m tests.fakes.record_side_calls [NAME...]

- The approvals reviewer (``approvals_reviewer = "auto_review"``, off by default: ``user``): each command the model
  asks to run outside the sandbox (``sandbox_permissions: "require_escalated"``) is reviewed by a model call of
  Codex's guardian subagent, in a thread and a rollout of its own; the fake answers it (``x-openai-subagent:
  guardian``) with a verdict from its own script.
- Memories (``[features] memories = true``, off by default): at a session's start Codex extracts a memory from each
  earlier idle thread of the user's (a call of its own, turn metadata ``request_kind: "memory"``) and consolidates
  them with an agent of its own (``x-openai-subagent: memory_consolidation``); neither writes a rollout.
- Thread titles (the terminal UI's, on by default): the UI asks the model for a new thread's title, in a thread of
  its own that writes no rollout; the title goes to ``session_index.jsonl``.

The fixtures go to tests/recorded/data/ (README.md there says what each holds).
"""

from __future__ import annotations

import json
import os
import queue
import sqlite3
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

from tests.fakes.clients import Codex, _run, require_client
from tests.fakes.record_copies import RECORDED, _serving, record_named
from tests.fakes.record_fixtures import _version
from tests.fakes.record_tiers import _kept
from tests.fakes.responses import FakeResponses
from tests.fakes.scenarios import project
from tests.fakes.server import Reply, ToolCall

AUTO_REVIEW = 'approvals_reviewer = "auto_review"\napproval_policy = "on-request"\nsandbox_mode = "workspace-write"\n'
# The reviewer's answer, in the JSON its prompt asks for.
ALLOW = '{"risk_level":"low","user_authorization":"high","outcome":"allow","rationale":"Reads a file the user named."}'
DENY = '{"risk_level":"high","user_authorization":"low","outcome":"deny","rationale":"Deletes a file the user kept."}'


def escalated(command: str, why: str) -> Reply:
    """A command the model asks to run outside the sandbox: an approval request, which the reviewer reviews."""
    arguments = {"cmd": command, "sandbox_permissions": "require_escalated", "justification": why}
    return Reply(tool_calls=(ToolCall("exec_command", arguments),))


def _exec(codex: Codex, prompt: str, resume: str | None = None) -> None:
    """``codex exec`` with approvals on (``Codex.run`` bypasses them): the config's reviewer answers each request."""
    codex.configure()
    args = [str(codex.client.binary), "exec", "--skip-git-repo-check", *(["resume", resume] if resume else [])]
    _run([*args, prompt], codex.cwd, codex.env())


def codex_auto_review_session(codex: Codex, fake: FakeResponses) -> str:
    """Two turns on gpt-5.5 with the reviewer on: a read outside the sandbox, allowed; then, resumed on a low
    auto-compact limit, a compaction and a delete outside it, denied, and another compaction before the answer.
    Each process reviews in a guardian thread of its own, the second opening on the thread's compaction: 8 calls
    served (6 of the thread's turns, 2 reviews) and 2 compactions, 3 rollouts. The thread's id."""
    fake.enqueue(escalated("cat notes.txt", "Read the notes outside the sandbox."), "The notes ask for CSV.")
    fake.enqueue(ALLOW, agent="guardian")
    _exec(codex, "Read notes.txt.")
    (first,) = [p for p in codex.rollouts() if b'"guardian"' not in p.read_bytes().splitlines()[0]]
    thread = first.name.removesuffix(".jsonl")[-36:]
    codex.extra_config = AUTO_REVIEW + "model_auto_compact_token_limit = 1000\n"
    fake.enqueue(escalated("rm -f app.py", "Remove app.py."), "The reviewer refused: app.py stays.")
    fake.enqueue(DENY, agent="guardian")
    _exec(codex, "Clean up app.py.", resume=thread)
    assert not fake.errors and not fake.script and not any(fake.agent_scripts.values()), fake.errors
    assert len(codex.rollouts()) == 3, codex.rollouts()  # the thread's and one reviewer's for each process
    return thread


def codex_auto_review_fixture(root: Path) -> list[Path]:
    """``codex_auto_review_session``, its rollouts kept with what the fake served."""
    client = require_client("codex")
    with _serving() as served, FakeResponses() as fake:
        codex = Codex(client, root, project(root), fake, model="gpt-5.5", extra_config=AUTO_REVIEW)
        codex_auto_review_session(codex, fake)
        files = {path.name: path.read_bytes() for path in codex.rollouts()}
        return _kept(RECORDED / f"codex-{_version(client.version)}-auto-review", files, root, served)


MEMORIES = '[features]\nmemories = true\n[memories]\nconsolidation_model = "gpt-5.5"\n'
# The extraction's answer, in the JSON schema 0.171 sends with it.
EXTRACTED = json.dumps({"rollout_summary": "Read notes.txt: results stay in CSV.", "rollout_slug": "notes-csv"})


def _summary_written(preferences: str) -> Reply:
    """The consolidation agent's command: ``memory_summary.md`` in the format its prompt asks for."""
    body = f"v1\n## User Profile\n\n## User preferences\n{preferences}\n## General Tips\n\n## What's in Memory\n"
    return Reply(tool_calls=(ToolCall("exec_command", {"cmd": f"cat > memory_summary.md <<'EOF'\n{body}EOF\n"}),))


def app_server_thread(codex: Codex, prompt: str) -> str:
    """A new thread of one turn through ``codex app-server`` on stdio, as an IDE drives it (``thread/start``, then
    ``turn/start``, waited for until ``turn/completed``): its ``source`` is ``vscode``, a thread memories read
    (``codex exec``'s are not). The thread's id."""
    codex.configure()
    server = subprocess.Popen(
        [str(codex.client.binary), "app-server"], cwd=codex.cwd, env=codex.env(), stdin=subprocess.PIPE,
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
    )  # fmt: skip
    assert server.stdin and server.stdout

    def send(message: dict[str, Any]) -> None:
        assert server.stdin
        server.stdin.write(json.dumps(message) + "\n")
        server.stdin.flush()

    # Its lines read by a thread of their own: select() on the pipe misses lines its buffer already holds.
    lines: queue.Queue[str] = queue.Queue()
    threading.Thread(target=lambda: [lines.put(line) for line in server.stdout or ()], daemon=True).start()

    def until(done: Any) -> dict[str, Any]:
        end = time.time() + 120
        while time.time() < end:
            try:
                message = json.loads(lines.get(timeout=1))
            except queue.Empty:
                assert server.poll() is None, "app-server exited"
                continue
            assert "error" not in message, message
            if done(message):
                return dict(message)
        raise TimeoutError("app-server")

    try:
        send({"id": 1, "method": "initialize", "params": {"clientInfo": {"name": "side-calls", "version": "0"}}})
        until(lambda m: m.get("id") == 1)
        send({"method": "initialized"})
        send({"id": 2, "method": "thread/start", "params": {"cwd": str(codex.cwd)}})
        thread = str(until(lambda m: m.get("id") == 2)["result"]["thread"]["id"])
        turn = {"threadId": thread, "input": [{"type": "text", "text": prompt}]}
        send({"id": 3, "method": "turn/start", "params": turn})
        until(lambda m: m.get("method") == "turn/completed")
        time.sleep(2)  # its rollout written, the start's consolidation done
        return thread
    finally:
        server.terminate()
        server.wait()


def _aged(codex: Codex, thread: str, hours: int) -> None:
    """``thread`` last active ``hours`` ago in the client's own index (its state database's ``threads`` row, and
    its rollout's modification time; the rollout's lines are left as written): memories read only threads idle
    for ``memories.min_rollout_idle_hours`` (1 at least), which a recording cannot wait for."""
    then = int(time.time()) - hours * 3600
    with sqlite3.connect(codex.codex_home / "state_5.sqlite") as db:
        db.execute("UPDATE threads SET updated_at = ?, updated_at_ms = ? WHERE id = ?", (then, then * 1000, thread))
    (rollout,) = [p for p in codex.rollouts() if thread in p.name]
    os.utime(rollout, (then, then))


def codex_memories_session(codex: Codex, fake: FakeResponses) -> None:
    """Three sessions with memories on: an IDE's thread (a command, an answer), whose start consolidates the empty
    memory folder (the agent writes ``memory_summary.md``: 2 calls); then, that thread aged 2 days, ``codex exec``
    (a command, an answer), whose start extracts a memory from it (1 call on gpt-6-luna); then ``codex exec`` (an
    answer), whose instructions carry the memory summary. 8 calls served, 3 rollouts holding 5 of them."""
    fake.enqueue(_summary_written(""), "Wrote an empty summary.", agent="memory_consolidation")
    fake.enqueue(Reply(tool_calls=(ToolCall("exec_command", {"cmd": "cat notes.txt"}),)), "The notes ask for CSV.")
    first = app_server_thread(codex, "Read notes.txt.")
    _aged(codex, first, 48)
    fake.enqueue(EXTRACTED, agent="memory")
    fake.enqueue(Reply(tool_calls=(ToolCall("exec_command", {"cmd": "sleep 3; cat app.py"}),)), "app.py adds.")
    codex.run("Read app.py.")
    fake.enqueue("You keep results in CSV.")
    codex.run("What do you remember about me?")
    assert not fake.errors and not fake.script and not any(fake.agent_scripts.values()), fake.errors
    assert len(codex.rollouts()) == 3, codex.rollouts()  # the memory calls write none


def codex_memories_fixture(root: Path) -> list[Path]:
    """``codex_memories_session``: the client's home as it left it, its rollouts in their day folder and its memories
    database (which names the session that last ran each job), with what the fake served."""
    client = require_client("codex")
    with _serving() as served, FakeResponses() as fake:
        codex = Codex(client, root, project(root), fake, model="gpt-5.5", extra_config=MEMORIES)
        codex_memories_session(codex, fake)
        home = codex.codex_home
        files = {str(path.relative_to(home)): path.read_bytes() for path in codex.rollouts()}
        for database in sorted(home.glob("memories*.sqlite")):
            if _jobs(database):  # the one the pipeline used (0.171 also opens an empty one of an older layout)
                files[database.name] = _checkpointed(database)
        return _kept(RECORDED / f"codex-{_version(client.version)}-memories", files, root, served)


def _jobs(database: Path) -> int:
    with sqlite3.connect(database) as db:
        return int(db.execute("SELECT count(*) FROM jobs").fetchone()[0])


def _checkpointed(database: Path) -> bytes:
    """The database's bytes with its write-ahead log folded in (the client may leave it beside the file)."""
    with sqlite3.connect(database) as db:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return database.read_bytes()


TITLED = "Read the notes"


def codex_thread_title_session(codex: Codex, fake: FakeResponses) -> None:
    """The terminal UI (``codex`` on a pseudo-terminal, logged in with an API key, on gpt-6.2-sol: another model
    asks to switch to it first) sent one prompt, answered at once: the UI then asks the model for the new thread's
    title (turn metadata ``thread_source: "thread_title"``, in a thread of its own that writes no rollout) and
    writes it to ``session_index.jsonl``. 2 calls served, 1 in the rollout."""
    from tests.fakes.terminal import Terminal

    codex.configure()
    login = [str(codex.client.binary), "login", "--with-api-key"]
    subprocess.run(login, input=b"sk-loopback\n", cwd=codex.cwd, env=codex.env(), check=True, capture_output=True)
    fake.enqueue("The notes ask for CSV.")
    fake.enqueue(json.dumps({"title": TITLED}), agent="thread_title")
    args = [str(codex.client.binary), "--no-daemon", "--dangerously-bypass-approvals-and-sandbox"]
    terminal = Terminal(args, codex.cwd, codex.env())
    try:
        terminal.wait_for(lambda: b"for shortcuts" in terminal.screen, 60)
        terminal.read(2)
        terminal.type("Read notes.txt and say what it asks.")
        index = codex.codex_home / "session_index.jsonl"
        terminal.wait_for(lambda: index.exists() and TITLED.encode() in index.read_bytes(), 60)
    finally:
        terminal.close()
    assert not fake.errors and not fake.script and not any(fake.agent_scripts.values()), fake.errors
    assert len(codex.rollouts()) == 1, codex.rollouts()  # the title's thread writes none


def codex_thread_title_fixture(root: Path) -> list[Path]:
    """``codex_thread_title_session``: the client's home as it left it (the rollout in its day folder, the
    ``session_index.jsonl`` the title is in), with what the fake served."""
    client = require_client("codex")
    with _serving() as served, FakeResponses() as fake:
        codex = Codex(client, root, project(root), fake, model="gpt-6.2-sol")
        codex_thread_title_session(codex, fake)
        home = codex.codex_home
        files = {str(path.relative_to(home)): path.read_bytes() for path in codex.rollouts()}
        files["session_index.jsonl"] = (home / "session_index.jsonl").read_bytes()
        return _kept(RECORDED / f"codex-{_version(client.version)}-thread-title", files, root, served)


if __name__ == "__main__":
    record_named((codex_auto_review_fixture, codex_memories_fixture, codex_thread_title_fixture))
