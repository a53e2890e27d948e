"""Issue 20's second sweep: more shapes the real clients write, audited as bench/client_audit.py audits its own.

    PYTHONPATH=. python bench/client_shapes.py [--keep DIR] [--only claude|codex]

Claude Code 2.1.332: stream-json input with an image and a PDF in the user message, --append-system-prompt,
thinking and redacted_thinking; a tool of a stdio MCP server; plan mode (ExitPlanMode); /compact then
--fork-session and a resume from a message before the compaction; a background Bash. Codex 0.171.0: a
tool of a stdio MCP server, reasoning with encrypted content, turn_context changes between resumes
(effort, approval, sandbox, model), ``codex exec resume --last``, a tool_search and a hosted web search.
Each gets client_audit's checks, then ``review`` and ``eval`` on a compaction.

The third sweep (``--only claude3|codex3|gemini3``): Claude Code 529s and a 500 retried, ``--fallback-model``
after 529s, parallel subagents on their agents' own models (``model:`` in .claude/agents), nested subagents,
SessionStart/UserPromptSubmit hooks' additionalContext with a custom slash command and ``--continue`` twice,
a ``--max-turns`` cut, an auto-compaction from a large reported usage, a refusal for a prompt too long (the
client compacts and goes on), a run killed during a subagent's Bash; Codex 500/503 retried around an
apply_patch, a long context over the 272k tier and the auto-compaction after it; Gemini CLI three calls in
one turn and an edit, and a long reported context. Every session is also resumed by the real client after
compactctl's compact and prune (client_audit's resumers).

The fourth sweep (``--only claude4|codex4``): Claude Code ``--model`` aliases (haiku, sonnet, opus, opusplan in
plan mode) with the API answering dated names (claude-haiku-4-5-20251001, claude-opus-4-7-20261015); ``/compact``
with custom instructions, then ``--resume-session-at`` the answer it kept (preservedSegment: the client sends the
summary, not the history before it); an older session resumed after a newer one, two branches off one message;
a subagent's WebSearch; ``--output-format stream-json --include-partial-messages`` with 1-hour cache writes over
200k on claude-sonnet-4-6 (the client auto-compacts). Codex a manual compaction (the TUI's /compact, through
``codex app-server``'s ``thread/compact/start``) between effort changes and a switch to gpt-5.4-mini; images with
``-i`` and ``view_image``; a custom provider (a gateway) naming ``openai/gpt-5.5``.

The fifth sweep (``--only claude5|codex5|gemini5``): bench/client_shapes_fifth.py; the sixth (``--only
claude6|codex6|gemini6``): bench/client_shapes_sixth.py.
"""

from __future__ import annotations

import argparse
import base64
import json
import shlex
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import bench.client_audit as ca  # noqa: E402
from tests.fakes.anthropic import FakeAnthropic, web_search_reply  # noqa: E402
from tests.fakes.clients import ClaudeCode, Codex, Gemini, _run, killed_while, require_client  # noqa: E402
from tests.fakes.gemini import FakeGemini  # noqa: E402
from tests.fakes.responses import FakeResponses, web_search_call  # noqa: E402
from tests.fakes.scenarios import project  # noqa: E402
from tests.fakes.server import Reply, ToolCall  # noqa: E402

MCP_SERVER = Path(__file__).resolve().parent / "mcp_notes_server.py"
PDF = (
    b"%PDF-1.4\n1 0 obj<</Type/Catalog/Pages 2 0 R>>endobj\n2 0 obj<</Type/Pages/Kids[3 0 R]/Count 1>>endobj\n"
    b"3 0 obj<</Type/Page/Parent 2 0 R/MediaBox[0 0 200 100]/Contents 4 0 R/Resources<<>>>>endobj\n"
    b"4 0 obj<</Length 44>>stream\nBT /F1 12 Tf 10 50 Td (Results stay CSV) Tj ET\nendstream endobj\n"
    b"trailer<</Root 1 0 R>>\n%%EOF\n"
)


def _stream_json(claude: ClaudeCode, content: list[dict], *extra: str) -> str:
    """One user message of content blocks on stdin (``--input-format stream-json``); the session id."""
    args = [str(claude.client.binary), "-p", "--input-format", "stream-json", "--output-format", "stream-json"]
    args += ["--verbose", "--permission-mode", "acceptEdits", "--allowedTools", ca.TOOLS, *extra]
    line = json.dumps({"type": "user", "message": {"role": "user", "content": content}}) + "\n"
    done = subprocess.run(
        args, cwd=claude.cwd, env=claude.env(), input=line, capture_output=True, text=True, timeout=180
    )
    assert done.returncode == 0, done.stderr[-2000:] + done.stdout[-2000:]
    events = [json.loads(x) for x in done.stdout.splitlines() if x.strip().startswith("{")]
    return str(next(e["session_id"] for e in events if e.get("session_id")))


def _made(name: str, claude: ClaudeCode, fake: FakeAnthropic, sessions: list[str], out: Path, mark: int,
          before: tuple[int, int]) -> ca.Made:  # fmt: skip
    after = ca._fake_calls(fake)
    folder = out / name
    shutil.rmtree(folder, ignore_errors=True)
    shutil.copytree(claude.session_file(sessions[0]).parent, folder)
    wanted = {f"{s}.jsonl" for s in sessions}
    for path in folder.glob("*.jsonl"):
        if path.name not in wanted:
            path.unlink()
    for other in folder.iterdir():  # another session's subagents and tool results: billed with that session
        if other.is_dir() and other.name not in sessions and (other / "subagents").is_dir():
            shutil.rmtree(other)
    paths = sorted(p for p in folder.rglob("*.jsonl"))
    return ca.Made(
        f"claude-code: {name}", "claude-code", paths, after[0] - before[0], after[1] - before[1],
        resume=ca._claude_resumer(claude, fake, sessions), target=folder if len(paths) > 1 else paths[0],
        served=ca.SERVED[mark:],
    )  # fmt: skip


