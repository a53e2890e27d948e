"""Issue 20's Done-when, checked on sessions the real clients write with the shapes users make.

    PYTHONPATH=. python bench/client_audit.py [--keep DIR]

Claude Code (2.1.332) and Codex (0.171.0), from .ci/cache/npm, each in a private HOME against its
loopback fake (tests/fakes), make sessions naming current models: images, a ToolSearch that
returns ``tool_reference`` blocks, a subagent (the Agent tool), a resume from an earlier message
(``--resume-session-at``), ``/compact``, a fork (``--fork-session``, ``codex exec fork``), Codex's
own compaction, and runs killed while a tool call runs. On each file (or session folder) it checks:

1. priced: no unpriced model, no $0 cost in any row;
2. the baseline (the row replay marks ``bill``) within 3 % of the file's own usage at list prices,
   worked out apart from replay (tests/replay/test_bill.py's readers, genai-prices' calc_price);
3. every billed call replayed: the calls replay counts (rows, off the live thread, the producer's
   compactions) against the model calls the fake answered;
4. ``report IN OUT`` on ``compact -s S``'s output gives compact's after-figure, for every strategy;
5. no ``API-valid: no`` on a session its own client then resumes with no request refused.

Each check prints its figures as replay, compact and report gave them.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.fakes.anthropic import FakeAnthropic  # noqa: E402
from tests.fakes.clients import ClaudeCode, Codex, _run, killed_while, require_client  # noqa: E402
from tests.fakes.responses import FakeResponses  # noqa: E402
from tests.fakes.scenarios import project  # noqa: E402
from tests.fakes.server import Reply, ToolCall  # noqa: E402

ANSWER = "The notes say results must stay in CSV."
SERVED: list[tuple[str, str, dict[str, Any], bool]] = []  # (provider, model, usage, carried tools) per response


def _serving() -> None:
    """Keep every response the fakes serve (model, usage): the calls billed, whatever a file records."""
    import tests.fakes.anthropic as anthropic
    import tests.fakes.responses as responses

    events = anthropic._sse_events

    def anthropic_events(message: dict[str, Any]) -> Any:
        SERVED.append(("anthropic", message["model"], message["usage"], True))
        return events(message)

    send = responses.send_sse

    def responses_send(handler: Any, sent: list[tuple[str, dict[str, Any]]], *rest: Any) -> Any:
        done = next((e["response"] for kind, e in sent if kind == "response.completed"), None)
        if done is not None:  # the hosted searches it made, billed per call (the usage counts none)
            searches = sum(1 for item in done.get("output") or [] if item.get("type") == "web_search_call")
            SERVED.append(("openai", done["model"], {**done["usage"], "web_searches": searches}, True))
        return send(handler, sent, *rest)

    anthropic._sse_events = anthropic_events  # type: ignore[assignment]
    responses.send_sse = responses_send  # type: ignore[assignment]


def served_cost(served: list[tuple[str, str, dict[str, Any], bool]]) -> float:
    from genai_prices import Usage, calc_price

    from compactctl.tokens import bare_model

    total = 0.0
    for provider, model, usage, _ in served:
        if provider == "anthropic":
            from tests.replay.test_bill import anthropic_counts

            counts = Usage(**anthropic_counts(usage))
        elif provider == "google":
            counts = Usage(
                input_tokens=usage["promptTokenCount"],
                cache_read_tokens=usage.get("cachedContentTokenCount") or None,
                output_tokens=usage["candidatesTokenCount"] + usage.get("thoughtsTokenCount", 0),
            )
        else:
            details = usage["input_tokens_details"]
            counts = Usage(
                input_tokens=usage["input_tokens"],
                cache_read_tokens=details["cached_tokens"],
                cache_write_tokens=details.get("cache_write_tokens") or None,
                output_tokens=usage["output_tokens"],
                web_searches=usage.get("web_searches") or None,
            )
        # A gateway's spelling (``openai/gpt-5.5``) is the maker's model, which genai-prices lists without the prefix.
        total += float(calc_price(counts, bare_model(model), provider_id=provider).total_price)
    return total


# Claude Code 2.1 refuses a standalone ``sleep 60`` (it says to use Monitor): a job that takes a minute instead.
SLOW_COMMAND = "python3 -c 'import time; time.sleep(60)' # slow-job"
TOOLS = "Bash Read Edit Write Agent Task ToolSearch WebFetch"


def png(width: int = 64, height: int = 48) -> bytes:
    """A small real PNG (a grey gradient), so the clients send it as an image."""
    rows = b"".join(b"\x00" + bytes((x * 4) % 256 for x in range(width)) for _ in range(height))

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")


@dataclass
class Made:
    """A session the real client wrote: its files, and what the fake answered while it did."""

    name: str
    producer: str
    paths: list[Path]  # the session's files (a folder's: with its subagents)
    model_calls: int  # the main-loop and subagent calls the fake answered (billed)
    side_calls: int  # the client's other requests (titles, summaries): billed, in no session file
    resume: Any = None  # resumes the session with the real client; returns the refused requests
    target: Path | None = None  # what replay is given: the session folder, or the one file
    notes: list[str] = field(default_factory=list)
    served: list[tuple[str, str, dict[str, Any], bool]] = field(default_factory=list)  # every response, as served


def _claude(claude: ClaudeCode, prompt: str, *extra: str) -> str:
    args = [str(claude.client.binary), "-p", prompt, "--output-format", "json", "--permission-mode", "acceptEdits"]
    done = _run([*args, "--allowedTools", TOOLS, *extra], claude.cwd, claude.env())
    return str(json.loads(done.stdout.strip().splitlines()[-1])["session_id"])


def _records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _uuid_answering(path: Path, text: str) -> str:
    return next(
        str(r["uuid"])
        for r in _records(path)
        if r.get("type") == "assistant" and text in json.dumps(r.get("message", {}).get("content"))
    )


def _fake_calls(fake: Any) -> tuple[int, int]:
    answered = [r for r in fake.requests if r.error is None and r.status == 200]  # not refused, not a scripted failure
    accepted = [r for r in answered if isinstance(r.body, dict) and r.method == "POST"]
    main = [r for r in accepted if r.body.get("tools")]
    return len(main), len(accepted) - len(main)


def claude_sessions(root: Path, out: Path) -> list[Made]:
    client = require_client("claude")
    made: list[Made] = []
    with FakeAnthropic() as fake:
        claude = ClaudeCode(client, root, project(root), fake)
        (claude.cwd / "diagram.png").write_bytes(png())
        notes, image = str(claude.cwd / "notes.txt"), str(claude.cwd / "diagram.png")
        model = ("--model", "claude-opus-4-7")
        mark = len(SERVED)
        fake.enqueue(
            Reply(
                thinking="Read both.",
                tool_calls=(ToolCall("Read", {"file_path": notes}), ToolCall("Read", {"file_path": image})),
            ),
            ANSWER,
        )
        session = _claude(claude, "What do the notes say? Look at the diagram too.", *model)
        fake.enqueue(
            Reply(text="Loading it.", tool_calls=(ToolCall("ToolSearch", {"query": "select:WebFetch"}),)),
            "WebFetch is loaded.",
        )
        _claude(claude, "Load the web fetch tool.", *model, "--resume", session)
        task = {
            "description": "Check the notes",
            "prompt": "Read notes.txt and say what it asks.",
            "subagent_type": "general-purpose",
        }
        fake.enqueue(
            Reply(text="Asking a subagent.", tool_calls=(ToolCall("Agent", task),)),
            Reply(tool_calls=(ToolCall("Read", {"file_path": notes}),)),
            "The notes ask for CSV.",
            "The subagent confirms: CSV.",
        )
        _claude(claude, "Ask a subagent to check.", *model, "--resume", session)
        first = _uuid_answering(claude.session_file(session), ANSWER)
        fake.enqueue("En CSV.")
        _claude(claude, "Say it in French.", *model, "--resume", session, "--resume-session-at", first)
        _claude(claude, "/compact", *model, "--resume", session)
        fake.enqueue("Nothing else after the summary.")
        _claude(claude, "Anything else?", "--model", "claude-sonnet-4-6", "--resume", session)
        fake.enqueue("Forked: nothing else.")
        fork = _claude(claude, "One more thing?", "--model", "claude-opus-5", "--resume", session, "--fork-session")
        main_calls, side = _fake_calls(fake)
        assert not fake.errors, fake.errors
        folder = out / "claude-rich"
        shutil.rmtree(folder, ignore_errors=True)
        shutil.copytree(
            claude.session_file(session).parent, folder
        )  # the project folder: both sessions and the subagents
        made.append(
            Made(
                "claude-code: images, tool_reference, subagent, rewind, /compact, fork (opus-4-7, sonnet-4-6, opus-5)",
                "claude-code",
                sorted(p for p in folder.rglob("*.jsonl")),
                main_calls,
                side,
                resume=_claude_resumer(claude, fake, [session, fork]),
                target=folder,
                served=SERVED[mark:],
            )
        )

        # A run killed while its Bash call runs: the file ends on an open call.
        fake.enqueue(
            Reply(
                text="Waiting for it.",
                tool_calls=(ToolCall("Bash", {"command": SLOW_COMMAND, "description": "run the slow job"}),),
            )
        )
        before, mark = _fake_calls(fake), len(SERVED)
        args = [
            str(client.binary),
            "-p",
            "Run the slow job.",
            "--output-format",
            "json",
            "--permission-mode",
            "acceptEdits",
        ]
        args += ["--allowedTools", TOOLS, "--model", "claude-sonnet-4-6"]
        killed = killed_while(
            args, claude.cwd, claude.env(), lambda: claude.projects.glob("*/*.jsonl"), b"slow-job", settle=3
        )
        after = _fake_calls(fake)
        target = out / "claude-killed.jsonl"
        shutil.copy(killed, target)
        made.append(
            Made(
                "claude-code: killed during a Bash call (sonnet-4-6)",
                "claude-code",
                [target],
                after[0] - before[0],
                after[1] - before[1],
                resume=_claude_resumer(claude, fake, [killed.stem]),
                served=SERVED[mark:],
            )
        )
        made.append(_claude_subagents_session(ClaudeCode(client, root / "agents", project(root / "agents"), fake), out))
        for m in made:
            m.notes.append(str(m.resume()))
    return made


def _claude_subagents_session(claude: ClaudeCode, out: Path) -> Made:
    """Claude Code 2.1.332's subagents in one session: a forked one (``subagent_type: "fork"``: its file opens on a
    copy of the session's Agent call) and a general-purpose one on haiku (whose requests carry ``role: "system"``
    messages), each in the foreground, after a turn with a Read."""
    fake, model = claude.fake, ("--model", "claude-opus-4-7")
    before, mark = _fake_calls(fake), len(SERVED)
    notes = str(claude.cwd / "notes.txt")
    fake.enqueue(Reply(text="Reading.", tool_calls=(ToolCall("Read", {"file_path": notes}),)), "Read it.")
    session = _claude(claude, "Read the notes.", *model)
    for kind, extra in (("fork", {}), ("general-purpose", {"model": "haiku"})):
        task = {"description": "Check the notes", "prompt": "Say what the notes ask, in one line.",
                "subagent_type": kind, "run_in_background": False, **extra}  # fmt: skip
        fake.enqueue(
            Reply(text="Asking a subagent.", tool_calls=(ToolCall("Agent", task),)),
            Reply(tool_calls=(ToolCall("Read", {"file_path": notes}),)),
            "The notes ask for CSV.",
            f"The {kind} subagent confirms: CSV.",
        )
        _claude(claude, f"Ask a {kind} subagent to check.", *model, "--resume", session)
    after = _fake_calls(fake)
    folder = out / "claude-subagents"
    shutil.rmtree(folder, ignore_errors=True)
    shutil.copytree(claude.session_file(session).parent, folder)
    return Made(
        "claude-code: a forked subagent and one on haiku (opus-4-7, haiku-5-5)",
        "claude-code",
        sorted(folder.rglob("*.jsonl")),
        after[0] - before[0],
        after[1] - before[1],
        resume=_claude_resumer(claude, fake, [session]),
        target=folder / f"{session}.jsonl",
        served=SERVED[mark:],
    )


def _claude_resumer(claude: ClaudeCode, fake: FakeAnthropic, sessions: list[str]) -> Any:
    def once(session: str) -> list[str]:
        return _resumed_once(
            fake, session, lambda: _claude(claude, "Still there?", "--model", "claude-sonnet-4-6", "--resume", session)
        )

    return _resumer(sessions, once, claude.session_file)


def _resumed_once(fake: Any, session: str, run: Any) -> list[str]:
    """One resume (``run``) answered "Resumed.": the run's failure and the requests the fake refused."""
    fake.script.clear()
    fake.enqueue("Resumed.")
    start = len(fake.requests)
    refused = []
    try:
        run()
    except AssertionError as error:
        refused.append(f"{session}: {str(error)[:200]}")
    return refused + [str(r.error) for r in fake.requests[start:] if r.error]


