"""Record the shapes of long Claude Code 2.1.332 sessions with the real client against the loopback fake, with what
the fake served (``<fixture>.served.json``): the bill.

    PATH=<.ci/cache/npm/node_modules/.bin>:$PATH python -m tests.fakes.record_long_sessions [NAME...]

NAME is a fixture function's name (all when none is named): the client's own auto-compact in the middle of a tool
loop (at its threshold, and after the API refused a prompt as too long), parallel tool calls and parallel subagents
(foreground and background), a background command stopped, API errors the client retried (529, 500) and a stream the
connection dropped. The fixtures go to tests/recorded/data/ (README.md there says what each holds).
"""

from __future__ import annotations

import json
import re
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

from tests.fakes.anthropic import FakeAnthropic
from tests.fakes.clients import ClaudeCode, require_client
from tests.fakes.record_compactctl_sessions import claude_run
from tests.fakes.record_copies import RECORDED, _serving, record_named
from tests.fakes.record_fixtures import ANSWER, _version
from tests.fakes.record_tiers import _kept
from tests.fakes.scenarios import _part_command, project
from tests.fakes.server import Reply, ToolCall

# Claude Code compacts by itself once a call's context passes this share of the model's window (less its summary
# buffer): 20% of claude-sonnet-4-6's is about 34k tokens of the fake's, which the fourth part of the log passes.
AUTOCOMPACT_PERCENT = "20"


@dataclass(frozen=True)
class Recorded:
    """A session the real client wrote: its files (named as the client named them) and what the fake served."""

    name: str  # the fixture's name: claude-code-<version>-<shape>
    files: dict[str, bytes]
    served: list[dict[str, Any]]


