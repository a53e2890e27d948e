"""Record sessions of client releases older than the pinned ones (real users' saved sessions come from many), with
the real older client against the loopback fake and what the fake served (``<fixture>.served.json``): the bill.

    CLAUDE_2_0=<bin/claude of npm @anthropic-ai/claude-code@2.0.76> \\
    CODEX_0_100=<bin/codex of npm @openai/codex@0.100.0> python -m tests.fakes.record_older_releases [NAME ...]
    CLAUDE_RELEASE=<bin/claude of another release> python -m tests.fakes.record_older_releases \\
        claude_code_release_fixture

NAME: a function's name below; all when none is named. CI installs neither release (tests/needs.py skips what
drives them). The fixtures go to tests/recorded/data/ (README.md there says what each holds).
"""

from __future__ import annotations

import os
from pathlib import Path

from tests.fakes.anthropic import FakeAnthropic
from tests.fakes.clients import ClaudeCode, Client, Codex
from tests.fakes.record_copies import RECORDED, _serving, record_named
from tests.fakes.record_fixtures import ANSWER, _claude_print, _version
from tests.fakes.record_tiers import _kept
from tests.fakes.responses import FakeResponses
from tests.fakes.scenarios import project
from tests.fakes.server import Reply, ToolCall

CLAUDE_MODEL = "claude-sonnet-4-5-20250929"  # the model of Claude Code 2.0.x's sessions
CODEX_MODEL = "gpt-5.2-codex"  # one Codex 0.100 knows


def older_claude_code(variable: str = "CLAUDE_2_0") -> Client:
    """Claude Code 2.0.x: ``$CLAUDE_2_0`` (the bin/claude of npm ``@anthropic-ai/claude-code@2.0.76``); another
    release: the environment ``variable`` that names its bin/claude."""
    import subprocess

    binary = Path(os.environ[variable])
    version = subprocess.run([str(binary), "--version"], capture_output=True, text=True, timeout=60).stdout
    return Client("claude", binary, version.strip())


def older_codex() -> Client:
    """Codex 0.100: ``$CODEX_0_100`` (the bin/codex of npm ``@openai/codex@0.100.0``)."""
    import subprocess

    binary = Path(os.environ["CODEX_0_100"])
    version = subprocess.run([str(binary), "--version"], capture_output=True, text=True, timeout=60).stdout
    return Client("codex", binary, version.strip())


def claude_code_2_0_session(claude: ClaudeCode) -> str:
    """A turn of three tool calls (the notes, a 600-line log, app.py) and an answer; a turn with the Task tool (a
    general-purpose subagent reads the notes and answers; the main thread answers); the client's ``/compact``; a turn
    after it with a command. Every turn ``--resume`` of the first session's id. Returns that id."""
    cwd, fake = claude.cwd, claude.fake
    tools = ("--allowedTools", "Bash Read Edit Write Task", "--model", CLAUDE_MODEL)

    def bash(command: str) -> ToolCall:
        return ToolCall("Bash", {"command": command, "description": command})

    read = ToolCall("Read", {"file_path": str(cwd / "notes.txt")})
    fake.enqueue(
        Reply(text="The notes first.", tool_calls=(read,)),
        Reply(text="A long log.", tool_calls=(bash("seq 1 600"),)),
        Reply(text="The code.", tool_calls=(bash("cat app.py"),)),
        ANSWER,
    )
    session = _claude_print(claude, "What do the notes say? Look at app.py too.", *tools)
    task = {"description": "Check the notes", "prompt": "Read notes.txt and say what it asks, in one line.",
            "subagent_type": "general-purpose"}  # fmt: skip
    fake.enqueue(
        Reply(text="Asking a subagent.", tool_calls=(ToolCall("Task", task),)),
        Reply(text="Reading.", tool_calls=(read,)),
        "The notes ask for CSV.",
        "The subagent confirms: CSV.",
    )
    _claude_print(claude, "Have a subagent check the notes.", *tools, "--resume", session)
    _claude_print(claude, "/compact", *tools, "--resume", session)
    fake.enqueue(Reply(text="Counting.", tool_calls=(bash("wc -l notes.txt app.py"),)), "After the compaction: CSV.")
    _claude_print(claude, "Still CSV? Count the lines.", *tools, "--resume", session)
    assert not fake.errors and not fake.script, fake.errors
    return session