def _resumer(sessions: list[str], once: Any, path_of: Any) -> Any:
    """Resumes each session as the client wrote it, then as compactctl's ``compact`` and ``prune`` wrote it
    (swapped into the client's own folder, put back after): the refused requests and failed runs of each."""

    def resume() -> str:
        refused = []
        for session in sessions:
            refused += once(session)
            path = path_of(session)
            for case in RESUMED_AFTER:
                with tempfile.TemporaryDirectory() as folder:
                    written = Path(folder) / path.name
                    code, _, err = cli(*case, str(path), "-o", str(written), "--write-unchanged")
                    if code != 0:
                        refused.append(f"{' '.join(case)}: exit {code} {err.strip()[-200:]}")
                        continue
                    saved = path.read_bytes()
                    path.write_bytes(written.read_bytes())
                    try:
                        refused += [f"after {' '.join(case)}: {r}" for r in once(session)]
                    finally:
                        path.write_bytes(saved)
        cases = ", ".join(" ".join(c) for c in RESUMED_AFTER)
        return (
            f"resumed by the real client: {len(sessions)} session(s) as written and after {cases}, "
            f"refused: {refused or 'none'}"
        )

    return resume


# The default compaction, a window that cuts the head with no summary, and prune in both modes.
RESUMED_AFTER = (
    ("compact",),
    ("compact", "-s", "window", "--keep-recent", "2"),
    ("prune", "--mode", "stub"),
    ("prune", "--mode", "drop"),
)


