"""A session grown past its model's window, listed, refused by its real client, compacted by id, and resumed.

Each real client (Claude Code, Codex, Gemini CLI) records a session of long command outputs in a
private HOME against its loopback fake (tests/fakes/scenarios.py ``long_session``). The model's
window is then set below what that session sends (the fake refuses a request over it with the
API's own error), and everything runs as a user runs it, ``python -m compactctl`` with that HOME:
``sessions`` flags the session; its client fails to resume it; ``compact --session`` writes a new
session beside it whose first request fits with room to work; ``--slim``, ``--in-place`` and
``--undo`` keep what they promise.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from compactctl.sessions import short_ids
from tests.fakes.anthropic import FakeAnthropic
from tests.fakes.clients import ClaudeCode, Client, Codex, Gemini, require_client
from tests.fakes.gemini import COUNT_MISMATCH, FakeGemini
from tests.fakes.responses import FakeResponses
from tests.fakes.scenarios import Recorded, long_session, project
from tests.fakes.server import FakeModelServer, text_tokens

pytestmark = pytest.mark.clients  # the real Claude Code, Codex and Gemini CLI, stuck and resumed

RESUME_PROMPT = "Carry on."
CLIENT_ENV = ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "GEMINI_CLI_HOME")


class KeptGemini(Gemini):
    """Gemini CLI with its session retention off. At start-up 0.61 deletes the chats it cannot read as a
    session, and with each one every file ending in the same 8-character id: the header-only file it
    opens for a session it resumes is one, so a later start deletes the resumed chat with it
    (sessionCleanup.ts in google-gemini/gemini-cli; seen here: the original went, not by compactctl)."""

    def configure(self) -> None:
        super().configure()
        settings = self.home / ".gemini" / "settings.json"
        values = json.loads(settings.read_text())
        values["general"] = {**values.get("general", {}), "sessionRetention": {"enabled": False}}
        settings.write_text(json.dumps(values))


@dataclass(frozen=True)
class Case:
    client: str  # compactctl's name for it
    command: str  # the executable
    driver: Callable[..., Any]
    fake: type[FakeModelServer]
    refusal: str  # what the API says of a request over the window
    request_parts: tuple[str, str, str]  # the request keys the fake counts: system, conversation, tools
    # The window, as a share of what the original sends on resume. Claude Code 2.1.332 answers
    # "prompt is too long" by summarizing the history in pieces and retrying, and gets through down
    # to about half of it (measured: 0.5 resumed, 0.4 did not); the others fail at once.
    window_share: float = 0.8


CASES = {
    "claude-code": Case(
        "claude-code", "claude", ClaudeCode, FakeAnthropic, "prompt is too long", ("system", "messages", "tools"), 0.4
    ),
    "codex": Case(
        "codex", "codex", Codex, FakeResponses, "exceeds the context window", ("instructions", "input", "tools")
    ),
    "gemini": Case(
        "gemini",
        "gemini",
        KeptGemini,
        FakeGemini,
        "exceeds the maximum number of tokens",
        ("systemInstruction", "contents", "tools"),
    ),
}


def request_tokens(case: Case, body: dict[str, Any]) -> int:
    """A request's size as the fake counts it against its window (and in the usage it reports)."""
    return text_tokens([body.get(key) for key in case.request_parts])


def counting(fake: FakeModelServer, window: int | None = None) -> FakeModelServer:
    """The fake counting tokens as an API does (texts in a real encoding, not four characters of JSON),
    so the usage the client records measures what it sends."""
    fake.count = text_tokens
    fake.window = window
    return fake


@dataclass(frozen=True)
class Resumption:
    finished: bool  # the client exited 0
    accepted: list[dict[str, Any]]  # the main-loop requests the fake took
    errors: list[str]  # what it refused, as the API would
    sent: list[dict[str, Any]]  # every main-loop request, refused or not


def resume(case: Case, client: Client, recorded: Recorded, session: str, window: int | None) -> Resumption:
    with case.fake() as fake:
        counting(fake, window)
        try:
            case.driver(client, recorded.home, recorded.cwd, fake).run(RESUME_PROMPT, resume=session)
            finished = True
        except AssertionError:
            finished = False
        accepted = fake.model_calls()  # type: ignore[attr-defined]
        sent = [r.body for r in fake.requests if isinstance(r.body, dict) and r.body.get("tools")]
        return Resumption(finished, accepted, fake.errors, sent)


def age(path: Path) -> None:
    """Idle ten minutes: not a session its client is writing now."""
    aged = time.time() - 600
    os.utime(path, (aged, aged))


@contextmanager
def kept(path: Path, data: bytes) -> Iterator[None]:
    """``path`` holds ``data`` during the block and again after it, idle (a resume appends to the file)."""
    path.write_bytes(data)
    age(path)
    try:
        yield
    finally:
        path.write_bytes(data)
        age(path)