def claude_code_2_0_fixture(root: Path, variable: str = "CLAUDE_2_0") -> list[Path]:
    """``claude_code_2_0_session`` by Claude Code 2.0.76: every file of the project's folder kept."""
    client = older_claude_code(variable)
    with _serving() as served, FakeAnthropic() as fake:
        claude = ClaudeCode(client, root, project(root), fake)
        session = claude_code_2_0_session(claude)
        folder = claude.session_file(session).parent
        files = {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}
        name = f"claude-code-{_version(client.version)}-compacted-subagent"
        return _kept(RECORDED / name, files, root, served)


def claude_code_release_fixture(root: Path) -> list[Path]:
    """``claude_code_2_0_session`` by the release ``$CLAUDE_RELEASE`` names (the bin/claude of npm
    ``@anthropic-ai/claude-code@<version>``: 2.0.30, 2.1.9, the releases either side of where the subagents' files
    moved, 2.0.x's Warmup sidechains stopped and ``tool_reference`` blocks began): every file of the folder kept."""
    return claude_code_2_0_fixture(root, "CLAUDE_RELEASE")


def codex_0_100_session(codex: Codex) -> None:
    """A turn of two commands and an answer, a second turn with a command (resumed), then, with a low
    ``model_auto_compact_token_limit``, a turn the client compacts before (its own compaction) and a turn after."""
    fake = codex.fake
    fake.enqueue(
        Reply(thinking="Read it.", tool_calls=(ToolCall("exec_command", {"cmd": "cat notes.txt"}),)),
        Reply(thinking="A long log.", tool_calls=(ToolCall("exec_command", {"cmd": "seq 1 600"}),)),
        ANSWER,
    )
    codex.run("What do the notes say?")
    (rollout,) = codex.rollouts()
    thread = rollout.name.removesuffix(".jsonl")[-36:]
    fake.enqueue(Reply(thinking="Run it.", tool_calls=(ToolCall("exec_command", {"cmd": "python3 app.py"}),)),
                 "It prints -1: add() subtracts.")  # fmt: skip
    codex.run("What does app.py print?", resume=thread)
    codex.extra_config = "model_auto_compact_token_limit = 1000\n"
    fake.enqueue("Summary: the notes say CSV; app.py prints -1.", "After the compaction: CSV, and app.py prints -1.")
    codex.run("Both answers again?", resume=thread)
    fake.enqueue(Reply(thinking="Count.", tool_calls=(ToolCall("exec_command", {"cmd": "wc -l notes.txt"}),)),
                 "Still CSV.")  # fmt: skip
    codex.run("Still CSV? Count the lines.", resume=thread)
    assert not fake.errors and not fake.script, fake.errors


class OlderCodex(Codex):
    """Codex before ``openai_base_url`` in config.toml (0.100 reads none), on a provider of its own: 0.100 compacts
    through the openai provider's ``/responses/compact`` endpoint, which the fake has not, and any other provider's
    history in a turn of its own (the summarizing prompt, answered by the fake's script: a ``compacted`` line)."""

    def configure(self) -> None:
        self.codex_home.mkdir(parents=True, exist_ok=True)
        provider = f'[model_providers.loopback]\nname = "loopback"\nbase_url = "{self.fake.url}/v1"\n'
        provider += 'wire_api = "responses"\nenv_key = "OPENAI_API_KEY"\n'
        config = f'model_provider = "loopback"\nmodel = "{self.model}"\n{self.extra_config}\n{provider}'
        (self.codex_home / "config.toml").write_text(config)


def codex_0_100_fixture(root: Path) -> list[Path]:
    """``codex_0_100_session`` by Codex 0.100.0: every rollout kept."""
    client = older_codex()
    with _serving() as served, FakeResponses() as fake:
        codex = OlderCodex(client, root, project(root), fake, model=CODEX_MODEL)
        codex_0_100_session(codex)
        files = {path.name: path.read_bytes() for path in codex.rollouts()}
        return _kept(RECORDED / f"codex-{_version(client.version)}-compacted", files, root, served)


if __name__ == "__main__":
    record_named((claude_code_2_0_fixture, codex_0_100_fixture, claude_code_release_fixture))