def codex_sessions(root: Path, out: Path) -> list[Made]:
    client = require_client("codex")
    made: list[Made] = []
    with FakeResponses() as fake:
        codex = Codex(client, root, project(root), fake, model="gpt-5.6-terra")
        (codex.cwd / "diagram.png").write_bytes(png())
        codex.configure()
        mark = len(SERVED)
        fake.enqueue(
            Reply(thinking="Read the notes.", tool_calls=(ToolCall("exec_command", {"cmd": "cat notes.txt"}),)), ANSWER
        )
        args = [str(client.binary), "exec", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox"]
        _run([*args, "What do the notes say? And the diagram?", "-i", "diagram.png"], codex.cwd, codex.env())
        (rollout,) = codex.rollouts()
        thread = _thread(rollout)
        fake.enqueue("The second line says to keep the public interface.")
        codex.run("And the second line?", resume=thread)
        codex.model = "gpt-5.4"
        codex.extra_config = "model_auto_compact_token_limit = 1000\n"
        fake.enqueue("Nothing else.")
        codex.run("Anything else?", resume=thread)
        codex.extra_config = ""
        fake.enqueue("Forked: nothing else.")
        codex.fork(thread, "One more thing?")
        main_calls, side = _fake_calls(fake)
        assert not fake.errors, fake.errors
        folder = out / "codex-rich"
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
        for path in codex.rollouts():
            shutil.copy(path, folder / path.name)
        threads = [_thread(p) for p in codex.rollouts()]
        made.append(
            Made(
                "codex: image, resume, own compaction, fork (gpt-5.6-terra, gpt-5.4)",
                "codex",
                sorted(folder.glob("*.jsonl")),
                main_calls,
                side,
                resume=_codex_resumer(codex, fake, threads),
                target=folder,
                served=SERVED[mark:],
            )
        )

        codex.model = "gpt-5.5"
        codex.configure()
        fake.enqueue(Reply(text="Waiting.", tool_calls=(ToolCall("exec_command", {"cmd": "sleep 60"}),)))
        before, mark = _fake_calls(fake), len(SERVED)
        killed = killed_while([*args, "Wait a minute."], codex.cwd, codex.env(), codex.rollouts, b"sleep 60", settle=2)
        after = _fake_calls(fake)
        target = out / "codex-killed.jsonl"
        shutil.copy(killed, target)
        made.append(
            Made(
                "codex: killed during a tool call (gpt-5.5)",
                "codex",
                [target],
                after[0] - before[0],
                after[1] - before[1],
                resume=_codex_resumer(codex, fake, [_thread(killed)]),
                served=SERVED[mark:],
            )
        )
        made.append(_codex_default_session(codex, out))
        made.append(_codex_subagent_session(codex, out))
        made.append(_codex_subagent_session(codex, out, forked=True))
        for m in made:
            m.notes.append(str(m.resume()))
    return made


# Code mode: the model writes JavaScript for Codex's ``exec`` tool, which calls the nested tools.
CODE_MODE_READ = 'const r = await tools.exec_command({cmd: "cat notes.txt"});\ntext(r);'


def _codex_default_session(codex: Codex, out: Path) -> Made:
    """Codex 0.171.0 as it runs with no model set: gpt-6.2-sol, which it sends in the Responses "lite" shape (no
    ``instructions``, no ``tools``: an ``additional_tools`` input item and developer messages) and in code mode
    (one custom ``exec`` tool running JavaScript), multi-agent tools among the nested ones; two turns."""
    codex.model, codex.extra_config = "gpt-6.2-sol", ""
    fake = codex.fake
    before, mark = _fake_calls(fake), len(SERVED)
    fake.enqueue(Reply(thinking="Read the notes.", tool_calls=(ToolCall("exec", CODE_MODE_READ),)), ANSWER)
    known = set(codex.rollouts())
    codex.run("What do the notes say?")
    (rollout,) = set(codex.rollouts()) - known
    fake.enqueue(Reply(tool_calls=(ToolCall("exec", CODE_MODE_READ),)), "The second line: keep the interface.")
    codex.run("And the second line?", resume=_thread(rollout))
    after = _fake_calls(fake)
    target = out / "codex-default-model.jsonl"
    shutil.copy(rollout, target)
    return Made(
        "codex: its default model, responses-lite and code mode (gpt-6.2-sol, listed from genai-prices 0.2.5 on)",
        "codex",
        [target],
        (after[0] - before[0]) + (after[1] - before[1]),  # its requests carry no ``tools``: every one is a turn's
        0,
        resume=_codex_resumer(codex, fake, [_thread(rollout)]),
        served=SERVED[mark:],
    )


def _codex_subagent_session(codex: Codex, out: Path, forked: bool = False) -> Made:
    """Codex 0.171.0 on gpt-5.5 with multi-agent on: the root spawns a subagent (the call streamed before its
    commentary), the subagent reads the notes, the root waits and answers; ``forked``: a turn first, the
    subagent spawned with the thread's turns (its rollout opens on a copy of the root's) and given a second
    task. Replay is given the root's rollout alone: it bills the subagent's calls from the rollout beside it."""
    from tests.fakes.record_subagents import MULTI_AGENT, codex_forked_subagent_session, codex_subagent_session

    codex.model, codex.extra_config = "gpt-5.5", MULTI_AGENT
    fake = codex.fake
    before, mark, known = _fake_calls(fake), len(SERVED), set(codex.rollouts())
    (codex_forked_subagent_session if forked else codex_subagent_session)(codex, fake)
    after = _fake_calls(fake)
    folder = out / ("codex-subagent-forked" if forked else "codex-subagent")
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    made = sorted(set(codex.rollouts()) - known, key=lambda p: p.name)  # the root started first
    for path in made:
        shutil.copy(path, folder / path.name)
    copies = sorted(folder.glob("*.jsonl"))
    resume = _codex_resumer(codex, fake, [_thread(made[0])])

    def resumed_with_agents() -> str:
        codex.model, codex.extra_config = "gpt-5.5", MULTI_AGENT
        return str(resume())

    return Made(
        f"codex: a subagent{' forked with the turns' if forked else ''}, the root's rollout replayed alone (gpt-5.5)",
        "codex",
        copies,
        (after[0] - before[0]) + (after[1] - before[1]),
        0,
        resume=resumed_with_agents,
        target=copies[0],
        served=SERVED[mark:],
    )


def _thread(rollout: Path) -> str:
    import re

    found = re.search(r"([0-9a-f-]{36})\.jsonl$", rollout.name)
    assert found, rollout
    return found.group(1)


def _codex_resumer(codex: Codex, fake: FakeResponses, threads: list[str]) -> Any:
    def once(thread: str) -> list[str]:
        return _resumed_once(fake, thread, lambda: codex.run("Still there?", resume=thread))

    def path_of(thread: str) -> Path:
        (path,) = [p for p in codex.rollouts() if p.name.endswith(f"{thread}.jsonl")]
        return path

    return _resumer(threads, once, path_of)


def cli(*args: str) -> tuple[int, str, str]:
    done = subprocess.run(
        [sys.executable, "-m", "compactctl", *args],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "200"},
    )
    return done.returncode, done.stdout, done.stderr


