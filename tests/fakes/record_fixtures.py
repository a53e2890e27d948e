"""Record the small producer-written fixtures in tests/formats/data/real-clients/ with the real clients.

    python -m tests.fakes.record_fixtures

Each client, in a private HOME against its loopback fake, reads a file, answers, and then
compacts the session itself (Claude Code's ``/compact``; Codex's remote compaction on a low
auto-compact limit). Gemini CLI answers a first prompt, is resumed (it then rewrites its
history as a ``$set`` checkpoint), and reads a file for the second. The files are committed
so the format tests can read what the producers write without the clients installed; the
client version is in the file name.
"""

from __future__ import annotations

import functools
import re
import shutil
import tempfile
from pathlib import Path

from tests.fakes.anthropic import FakeAnthropic
from tests.fakes.clients import ClaudeCode, Codex, Gemini, killed_while, require_client
from tests.fakes.gemini import FakeGemini
from tests.fakes.record_claude_1_0 import (  # the Claude Code 1.0.x fixtures, kept apart
    claude_code_1_0_fixture,
    claude_code_1_0_formatter_fixture,
    claude_code_1_0_ide_fixture,
    claude_code_1_0_prompt_log_fixture,
    claude_code_1_0_resume_chain_fixture,
    claude_code_1_0_resume_fixture,
    claude_code_1_0_resume_web_search_fixture,
    claude_code_1_0_web_search_fixture,
)
from tests.fakes.record_server_tools import (
    claude_code_subagent_web_fetch_fixture,
    claude_code_web_fetch_fixture,
    claude_code_web_fetch_outcomes_fixture,
    claude_code_web_search_fixture,
    codex_switch_compaction_fixture,
    codex_tool_search_fixture,
    codex_web_search_fixture,
    gemini_compress_chat_resume_fixture,
)
from tests.fakes.responses import FakeResponses
from tests.fakes.scenarios import project
from tests.fakes.server import Reply, ToolCall

OUT = Path(__file__).resolve().parents[1] / "formats" / "data" / "real-clients"
ANSWER = "The notes say results must stay in CSV."


def _version(client_version: str) -> str:
    found = re.search(r"\d+\.\d+\.\d+", client_version)
    return found.group(0) if found else "unknown"


def claude_code_fixture(root: Path) -> Path:
    client = require_client("claude")
    with FakeAnthropic() as fake:
        claude = ClaudeCode(client, root, project(root), fake)
        notes = str(claude.cwd / "notes.txt")
        fake.enqueue(Reply(thinking="Read the notes.", tool_calls=(ToolCall("Read", {"file_path": notes}),)), ANSWER)
        session = claude.run("What do the notes say?")
        claude.run("/compact", resume=session)
        assert not fake.errors and not fake.script
        data = claude.session_file(session).read_bytes()
    return _written(root, data, f"claude-code-{_version(client.version)}-compacted.jsonl")


def codex_fixture(root: Path) -> Path:
    client = require_client("codex")
    with FakeResponses() as fake:
        codex = Codex(client, root, project(root), fake)
        first = Reply(thinking="Read the notes.", tool_calls=(ToolCall("exec_command", {"cmd": "cat notes.txt"}),))
        limit = "model_auto_compact_token_limit = 1000\n"
        data = _codex_two_turns(codex, first, limit, "Nothing else.", "Anything else?")
    return _written(root, data, f"codex-{_version(client.version)}-compacted.jsonl")


def _codex_two_turns(codex: Codex, first: Reply, config: str, answer: str, prompt: str) -> bytes:
    """The rollout of ``first`` and ANSWER to "What do the notes say?", then ``prompt`` resumed (with
    ``config`` lines added) and ``answer``."""
    codex.fake.enqueue(first, ANSWER)
    codex.run("What do the notes say?")
    (rollout,) = codex.rollouts()
    thread = re.search(r"([0-9a-f-]{36})\.jsonl$", rollout.name)
    assert thread
    codex.extra_config = config
    codex.fake.enqueue(answer)
    codex.run(prompt, resume=thread.group(1))
    assert not codex.fake.errors and not codex.fake.script
    return rollout.read_bytes()


