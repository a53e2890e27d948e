"""Issue 20's sixth sweep of shapes the real clients write (bench/client_shapes.py ``--only claude6|codex6|gemini6``).

Claude Code 2.1.332: an MCP tool's large text result (over the client's MCP output limit) and its image result;
the Read tool on a PDF and on a notebook; ``--fork-session`` with both branches continued, thinking on each, and a
model switch (claude-opus-4-7, claude-sonnet-4-6) between their turns; a fork from an earlier message
(``--resume-session-at`` with ``--fork-session``), both continued; large Reads until the client auto-compacts by
itself, then a resume. Codex 0.171.0: ``codex exec --json`` on
gpt-5.4-mini with a large command output, resumed (``exec --json resume``) on gpt-5.5; an MCP tool's large text and
image results. Gemini CLI 0.61.0: a model switch across resumes (gemini-3.1-pro-preview, gemini-3-flash-preview)
with a large shell output.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import bench.client_audit as ca
from bench.client_shapes import MCP_SERVER, PDF, _codex_made, _made
from tests.fakes.anthropic import FakeAnthropic
from tests.fakes.clients import ClaudeCode, Codex, Gemini, _run, require_client
from tests.fakes.gemini import FakeGemini
from tests.fakes.responses import FakeResponses
from tests.fakes.scenarios import project
from tests.fakes.server import Reply, ToolCall

NOTEBOOK = {
    "cells": [
        {"cell_type": "markdown", "metadata": {}, "source": ["# Results\n", "They stay in CSV."]},
        {"cell_type": "code", "execution_count": 1, "metadata": {}, "source": ["print('a,b')"],
         "outputs": [{"output_type": "stream", "name": "stdout", "text": ["a,b\n"]}]},
    ],
    "metadata": {}, "nbformat": 4, "nbformat_minor": 5,
}  # fmt: skip


def claude_sixth_sweep(root: Path, out: Path) -> list[ca.Made]:
    client = require_client("claude")
    made: list[ca.Made] = []
    with FakeAnthropic() as fake:
        claude = ClaudeCode(client, root, project(root), fake)
        opus, sonnet = ("--model", "claude-opus-4-7"), ("--model", "claude-sonnet-4-6")

        # 1. An MCP tool's large text result and its image result, in one turn; then a resume.
        mark, before = len(ca.SERVED), ca._fake_calls(fake)
        config = json.dumps({"mcpServers": {"notes": {"command": sys.executable, "args": [str(MCP_SERVER)]}}})
        mcp = ("--mcp-config", config, "--allowedTools", f"{ca.TOOLS} mcp__notes__read_note")
        calls = (ToolCall("mcp__notes__read_note", {"topic": "everything"}),
                 ToolCall("mcp__notes__read_note", {"topic": "picture"}))  # fmt: skip
        fake.enqueue(Reply(text="Asking the notes server twice.", tool_calls=calls), "Many rules, one diagram: CSV.")
        first = ca._claude(claude, "Get every note and the diagram from the notes server.", *opus, *mcp)
        fake.enqueue("Still CSV.")
        ca._claude(claude, "Sure?", *opus, *mcp, "--resume", first)
        made.append(_made("mcp large text and image results", claude, fake, [first], out, mark, before))

        # 2. The Read tool on a PDF and on a notebook.
        mark, before = len(ca.SERVED), ca._fake_calls(fake)
        (claude.cwd / "spec.pdf").write_bytes(PDF)
        (claude.cwd / "results.ipynb").write_text(json.dumps(NOTEBOOK))
        reads = (ToolCall("Read", {"file_path": str(claude.cwd / "spec.pdf")}),
                 ToolCall("Read", {"file_path": str(claude.cwd / "results.ipynb")}))  # fmt: skip
        fake.enqueue(Reply(text="Reading both.", tool_calls=reads), "Both say CSV.")
        second = ca._claude(claude, "What do spec.pdf and results.ipynb say?", *sonnet)
        made.append(_made("Read of a PDF and a notebook", claude, fake, [second], out, mark, before))

        # 3. A fork, then both branches continued, with thinking, switching models between their turns.
        mark, before = len(ca.SERVED), ca._fake_calls(fake)
        fake.enqueue(Reply(thinking="Read the notes first.", text="Reading.",
                           tool_calls=(ToolCall("Read", {"file_path": str(claude.cwd / "notes.txt")}),)),
                     Reply(thinking="They say CSV.", text=ca.ANSWER))  # fmt: skip
        third = ca._claude(claude, "What do the notes say?", *opus)
        fake.enqueue(Reply(thinking="A fork.", text="Forked: CSV."))
        fork = ca._claude(claude, "On the fork: sure?", *opus, "--resume", third, "--fork-session")
        for n, model in enumerate((sonnet, opus, sonnet), start=1):
            fake.enqueue(Reply(thinking=f"Main {n}.", text=f"Main branch {n}."))
            ca._claude(claude, f"Main branch, turn {n}?", *model, "--resume", third)
            fake.enqueue(Reply(thinking=f"Fork {n}.", text=f"Fork branch {n}."))
            ca._claude(claude, f"Fork branch, turn {n}?", *model, "--resume", fork)
        made.append(_made("fork, both branches continued, thinking across model switches", claude, fake,
                          [third, fork], out, mark, before))  # fmt: skip

        # 4. A fork from an earlier message (--resume-session-at with --fork-session), both sessions continued.
        mark, before = len(ca.SERVED), ca._fake_calls(fake)
        fake.enqueue(ca.ANSWER, "The interface stays.")
        fourth = ca._claude(claude, "What do the notes say? From memory.", *sonnet)
        ca._claude(claude, "And the interface?", *sonnet, "--resume", fourth)
        early = ca._uuid_answering(claude.session_file(fourth), ca.ANSWER)
        fake.enqueue("Forked from the first answer.")
        branch = ca._claude(claude, "In French?", *sonnet, "--resume", fourth, "--resume-session-at", early,
                            "--fork-session")  # fmt: skip
        fake.enqueue("The fork goes on.", "The original goes on.")
        ca._claude(claude, "Go on (fork).", *sonnet, "--resume", branch)
        ca._claude(claude, "Go on (original).", *sonnet, "--resume", fourth)
        made.append(_made("fork from an earlier message, both continued", claude, fake, [fourth, branch], out,
                          mark, before))  # fmt: skip

        # 5. Large Reads fill the window until the client auto-compacts by itself, then a resume.
        mark, before = len(ca.SERVED), ca._fake_calls(fake)
        big = []
        for n in range(10):
            path = claude.cwd / f"log{n}.txt"
            path.write_text("".join(f"{n}:{line:05d} results stay in CSV, row after row.\n" for line in range(1400)))
            big.append(ToolCall("Read", {"file_path": str(path)}))
        fake.enqueue(Reply(text="Reading six.", tool_calls=tuple(big[:6])), Reply(text="Four more.",
                     tool_calls=tuple(big[6:])), "All ten logs say CSV.")  # fmt: skip
        fifth = ca._claude(claude, "Read all ten logs.", *sonnet)
        fake.enqueue("After the auto-compaction: CSV.")
        ca._claude(claude, "What did they say?", *sonnet, "--resume", fifth)
        made.append(_made("large Reads until the client auto-compacts, resumed", claude, fake, [fifth], out, mark,
                          before))  # fmt: skip
        made[-1].notes.append(f"compact boundaries: {claude.session_file(fifth).read_text().count('compact_boundary')}")
        assert not fake.errors, fake.errors
        for m in made:
            m.notes.append(str(m.resume()))
    return made


def codex_sixth_sweep(root: Path, out: Path) -> list[ca.Made]:
    client = require_client("codex")
    made: list[ca.Made] = []
    with FakeResponses() as fake:
        codex = Codex(client, root, project(root), fake, model="gpt-5.4-mini")
        exec_json = [str(client.binary), "exec", "--json", "--skip-git-repo-check",
                     "--dangerously-bypass-approvals-and-sandbox"]  # fmt: skip

        # 1. exec --json on gpt-5.4-mini, a large command output; resumed with --json on gpt-5.5.
        known, mark, before = set(codex.rollouts()), len(ca.SERVED), ca._fake_calls(fake)
        fake.enqueue(Reply(thinking="List it.", tool_calls=(ToolCall("exec_command", {"cmd": "seq 1 40000"}),)),
                     "It counts to 40000.")  # fmt: skip
        codex.configure()
        done = _run([*exec_json, "Print the numbers to 40000."], codex.cwd, codex.env())
        assert '"thread.started"' in done.stdout, done.stdout[-500:]
        (rollout,) = set(codex.rollouts()) - known
        codex.model = "gpt-5.5"
        codex.configure()
        fake.enqueue(Reply(thinking="Recall.", text="The last number is 40000."))
        _run([*exec_json, "resume", ca._thread(rollout), "What was the last number?"], codex.cwd, codex.env())
        made.append(_codex_made("exec --json, large output, gpt-5.4-mini then gpt-5.5", codex, fake, rollout, out,
                                mark, before))  # fmt: skip

        # 2. An MCP tool's large text and image results: 0.171 defers MCP tools, so a tool_search loads it, then the
        # model calls it in its namespace (a bare ``mcp__notes__read_note`` is an "unsupported call").
        codex.extra_config = f'[mcp_servers.notes]\ncommand = "{sys.executable}"\nargs = ["{MCP_SERVER}"]\n'
        known, mark, before = set(codex.rollouts()), len(ca.SERVED), ca._fake_calls(fake)
        search = {"type": "tool_search_call", "id": "tsc_fake0601", "call_id": "call_ts0601", "status": "completed",
                  "execution": "client", "arguments": {"query": "notes read_note"}}  # fmt: skip
        calls = tuple({"type": "function_call", "id": f"fc_fake06{n}", "call_id": f"call_rn06{n}",
                       "status": "completed", "namespace": "mcp__notes", "name": "read_note",
                       "arguments": json.dumps({"topic": topic})}
                      for n, topic in enumerate(("everything", "picture")))  # fmt: skip
        fake.enqueue(Reply(thinking="Find the tool.", blocks=(search,)), Reply(thinking="Ask twice.", blocks=calls),
                     "Many rules, one diagram: CSV.")  # fmt: skip
        codex.run("Get every note and the diagram from the notes server.")
        (rollout,) = set(codex.rollouts()) - known
        fake.enqueue("Still CSV.")
        codex.run("Sure?", resume=ca._thread(rollout))
        made.append(_codex_made("mcp large text and image results", codex, fake, rollout, out, mark, before))
        assert not fake.errors, fake.errors
        for m in made:
            m.notes.append(str(m.resume()))
    return made


def gemini_sixth_sweep(root: Path, out: Path) -> list[ca.Made]:
    """Gemini CLI 0.61: a model switch across resumes, a large shell output (not resumed after: gemini-cli#29365)."""
    client = require_client("gemini")
    with FakeGemini() as fake:
        gemini = Gemini(client, root, project(root), fake, {"model": {"name": "gemini-3.1-pro-preview"}})
        # The shell call in the last turn: a resumed chat with a tool call in it is refused (gemini-cli#29365).
        fake.enqueue("On pro: the notes say CSV.", "On flash: still CSV.")
        session = gemini.run("What do the notes say? From memory.")
        gemini.settings = {"model": {"name": "gemini-3-flash-preview"}}
        gemini.run("Sure?", resume=session)
        gemini.settings = {"model": {"name": "gemini-3.1-pro-preview"}}
        seq = ToolCall("run_shell_command", {"command": "seq 1 40000"})
        fake.enqueue(Reply(thinking="List it.", tool_calls=(seq,)), "Back on pro: it counts to 40000.")
        gemini.run("Print the numbers to 40000.", resume=session)
        assert not fake.errors, fake.errors
        target = out / "gemini-model-switch-large-shell-output.jsonl"
        shutil.copy(gemini.chat(session), target)
        given = [("google", m, usage, tools) for m, usage, tools in fake.served]
        calls = sum(1 for g in given if g[3])
        chat = ca.Made("gemini-cli: model switch across resumes, large shell output", "gemini", [target], calls,
                       len(given) - calls, served=given)  # fmt: skip
        chat.notes.append(f"models served: {sorted({g[1] for g in given})}; not resumed (gemini-cli#29365)")
    return [chat]
