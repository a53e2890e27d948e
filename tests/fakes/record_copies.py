"""Record the fixtures of runs whose files hold a call more than once or off the live thread, made by the real
clients against the loopback fakes, with what the fakes served (``<fixture>.served.json``): the bill.

    PATH=<.ci/cache/npm/node_modules/.bin>:$PATH python -m tests.fakes.record_copies [NAME...]

Claude Code 2.1.332's session files copied by a user (``cp``: a backup, a renamed copy), so that a folder replay
sees the same calls in several files; Codex 0.171's thread reverted twice and once after a compaction, each revert
a new rollout of the thread. The fixtures go to tests/recorded/data/ (README.md there says what each holds).
"""

from __future__ import annotations

import contextlib
import json
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import tests.fakes.anthropic as anthropic
import tests.fakes.responses as responses
from tests.fakes.anthropic import FakeAnthropic
from tests.fakes.clients import ClaudeCode, Codex, _run, require_client
from tests.fakes.gemini import FakeGemini
from tests.fakes.record_fixtures import ANSWER, _claude_print, _version
from tests.fakes.responses import FakeResponses
from tests.fakes.scenarios import project
from tests.fakes.server import Reply, ToolCall

RECORDED = Path(__file__).resolve().parents[1] / "recorded" / "data"


@contextlib.contextmanager
def _serving() -> Iterator[list[dict[str, Any]]]:
    """Every response the Anthropic, Responses and Gemini fakes serve while inside (its id, model and usage): what was
    billed. A Gemini response's model is the one its request named (the fake answers as ``gemini-fake``)."""
    served: list[dict[str, Any]] = []
    events = anthropic._sse_events

    def kept(message: dict[str, Any]) -> Any:
        served.append({"id": message["id"], "model": message["model"], "usage": message["usage"]})
        if "context_management" in message:  # the context edits the API applied (its applied_edits)
            served[-1]["context_management"] = message["context_management"]
        return events(message)

    send = responses.send_sse

    def sent(handler: Any, events: list[tuple[str, dict[str, Any]]], *rest: Any) -> Any:
        # A failed response (``response.failed``) with usage is billed as a completed one is; a cut stream sent none.
        ends = ("response.completed", "response.failed")
        done = next((e["response"] for kind, e in events if kind in ends and "usage" in e["response"]), None)
        if done is not None:
            served.append({"id": done["id"], "model": done["model"], "usage": done["usage"]})
            if done.get("status") == "failed":
                served[-1]["status"] = "failed"
            searches = sum(1 for item in done.get("output") or () if item.get("type") == "web_search_call")
            if searches:  # hosted searches, billed per search beside the tokens; no usage counts them
                served[-1]["web_searches"] = searches
            if done.get("service_tier") not in (None, "default"):  # the tier it was billed at
                served[-1]["service_tier"] = done["service_tier"]
            caller = responses.own_call_kind(handler.headers)
            if caller is not None:  # one of Codex's own calls beside the thread's turns: which
                served[-1]["caller"] = caller
            elif any(item.get("type") == "compaction" for item in done.get("output") or ()):
                served[-1]["caller"] = "compaction"  # Codex's remote compaction (a ``compaction_trigger`` request)
        return send(handler, events, *rest)

    send_json = responses.send_json

    def answered(handler: Any, status: int, body: Any, *rest: Any) -> Any:
        # The unary compaction endpoint's answer (``/v1/responses/compact``): billed, streamed by no SSE.
        if isinstance(body, dict) and body.get("object") == "response.compaction":
            served.append({"id": body["id"], "model": body["model"], "usage": body["usage"], "caller": "compact"})
        return send_json(handler, status, body, *rest)

    bill = FakeGemini.bill

    def billed(fake: FakeGemini, model: str, usage: dict[str, Any], tools: bool, response_id: str) -> None:
        with fake.lock:
            served.append({"id": response_id, "model": model, "usage": usage})
            if not tools:  # the CLI's main loop sends its tools every time: this is a side call (the compressor's)
                served[-1]["caller"] = "side_call"
        bill(fake, model, usage, tools, response_id)

    anthropic._sse_events = kept  # type: ignore[assignment]
    responses.send_sse = sent  # type: ignore[assignment]
    responses.send_json = answered  # type: ignore[assignment]
    FakeGemini.bill = billed  # type: ignore[method-assign]
    try:
        yield served
    finally:
        anthropic._sse_events = events  # type: ignore[assignment]
        responses.send_sse = send  # type: ignore[assignment]
        responses.send_json = send_json  # type: ignore[assignment]
        FakeGemini.bill = bill  # type: ignore[method-assign]