def bill_of(made: Made) -> tuple[float, int]:
    from tests.replay.test_bill import _claude_code_bill, _codex_bill

    if made.producer == "codex":
        from tests.recorded.test_codex_calls import _each_response_at_its_model

        # Codex 0.171 writes each response's usage (the compaction's too) as a token_usage_record.
        totals = [
            _each_response_at_its_model(p) if b"token_usage_record" in p.read_bytes() else _codex_bill(p)
            for p in made.paths
        ]
        return sum(c for c, _ in totals), sum(n for _, n in totals)
    if made.producer == "gemini":
        from tests.fakes.clients import _responses
        from tests.recorded.test_gemini_calls import _bill

        # The last copy of each message id holds its tokens (the chat's $set records rewrite messages).
        last = {r["id"]: r for p in made.paths for r in _responses(p) if r.get("tokens")}
        return sum(_bill(r) for r in last.values()), len(last)
    # Each response id once over the folder: a fork's file copies its parent's responses.
    joined = Path(tempfile.mkdtemp()) / "all.jsonl"
    joined.write_bytes(b"".join(p.read_bytes() for p in made.paths))
    return _claude_code_bill(joined)


def audit(made: Made, strategies: list[str]) -> list[str]:
    lines = [f"## {made.name}", f"files: {', '.join(p.name for p in made.paths)}"]
    target = made.target or made.paths[0]
    _, out, _ = cli("replay", str(target), "-t", "100000", "--json")
    document = json.loads(out)
    files = document["files"]
    unpriced = sorted({m for f in files for m in f.get("api", {}).get("unpriced_models", [])})
    costs = [row["cost"] for row in document["total"]["settings"]]
    lines.append(f"1. priced: unpriced models {unpriced or 'none'}; row costs {costs}")
    bill_rows = [row for f in files for row in f["settings"] if row.get("basis") == "bill"]
    replay_bill = sum(row["cost"] or 0 for row in bill_rows)
    expected, responses = bill_of(made)
    gap = (replay_bill - expected) / expected if expected else float("nan")
    lines.append(
        f"2. bill: replay ${replay_bill:.6f}; the file's usage at list prices ${expected:.6f} ({gap:+.2%}, "
        f"{responses} responses with usage)"
    )
    served = served_cost(made.served)
    lines.append(
        f"   every response the fake served ({len(made.served)}) at list prices ${served:.6f} "
        f"(replay {(replay_bill - served) / served:+.2%})"
    )
    counted = sum(row["calls"] for row in bill_rows)
    off = sum((f.get("api") or {}).get("off_thread", {}).get("calls", 0) for f in files)
    own = sum((f.get("api") or {}).get("producer_compactions", 0) for f in files)
    notes = [n for f in files for n in f.get("api", {}).get("notes", [])]
    lines.append(
        f"3. calls: replay's bill rows {counted} (off the live thread {off} of them), the producer's compactions "
        f"{own}; the fake served {len(made.served)} responses ({made.model_calls} requests with tools, "
        f"{made.side_calls} without)"
    )
    for note in notes:
        lines.append(f"   note: {note[:220]}")
    disagree, checked = [], 0
    with tempfile.TemporaryDirectory() as folder:
        for strategy in strategies:
            for source in made.paths:
                written = Path(folder) / f"{strategy}-{source.name}"
                compacting = ["-s", strategy, "-o", str(written), "--json", "--write-unchanged"]
                _, c_out, c_err = cli("compact", str(source), *compacting)
                try:
                    (own,) = json.loads(c_out)["files"]
                except (ValueError, KeyError):
                    disagree.append(f"{strategy} {source.name}: compact failed {c_err[-200:]}")
                    continue
                if not written.exists():
                    continue
                checked += 1
                _, r_out, _ = cli("report", str(source), str(written), "--json")
                (again,) = json.loads(r_out)["files"]
                pair = ((own["tokens_before"], own["tokens_after"]), (again["tokens_before"], again["tokens_after"]))
                if pair[0] != pair[1]:
                    disagree.append(f"{strategy} {source.name}: compact {pair[0]} report {pair[1]}")
    lines.append(
        f"4. report = compact: {len(strategies)} strategies x {len(made.paths)} files ({checked} outputs), "
        f"disagreeing: {disagree or 'none'}"
    )
    valid = []
    for source in made.paths:
        _, r_out, _ = cli("report", str(source), "--json")
        (entry,) = json.loads(r_out)["files"]
        valid.append(f"{source.name}: {entry.get('valid_before')} {entry.get('violations_before', '')}".strip())
    lines.append(f"5. API-valid: {'; '.join(valid)}; {'; '.join(made.notes)}")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--keep", type=Path, help="keep the sessions made in this folder")
    parser.add_argument("--only", choices=("claude", "codex"))
    args = parser.parse_args()
    from compactctl.strategies import STRATEGIES

    _serving()
    out = args.keep or Path(tempfile.mkdtemp(prefix="client-audit"))
    out.mkdir(parents=True, exist_ok=True)
    made: list[Made] = []
    with tempfile.TemporaryDirectory(prefix="homes") as homes:
        if args.only in (None, "claude"):
            made += claude_sessions(Path(homes) / "claude", out)
        if args.only in (None, "codex"):
            made += codex_sessions(Path(homes) / "codex", out)
    for session in made:
        print("\n".join(audit(session, sorted(STRATEGIES))), flush=True)


if __name__ == "__main__":
    main()
