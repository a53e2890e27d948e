"""Issue 20's second sweep: more shapes the real clients write, audited as bench/client_audit.py audits its own.

    PYTHONPATH=. python bench/client_shapes.py [--keep DIR] [--only claude|codex]

Claude Code 2.1.332: stream-json input with an image and a PDF in the user message, --append-system-prompt,
thinking and redacted_thinking; a tool of a stdio MCP server; plan mode (ExitPlanMode); /compact then
--fork-session and a resume from a message before the compaction; a background Bash. Codex 0.171.0: a
tool of a stdio MCP server, reasoning with encrypted content, turn_context changes between resumes
(effort, approval, sandbox, model), ``codex exec resume --last``, a tool_search and a hosted web search.
Each gets client_audit's checks, then ``review`` and ``eval`` on a compaction.
"""

from __future__ import annotations

import argparse
import base64
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import bench.client_audit as ca  # noqa: E402
from tests.fakes.anthropic import FakeAnthropic  # noqa: E402
from tests.fakes.clients import ClaudeCode, Codex, _run, require_client  # noqa: E402
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
    parser.add_argument("--only", choices=("claude", "codex"))
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
    for session in made:
        print("\n".join(ca.audit(session, sorted(STRATEGIES)) + review_and_eval(session)), flush=True)


if __name__ == "__main__":
    main()