def claude_sessions(root: Path, out: Path) -> list[ca.Made]:
    client = require_client("claude")
    made: list[ca.Made] = []
    with FakeAnthropic() as fake:
        claude = ClaudeCode(client, root, project(root), fake)
        notes = str(claude.cwd / "notes.txt")
        model = ("--model", "claude-opus-4-7")

        # 1. stream-json input: an image and a PDF in the user message; --append-system-prompt; thinking and
        # redacted_thinking in the answer.
        mark, before = len(ca.SERVED), ca._fake_calls(fake)
        image = {"type": "base64", "media_type": "image/png", "data": base64.b64encode(ca.png()).decode()}
        document = {"type": "base64", "media_type": "application/pdf", "data": base64.b64encode(PDF).decode()}
        redacted = {
            "type": "redacted_thinking",
            "data": "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpP",
        }
        fake.enqueue(
            Reply(thinking="The PDF says CSV.", blocks=(redacted,), text="Reading the notes too.",
                  tool_calls=(ToolCall("Read", {"file_path": notes}),)),
            Reply(thinking="Both agree.", text=ca.ANSWER),
        )  # fmt: skip
        content = [
            {"type": "text", "text": "What do the diagram and the PDF say? Check the notes."},
            {"type": "image", "source": image},
            {"type": "document", "source": document, "title": "spec.pdf"},
        ]
        first = _stream_json(claude, content, *model, "--append-system-prompt", "Answer in one line.")
        fake.enqueue(Reply(thinking="Short.", blocks=(redacted,), text="Yes: CSV."))
        ca._claude(claude, "Sure?", *model, "--resume", first, "--append-system-prompt", "Answer in one line.")
        made.append(_made("stream-json image+pdf, append-system-prompt, redacted thinking", claude, fake, [first], out,
                          mark, before))  # fmt: skip

        # 2. A tool of a stdio MCP server.
        mark, before = len(ca.SERVED), ca._fake_calls(fake)
        config = json.dumps({"mcpServers": {"notes": {"command": sys.executable, "args": [str(MCP_SERVER)]}}})
        mcp = ("--mcp-config", config, "--allowedTools", f"{ca.TOOLS} mcp__notes__read_note")
        fake.enqueue(
            Reply(
                text="Asking the notes server.", tool_calls=(ToolCall("mcp__notes__read_note", {"topic": "format"}),)
            ),
            "The notes server says CSV.",
        )
        second = ca._claude(claude, "What does the notes server say about the format?", *model, *mcp)
        made.append(_made("mcp tool", claude, fake, [second], out, mark, before))

        # 3. Plan mode: ExitPlanMode.
        mark, before = len(ca.SERVED), ca._fake_calls(fake)
        plan = "1. Fix add() to return a + b.\n2. Run app.py."
        fake.enqueue(
            Reply(text="Reading first.", tool_calls=(ToolCall("Read", {"file_path": str(claude.cwd / "app.py")}),)),
            Reply(text="Here is the plan.", tool_calls=(ToolCall("ExitPlanMode", {"plan": plan}),)),
            "Plan ready.",
        )
        args = [str(client.binary), "-p", "Plan the fix of app.py.", "--output-format", "json", *model]
        done = _run([*args, "--permission-mode", "plan"], claude.cwd, claude.env())
        third = str(json.loads(done.stdout.strip().splitlines()[-1])["session_id"])
        made.append(_made("plan mode, ExitPlanMode", claude, fake, [third], out, mark, before))

        # 4. /compact, then --fork-session after it, and a resume from a message before the compaction.
        mark, before = len(ca.SERVED), ca._fake_calls(fake)
        fake.enqueue(Reply(text="Reading.", tool_calls=(ToolCall("Read", {"file_path": notes}),)), ca.ANSWER)
        fourth = ca._claude(claude, "What do the notes say?", *model)
        early = ca._uuid_answering(claude.session_file(fourth), ca.ANSWER)
        ca._claude(claude, "/compact", *model, "--resume", fourth)
        fake.enqueue("Forked after the compaction.")
        fork = ca._claude(claude, "Anything after the summary?", *model, "--resume", fourth, "--fork-session")
        fake.enqueue("From before the compaction: CSV.")
        ca._claude(claude, "Again, before it?", "--model", "claude-sonnet-4-6", "--resume", fourth,
                   "--resume-session-at", early)  # fmt: skip
        made.append(_made("compact, fork after it, resume from before it", claude, fake, [fourth, fork], out, mark,
                          before))  # fmt: skip

        # 5. A background Bash: its output file, the task notification as a turn, TaskStop loaded by ToolSearch.
        mark, before = len(ca.SERVED), ca._fake_calls(fake)
        ticks = {"command": "for i in 1 2 3; do echo tick $i; sleep 1; done", "description": "ticks"}
        fake.enqueue(
            Reply(text="Starting it.", tool_calls=(ToolCall("Bash", {**ticks, "run_in_background": True}),)),
            Reply(text="Loading.", tool_calls=(ToolCall("ToolSearch", {"query": "select:TaskStop"}),)),
            "Started.",
            "It ticked three times.",
        )
        fifth = ca._claude(claude, "Run the ticks in the background.", "--model", "claude-sonnet-4-6")
        made.append(_made("background Bash, task notification, TaskStop", claude, fake, [fifth], out, mark, before))
        assert not fake.errors, fake.errors
        for m in made:
            m.notes.append(str(m.resume()))
    return made


