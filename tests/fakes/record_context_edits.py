"""Record the fixtures of Claude Code sessions whose old tool results the model saw as a stand-in after the user was
idle, made by the real client against the loopback fake, with what the fake served (``<fixture>.served.json``: each
response's model, usage and the context edits the API applied): the truth.

    PATH=<.ci/cache/npm/node_modules/.bin>:$PATH python -m tests.fakes.record_context_edits [NAME...]

Claude Code 2.1.332 edits the context of the first requests after more than ``minIdleSeconds`` (3,900) without
a record, behind the flag ``tengu_jiggly_blossom`` ("on"); the client reads its flags from
``~/.claude.json``'s ``cachedGrowthBookFeatures`` where ``CLAUDE_CODE_GB_DISK_CACHE_WHEN_TELEMETRY_OFF`` is set
(its telemetry is off here). The idle hour is real to the client: the first run's clock is two hours behind
(libfaketime, ``FAKETIME=-2h``: the records it writes are stamped then), the resume runs at the real time. The
fake counts each request in cl100k (``text_tokens``) and applies the API's ``clear_tool_uses_20250919`` edit
(tests/fakes/context_edits.py). compactctl/recorded/claude_code_cleared.py says what each run writes.

With ``tengu_tidy_crayon`` and ``tengu_humble_tide`` on as well, the edit asks the API to clear the inputs of the
cleared Write, Edit, Bash and PowerShell calls too (``clear_tool_inputs``): the client sends it only where the
session's old thinking reached the model (``RUe``: "thinking_off", "no_old_thinking" otherwise) and after its note
that the chat resumed after a long pause (a ``critical_system_reminder``), so that session's replies think.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.fakes.anthropic import FakeAnthropic
from tests.fakes.clients import ClaudeCode, _run, require_client
from tests.fakes.record_copies import RECORDED, _serving, record_named
from tests.fakes.record_fixtures import _version
from tests.fakes.record_tiers import _kept
from tests.fakes.scenarios import project
from tests.fakes.server import Reply, ToolCall, text_tokens
from tests.needs import needs

PARTS = 31  # Reads before the pause: the client plans an edit only past 27 + 3 tool uses it may clear
AFTER = 6  # commands after it
CLEARED_BY_THE_API = {"tengu_jiggly_blossom": "on"}
# The client cuts the results itself (``tengu_wise_pearl``'s ``write_records``) and sends no edit.
CUT_BY_THE_CLIENT = {**CLEARED_BY_THE_API, "tengu_wise_pearl": {"write_records": True}}
# The API clears the cleared calls' inputs too (``clear_tool_inputs``), after the client's note of the pause.
INPUTS_CLEARED_BY_THE_API = {**CLEARED_BY_THE_API, "tengu_tidy_crayon": True, "tengu_humble_tide": True}


def part(n: int, lines: int) -> str:
    """A part file of ``lines`` lines, 82 characters each (about 80 tokens): the results cleared must add up to the
    edit's 20,000 tokens (``clear_at_least``, in the API's count), those the client cuts to 20,000 of its own rough
    count (about a token per 4 characters)."""
    return "\n".join(f"Part {n} line {k}: " + " ".join(f"w{n}x{k}y{j}" for j in range(12)) for k in range(lines)) + "\n"


def idle_session(root: Path, flags: dict[str, Any], lines: int, writes: bool = False) -> tuple[ClaudeCode, str]:
    """Claude Code reads ``PARTS`` files two hours ago (its clock set back), then the session is resumed now
    for ``AFTER`` commands: its first request after the pause is the first after the idle hour. ``writes``: every
    other part is written (a Write call whose input holds the part) instead of read, and every reply thinks."""
    libfaketime = needs("faketime")
    client = require_client("claude")
    fake = FakeAnthropic(count=text_tokens)
    fake.start()
    claude = ClaudeCode(client, root, project(root), fake)
    (root / ".claude.json").write_text(json.dumps({"cachedGrowthBookFeatures": flags}))
    for n in range(PARTS):
        if not (writes and n % 2 == 0):
            (claude.cwd / f"part{n:02d}.txt").write_text(part(n, lines))
    thinking = "I take the next step of the task." if writes else ""

    def run(prompt: str, *extra: str, clock: dict[str, str] | None = None) -> str:
        env = {**claude.env(), "CLAUDE_CODE_GB_DISK_CACHE_WHEN_TELEMETRY_OFF": "1", **(clock or {})}
        args = [str(client.binary), "-p", prompt, "--output-format", "json", "--permission-mode", "acceptEdits"]
        done = _run([*args, "--allowedTools", "Bash Read Write", *extra], claude.cwd, env)
        return str(json.loads(done.stdout.strip().splitlines()[-1])["session_id"])

    def read(n: int) -> Reply:
        file = str(claude.cwd / f"part{n:02d}.txt")
        if writes and n % 2 == 0:
            call = ToolCall("Write", {"file_path": file, "content": part(n, lines)})
            return Reply(thinking=thinking, text=f"Writing part {n}.", tool_calls=(call,))
        return Reply(thinking=thinking, text=f"Reading part {n}.", tool_calls=(ToolCall("Read", {"file_path": file}),))

    def count(n: int) -> Reply:
        call = ToolCall("Bash", {"command": f"wc -l part{n:02d}.txt"})
        return Reply(thinking=thinking, text=f"Counting part {n}.", tool_calls=(call,))

    fake.enqueue(*(read(n) for n in range(PARTS)), Reply(thinking=thinking, text="Every part is read."))
    two_hours_ago = {"LD_PRELOAD": str(libfaketime), "FAKETIME": "-2h", "FAKETIME_DONT_RESET": "1"}
    session = run("Read every part.", clock=two_hours_ago)
    answer = Reply(thinking=thinking, text="Back after the pause: every part has 14 lines.")
    fake.enqueue(*(count(n) for n in range(AFTER)), answer)
    run("How many lines has each part?", "--resume", session)
    fake.stop()
    assert not fake.errors and not fake.script, fake.errors
    return claude, session


def _recorded(root: Path, flags: dict[str, Any], name: str, lines: int, writes: bool = False) -> list[Path]:
    with _serving() as served:
        claude, session = idle_session(root, flags, lines, writes)
    client = claude.client
    files = {f"{session}.jsonl": claude.session_file(session).read_bytes()}
    return _kept(RECORDED / f"claude-code-{_version(client.version)}-{name}", files, root, served)


def claude_code_cleared_after_idle_fixture(root: Path) -> list[Path]:
    """The API clears: each request after the pause carries ``clear_tool_uses_20250919`` and the fake clears all
    but the last 12 tool uses' results (19 to 24 of them), reporting it in ``applied_edits``."""
    return _recorded(root, CLEARED_BY_THE_API, "cleared-after-idle", lines=14)


def claude_code_cut_after_idle_fixture(root: Path) -> list[Path]:
    """The client cuts: a ``tool_results_cut`` attachment of the oldest 17 Reads' results before the first request
    after the pause, and every request from there sends them as "[Old tool result content cleared]"."""
    return _recorded(root, CUT_BY_THE_CLIENT, "cut-after-idle", lines=44)


def claude_code_inputs_cleared_after_idle_fixture(root: Path) -> list[Path]:
    """The API clears inputs too: every other part written (16 Writes, 15 Reads, each reply thinking), and each
    request after the pause carries ``clear_tool_uses_20250919`` with ``clear_tool_inputs`` (Write, Edit, Bash,
    PowerShell): the fake clears the oldest results and the cleared Writes' inputs (``{}``)."""
    return _recorded(root, INPUTS_CLEARED_BY_THE_API, "inputs-cleared-after-idle", lines=14, writes=True)


if __name__ == "__main__":
    record_named(
        (
            claude_code_cleared_after_idle_fixture,
            claude_code_cut_after_idle_fixture,
            claude_code_inputs_cleared_after_idle_fixture,
        )
    )