def _written(root: Path, data: bytes, name: str) -> Path:
    """``data`` written as the fixture ``name``, the run's root as /home/user."""
    target = OUT / name
    target.write_bytes(data.replace(str(root).encode(), b"/home/user"))
    return target


def gemini_fixture(root: Path) -> Path:
    client = require_client("gemini")
    with FakeGemini() as fake:
        gemini = Gemini(client, root, project(root), fake)
        fake.enqueue(Reply(thinking="Nothing to read yet.", text="Ask me about the notes."))
        session = gemini.run("Hello.")
        fake.enqueue(
            Reply(thinking="Read the notes.", tool_calls=(ToolCall("read_file", {"file_path": "notes.txt"}),)), ANSWER
        )
        gemini.run("What do the notes say?", resume=session)
        assert not fake.errors and not fake.script
        chat = gemini.chat(session)
        data = chat.read_bytes()
    return _written(root, data, f"gemini-cli-{_version(client.version)}.jsonl")


# Where Gemini CLI compresses its history: this share of the model's window (``model.compressionThreshold``;
# 0.5 by default), so that the session below passes it at its second call with the log, not after.
GEMINI_COMPRESSING = {"model": {"compressionThreshold": 0.016}}


def gemini_usage_session(gemini: Gemini) -> str:
    """A session long enough to calibrate on, which Gemini CLI compresses once: a pasted log, then
    (resumed) tool calls over one run; its first call past the threshold folds the log's turn away.
    Returns the session id."""
    fake = gemini.fake
    fake.enqueue(Reply(thinking="A long log.", text="The log counts from 1 to 6000. Ask me about app.py."))
    log = "\n".join(str(n) for n in range(1, 6001))
    session = gemini.run(f"Here is the build log:\n{log}")

    def read(name: str) -> ToolCall:
        return ToolCall("read_file", {"file_path": name})

    def shell(command: str) -> ToolCall:
        return ToolCall("run_shell_command", {"command": command})

    # One run for every tool call: 0.61 resumes a session that holds tool calls with each response
    # twice, and the API refuses it (google-gemini/gemini-cli#29365; see compactctl/formats/gemini.py).
    fake.enqueue(
        Reply(thinking="Read the code first.", text="Reading app.py.", tool_calls=(read("app.py"),)),
        Reply(tool_calls=(read("notes.txt"),)),
        Reply(tool_calls=(shell("seq 1 400"),)),
        Reply(thinking="Run it.", tool_calls=(shell("python3 app.py"),)),
        Reply(tool_calls=(read("app.py"),)),
        Reply(tool_calls=(shell("seq 1 200"),)),
        Reply(tool_calls=(read("notes.txt"),)),
        Reply(thinking="add() subtracts.", text=f"add() returns a - b, so it prints -1; a + b fixes it. {ANSWER}"),
    )
    gemini.run("What is wrong with app.py? Read it and the notes, run it, and check again.", resume=session)
    assert not fake.errors and not fake.script
    return session


def gemini_usage_fixture(root: Path) -> Path:
    """:func:`gemini_usage_session`, each request counted with a real tokenizer (cl100k,
    ``text_tokens``) and its repeated prefix reported as cached (``implicit_cache``)."""
    from tests.fakes.server import text_tokens

    client = require_client("gemini")
    with FakeGemini(count=text_tokens) as fake:
        fake.implicit_cache = True
        gemini = Gemini(client, root, project(root), fake, GEMINI_COMPRESSING)
        chat = gemini.chat(gemini_usage_session(gemini))
        data = chat.read_bytes()
    return _written(root, data, f"gemini-cli-{_version(client.version)}-usage.jsonl")


def _fixture_folder(name: str, files: dict[str, Path], root: Path) -> list[Path]:
    """The recorded files copied into a fresh ``OUT/name`` as ``<key>.jsonl``, the run's root as /home/user."""
    out = OUT / name
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    written = []
    for stem, path in files.items():
        target = out / f"{stem}.jsonl"
        target.write_bytes(path.read_bytes().replace(str(root).encode(), b"/home/user"))
        written.append(target)
    return written