def _folder_files(claude: ClaudeCode, session: str) -> dict[str, bytes]:
    """The session's file and its folder (subagents' files, tool results), named as the client named them."""
    path = claude.session_file(session)
    files = {path.name: path.read_bytes()}
    folder = path.with_suffix("")
    if folder.is_dir():
        files |= {str(p.relative_to(path.parent)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}
    return files


def _part(n: int) -> Reply:
    return Reply(text=f"Reading part {n}.", tool_calls=(ToolCall("Bash", {"command": _part_command(n),
                                                                          "description": f"Part {n}"}),))  # fmt: skip


def claude_code_auto_compacted_session(root: Path) -> Recorded:
    """Claude Code 2.1.332 on claude-sonnet-4-6 with ``CLAUDE_AUTOCOMPACT_PCT_OVERRIDE=20``: one prompt read in
    four long command outputs; after the third the context passes the threshold and the client compacts by itself
    (its summary's response, ``trigger: "auto"``) in the middle of the tool loop, keeping the pending call and its
    result after the summary (``preservedSegment``), and the turn goes on; then a second turn (``--resume``). The
    fake served 7 responses."""
    client = require_client("claude")
    with _serving() as served, FakeAnthropic() as fake:
        claude = ClaudeCode(client, root, project(root), fake,
                            extra_env={"CLAUDE_AUTOCOMPACT_PCT_OVERRIDE": AUTOCOMPACT_PERCENT})  # fmt: skip
        fake.enqueue(*(_part(n) for n in range(4)), "Every part is the same line; nothing is missing.")
        session = claude_run(claude, "Check every part of the log.")
        fake.enqueue("Still nothing missing.")
        claude_run(claude, "Anything missing?", "--resume", session)
        assert not fake.errors and not fake.script, fake.errors
        files = _folder_files(claude, session)
        assert files[f"{session}.jsonl"].count(b'"isCompactSummary":true') >= 1, "the client did not auto-compact"
        return Recorded("claude-code-" + _version(client.version) + "-auto-compacted", files, list(served))


def claude_code_refused_compacted_session(root: Path) -> Recorded:
    """Claude Code 2.1.332 on claude-sonnet-4-6 against a fake with a 36,000-token window (its own threshold far
    above): the same four long outputs; the fourth call is refused ("prompt is too long", 400, no usage), and the
    client compacts (its summary's response, ``trigger: "auto"``, the pending call kept after it) and sends the call
    again from the summary. The fake served 6 responses for 7 requests of the turn."""
    client = require_client("claude")
    with _serving() as served, FakeAnthropic(window=36_000) as fake:
        claude = ClaudeCode(client, root, project(root), fake)
        fake.enqueue(*(_part(n) for n in range(4)), "Every part is the same line; nothing is missing.")
        session = claude_run(claude, "Check every part of the log.")
        assert not fake.script and [e.split(":")[0] for e in fake.errors] == ["prompt is too long"], fake.errors
        files = _folder_files(claude, session)
        assert b'"trigger":"auto"' in files[f"{session}.jsonl"], "the client did not compact"
        return Recorded("claude-code-" + _version(client.version) + "-refused-compacted", files, list(served))


@dataclass
class FailingAnthropic(FakeAnthropic):
    """A :class:`FakeAnthropic` that answers the main calls numbered in ``fail_at`` (from 0, retries counted) with
    that HTTP status and no usage, as the API does when overloaded (529) or failing (500)."""

    fail_at: dict[int, int] = field(default_factory=dict)
    _calls: int = 0

    def next_failure(self) -> int | None:
        with self.lock:
            n, self._calls = self._calls, self._calls + 1
        return self.fail_at.get(n)


def claude_code_retried_session(root: Path) -> Recorded:
    """Claude Code 2.1.332 on claude-sonnet-4-6: a turn with a Read whose second call the fake first answers 529
    overloaded (no usage: the API bills nothing) and the client retries, then the answer; a second turn
    (``--resume``) whose call is answered 500 once and retried. The fake served 3 responses for 5 requests."""
    client = require_client("claude")
    with _serving() as served, FailingAnthropic(fail_at={1: 529, 3: 500}) as fake:
        claude = ClaudeCode(client, root, project(root), fake)
        notes = str(claude.cwd / "notes.txt")
        fake.enqueue(Reply(text="Reading.", tool_calls=(ToolCall("Read", {"file_path": notes}),)), ANSWER)
        session = claude_run(claude, "What do the notes say?")
        fake.enqueue("Keep the public interface.")
        claude_run(claude, "And the second line?", "--resume", session)
        assert not fake.errors and not fake.script, fake.errors
        refused = [r.status for r in fake.requests if r.status != 200]
        assert refused == [529, 500], refused
        files = _folder_files(claude, session)
        return Recorded("claude-code-" + _version(client.version) + "-retried", files, list(served))


def claude_code_parallel_session(root: Path) -> Recorded:
    """Claude Code 2.1.332 on claude-sonnet-4-6: one response with three tool calls at once (Read, Bash, Read),
    an answer; then a turn (``--resume``) whose first response calls the Agent tool twice at once (two
    general-purpose subagents, each its own file under ``<session>/subagents/``, each answering in one call), and
    the answer after both. The fake served 6 responses: 4 of the session's, 1 of each subagent's."""
    client = require_client("claude")
    with _serving() as served, FakeAnthropic() as fake:
        claude = ClaudeCode(client, root, project(root), fake)
        app, notes = str(claude.cwd / "app.py"), str(claude.cwd / "notes.txt")
        count = ToolCall("Bash", {"command": "seq 1 200", "description": "Count"})
        three = (ToolCall("Read", {"file_path": app}), count, ToolCall("Read", {"file_path": notes}))
        fake.enqueue(Reply(text="Reading both and counting.", tool_calls=three), ANSWER)
        session = claude_run(claude, "Read app.py and the notes, and count to 200.")
        tasks = tuple(ToolCall("Agent", {"description": f"Check {what}", "subagent_type": "general-purpose",
                                         "prompt": f"Say in one line what {what} asks.", "run_in_background": False})
                      for what in ("the notes", "app.py"))  # fmt: skip
        # In the foreground (2.1.332 runs an Agent in the background unless told not to), both at once: they take the
        # next two replies in either order, so both answer the same.
        fake.enqueue(Reply(text="Asking two agents.", tool_calls=tasks), "Checked: CSV.", "Checked: CSV.",
                     "Both agents say: CSV.")  # fmt: skip
        claude_run(claude, "Have two agents check the notes and app.py.", "--resume", session)
        assert not fake.errors and not fake.script, fake.errors
        files = _folder_files(claude, session)
        assert len([n for n in files if "/subagents/" in n and n.endswith(".jsonl")]) == 2, sorted(files)
        return Recorded("claude-code-" + _version(client.version) + "-parallel", files, list(served))


@dataclass
class RoutedAnthropic(FakeAnthropic):
    """A :class:`FakeAnthropic` that answers a subagent from a script of its own: ``agent_scripts`` keyed by a text
    its first message holds (its prompt). Claude Code's subagents run beside the session, so one queue would hand
    them each other's replies."""

    _request: threading.local = field(default_factory=threading.local)

    def handle(self, handler: BaseHTTPRequestHandler, method: str, body: Any) -> None:
        messages = body.get("messages") if isinstance(body, dict) else None
        self._request.first = json.dumps(messages[0]) if messages else ""
        super().handle(handler, method, body)

    def next_reply(self, agent: str | None = None) -> Reply:
        first = getattr(self._request, "first", "")
        return super().next_reply(next((key for key in self.agent_scripts if key in first), agent))


def claude_code_background_agents_session(root: Path) -> Recorded:
    """Claude Code 2.1.332 on claude-sonnet-4-6: one response calls the Agent tool twice with no
    ``run_in_background`` (2.1.332 then runs each in the background: "Async agent launched"), the session answers
    at once, and each subagent's end comes back as a ``<task-notification>`` user turn, each answered; the -p run
    waits for both. The fake served 6 responses: 4 of the session's, 1 of each subagent's."""
    client = require_client("claude")
    with _serving() as served, RoutedAnthropic() as fake:
        claude = ClaudeCode(client, root, project(root), fake)
        tasks = tuple(ToolCall("Agent", {"description": f"Check {what}", "subagent_type": "general-purpose",
                                         "prompt": f"Say in one line what {what} asks."})
                      for what in ("the notes", "app.py"))  # fmt: skip
        fake.enqueue(Reply(text="Asking two agents.", tool_calls=tasks), "Waiting for both.", "One is back.",
                     "Both are back: CSV.")  # fmt: skip
        # The agents end apart (their streams held 2 s and 5 s before their usage), after the session's answer: one
        # notification each, not one for both.
        fake.enqueue(Reply(text="The notes ask for CSV.", usage_after=2), agent="what the notes asks")
        fake.enqueue(Reply(text="app.py asks for add().", usage_after=5), agent="what app.py asks")
        session = claude_run(claude, "Have two agents check the notes and app.py.")
        assert not fake.errors and not fake.script and not any(fake.agent_scripts.values()), fake.errors
        files = _folder_files(claude, session)
        notified = set(re.findall(rb"<task-id>(\w+)</task-id>", files[f"{session}.jsonl"]))
        assert len(notified) == 2, "the agents did not run in the background"
        return Recorded("claude-code-" + _version(client.version) + "-background-agents", files, list(served))


BACKGROUND = re.compile(r"Command running in background with ID: (\w+)\. Output is being written to: (\S+?)\.\s")


@dataclass
class BackgroundAnthropic(FakeAnthropic):
    """A :class:`FakeAnthropic` whose scripted tool calls may name the latest background command the client started
    (``{task_id}``, ``{output}`` in an argument): its id and output file are known only once the client answers."""

    _started: tuple[str, str] = ("", "")

    def handle(self, handler: BaseHTTPRequestHandler, method: str, body: Any) -> None:
        found = BACKGROUND.findall(json.dumps(body)) if isinstance(body, dict) else []
        if found:
            with self.lock:
                self._started = found[-1]
        super().handle(handler, method, body)

    def next_reply(self, agent: str | None = None) -> Reply:
        reply = super().next_reply(agent)
        task_id, output = self._started
        return replace(reply, tool_calls=tuple(_named(call, task_id, output) for call in reply.tool_calls))


def _named(call: ToolCall, task_id: str, output: str) -> ToolCall:
    if not isinstance(call.arguments, dict):
        return call
    named = {key: value.format(task_id=task_id, output=output) if isinstance(value, str) else value
             for key, value in call.arguments.items()}  # fmt: skip
    return ToolCall(call.name, named)


def claude_code_background_session(root: Path) -> Recorded:
    """Claude Code 2.1.332 on claude-sonnet-4-6: ToolSearch loads the deferred TaskStop, TaskCreate and TaskUpdate
    (2.1.332 has no BashOutput, KillShell or TodoWrite: a background command's output is a file to Read); one
    response starts a command with ``run_in_background`` and creates a task, then a foreground ``sleep 2``, a Read of
    the command's output file, one response that stops the command (TaskStop) and marks the task done (TaskUpdate),
    and an answer. The fake served 6 responses."""
    client = require_client("claude")
    with _serving() as served, BackgroundAnthropic() as fake:
        claude = ClaudeCode(client, root, project(root), fake)
        ticker = "for i in $(seq 1 120); do echo tick $i; sleep 1; done"
        fake.enqueue(
            Reply(tool_calls=(ToolCall("ToolSearch", {"query": "select:TaskStop,TaskCreate,TaskUpdate"}),)),
            Reply(text="Starting the ticker.", tool_calls=(
                ToolCall("Bash", {"command": ticker, "description": "Ticker", "run_in_background": True}),
                ToolCall("TaskCreate", {"subject": "Watch the ticker", "description": "Stop it after a look."}))),
            Reply(tool_calls=(ToolCall("Bash", {"command": "sleep 2", "description": "Wait"}),)),
            Reply(tool_calls=(ToolCall("Read", {"file_path": "{output}"}),)),
            Reply(tool_calls=(ToolCall("TaskStop", {"task_id": "{task_id}"}),
                              ToolCall("TaskUpdate", {"taskId": "1", "status": "completed"}))),
            "The ticker ticked; it is stopped.",
        )  # fmt: skip
        session = claude_run(claude, "Start a ticker in the background, look at it, then stop it.")
        assert not fake.errors and not fake.script, fake.errors
        files = _folder_files(claude, session)
        assert b"tick 1" in files[f"{session}.jsonl"], "the Read did not see the command's output"
        return Recorded("claude-code-" + _version(client.version) + "-background", files, list(served))


class _CutStream:
    """A response's socket writer that resets the connection once the stream's first delta is out, where the fake
    marked the response to be cut: the client has the message's start (its id, its input usage), a piece of its
    text, and then ECONNRESET."""

    def __init__(self, wfile: Any, connection: socket.socket, cut: list[str]) -> None:
        self.wfile, self.connection, self.cut, self.armed = wfile, connection, cut, False

    def write(self, data: bytes) -> int:
        found = re.search(rb'"id": "(msg_fake\w+)"', data) if self.cut and not self.cut[-1] else None
        if found:
            self.cut[-1], self.armed = found.group(1).decode(), True
        written: int = self.wfile.write(data)
        if self.armed and b"event: content_block_delta" in data:
            self.wfile.flush()
            # The client reads what came before the reset (a reset at once may drop it unread: then its cost-state
            # counts nothing of the response).
            time.sleep(0.5)
            self.connection.shutdown(socket.SHUT_RDWR)
        return written

    def flush(self) -> None:
        self.wfile.flush()


@dataclass
class CuttingAnthropic(FakeAnthropic):
    """A :class:`FakeAnthropic` whose main calls numbered in ``cut_at`` (from 0, retries counted) stream their start
    and a delta, then reset the connection; ``cut``: the ids of the responses cut so."""

    cut_at: set[int] = field(default_factory=set)
    cut: list[str] = field(default_factory=list)
    _calls: int = 0

    def next_reply(self, agent: str | None = None) -> Reply:
        with self.lock:
            n, self._calls = self._calls, self._calls + 1
            if n in self.cut_at:
                self.cut.append("")  # its id comes with its message_start
        return super().next_reply(agent)

    def handle(self, handler: BaseHTTPRequestHandler, method: str, body: Any) -> None:
        handler.wfile = _CutStream(handler.wfile, handler.connection, self.cut)  # type: ignore[assignment]
        super().handle(handler, method, body)


def claude_code_stream_cut_session(root: Path) -> Recorded:
    """Claude Code 2.1.332 on claude-sonnet-4-6: a turn with a Read whose second call's stream the connection drops
    after its start and a first delta (ECONNRESET); the client writes an ``api_error`` record and sends the request
    again, which the fake answers. The fake served 3 responses; the cut one (``"caller": "cut_stream"`` in the
    served file, with the usage the fake made for it) is in no record."""
    client = require_client("claude")
    with _serving() as served, CuttingAnthropic(cut_at={1}) as fake:
        claude = ClaudeCode(client, root, project(root), fake)
        notes = str(claude.cwd / "notes.txt")
        fake.enqueue(Reply(text="Reading.", tool_calls=(ToolCall("Read", {"file_path": notes}),)),
                     "The notes say: " + "CSV, " * 100, ANSWER)  # fmt: skip
        session = claude_run(claude, "What do the notes say?")
        assert not fake.errors and not fake.script and len(fake.cut) == 1 and fake.cut[0], (fake.errors, fake.cut)
        files = _folder_files(claude, session)
        assert fake.cut[0].encode() not in files[f"{session}.jsonl"], "the client wrote the cut response"
        kept = [{**r, "caller": "cut_stream"} if r["id"] in fake.cut else r for r in served]
        return Recorded("claude-code-" + _version(client.version) + "-stream-cut", files, kept)


def _fixture(session: Callable[[Path], Recorded]) -> Callable[[Path], list[Path]]:
    def fixture(root: Path) -> list[Path]:
        recorded = session(root)
        return _kept(RECORDED / recorded.name, recorded.files, root, recorded.served)

    fixture.__name__ = session.__name__.replace("_session", "_fixture")
    return fixture


SESSIONS = (
    claude_code_auto_compacted_session,
    claude_code_refused_compacted_session,
    claude_code_parallel_session,
    claude_code_background_agents_session,
    claude_code_background_session,
    claude_code_retried_session,
    claude_code_stream_cut_session,
)

if __name__ == "__main__":
    record_named(tuple(_fixture(session) for session in SESSIONS))