def codex_sessions(root: Path, out: Path) -> list[ca.Made]:
    client = require_client("codex")
    made: list[ca.Made] = []
    with FakeResponses() as fake:
        mcp = f'[mcp_servers.notes]\ncommand = "{sys.executable}"\nargs = ["{MCP_SERVER}"]\n'
        codex = Codex(client, root, project(root), fake, model="gpt-5.5", extra_config=mcp)
        mark = len(ca.SERVED)
        fake.enqueue(
            Reply(
                thinking="Ask the notes server.", tool_calls=(ToolCall("mcp__notes__read_note", {"topic": "format"}),)
            ),
            Reply(thinking="It says CSV.", text=ca.ANSWER),
        )
        codex.run("What does the notes server say about the format?")
        (rollout,) = codex.rollouts()
        thread = ca._thread(rollout)
        codex.extra_config = mcp + 'model_reasoning_effort = "high"\napproval_policy = "on-request"\n'
        fake.enqueue(Reply(thinking="Run it.", tool_calls=(ToolCall("exec_command", {"cmd": "python3 app.py"}),)),
                     "It prints -1.")  # fmt: skip
        codex.run("Run app.py.", resume=thread)
        codex.model = "gpt-5.6-terra"
        codex.extra_config = mcp + 'model_reasoning_effort = "low"\nsandbox_mode = "read-only"\n'
        codex.configure()
        fake.enqueue(Reply(thinking="Short.", text="Nothing else."))
        args = [str(client.binary), "exec", "--skip-git-repo-check", "resume", "--last", "Anything else?"]
        _run(args, codex.cwd, codex.env())
        main_calls, side = ca._fake_calls(fake)
        assert not fake.errors, fake.errors
        target = out / "codex-mcp-effort.jsonl"
        shutil.copy(rollout, target)
        made.append(
            ca.Made(
                "codex: mcp tool, encrypted reasoning, effort/approval/sandbox/model changes, resume --last",
                "codex",
                [target],
                main_calls,
                side,
                resume=ca._codex_resumer(codex, fake, [thread]),
                served=ca.SERVED[mark:],
            )
        )

        # A tool_search (MCP tools are deferred in 0.171: the output lists their namespace) and a hosted web search.
        codex.model, codex.extra_config = "gpt-5.5", mcp + 'web_search = "live"\n'
        search = {"type": "tool_search_call", "id": "tsc_fake0001", "call_id": "call_ts0001", "status": "completed",
                  "execution": "client", "arguments": {"query": "notes read_note"}}  # fmt: skip
        fake.enqueue(
            Reply(thinking="Find the tool.", blocks=(search,)),
            Reply(text="CSV, and the web agrees.", blocks=(web_search_call("csv rfc", 1),)),
        )
        before, mark, known = ca._fake_calls(fake), len(ca.SERVED), set(codex.rollouts())
        codex.run("What does the notes server say, and the web?")
        (searched,) = set(codex.rollouts()) - known
        after = ca._fake_calls(fake)
        target = out / "codex-tool-search-web-search.jsonl"
        shutil.copy(searched, target)
        made.append(
            ca.Made(
                "codex: tool_search of MCP tools, hosted web search",
                "codex",
                [target],
                after[0] - before[0],
                after[1] - before[1],
                resume=ca._codex_resumer(codex, fake, [ca._thread(searched)]),
                served=ca.SERVED[mark:],
            )
        )
        for m in made:
            m.notes.append(str(m.resume()))
    return made


def _hook(event: str, text: str) -> list[dict[str, object]]:
    """A command hook whose output adds ``text`` to the model's context (hookSpecificOutput.additionalContext)."""
    said = json.dumps({"hookSpecificOutput": {"hookEventName": event, "additionalContext": text}})
    return [{"hooks": [{"type": "command", "command": f"echo {shlex.quote(said)}"}]}]