def _claude_print(claude: ClaudeCode, prompt: str, *extra: str) -> str:
    """``claude -p PROMPT`` with more flags (a resume point, a fork); returns the session id."""
    import json

    from tests.fakes.clients import _run

    args = [str(claude.client.binary), "-p", prompt, "--output-format", "json", "--permission-mode", "acceptEdits"]
    done = _run([*args, *extra], claude.cwd, claude.env())
    return str(json.loads(done.stdout.strip().splitlines()[-1])["session_id"])


def _first_answer(claude: ClaudeCode, session: str) -> str:
    """The uuid of the session's record that answered ``ANSWER``: a point to resume (or fork) from."""
    import json

    records = [json.loads(line) for line in claude.session_file(session).read_text().splitlines() if line]
    return next(
        str(r["uuid"])
        for r in records
        if r.get("type") == "assistant" and ANSWER in json.dumps(r.get("message", {}).get("content"))
    )


def claude_code_branches_fixture(root: Path) -> list[Path]:
    """Every way a Claude Code session holds billed calls off its live thread, made by the real client:
    a resume from an earlier message (``--resume-session-at``: the later turn's branch stays in the
    file), a subagent (the Agent tool: its own file under ``<session>/subagents/``), and a fork
    (``--fork-session``: a new session file that starts from a copy)."""

    client = require_client("claude")
    with FakeAnthropic() as fake:
        claude = ClaudeCode(client, root, project(root), fake)
        notes = str(claude.cwd / "notes.txt")

        def run(prompt: str, *extra: str) -> str:
            return _claude_print(claude, prompt, "--allowedTools", "Bash Read Edit Write Agent Task", *extra)

        fake.enqueue(Reply(thinking="Read the notes.", tool_calls=(ToolCall("Read", {"file_path": notes}),)), ANSWER)
        session = run("What do the notes say?")
        fake.enqueue("The second line says to keep the public interface.")
        run("And the second line?", "--resume", session)
        first_answer = _first_answer(claude, session)
        fake.enqueue("En CSV.")
        run("Say it in French.", "--resume", session, "--resume-session-at", first_answer)
        task = {
            "description": "Check the notes",
            "prompt": "Read notes.txt and say what it asks.",
            "subagent_type": "general-purpose",
        }
        fake.enqueue(
            Reply(text="Asking a subagent.", tool_calls=(ToolCall("Agent", task),)),
            "The notes ask for CSV.",
            "The subagent confirms: CSV.",
        )
        run("Ask a subagent to check.", "--resume", session)
        fake.enqueue("Forked: nothing else.")
        fork = run("Anything else?", "--resume", session, "--fork-session")
        assert not fake.errors, fake.errors
        main_file, fork_file = claude.session_file(session), claude.session_file(fork)
        version = _version(client.version)
        out = OUT / f"claude-code-{version}-branches"
        shutil.rmtree(out, ignore_errors=True)
        (out / session / "subagents").mkdir(parents=True)
        written = []
        for source, target in [(main_file, out / f"{session}.jsonl"), (fork_file, out / f"{fork}.jsonl")]:
            target.write_bytes(source.read_bytes().replace(str(root).encode(), b"/home/user"))
            written.append(target)
        for agent in sorted((main_file.with_suffix("") / "subagents").glob("*")):
            target = out / session / "subagents" / agent.name
            target.write_bytes(agent.read_bytes().replace(str(root).encode(), b"/home/user"))
            written.append(target)
    return written


def claude_code_forks_fixture(root: Path) -> list[Path]:
    """A parent session and two forks of it, made by the real client: ``--fork-session`` from its
    end, and ``--fork-session`` with ``--resume-session-at`` its first answer (a fork from an
    earlier message). Each fork's file starts with copies of the parent's responses (same
    ``message.id``), billed once, by the parent."""

    client = require_client("claude")
    with FakeAnthropic() as fake:
        claude = ClaudeCode(client, root, project(root), fake)
        run = functools.partial(_claude_print, claude)
        fake.enqueue(ANSWER)
        parent = run("What do the notes say?")
        fake.enqueue("Keep the public interface.")
        run("And the second line?", "--resume", parent)
        first_answer = _first_answer(claude, parent)
        fake.enqueue("Forked at the end.")
        at_end = run("Anything else?", "--resume", parent, "--fork-session")
        fake.enqueue("Forked at the first answer.")
        earlier = run("Say it again.", "--resume", parent, "--resume-session-at", first_answer, "--fork-session")
        assert not fake.errors, fake.errors
        sessions = {"parent": parent, "fork-at-end": at_end, "fork-at-first-answer": earlier}
        files = {name: claude.session_file(session) for name, session in sessions.items()}
        return _fixture_folder(f"claude-code-{_version(client.version)}-forks", files, root)


