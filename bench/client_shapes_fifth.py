"""Issue 20's fifth sweep of shapes the real clients write (bench/client_shapes.py ``--only claude5|codex5|gemini5``).

Claude Code 2.1.332: a WebFetch inside a subagent (the Agent tool), one page it gets (200: the small model's
summary, a side request billed in no message) and one it does not (404: no summary), and a WebSearch; three subagents in
parallel, each reading a file; ``--continue`` after a ``/compact``. Codex 0.171.0: a turn dropped with
``codex app-server``'s ``thread/revert`` (the TUI's backtrack) after a manual compaction, then ``codex exec
resume --last``. Gemini CLI 0.61.0: ``/compress`` and ``/chat save`` / ``/chat resume`` in the interactive
client (driven on a pseudo-terminal).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import bench.client_audit as ca
from bench.client_shapes import _compact_by_app_server, _made, app_server
from tests.fakes.anthropic import FakeAnthropic
from tests.fakes.clients import Codex, Gemini, _run, require_client
from tests.fakes.gemini import FakeGemini
from tests.fakes.record_server_tools import _fetching, _https_site, gemini_compress_and_saved_chat, subagent_fetches
from tests.fakes.responses import FakeResponses
from tests.fakes.scenarios import project
from tests.fakes.server import Reply, ToolCall


def claude_fifth_sweep(root: Path, out: Path) -> list[ca.Made]:
    client = require_client("claude")
    made: list[ca.Made] = []
    site = root / "site"
    site.mkdir(parents=True)
    (site / "spec.html").write_text("<html><body><h1>CSV</h1><p>Results must stay in CSV.</p></body></html>")
    server, cert = _https_site(root, site)
    base = f"https://127.0.0.1:{server.server_address[1]}"
    opus = ("--model", "claude-opus-4-7")
    try:
        with FakeAnthropic() as fake:
            claude = _fetching(client, root, fake, cert)
            notes, app = str(claude.cwd / "notes.txt"), str(claude.cwd / "app.py")

            # 1. A subagent fetches a page it gets (200: summarized by claude-haiku-4-5) and one it does not (404), and
            # searches the web.
            mark, before, start = len(ca.SERVED), ca._fake_calls(fake), len(fake.requests)
            fake.enqueue(*subagent_fetches(base), "The subagent says the page asks for CSV.")
            first = ca._claude(claude, "Have a subagent fetch the two pages and search the web.", *opus,
                               "--allowedTools", "Agent WebFetch WebSearch")  # fmt: skip
            haiku = [r for r in fake.requests[start:] if isinstance(r.body, dict)
                     and r.body.get("model") == "claude-haiku-4-5"]  # fmt: skip
            name = "subagent's WebFetch (a 200, a 404) and WebSearch"
            made.append(_made(name, claude, fake, [first], out, mark, before))
            made[-1].notes.append(f"haiku requests while it ran: {len(haiku)}")

            # 2. Three subagents in parallel, each reading a file (their requests interleave on the fake).
            mark, before = len(ca.SERVED), ca._fake_calls(fake)
            asked = [{"description": f"Read {n}", "prompt": f"Read {path}.", "subagent_type": "general-purpose"}
                     for n, path in enumerate((notes, app, notes), start=1)]  # fmt: skip
            tasks = [ToolCall("Agent", task) for task in asked]
            # Whichever subagent asks next takes the next reply: three reads, then three answers, whatever the
            # order, each subagent ends on one answer.
            fake.enqueue(
                Reply(text="Three subagents.", tool_calls=tuple(tasks)),
                *(Reply(text="Reading.", tool_calls=(ToolCall("Read", {"file_path": notes}),)) for _ in range(3)),
                *(f"A subagent's answer ({n}): CSV." for n in range(1, 4)),
                "All three say CSV.",
            )
            second = ca._claude(claude, "Ask three subagents at once to read the notes and app.py.", *opus)
            made.append(_made("three parallel subagents", claude, fake, [second], out, mark, before))

            # 3. /compact, then --continue (the latest session of the folder: the compacted one).
            mark, before = len(ca.SERVED), ca._fake_calls(fake)
            fake.enqueue(Reply(text="Reading.", tool_calls=(ToolCall("Read", {"file_path": notes}),)), ca.ANSWER)
            third = ca._claude(claude, "What do the notes say?", "--model", "claude-sonnet-4-6")
            ca._claude(claude, "/compact", "--model", "claude-sonnet-4-6", "--resume", third)
            fake.enqueue("Continued after the compaction: CSV.")
            continued = ca._claude(claude, "Still CSV?", "--model", "claude-sonnet-4-6", "--continue")
            fake.enqueue("Continued again.")
            ca._claude(claude, "And again?", "--model", "claude-sonnet-4-6", "--continue")
            sessions = list(dict.fromkeys([third, continued]))
            made.append(_made("--continue after /compact", claude, fake, sessions, out, mark, before))
            made[-1].notes.append(f"--continue wrote session {'the same' if continued == third else continued}")
            assert not fake.errors, fake.errors
            for m in made:
                m.notes.append(str(m.resume()))
    finally:
        server.shutdown()
    return made


def codex_fifth_sweep(root: Path, out: Path) -> list[ca.Made]:
    client = require_client("codex")
    made: list[ca.Made] = []
    with FakeResponses() as fake:
        codex = Codex(client, root, project(root), fake, model="gpt-5.5")

        # 1. A manual compaction, a turn, that turn dropped (thread/revert: the TUI's backtrack), then
        # ``codex exec resume --last``. The revert writes a new rollout of the thread whose session_meta names
        # the history it keeps of the first (history_base); the dropped turn stays in the first, billed.
        known, mark, before = set(codex.rollouts()), len(ca.SERVED), ca._fake_calls(fake)
        fake.enqueue(Reply(thinking="Read it.", tool_calls=(ToolCall("exec_command", {"cmd": "cat notes.txt"}),)),
                     ca.ANSWER)  # fmt: skip
        codex.run("What do the notes say?")
        (rollout,) = set(codex.rollouts()) - known
        thread = ca._thread(rollout)
        _compact_by_app_server(codex, thread)
        fake.enqueue(Reply(thinking="From the summary.", text="After /compact: CSV."))
        codex.run("Still CSV?", resume=thread)
        turns = [r["payload"]["turn_id"] for r in ca._records(rollout) if r.get("type") == "turn_context"]
        app_server(codex, thread, "thread/revert", {"beforeTurnId": turns[-1]})
        fake.enqueue("After the revert: CSV.")
        codex.configure()
        _run([str(client.binary), "exec", "--skip-git-repo-check", "resume", "--last", "And after the revert?"],
             codex.cwd, codex.env())  # fmt: skip
        after = ca._fake_calls(fake)
        folder = out / "codex-compact-revert-resume-last"
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
        written = sorted(set(codex.rollouts()) - known)
        for path in written:
            shutil.copy(path, folder / path.name)
        made.append(ca.Made(
            "codex: /compact, a turn dropped with thread/revert, exec resume --last", "codex",
            sorted(folder.glob("*.jsonl")), after[0] - before[0], after[1] - before[1],
            resume=ca._codex_resumer(codex, fake, [thread]), target=folder, served=ca.SERVED[mark:],
        ))  # fmt: skip
        made[-1].notes.append(f"rollouts of the thread: {len(written)}")
        assert not fake.errors, fake.errors
        for m in made:
            m.notes.append(str(m.resume()))
    return made


def gemini_fifth_sweep(root: Path, out: Path) -> list[ca.Made]:
    """Gemini CLI 0.61, interactive: /compress, /chat save, /chat resume (not resumed after: gemini-cli#29365)."""
    client = require_client("gemini")
    with FakeGemini() as fake:
        gemini = Gemini(client, root, project(root), fake, {"model": {"name": "gemini-3.1-pro-preview"}})
        session = gemini_compress_and_saved_chat(gemini, fake)
        assert not fake.errors, fake.errors
        target = out / "gemini-compress-chat-save-resume.jsonl"
        shutil.copy(gemini.chat(session), target)
        given = [("google", m, usage, tools) for m, usage, tools in fake.served]
        calls = sum(1 for g in given if g[3])
        chat = ca.Made("gemini-cli: /compress, /chat save, /chat resume", "gemini", [target], calls,
                       len(given) - calls, served=given)  # fmt: skip
        chat.notes.append("not resumed (gemini-cli#29365)")
    return [chat]