def claude_third_sweep(root: Path, out: Path) -> list[ca.Made]:
    client = require_client("claude")
    made: list[ca.Made] = []
    with FakeAnthropic() as fake:
        claude = ClaudeCode(client, root, project(root), fake)
        notes, app = str(claude.cwd / "notes.txt"), str(claude.cwd / "app.py")
        model, sonnet = ("--model", "claude-opus-4-7"), ("--model", "claude-sonnet-4-6")

        # 1. Two 529s before a turn's first call, a 500 before the next turn's: retried calls bill nothing.
        mark, before = len(ca.SERVED), ca._fake_calls(fake)
        fake.failures.extend([529, 529])
        fake.enqueue(Reply(text="Reading.", tool_calls=(ToolCall("Read", {"file_path": notes}),)), ca.ANSWER)
        first = ca._claude(claude, "What do the notes say?", *model)
        fake.enqueue(Reply(text="Again.", tool_calls=(ToolCall("Read", {"file_path": notes}),)), "Still CSV.")
        fake.failures.append(500)
        ca._claude(claude, "Check again.", *model, "--resume", first)
        made.append(_made("529 and 500 retried", claude, fake, [first], out, mark, before))

        # 2. 529s until the client falls back to --fallback-model.
        mark, before = len(ca.SERVED), ca._fake_calls(fake)
        fake.failures.extend([529] * 12)
        fake.enqueue(Reply(text="Reading.", tool_calls=(ToolCall("Read", {"file_path": notes}),)), ca.ANSWER)
        second = ca._claude(claude, "What do the notes say?", *model, "--fallback-model", "claude-sonnet-4-6")
        fake.failures.clear()
        made.append(_made("529s then --fallback-model", claude, fake, [second], out, mark, before))

        # 3. Two subagents in parallel, each on its agent's own model (haiku, sonnet: claude-haiku-5-5 and
        # claude-sonnet-5-5 in 2.1.332), and a subagent that starts another.
        agents = claude.cwd / ".claude" / "agents"
        agents.mkdir(parents=True)
        (agents / "checker.md").write_text(
            "---\nname: checker\ndescription: Checks notes.\nmodel: haiku\ntools: Read\n---\nYou check notes.\n"
        )
        (agents / "reader.md").write_text(
            "---\nname: reader\ndescription: Reads files.\nmodel: sonnet\ntools: Read, Bash\n---\nYou read.\n"
        )
        mark, before = len(ca.SERVED), ca._fake_calls(fake)
        check = {"description": "Check notes", "prompt": "Read notes.txt.", "subagent_type": "checker"}
        read = {"description": "Read app", "prompt": "Read app.py.", "subagent_type": "reader"}
        fake.enqueue(
            Reply(text="Two subagents.", tool_calls=(ToolCall("Agent", check), ToolCall("Agent", read))),
            "A subagent's answer: CSV.",
            "Another subagent's answer: add subtracts.",
            "Both done: CSV, and add subtracts.",
        )
        third = ca._claude(claude, "Ask two subagents: one for the notes, one for app.py.", *model)
        outer = {
            "description": "Delegate",
            "prompt": "Have a subagent read notes.txt.",
            "subagent_type": "general-purpose",
        }
        inner = {"description": "Read notes", "prompt": "Read notes.txt.", "subagent_type": "general-purpose"}
        fake.enqueue(
            Reply(text="Delegating.", tool_calls=(ToolCall("Agent", outer),)),
            Reply(text="Delegating again.", tool_calls=(ToolCall("Agent", inner),)),
            Reply(tool_calls=(ToolCall("Read", {"file_path": notes}),)),
            "Inner: CSV.",
            "Outer: the inner agent says CSV.",
            "Nested agents say CSV.",
        )
        ca._claude(claude, "Use a subagent that uses a subagent to check the notes.", *model, "--resume", third)
        made.append(_made("parallel subagents on haiku and sonnet, nested subagents", claude, fake, [third], out, mark,
                          before))  # fmt: skip

        # 4. Hooks that add context (SessionStart, UserPromptSubmit), a custom slash command, --continue twice.
        settings = claude.home / ".claude" / "settings.json"
        settings.parent.mkdir(parents=True, exist_ok=True)
        hooks = {
            "SessionStart": _hook("SessionStart", "Team rule: answers cite the notes file. " * 20),
            "UserPromptSubmit": _hook("UserPromptSubmit", "The prompt hook says: results stay CSV. " * 10),
        }
        settings.write_text(json.dumps({"hooks": hooks}))
        commands = claude.cwd / ".claude" / "commands"
        commands.mkdir(parents=True)
        (commands / "check.md").write_text("---\ndescription: Check the notes\n---\nRead notes.txt about $ARGUMENTS.\n")
        mark, before = len(ca.SERVED), ca._fake_calls(fake)
        fake.enqueue(Reply(text="Reading.", tool_calls=(ToolCall("Read", {"file_path": notes}),)), ca.ANSWER)
        fourth = ca._claude(claude, "/check format", *model)
        fake.enqueue("Continued once.")
        ca._claude(claude, "And the interface?", *model, "--continue")
        fake.enqueue("Continued twice.")
        ca._claude(claude, "Anything else?", *model, "--continue")
        settings.unlink()
        made.append(_made("hooks' additionalContext, a custom command, --continue twice", claude, fake, [fourth], out,
                          mark, before))  # fmt: skip

        # 5. --max-turns 2 cuts a run that wants a third call.
        mark, before = len(ca.SERVED), ca._fake_calls(fake)
        fake.enqueue(
            Reply(text="Reading.", tool_calls=(ToolCall("Read", {"file_path": notes}),)),
            Reply(text="More.", tool_calls=(ToolCall("Read", {"file_path": app}),)),
        )
        args = [str(client.binary), "-p", "Read the notes and app.py.", "--output-format", "json", "--max-turns", "2"]
        done = subprocess.run(
            [*args, *model, "--allowedTools", ca.TOOLS], cwd=claude.cwd, env=claude.env(), capture_output=True,
            text=True, timeout=180,
        )  # fmt: skip
        assert '"error_max_turns"' in done.stdout, done.stdout[-500:]
        fifth = str(json.loads(done.stdout.strip().splitlines()[-1])["session_id"])
        made.append(_made("--max-turns cut", claude, fake, [fifth], out, mark, before))

        # 6. A usage near the window (185k on claude-sonnet-4-6): the client auto-compacts before its next call.
        mark, before = len(ca.SERVED), ca._fake_calls(fake)
        fake.enqueue(
            Reply(
                text="Reading.", tool_calls=(ToolCall("Read", {"file_path": notes}),), usage=(("input_tokens", 150000),)
            ),
            Reply(text="Big.", tool_calls=(ToolCall("Read", {"file_path": app}),), usage=(("input_tokens", 185000),)),
            "After the auto-compaction: CSV.",
        )
        sixth = ca._claude(claude, "Read the notes and app.py.", *sonnet)
        fake.enqueue("Next turn after it.")
        ca._claude(claude, "And now?", *sonnet, "--resume", sixth)
        made.append(_made("auto-compaction from a large reported usage", claude, fake, [sixth], out, mark, before))

        # 7. A request over the window refused ("prompt is too long"): the client compacts and goes on.
        mark, before = len(ca.SERVED), ca._fake_calls(fake)
        seq = {"command": "seq 1 20000", "description": "long"}
        fake.enqueue(Reply(text="Listing.", tool_calls=(ToolCall("Bash", seq),)), "A long list.")
        seventh = ca._claude(claude, "Print a long list.", *model)
        last = fake.model_calls()[-1]
        fake.window = fake.count([last.get("system"), last.get("messages"), last.get("tools")]) + 50
        fake.enqueue("After the refusal.")
        ca._claude(claude, "What was the last number?", *model, "--resume", seventh)
        refused = [r for r in fake.requests if r.error]
        assert refused, "no request was over the window"
        fake.window = None
        fake.requests[:] = [r for r in fake.requests if not r.error]  # refusals the audit would count as faults
        made.append(_made("prompt too long, then the client's compaction", claude, fake, [seventh], out, mark,
                          before))  # fmt: skip

        # 8. A run killed while its subagent's Bash runs: both files end on an open call.
        mark, before = len(ca.SERVED), ca._fake_calls(fake)
        task = {"description": "Slow job", "prompt": "Run the slow job.", "subagent_type": "general-purpose"}
        fake.enqueue(
            Reply(text="Delegating.", tool_calls=(ToolCall("Agent", task),)),
            Reply(text="Running.", tool_calls=(ToolCall("Bash", {"command": ca.SLOW_COMMAND, "description": "slow"}),)),
        )
        args = [str(client.binary), "-p", "Have a subagent run the slow job.", "--output-format", "json"]
        args += ["--permission-mode", "acceptEdits", "--allowedTools", ca.TOOLS, *model]
        subagent = killed_while(
            args, claude.cwd, claude.env(), lambda: claude.projects.glob("*/*/subagents/*.jsonl"), b"slow-job", 3
        )
        made.append(_made("killed during a subagent's Bash", claude, fake, [subagent.parent.parent.name], out, mark,
                          before))  # fmt: skip
        assert not fake.errors, fake.errors
        for m in made:
            m.notes.append(str(m.resume()))
    return made