def claude_code_copied_session_fixture(root: Path) -> list[Path]:
    """Claude Code 2.1.332 (the pinned client): a turn with a Read, the session file copied into a backup folder,
    a second turn (``--resume`` appends to the same file), the file copied again under another name, then
    ``--fork-session`` from its end and that fork's file copied too. The copies keep every record as it was (uuids,
    sessionId, message ids, usage): nothing in them says they are copies. The fake served 4 responses."""
    client = require_client("claude")
    with _serving() as served, FakeAnthropic() as fake:
        claude = ClaudeCode(client, root, project(root), fake)

        def run(prompt: str, *extra: str) -> str:
            return _claude_print(claude, prompt, "--allowedTools", "Bash Read Edit Write", *extra)

        notes = str(claude.cwd / "notes.txt")
        fake.enqueue(Reply(text="Reading.", tool_calls=(ToolCall("Read", {"file_path": notes}),)), ANSWER)
        session = run("What do the notes say?")
        early = claude.session_file(session).read_bytes()  # the backup taken after the first turn
        fake.enqueue("Keep the public interface.")
        run("And the second line?", "--resume", session)
        fake.enqueue("Forked: nothing else.")
        fork = run("Anything else?", "--resume", session, "--fork-session")
        assert not fake.errors and not fake.script, fake.errors
        files = {
            f"backup/{session}.jsonl": early,
            f"{session}.jsonl": claude.session_file(session).read_bytes(),
            "renamed-copy.jsonl": claude.session_file(session).read_bytes(),
            f"{fork}.jsonl": claude.session_file(fork).read_bytes(),
            "fork-copy.jsonl": claude.session_file(fork).read_bytes(),
        }
        folder = RECORDED / f"claude-code-{_version(client.version)}-copies"
        shutil.rmtree(folder, ignore_errors=True)
        written = []
        for name, data in files.items():
            target = folder / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data.replace(str(root).encode(), b"/home/user"))
            written.append(target)
        (folder.parent / f"{folder.name}.served.json").write_text(json.dumps(served, indent=1) + "\n")
    return written


def codex_repeated_reverts_fixture(root: Path) -> list[Path]:
    """Codex 0.171.0 (the pinned client) through ``codex app-server`` as the TUI drives it: a turn with a tool call,
    a second turn dropped with ``thread/revert``, a turn dropped with a second revert, a turn, a manual compaction
    (``thread/compact/start``), a turn after it dropped with a third revert, and a last turn; each turn after a
    revert with ``codex exec resume --last``. Every rollout of the thread, as the client named them."""
    from bench.client_shapes import _compact_by_app_server, app_server

    client = require_client("codex")
    with _serving() as served, FakeResponses() as fake:
        codex = Codex(client, root, project(root), fake, model="gpt-5.5")

        def turns(rollout: Path) -> list[str]:
            records = [json.loads(line) for line in rollout.read_text().splitlines() if line.strip()]
            return [r["payload"]["turn_id"] for r in records if r.get("type") == "turn_context"]

        def latest() -> Path:
            return max(codex.rollouts(), key=lambda p: p.stat().st_mtime)

        def resume_last(prompt: str) -> None:
            codex.configure()
            args = [str(client.binary), "exec", "--skip-git-repo-check", "resume", "--last", prompt]
            _run(args, codex.cwd, codex.env())

        def revert_last() -> None:
            app_server(codex, thread, "thread/revert", {"beforeTurnId": turns(latest())[-1]})

        fake.enqueue(Reply(thinking="Read it.", tool_calls=(ToolCall("exec_command", {"cmd": "cat notes.txt"}),)),
                     ANSWER)  # fmt: skip
        codex.run("What do the notes say?")
        (first,) = codex.rollouts()
        thread = first.name.removesuffix(".jsonl")[-36:]
        fake.enqueue("Dropped by the first revert.")
        codex.run("And the second line?", resume=thread)
        revert_last()
        fake.enqueue("Dropped by the second revert.")
        resume_last("Say it again?")
        revert_last()
        fake.enqueue("Kept: CSV.")
        resume_last("Still CSV?")
        _compact_by_app_server(codex, thread)
        fake.enqueue(Reply(thinking="From the summary.", text="Dropped by the revert after the compaction."))
        resume_last("After the compaction?")
        revert_last()
        fake.enqueue("The last turn: CSV.")
        resume_last("And at the end?")
        assert not fake.errors, fake.errors
        folder = RECORDED / f"codex-{_version(client.version)}-reverts"
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
        written = []
        for path in codex.rollouts():
            target = folder / path.name
            target.write_bytes(path.read_bytes().replace(str(root).encode(), b"/home/user"))
            written.append(target)
        (folder.parent / f"{folder.name}.served.json").write_text(json.dumps(served, indent=1) + "\n")
    return written


def record_named(every: tuple[Any, ...]) -> None:
    """``python -m MODULE [NAME...]``: each fixture of ``every`` (only those named), each in a fresh folder."""
    import sys

    named = set(sys.argv[1:])
    for record in [r for r in every if not named or r.__name__ in named]:
        with tempfile.TemporaryDirectory(prefix="fixture-") as root:
            print("wrote", record(Path(root)))


if __name__ == "__main__":
    record_named((claude_code_copied_session_fixture, codex_repeated_reverts_fixture))