def codex_fork_fixture(root: Path) -> list[Path]:
    """A Codex thread of two turns and ``codex exec fork`` of it with one more. The fork's rollout
    copies nothing: ``session_meta`` names the parent (``forked_from_id``, ``history_base``), and
    its running totals go on from the parent's."""

    client = require_client("codex")
    with FakeResponses() as fake:
        codex = Codex(client, root, project(root), fake)
        fake.enqueue(ANSWER)
        codex.run("What do the notes say?")
        (parent,) = codex.rollouts()
        thread = re.search(r"([0-9a-f-]{36})\.jsonl$", parent.name)
        assert thread
        fake.enqueue("Keep the public interface.")
        codex.run("And the second line?", resume=thread.group(1))
        fake.enqueue("Forked: nothing else.")
        codex.fork(thread.group(1), "Anything else?")
        assert not fake.errors and not fake.script
        (fork,) = [path for path in codex.rollouts() if path != parent]
        return _fixture_folder(f"codex-{_version(client.version)}-fork", {"parent": parent, "fork": fork}, root)


def codex_fork_after_compaction_fixture(root: Path) -> list[Path]:
    """A Codex thread the client compacted (remote, on a low auto-compact limit) and ``codex exec fork``
    of it under the same limit: the fork compacts before its own call, so its rollout opens with a
    ``compacted`` history and a ``token_count`` of the parent's running totals whose
    ``last_token_usage`` is all zeros."""

    client = require_client("codex")
    with FakeResponses() as fake:
        codex = Codex(client, root, project(root), fake)
        fake.enqueue(ANSWER)
        codex.run("What do the notes say?")
        (parent,) = codex.rollouts()
        thread = re.search(r"([0-9a-f-]{36})\.jsonl$", parent.name)
        assert thread
        codex.extra_config = "model_auto_compact_token_limit = 1000\n"
        fake.enqueue("Keep the public interface.")
        codex.run("And the second line?", resume=thread.group(1))
        fake.enqueue("Forked: nothing else.")  # the limit still low: the fork compacts before its first call
        codex.fork(thread.group(1), "Anything else?")
        assert not fake.errors and not fake.script
        (fork,) = [path for path in codex.rollouts() if path != parent]
        assert b'"compacted"' in fork.read_bytes(), "the fork does not start from a compacted history"
        name = f"codex-{_version(client.version)}-fork-after-compaction"
        return _fixture_folder(name, {"parent": parent, "fork": fork}, root)


def claude_code_cache_fixture(root: Path) -> Path:
    """Claude Code's usage as the API reports it with prompt caching: each call reads the previous call's
    prefix from the cache and writes the rest for one hour (``cache_creation.ephemeral_1h_input_tokens``),
    two turns on claude-sonnet-4-5 over 200k input (its long-context prices), one on claude-opus-4-7."""
    from tests.fakes.server import estimate_tokens

    client = require_client("claude")
    with FakeAnthropic(cache_writes="1h", count=lambda value: 12 * estimate_tokens(value)) as fake:
        claude = ClaudeCode(client, root, project(root), fake)
        notes = str(claude.cwd / "notes.txt")
        fake.enqueue(Reply(text="Reading.", tool_calls=(ToolCall("Read", {"file_path": notes}),)), ANSWER, "Yes.")
        session = _claude_print(claude, "What do the notes say?", "--model", "claude-sonnet-4-5")
        _claude_print(claude, "Sure?", "--model", "claude-sonnet-4-5", "--resume", session)
        fake.enqueue("CSV.")
        _claude_print(claude, "Once more?", "--model", "claude-opus-4-7", "--resume", session)
        assert not fake.errors and not fake.script
        data = claude.session_file(session).read_bytes()
    return _written(root, data, f"claude-code-{_version(client.version)}-cache-1h-long-context.jsonl")