PATCH = "*** Begin Patch\n*** Update File: app.py\n@@\n-    return a - b\n+    return a + b\n*** End Patch\n"


def _codex_made(name: str, codex: Codex, fake: FakeResponses, rollout: Path, out: Path, mark: int,
                before: tuple[int, int]) -> ca.Made:  # fmt: skip
    after = ca._fake_calls(fake)
    target = out / f"codex-{name.split(',')[0].replace(' ', '-')}.jsonl"
    shutil.copy(rollout, target)
    return ca.Made(
        f"codex: {name}", "codex", [target], after[0] - before[0], after[1] - before[1],
        resume=ca._codex_resumer(codex, fake, [ca._thread(rollout)]), served=ca.SERVED[mark:],
    )  # fmt: skip


def codex_third_sweep(root: Path, out: Path) -> list[ca.Made]:
    client = require_client("codex")
    made: list[ca.Made] = []
    with FakeResponses() as fake:
        codex = Codex(client, root, project(root), fake, model="gpt-5.5")

        # 1. A 500 before an apply_patch's turn, a 503 and a 500 before the next: retried calls bill nothing.
        known, mark, before = set(codex.rollouts()), len(ca.SERVED), ca._fake_calls(fake)
        fake.failures.append(500)
        fake.enqueue(Reply(thinking="Patch it.", tool_calls=(ToolCall("apply_patch", PATCH),)), "Patched.")
        codex.run("Fix add in app.py with a patch.")
        (rollout,) = set(codex.rollouts()) - known
        assert "a + b" in (codex.cwd / "app.py").read_text()
        fake.enqueue(Reply(tool_calls=(ToolCall("exec_command", {"cmd": "python3 app.py"}),)), "It prints 5.")
        fake.failures.extend([503, 500])
        codex.run("Run it.", resume=ca._thread(rollout))
        made.append(_codex_made("retries, apply_patch", codex, fake, rollout, out, mark, before))

        # 2. A long context: 240k, then 290k (over gpt-5.5's 272k tier), and the auto-compaction after it.
        known, mark, before = set(codex.rollouts()), len(ca.SERVED), ca._fake_calls(fake)
        fake.enqueue(Reply(thinking="Big.", text="A long context answer.", usage=(("input_tokens", 240000),)))
        codex.run("Summarize the whole repository history.")
        (rollout,) = set(codex.rollouts()) - known
        fake.enqueue(Reply(text="Over the tier.", usage=(("input_tokens", 290000),)))
        codex.run("Go on.", resume=ca._thread(rollout))
        fake.enqueue("After the compaction.")
        codex.run("And now?", resume=ca._thread(rollout))
        assert b'"type":"compacted"' in rollout.read_bytes().replace(b" ", b"")
        made.append(_codex_made("long context over the 272k tier, auto-compaction", codex, fake, rollout, out, mark,
                                before))  # fmt: skip
        assert not fake.errors, fake.errors
        for m in made:
            m.notes.append(str(m.resume()))
    return made


def gemini_third_sweep(root: Path, out: Path) -> list[ca.Made]:
    """Gemini CLI 0.61 on gemini-3.1-pro-preview; not resumed (0.61 sends its own chat's tool responses twice,
    google-gemini/gemini-cli#29365: tests/formats/test_resume.py pins it)."""
    client = require_client("gemini")
    made: list[ca.Made] = []
    model = "gemini-3.1-pro-preview"
    with FakeGemini() as fake:
        gemini = Gemini(client, root, project(root), fake, {"model": {"name": model}})

        def chat_of(session: str, name: str, served: int) -> ca.Made:
            target = out / f"gemini-{name.split(',')[0].replace(' ', '-')}.jsonl"
            shutil.copy(gemini.chat(session), target)
            given = [("google", m, usage, tools) for m, usage, tools in fake.served[served:]]
            calls = sum(1 for g in given if g[3])
            return ca.Made(f"gemini-cli: {name}", "gemini", [target], calls, len(given) - calls, served=given)

        # 1. Three calls in one turn, then an edit.
        start = len(fake.served)
        calls = (
            ToolCall("read_file", {"file_path": "app.py"}),
            ToolCall("read_file", {"file_path": "notes.txt"}),
            ToolCall("run_shell_command", {"command": "python3 app.py"}),
        )
        fix = {"file_path": str(gemini.cwd / "app.py"), "old_string": "return a - b", "new_string": "return a + b",
               "instruction": "fix add"}  # fmt: skip
        fake.enqueue(
            Reply(thinking="Three at once.", text="Reading.", tool_calls=calls),
            Reply(text="Fixing.", tool_calls=(ToolCall("replace", fix),)),
            Reply(text=f"Fixed. {ca.ANSWER}"),
        )
        made.append(chat_of(gemini.run("Fix app.py; read it and the notes first."), "three calls in a turn, an edit",
                            start))  # fmt: skip

        # 2. A long context reported (600k), resumed twice.
        start = len(fake.served)
        fake.enqueue(Reply(text="A long answer.", usage=(("promptTokenCount", 600000),)))
        session = gemini.run("Summarize everything.")
        fake.enqueue("After.", "After again.")
        gemini.run("Go on.", resume=session)
        gemini.run("And?", resume=session)
        made.append(chat_of(session, "long reported context, resumed twice", start))
        assert not fake.errors, fake.errors
    for m in made:
        m.notes.append("not resumed (gemini-cli#29365)")
    return made