@dataclass(frozen=True)
class Stuck:
    case: Case
    client: Client
    recorded: Recorded
    original: bytes
    sent: int  # tokens of the first request the original resumes with, as the fake counts them
    window: int

    def env(self) -> dict[str, str]:
        base = {k: v for k, v in os.environ.items() if k not in CLIENT_ENV}
        return {**base, "HOME": str(self.recorded.home)}

    def compactctl(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        """``compactctl ARGS`` as the user types it, in their home."""
        command = [sys.executable, "-m", "compactctl", *args]
        done = subprocess.run(
            command, capture_output=True, text=True, timeout=600, env=self.env(), cwd=self.recorded.cwd
        )
        if check:
            assert done.returncode == 0, f"{' '.join(args)} exited {done.returncode}: {done.stderr[-3000:]}"
        return done


@pytest.fixture(scope="module", params=list(CASES))
def stuck(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Stuck:
    case = CASES[request.param]
    client = require_client(case.command)
    home = tmp_path_factory.mktemp(f"{case.client}-home")
    with case.fake() as fake:
        recorded = long_session(case.driver(client, home, project(home), counting(fake)))
        assert not fake.errors, fake.errors
    original = recorded.path.read_bytes()
    with kept(recorded.path, original):
        unlimited = resume(case, client, recorded, recorded.session, None)
    if case.client == "gemini":
        # Gemini CLI 0.61 resumes its own chat with every tool response twice and the API refuses it
        # (google-gemini/gemini-cli#29365): what it would send is that request with each response once.
        assert unlimited.errors and set(unlimited.errors) == {COUNT_MISMATCH}, unlimited.errors
        sent = request_tokens(case, once_each(unlimited.sent[0]))
    else:
        assert unlimited.accepted and not unlimited.errors, unlimited.errors
        sent = request_tokens(case, unlimited.accepted[0])
    return Stuck(case, client, recorded, original, sent, int(sent * case.window_share))


def once_each(body: dict[str, Any]) -> dict[str, Any]:
    """A Gemini request with each functionResponse part once (the client's duplicates left out)."""
    seen: set[Any] = set()
    contents = []
    for content in body["contents"]:
        parts = []
        for part in content["parts"]:
            response = part.get("functionResponse")
            if isinstance(response, dict):
                if response.get("id") in seen:
                    continue
                seen.add(response.get("id"))
            parts.append(part)
        contents.append({**content, "parts": parts})
    return {**body, "contents": contents}


def listed(stuck: Stuck, *args: str) -> list[dict[str, Any]]:
    done = stuck.compactctl("sessions", "--json", "--context-window", str(stuck.window), *args)
    return list(json.loads(done.stdout)["files"])


def test_sessions_lists_the_session_over_its_window(stuck: Stuck) -> None:
    (row,) = [r for r in listed(stuck) if r["id"] == stuck.recorded.session and r["path"] == str(stuck.recorded.path)]
    assert row["client"] == stuck.case.client
    assert row["cwd"] == str(stuck.recorded.cwd)
    assert row["size"] == len(stuck.original)
    assert row["over_window"] and row["live_tokens"] > stuck.window
    # The live context is what the client sends on resume (less the new prompt), as the API counts it.
    print(f"{stuck.case.client}: live {row['live_tokens']} ({row['live_basis']}) vs sent {stuck.sent}")
    assert row["live_tokens"] == pytest.approx(stuck.sent, rel=0.1)
    assert row["resume"].endswith(
        f"{stuck.case.command} --resume {stuck.recorded.session}".replace("codex --resume", "codex resume")
    )


def test_its_client_cannot_resume_it(stuck: Stuck) -> None:
    with kept(stuck.recorded.path, stuck.original):
        refused = resume(stuck.case, stuck.client, stuck.recorded, stuck.recorded.session, stuck.window)
    assert not refused.finished
    assert any(stuck.case.refusal in error for error in refused.errors), refused.errors


def new_session(stuck: Stuck, *args: str) -> tuple[str, dict[str, Any]]:
    """``compact --session PREFIX``: the id it printed a resume command for, and its --json session."""
    # The id as the listing shows it (the shortest prefix naming it: Codex's ids of one minute share 8).
    prefix = short_ids(row["id"] for row in listed(stuck))[stuck.recorded.session]
    done = stuck.compactctl("compact", "--session", prefix, "--context-window", str(stuck.window), *args)
    command = done.stdout.strip().splitlines()[-1]
    assert command.startswith(f"cd {stuck.recorded.cwd} && {stuck.case.command} "), command
    new_id = command.rsplit(" ", 1)[1]
    again = stuck.compactctl("sessions", "--json", "--context-window", str(stuck.window))
    rows = {row["id"]: row for row in json.loads(again.stdout)["files"]}
    return new_id, rows[new_id]


def test_compact_by_id_writes_a_new_session_its_client_resumes_with_room_to_work(stuck: Stuck) -> None:
    new_id, row = new_session(stuck)
    assert new_id != stuck.recorded.session
    assert stuck.recorded.path.read_bytes() == stuck.original  # the original is untouched
    assert not row["over_window"]
    resumed = resume(stuck.case, stuck.client, stuck.recorded, new_id, stuck.window)
    assert resumed.finished and not resumed.errors, resumed.errors
    first = request_tokens(stuck.case, resumed.accepted[0])
    print(f"{stuck.case.client}: first request {first} tokens, window {stuck.window}, listed {row['live_tokens']}")
    assert first <= 0.6 * stuck.window  # it fits, with at least 40 % of the window to work in
    assert row["live_tokens"] == pytest.approx(first, rel=0.15)


def test_the_slim_form_is_smaller_and_resumes_the_same(stuck: Stuck) -> None:
    full_id, full_row = new_session(stuck)
    slim_id, slim_row = new_session(stuck, "--slim")
    assert slim_row["size"] < full_row["size"] / 2
    full = resume(stuck.case, stuck.client, stuck.recorded, full_id, stuck.window)
    slim = resume(stuck.case, stuck.client, stuck.recorded, slim_id, stuck.window)
    assert slim.finished and not slim.errors, slim.errors
    conversation = stuck.case.request_parts[1]
    assert _without_ids(slim.accepted[0][conversation]) == _without_ids(full.accepted[0][conversation])


# What differs between two resumes of one conversation: ids made from the session's, Codex's turn metadata.
RUN_KEYS = frozenset({"id", "internal_chat_message_metadata_passthrough"})


def _without_ids(conversation: Any) -> Any:
    """The conversation sent, without the ids the client makes from the session's (they differ between the two)."""
    if isinstance(conversation, dict):
        return {k: _without_ids(v) for k, v in conversation.items() if k not in RUN_KEYS}
    if isinstance(conversation, list):
        return [_without_ids(item) for item in conversation]
    return conversation


def test_in_place_keeps_a_backup_and_undo_puts_it_back(stuck: Stuck) -> None:
    with kept(stuck.recorded.path, stuck.original):
        done = stuck.compactctl(
            "compact",
            "--session",
            stuck.recorded.session,
            "--in-place",
            "--context-window",
            str(stuck.window),
            "--json",
        )
        report = json.loads(done.stdout)["session"]
        assert report["new_id"] == stuck.recorded.session
        assert Path(report["backup"]).read_bytes() == stuck.original
        assert stuck.recorded.path.read_bytes() != stuck.original
        resumed = resume(stuck.case, stuck.client, stuck.recorded, stuck.recorded.session, stuck.window)
        assert resumed.finished and not resumed.errors, resumed.errors
        age(stuck.recorded.path)
        stuck.compactctl("compact", "--session", stuck.recorded.session, "--undo")
        assert stuck.recorded.path.read_bytes() == stuck.original
        assert not Path(report["backup"]).exists()


README = Path(__file__).resolve().parents[2] / "README.md"
README_HOME = "/home/me/project"  # the working directory the README's examples show


def walkthrough(command: str) -> list[str]:
    """The commands the README's "My session is stuck" section gives for one client, as a user types them."""
    section = README.read_text(encoding="utf-8").split("### My session is stuck", 1)[1].split("\n### ", 1)[0]
    blocks = [block for block in re.findall(r"```console\n(.*?)```", section, re.S) if f"&& {command} " in block]
    assert len(blocks) == 1, f"the README has {len(blocks)} walkthroughs for {command}"
    return [line[2:] for line in blocks[0].splitlines() if line.startswith("$ ")]


def test_the_readme_walkthrough_resumes_the_stuck_session(stuck: Stuck) -> None:
    *ours, resume_line = walkthrough(stuck.case.command)
    assert [shlex.split(line)[:2] for line in ours] == [["compactctl", "sessions"], ["compactctl", "compact"]]
    short = short_ids(row["id"] for row in listed(stuck))[stuck.recorded.session]
    listing = stuck.compactctl(*shlex.split(ours[0])[1:], "--context-window", str(stuck.window))
    assert f"{stuck.recorded.session} is over its window" in listing.stderr
    assert f"compactctl compact --session {short}" in listing.stderr  # the command it suggests, as the README types it
    args = shlex.split(ours[1])[1:]
    args[args.index("--session") + 1] = short  # the README's example id, for this session's
    compacted = stuck.compactctl(*args, "--context-window", str(stuck.window))
    printed = compacted.stdout.strip().splitlines()[-1]
    new_id = printed.rsplit(" ", 1)[1]
    example_id = resume_line.rsplit(" ", 1)[1]
    expected = resume_line.replace(README_HOME, str(stuck.recorded.cwd)).replace(example_id, new_id)
    assert printed == expected
    assert stuck.recorded.path.read_bytes() == stuck.original
    resumed = resume(stuck.case, stuck.client, stuck.recorded, new_id, stuck.window)
    assert resumed.finished and not resumed.errors, resumed.errors
    assert request_tokens(stuck.case, resumed.accepted[0]) <= stuck.window
