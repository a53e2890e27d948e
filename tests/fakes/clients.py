"""Finding and driving the real agent clients (Claude Code, Codex, Gemini CLI) against the loopback fakes.

Each client runs non-interactively with ``HOME`` (and ``CODEX_HOME``) in a temporary
folder, so it writes its genuine session files there and never touches the user's. The
pinned versions are in ``.ci/clients.txt``; ``.ci/run`` installs them under
``.ci/cache/npm``, which is where the tests look first (then ``$PATH``). A missing client
skips its tests, except under ``CI=true``, where it fails them (tests/needs.py).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.anthropic import FakeAnthropic
from tests.fakes.gemini import FakeGemini
from tests.fakes.responses import FakeResponses
from tests.needs import in_ci, needs

ROOT = Path(__file__).resolve().parents[2]
PINNED = ROOT / ".ci" / "clients.txt"
CACHE_BIN = ROOT / ".ci" / "cache" / "npm" / "node_modules" / ".bin"
TIMEOUT = 180
PACKAGES = {"claude": "@anthropic-ai/claude-code", "codex": "@openai/codex", "gemini": "@google/gemini-cli"}


def pinned_versions() -> dict[str, str]:
    """``{"@anthropic-ai/claude-code": "2.1.332", ...}`` from ``.ci/clients.txt``."""
    versions = {}
    for line in PINNED.read_text().splitlines():
        line = line.split("#")[0].strip()
        if line:
            package, _, version = line.rpartition("@")
            versions[package] = version
    return versions


@dataclass(frozen=True)
class Client:
    command: str  # "claude" or "codex"
    binary: Path
    version: str


def find_client(command: str) -> Client | None:
    for candidate in (CACHE_BIN / command, shutil.which(command)):
        if candidate and Path(candidate).exists():
            try:
                out = subprocess.run([str(candidate), "--version"], capture_output=True, text=True, timeout=60)
            except (OSError, subprocess.TimeoutExpired):
                continue
            if out.returncode == 0:
                return Client(command, Path(candidate), out.stdout.strip())
    return None


def require_client(command: str) -> Client:
    """The client, or a skip (a failure under ``CI=true``, where .ci/run installed it: tests/needs.py)."""
    client: Client = needs(command)
    pinned = PACKAGES[command]
    if in_ci() and pinned_versions()[pinned] not in client.version:
        pytest.fail(f"{client.binary} is {client.version}, not the pinned {pinned}@{pinned_versions()[pinned]}")
    return client


def _run(args: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=TIMEOUT)
    if done.returncode != 0:
        raise AssertionError(
            f"{args[0]} exited {done.returncode}\nstdout: {done.stdout[-3000:]}\nstderr: {done.stderr[-3000:]}"
        )
    return done


def _base_env(home: Path) -> dict[str, str]:
    return {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home), "LANG": "C.UTF-8", "TERM": "dumb"}


@dataclass
class ClaudeCode:
    """``claude -p`` in a private HOME, its model calls going to a :class:`FakeAnthropic`."""

    client: Client
    home: Path
    cwd: Path
    fake: FakeAnthropic
    sessions: list[str] = field(default_factory=list)
    extra_env: dict[str, str] = field(default_factory=dict)  # more variables (a feature switched on)

    def env(self) -> dict[str, str]:
        return {
            **self.extra_env,
            **_base_env(self.home),
            "ANTHROPIC_BASE_URL": self.fake.url,
            "ANTHROPIC_API_KEY": "sk-ant-loopback",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_AUTOUPDATER": "1",
            "DISABLE_TELEMETRY": "1",
            "DISABLE_ERROR_REPORTING": "1",
        }

    def run(self, prompt: str, resume: str | None = None) -> str:
        """Send one prompt (continuing session ``resume``); returns the session id."""
        args = [str(self.client.binary), "-p", prompt, "--output-format", "json"]
        args += ["--permission-mode", "acceptEdits", "--allowedTools", "Bash Read Edit Write"]
        if resume:
            args += ["--resume", resume]
        done = _run(args, self.cwd, self.env())
        session = json.loads(done.stdout.strip().splitlines()[-1])["session_id"]
        self.sessions.append(session)
        return str(session)

    @property
    def projects(self) -> Path:
        return self.home / ".claude" / "projects"

    def session_file(self, session: str) -> Path:
        found = list(self.projects.glob(f"*/{session}.jsonl"))
        assert found, f"no session file for {session} under {self.projects}"
        return found[0]


@dataclass
class Codex:
    """``codex exec`` in a private CODEX_HOME, its model calls going to a :class:`FakeResponses`."""

    client: Client
    home: Path
    cwd: Path
    fake: FakeResponses
    model: str = "gpt-5.5"
    extra_config: str = ""  # more config.toml lines (e.g. a low auto-compact limit)

    @property
    def codex_home(self) -> Path:
        return self.home / ".codex"

    def configure(self) -> None:
        self.codex_home.mkdir(parents=True, exist_ok=True)
        # The built-in "openai" provider, so real rollouts (written under it) resume here too.
        config = f'openai_base_url = "{self.fake.url}/v1"\nmodel = "{self.model}"\n{self.extra_config}'
        (self.codex_home / "config.toml").write_text(config)

    def env(self) -> dict[str, str]:
        return {
            **_base_env(self.home),
            "CODEX_HOME": str(self.codex_home),
            "OPENAI_API_KEY": "sk-loopback",
            "RUST_LOG": "error",
        }

    def run(self, prompt: str, resume: str | None = None) -> subprocess.CompletedProcess[str]:
        self.configure()
        args = [str(self.client.binary), "exec", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox"]
        if resume:
            args += ["resume", resume]
        return _run([*args, prompt], self.cwd, self.env())

    def fork(self, thread: str, prompt: str) -> subprocess.CompletedProcess[str]:
        """``codex exec fork THREAD PROMPT``: a new thread from the whole of ``thread``."""
        self.configure()
        args = [str(self.client.binary), "exec", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox"]
        return _run([*args, "fork", thread, prompt], self.cwd, self.env())

    def rollouts(self) -> list[Path]:
        return sorted(self.codex_home.glob("sessions/*/*/*/rollout-*.jsonl"))


# Gemini CLI's settings for a loopback run: an API key (no Google login), no update check, no usage statistics.
GEMINI_SETTINGS = {
    "security": {"auth": {"selectedType": "gemini-api-key"}},
    "general": {"disableAutoUpdate": True, "disableUpdateNag": True},
    "privacy": {"usageStatisticsEnabled": False},
    "telemetry": {"enabled": False},
}


@dataclass
class Gemini:
    """``gemini -p ... --yolo`` in a private HOME, its model calls going to a :class:`FakeGemini`."""

    client: Client
    home: Path
    cwd: Path
    fake: FakeGemini
    settings: dict[str, Any] = field(default_factory=dict)  # laid over GEMINI_SETTINGS (``model``: ...)

    def configure(self) -> None:
        settings = self.home / ".gemini" / "settings.json"
        settings.parent.mkdir(parents=True, exist_ok=True)
        settings.write_text(json.dumps({**GEMINI_SETTINGS, **self.settings}))
        self.tmp.mkdir(exist_ok=True)

    @property
    def tmp(self) -> Path:
        """Its TMPDIR: it writes an error report there for every refused request."""
        return self.home / ".tmp"

    def env(self) -> dict[str, str]:
        return {
            **_base_env(self.home),
            "GOOGLE_GEMINI_BASE_URL": self.fake.url,
            "GEMINI_API_KEY": "loopback",
            "GEMINI_CLI_TRUST_WORKSPACE": "true",
            "GEMINI_CLI_NO_RELAUNCH": "true",
            "TMPDIR": str(self.tmp),
            "NO_COLOR": "1",
        }

    def run(self, prompt: str, resume: str | None = None) -> str:
        """Send one prompt (continuing session ``resume``: an id or ``latest``); returns the session id."""
        self.configure()
        args = [str(self.client.binary), "-p", prompt, "--output-format", "json", "--yolo"]
        if resume:
            args += ["--resume", resume]
        done = _run(args, self.cwd, self.env())
        start = done.stdout.find("{")
        return str(json.loads(done.stdout[start:]).get("session_id", "")) if start >= 0 else ""

    def chats(self) -> list[Path]:
        return sorted((self.home / ".gemini" / "tmp").glob("*/chats/session-*.json*"))

    def chat(self, session: str) -> Path:
        """The one file of ``session`` that holds its model's responses. Resuming, 0.61 first opens a file
        named by the current minute and the id (``GeminiClient.initialize`` before ``resumeChat``), writes
        a header and its start-up history there, then goes on in the resumed file: a resume in a later
        minute than the session's file leaves a second file without a response (compactctl/sessions/gemini.py)."""
        files = [path for path in self.chats() if path.stem.endswith(f"-{session[:8]}")]
        answered = [path for path in files if any(_responses(path))]
        assert len(answered) == 1, f"{session}: {files}"
        for stub in set(files) - set(answered):
            assert json.loads(stub.read_bytes().splitlines()[0])["sessionId"] == session, stub
        return answered[0]


def _responses(chat: Path) -> list[dict[str, Any]]:
    """A Gemini CLI chat's model responses, as records or inside a ``$set`` of the messages."""
    found = []
    for line in chat.read_bytes().splitlines():
        value = json.loads(line) if line.strip() else {}
        update = value.get("$set") if isinstance(value.get("$set"), dict) else {}
        for record in [value, *(update.get("messages") or [])]:
            if isinstance(record, dict) and record.get("type") == "gemini":
                found.append(record)
    return found


def killed_while(
    args: list[str], cwd: Path, env: dict[str, str], files: Callable[[], Iterable[Path]], marker: bytes, settle: float
) -> Path:
    """The session file a client run writes, the run killed once that file holds ``marker`` (a tool
    call it started), ``settle`` seconds later: everything the client writes before the call is out."""
    import signal
    import time

    known = set(files())
    running = subprocess.Popen(
        args, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
    )
    try:
        for _ in range(120):
            time.sleep(1)
            new = [p for p in files() if p not in known]
            if new and marker in new[0].read_bytes():
                break
        time.sleep(settle)
    finally:
        os.killpg(running.pid, signal.SIGKILL)
        running.wait()
    (written,) = [p for p in files() if p not in known]
    return written