def claude_fourth_sweep(root: Path, out: Path) -> list[ca.Made]:
    client = require_client("claude")
    made: list[ca.Made] = []
    # The API names the dated model it serves for an alias request, as it does for claude-haiku-4-5.
    served = {"claude-haiku-4-5": "claude-haiku-4-5-20251001", "claude-opus-4-7": "claude-opus-4-7-20261015"}
    with FakeAnthropic(served_names=served) as fake:
        claude = ClaudeCode(client, root, project(root), fake)
        notes = str(claude.cwd / "notes.txt")

        # 1. --model aliases (haiku, sonnet, opus, opusplan in plan mode) and explicit names the API answers with
        # dated ones; the same session resumed under each.
        mark, before = len(ca.SERVED), ca._fake_calls(fake)
        fake.enqueue(Reply(text="Reading.", tool_calls=(ToolCall("Read", {"file_path": notes}),)), ca.ANSWER)
        first = ca._claude(claude, "What do the notes say?", "--model", "haiku")
        for alias in ("sonnet", "opus", "claude-haiku-4-5", "claude-opus-4-7"):
            fake.enqueue(f"Still CSV ({alias}).")
            ca._claude(claude, f"Again ({alias})?", "--model", alias, "--resume", first)
        plan = "1. Fix add() to return a + b."
        fake.enqueue(Reply(text="The plan.", tool_calls=(ToolCall("ExitPlanMode", {"plan": plan}),)), "Planned.")
        args = [str(client.binary), "-p", "Plan the fix.", "--output-format", "json", "--model", "opusplan"]
        _run([*args, "--permission-mode", "plan", "--resume", first], claude.cwd, claude.env())
        made.append(_made("model aliases and dated served names", claude, fake, [first], out, mark, before))

        # 2. /compact with custom instructions, then a rewind to before it, and a resume of the leaf after that.
        mark, before = len(ca.SERVED), ca._fake_calls(fake)
        fake.enqueue(Reply(text="Reading.", tool_calls=(ToolCall("Read", {"file_path": notes}),)), ca.ANSWER)
        second = ca._claude(claude, "What do the notes say?", "--model", "claude-sonnet-4-6")
        early = ca._uuid_answering(claude.session_file(second), ca.ANSWER)
        ca._claude(claude, "/compact Keep only the CSV rule and file names.", "--model", "claude-sonnet-4-6",
                   "--resume", second)  # fmt: skip
        fake.enqueue("After the custom compaction.")
        ca._claude(claude, "What is kept?", "--model", "claude-sonnet-4-6", "--resume", second)
        fake.enqueue("Rewound to before the compaction.")
        ca._claude(claude, "Before it, then?", "--model", "claude-sonnet-4-6", "--resume", second,
                   "--resume-session-at", early)  # fmt: skip
        fake.enqueue("Going on from the rewind.")
        ca._claude(claude, "And after the rewind?", "--model", "claude-sonnet-4-6", "--resume", second)
        made.append(_made("compact with instructions, rewind before it", claude, fake, [second], out, mark, before))

        # 3. Two sessions; the older one resumed after the newer was made, rewound twice to the same message
        # (two branches off one point), then its leaf resumed.
        mark, before = len(ca.SERVED), ca._fake_calls(fake)
        fake.enqueue(ca.ANSWER, "The interface stays.")
        older = ca._claude(claude, "What do the notes say? Answer from memory.", "--model", "claude-opus-4-7")
        ca._claude(claude, "And the interface?", "--model", "claude-opus-4-7", "--resume", older)
        fake.enqueue("A newer session.")
        newer = ca._claude(claude, "Something else.", "--model", "claude-opus-4-7")
        point = ca._uuid_answering(claude.session_file(older), ca.ANSWER)
        for n in (1, 2):
            fake.enqueue(f"Branch {n}.", f"Branch {n}, second turn.")
            ca._claude(claude, f"Edit {n}: in French?", "--model", "claude-opus-4-7", "--resume", older,
                       "--resume-session-at", point)  # fmt: skip
            ca._claude(claude, f"Edit {n} goes on.", "--model", "claude-opus-4-7", "--resume", older)
        made.append(_made("older session resumed, two branches off one message", claude, fake, [older, newer], out,
                          mark, before))  # fmt: skip

        # 4. A subagent that searches the web (the server tool's request of its own, inside the subagent).
        mark, before = len(ca.SERVED), ca._fake_calls(fake)
        # In the foreground: a background agent (2.1.332's default) lets the main thread take the next reply while it
        # runs, and the main thread searched, not the subagent.
        task = {"description": "Search", "prompt": "Search the web for the CSV RFC.",
                "subagent_type": "general-purpose", "run_in_background": False}  # fmt: skip
        fake.enqueue(
            Reply(text="Delegating.", tool_calls=(ToolCall("Agent", task),)),
            Reply(text="Searching.", tool_calls=(ToolCall("WebSearch", {"query": "csv rfc"}),)),
            web_search_reply("csv rfc", "Result 1 says CSV is RFC 4180.", 1),
            "The subagent found RFC 4180.",
            "CSV is RFC 4180, says the subagent.",
        )
        fourth = ca._claude(claude, "Have a subagent search the web for the CSV RFC.", "--model", "claude-opus-4-7",
                            "--allowedTools", "Agent Task WebSearch")  # fmt: skip
        made.append(_made("subagent's WebSearch", claude, fake, [fourth], out, mark, before))

        # 5. stream-json output with partial messages, 1-hour cache writes, over 200k input on claude-sonnet-4-6.
        mark, before = len(ca.SERVED), ca._fake_calls(fake)
        fake.cache_writes, fake.tokenizer = "1h", {"claude-sonnet-4-6": 12.0}
        fake.enqueue(Reply(text="Reading.", tool_calls=(ToolCall("Read", {"file_path": notes}),)), ca.ANSWER)
        args = [str(client.binary), "-p", "What do the notes say?", "--output-format", "stream-json", "--verbose"]
        args += ["--include-partial-messages", "--model", "claude-sonnet-4-6", "--allowedTools", ca.TOOLS]
        done = _run(args, claude.cwd, claude.env())
        events = [json.loads(x) for x in done.stdout.splitlines() if x.strip().startswith("{")]
        assert any(e.get("type") == "stream_event" for e in events), done.stdout[-500:]
        fifth = str(next(e["session_id"] for e in events if e.get("session_id")))
        fake.enqueue("Still CSV, from the cache.")
        ca._claude(claude, "Sure?", "--model", "claude-sonnet-4-6", "--resume", fifth)
        fake.cache_writes, fake.tokenizer = None, {}
        made.append(_made("stream-json partial messages, 1h cache writes, over 200k", claude, fake, [fifth], out, mark,
                          before))  # fmt: skip
        assert not fake.errors, fake.errors
        for m in made:
            m.notes.append(str(m.resume()))
    return made