def claude_code_model_switch_fixture(root: Path) -> Path:
    """Three turns on claude-opus-4-7, then three on claude-sonnet-4-6 (as ``/model`` switches), each a
    Bash call and an answer, usage counted as an API does (``text_tokens``) with Opus 4.7's tokenizer
    counting 1.35x: the hidden prefix changes with the model."""
    from tests.fakes.server import text_tokens

    client = require_client("claude")
    with FakeAnthropic(count=text_tokens, tokenizer={"claude-opus-4-7": 1.35}) as fake:
        claude = ClaudeCode(client, root, project(root), fake)
        session = None
        for n, model in enumerate(["claude-opus-4-7"] * 3 + ["claude-sonnet-4-6"] * 3):
            command = ToolCall("Bash", {"command": f"seq 1 {200 + 150 * n}", "description": "count"})
            fake.enqueue(Reply(text=f"Counting {n}.", tool_calls=(command,)), f"Step {n} counted: " + "ok " * 40)
            resume = ("--resume", session) if session else ()
            session = _claude_print(claude, f"Step {n}: count.", "--allowedTools", "Bash", "--model", model, *resume)
        assert session and not fake.errors and not fake.script
        data = claude.session_file(session).read_bytes()
    return _written(root, data, f"claude-code-{_version(client.version)}-model-switch.jsonl")


def codex_model_switch_fixture(root: Path) -> Path:
    """Three turns on gpt-5.5, then three resumed on gpt-5.4 (no compaction), each a command and an answer,
    usage counted as an API does (``text_tokens``): each model has its own base instructions."""
    from tests.fakes.server import text_tokens

    client = require_client("codex")
    with FakeResponses(count=text_tokens) as fake:
        codex = Codex(client, root, project(root), fake)
        thread = None
        for n, model in enumerate(["gpt-5.5"] * 3 + ["gpt-5.4"] * 3):
            codex.model = model
            command = ToolCall("exec_command", {"cmd": f"seq 1 {200 + 150 * n}"})
            fake.enqueue(Reply(tool_calls=(command,)), f"Step {n} counted: " + "ok " * 40)
            codex.run(f"Step {n}: count.", resume=thread)
            if thread is None:
                (rollout,) = codex.rollouts()
                found = re.search(r"([0-9a-f-]{36})\.jsonl$", rollout.name)
                assert found
                thread = found.group(1)
        assert not fake.errors and not fake.script
        data = rollout.read_bytes()
    return _written(root, data, f"codex-{_version(client.version)}-model-switch.jsonl")


def codex_cache_writes_fixture(root: Path) -> Path:
    """Two turns on gpt-5.6-terra (a model OpenAI bills cache writes for) from a fake that reports caching with
    writes: 0.171 records them as ``cache_write_input_tokens``."""
    client = require_client("codex")
    with FakeResponses(cache_writes=True) as fake:
        codex = Codex(client, root, project(root), fake, model="gpt-5.6-terra")
        first = Reply(tool_calls=(ToolCall("exec_command", {"cmd": "cat notes.txt"}),))
        data = _codex_two_turns(codex, first, "", "Keep the public interface.", "And the second line?")
    return _written(root, data, f"codex-{_version(client.version)}-cache-writes.jsonl")