def _compact_by_app_server(codex: Codex, thread: str) -> None:
    """The manual compaction of ``thread`` (the TUI's /compact): ``thread/compact/start`` to ``codex app-server``,
    waited for until its contextCompaction item completes."""

    def compacted(m: dict[str, Any]) -> bool:
        return m.get("method") == "item/completed" and m["params"]["item"]["type"] == "contextCompaction"

    app_server(codex, thread, "thread/compact/start", {}, compacted)


def app_server(codex: Codex, thread: str, method: str, params: dict[str, Any], done: Any = None) -> dict[str, Any]:
    """One request of ``codex app-server`` on stdio about ``thread`` (resumed first): its answer, after the
    message ``done`` accepts where given (a notification of the work it started)."""
    import select
    import time

    codex.configure()
    server = subprocess.Popen(
        [str(codex.client.binary), "app-server"], cwd=codex.cwd, env=codex.env(), stdin=subprocess.PIPE,
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
    )  # fmt: skip
    assert server.stdin and server.stdout

    def send(message: dict[str, object]) -> None:
        assert server.stdin
        server.stdin.write(json.dumps(message) + "\n")
        server.stdin.flush()

    def until(n: int, then: Any = None) -> dict[str, Any]:
        """The answer to request ``n``, once ``then`` (if given) accepted a message, whichever comes first."""
        assert server.stdout
        answer, waiting, end = None, then is not None, time.time() + 120
        while time.time() < end and (answer is None or waiting):
            if select.select([server.stdout], [], [], 1)[0]:
                line = server.stdout.readline()
                assert line, "app-server closed its output"
                message = json.loads(line)
                if message.get("id") == n:
                    assert "error" not in message, message
                    answer = dict(message)
                waiting = waiting and not then(message)
        if answer is None or waiting:
            raise TimeoutError("app-server")
        return answer

    try:
        send({"id": 1, "method": "initialize", "params": {"clientInfo": {"name": "client-shapes", "version": "0"}}})
        until(1)
        send({"method": "initialized"})
        send({"id": 2, "method": "thread/resume", "params": {"threadId": thread}})
        until(2)
        send({"id": 3, "method": method, "params": {"threadId": thread, **params}})
        answer = until(3, done)
        time.sleep(1)  # its rollout lines written
        return answer
    finally:
        server.terminate()
        server.wait()


def codex_fourth_sweep(root: Path, out: Path) -> list[ca.Made]:
    client = require_client("codex")
    made: list[ca.Made] = []
    with FakeResponses() as fake:
        codex = Codex(client, root, project(root), fake, model="gpt-5.5")
        (codex.cwd / "diagram.png").write_bytes(ca.png())

        # 1. The manual compaction (/compact) between turns, effort changes, and a switch to gpt-5.4-mini.
        known, mark, before = set(codex.rollouts()), len(ca.SERVED), ca._fake_calls(fake)
        fake.enqueue(Reply(thinking="Read it.", tool_calls=(ToolCall("exec_command", {"cmd": "cat notes.txt"}),)),
                     ca.ANSWER)  # fmt: skip
        codex.extra_config = 'model_reasoning_effort = "minimal"\n'
        codex.run("What do the notes say?")
        (rollout,) = set(codex.rollouts()) - known
        thread = ca._thread(rollout)
        _compact_by_app_server(codex, thread)
        codex.extra_config = 'model_reasoning_effort = "xhigh"\n'
        fake.enqueue(Reply(thinking="From the summary.", text="After /compact: CSV."))
        codex.run("Still CSV?", resume=thread)
        codex.model, codex.extra_config = "gpt-5.4-mini", 'model_reasoning_effort = "low"\n'
        fake.enqueue("On the mini model: CSV.")
        codex.run("And on the small model?", resume=thread)
        assert b"compacted" in rollout.read_bytes()
        made.append(_codex_made("manual compact, effort changes, gpt-5.4-mini", codex, fake, rollout, out, mark,
                                before))  # fmt: skip

        # 2. Images: two given with -i, and one the model looks at with view_image (an image in a tool output).
        codex.model, codex.extra_config = "gpt-5.5", ""
        known, mark, before = set(codex.rollouts()), len(ca.SERVED), ca._fake_calls(fake)
        (codex.cwd / "second.png").write_bytes(ca.png(32, 32))
        fake.enqueue(Reply(text="Looking.", tool_calls=(ToolCall("view_image", {"path": "diagram.png"}),)),
                     "Three grey gradients.")  # fmt: skip
        codex.configure()
        args = [str(client.binary), "exec", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox"]
        _run([*args, "Compare the images, and look at diagram.png yourself.", "-i", "diagram.png", "-i", "second.png"],
             codex.cwd, codex.env())  # fmt: skip
        (rollout,) = set(codex.rollouts()) - known
        fake.enqueue("Still grey.")
        codex.run("And now?", resume=ca._thread(rollout))
        made.append(_codex_made("images with -i and view_image", codex, fake, rollout, out, mark, before))
        for m in made:  # resumed under the built-in provider they were written with
            m.notes.append(str(m.resume()))

        # 3. A custom provider (a gateway) with a provider-prefixed model name.
        gateway = (
            'model_provider = "gateway"\n[model_providers.gateway]\nname = "Gateway"\n'
            f'base_url = "{fake.url}/v1"\nenv_key = "OPENAI_API_KEY"\nwire_api = "responses"\n'
        )
        codex.model, codex.extra_config = "openai/gpt-5.5", gateway
        known, mark, before = set(codex.rollouts()), len(ca.SERVED), ca._fake_calls(fake)
        fake.enqueue(Reply(tool_calls=(ToolCall("exec_command", {"cmd": "cat notes.txt"}),)), ca.ANSWER)
        codex.run("What do the notes say?")
        (rollout,) = set(codex.rollouts()) - known
        fake.enqueue("Through the gateway: CSV.")
        codex.run("Sure?", resume=ca._thread(rollout))
        made.append(_codex_made("gateway provider, openai/gpt-5.5", codex, fake, rollout, out, mark, before))
        made[-1].notes.append(str(made[-1].resume()))
        assert not fake.errors, fake.errors
    return made


def review_and_eval(made: ca.Made) -> list[str]:
    lines = []
    with tempfile.TemporaryDirectory() as folder:
        for source in made.paths[:1]:
            written = Path(folder) / source.name
            ca.cli("compact", str(source), "-s", "structured", "-o", str(written), "--write-unchanged")
            code, _, err = ca.cli("review", str(source), "-o", str(Path(folder) / "review"))
            lines.append(f"6. review: exit {code} {err.strip()[-200:]}")
            code, out, err = ca.cli("eval", str(source), str(written), "--json")
            lines.append(f"7. eval: exit {code} {out.strip()[:300]} {err.strip()[-200:]}")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--keep", type=Path)
    sweeps = ("claude", "codex", "claude3", "codex3", "gemini3", "claude4", "codex4", "claude5", "codex5", "gemini5",
              "claude6", "codex6", "gemini6")  # fmt: skip
    parser.add_argument("--only", choices=sweeps)
    args = parser.parse_args()
    from compactctl.strategies import STRATEGIES

    ca._serving()
    out = args.keep or Path(tempfile.mkdtemp(prefix="client-shapes"))
    out.mkdir(parents=True, exist_ok=True)
    made: list[ca.Made] = []
    with tempfile.TemporaryDirectory(prefix="homes") as homes:
        if args.only in (None, "claude"):
            made += claude_sessions(Path(homes) / "claude", out)
        if args.only in (None, "codex"):
            made += codex_sessions(Path(homes) / "codex", out)
        if args.only in (None, "claude3"):
            made += claude_third_sweep(Path(homes) / "claude3", out)
        if args.only in (None, "codex3"):
            made += codex_third_sweep(Path(homes) / "codex3", out)
        if args.only in (None, "gemini3"):
            made += gemini_third_sweep(Path(homes) / "gemini3", out)
        if args.only in (None, "claude4"):
            made += claude_fourth_sweep(Path(homes) / "claude4", out)
        if args.only in (None, "codex4"):
            made += codex_fourth_sweep(Path(homes) / "codex4", out)
        from bench import client_shapes_fifth as sweep5

        if args.only in (None, "claude5"):
            made += sweep5.claude_fifth_sweep(Path(homes) / "claude5", out)
        if args.only in (None, "codex5"):
            made += sweep5.codex_fifth_sweep(Path(homes) / "codex5", out)
        if args.only in (None, "gemini5"):
            made += sweep5.gemini_fifth_sweep(Path(homes) / "gemini5", out)
        from bench import client_shapes_sixth as sweep6

        if args.only in (None, "claude6"):
            made += sweep6.claude_sixth_sweep(Path(homes) / "claude6", out)
        if args.only in (None, "codex6"):
            made += sweep6.codex_sixth_sweep(Path(homes) / "codex6", out)
        if args.only in (None, "gemini6"):
            made += sweep6.gemini_sixth_sweep(Path(homes) / "gemini6", out)
    for session in made:
        print("\n".join(ca.audit(session, sorted(STRATEGIES)) + review_and_eval(session)), flush=True)


if __name__ == "__main__":
    main()