def codex_review_fixture(root: Path) -> list[Path]:
    """``codex exec review --uncommitted`` (a review subagent's thread, and the thread that asked for it, into
    which Codex relays the findings as an assistant message of its own), then that thread resumed to fix it."""
    import json
    import subprocess

    from tests.fakes.clients import _run

    client = require_client("codex")
    with FakeResponses() as fake:
        codex = Codex(client, root, project(root), fake)
        codex.configure()
        git = ["git", "-c", "user.email=a@b.c", "-c", "user.name=a"]
        for args in (["init", "-q"], ["add", "."], ["commit", "-qm", "start"]):
            subprocess.run([*git, *args], cwd=codex.cwd, env=codex.env(), check=True)
        (codex.cwd / "app.py").write_text("def add(a, b):\n    return a * b\n")
        where = {"absolute_file_path": str(codex.cwd / "app.py"), "line_range": {"start": 2, "end": 2}}
        finding = {"title": "add multiplies", "body": "add() returns a * b.", "confidence_score": 0.9, "priority": 1}
        review = {"findings": [{**finding, "code_location": where}], "overall_correctness": "patch is incorrect"}
        review |= {"overall_explanation": "add multiplies.", "overall_confidence_score": 0.9}
        fake.enqueue(Reply(tool_calls=(ToolCall("exec_command", {"cmd": "git diff"}),)), json.dumps(review))
        args = [str(client.binary), "exec", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox"]
        _run([*args, "review", "--uncommitted"], codex.cwd, codex.env())
        (host,) = [p for p in codex.rollouts() if b'"subagent"' not in p.read_bytes().splitlines()[0]]
        (reviewer,) = [p for p in codex.rollouts() if p != host]
        thread = re.search(r"([0-9a-f-]{36})\.jsonl$", host.name)
        assert thread
        fix = ToolCall("exec_command", {"cmd": "sed -i 's/a [*] b/a + b/' app.py"})
        fake.enqueue(Reply(tool_calls=(fix,)), "Fixed.")
        codex.run("Fix the finding.", resume=thread.group(1))
        assert not fake.errors and not fake.script
        return _fixture_folder(f"codex-{_version(client.version)}-review", {"host": host, "review": reviewer}, root)


def codex_killed_mid_call_fixture(root: Path) -> Path:
    """A Codex run killed while its tool call runs (``sleep 60``): the rollout ends on an open call whose
    response was written but whose ``token_count`` never was."""
    client = require_client("codex")
    with FakeResponses() as fake:
        codex = Codex(client, root, project(root), fake)
        codex.configure()
        fake.enqueue(
            Reply(text="Reading.", tool_calls=(ToolCall("exec_command", {"cmd": "cat notes.txt"}),)),
            Reply(text="Waiting.", tool_calls=(ToolCall("exec_command", {"cmd": "sleep 60"}),)),
        )
        args = [str(client.binary), "exec", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox"]
        args.append("Read the notes, then wait.")
        rollout = killed_while(args, codex.cwd, codex.env(), codex.rollouts, b"sleep 60", settle=2)
        data = rollout.read_bytes()
    return _written(root, data, f"codex-{_version(client.version)}-killed-mid-call.jsonl")


if __name__ == "__main__":
    import sys

    OUT.mkdir(parents=True, exist_ok=True)
    every = (
        claude_code_fixture,
        codex_fixture,
        gemini_fixture,
        claude_code_branches_fixture,
        claude_code_forks_fixture,
        codex_fork_fixture,
        codex_fork_after_compaction_fixture,
        codex_killed_mid_call_fixture,
        claude_code_cache_fixture,
        claude_code_model_switch_fixture,
        codex_model_switch_fixture,
        codex_cache_writes_fixture,
        codex_review_fixture,
        gemini_usage_fixture,
        claude_code_web_search_fixture,
        claude_code_web_fetch_fixture,
        claude_code_web_fetch_outcomes_fixture,
        codex_web_search_fixture,
        codex_switch_compaction_fixture,
        codex_tool_search_fixture,
        gemini_compress_chat_resume_fixture,
        claude_code_subagent_web_fetch_fixture,
        claude_code_1_0_fixture,  # needs $CLAUDE_1_0
        claude_code_1_0_formatter_fixture,  # needs $CLAUDE_1_0 (1.0.69) and $PRETTIER
        claude_code_1_0_prompt_log_fixture,  # needs $CLAUDE_1_0 (1.0.69)
        claude_code_1_0_ide_fixture,  # needs $CLAUDE_1_0 (1.0.69)
        claude_code_1_0_web_search_fixture,  # needs $CLAUDE_1_0 (1.0.69)
        claude_code_1_0_resume_fixture,  # needs $CLAUDE_1_0 (1.0.69)
        claude_code_1_0_resume_chain_fixture,  # needs $CLAUDE_1_0 (1.0.69)
        claude_code_1_0_resume_web_search_fixture,  # needs $CLAUDE_1_0 (1.0.69)
    )
    named = set(sys.argv[1:])  # python -m tests.fakes.record_fixtures [NAME...]: only those
    for record in [r for r in every if not named or r.__name__ in named]:
        if record.__name__.startswith("claude_code_1_0") and not named:
            continue  # a client .ci/run does not install: only when named
        with tempfile.TemporaryDirectory(prefix="fixture-") as root:
            print("wrote", record(Path(root)))
