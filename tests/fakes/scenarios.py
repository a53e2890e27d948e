"""Scripted sessions the real clients record: the fixtures of the resume tests.

One small coding task, the same for every client: read two files in parallel (with
thinking/reasoning first), run a command with a long output, edit the file with the
client's own edit tool, read the file and the notes and run the long command again (so
prune has superseded results to remove), answer; then a second prompt in a resumed session.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from tests.fakes.clients import ClaudeCode, Codex, Gemini
from tests.fakes.server import Reply, ToolCall

APP = "def add(a, b):\n    return a - b\n\n\nprint(add(2, 3))\n"
NOTES = "Results must stay in CSV.\nDo not change the public interface of add().\n"
FIRST_PROMPT = "Fix the bug in app.py. Results must stay in CSV."
SECOND_PROMPT = "Run it and tell me what it prints."
LONG_COMMAND = "seq 1 3000"


@dataclass(frozen=True)
class Recorded:
    """A session a real client wrote: where it lives and how to resume it."""

    home: Path
    cwd: Path
    session: str  # Claude Code session id / Codex thread id
    path: Path  # the session file


def project(root: Path) -> Path:
    cwd = root / "project"
    cwd.mkdir(parents=True)
    (cwd / "app.py").write_text(APP)
    (cwd / "notes.txt").write_text(NOTES)
    return cwd


def claude_code_session(claude: ClaudeCode) -> Recorded:
    app, notes = str(claude.cwd / "app.py"), str(claude.cwd / "notes.txt")
    claude.fake.enqueue(
        Reply(
            thinking="The bug is probably in add(); read it and the notes first.",
            text="Reading app.py and the notes.",
            tool_calls=(
                ToolCall("Read", {"file_path": app}),
                ToolCall("Bash", {"command": f"cat {notes}", "description": "Show notes"}),
            ),
            output_tokens=120,
        ),
        Reply(
            text="Checking the long log.",
            tool_calls=(ToolCall("Bash", {"command": LONG_COMMAND, "description": "Long output"}),),
        ),
        Reply(
            tool_calls=(
                ToolCall("Edit", {"file_path": app, "old_string": "return a - b", "new_string": "return a + b"}),
            )
        ),
        Reply(tool_calls=(ToolCall("Read", {"file_path": app}),)),
        Reply(tool_calls=(ToolCall("Bash", {"command": f"cat {notes}", "description": "Show notes"}),)),
        Reply(tool_calls=(ToolCall("Bash", {"command": LONG_COMMAND, "description": "Long output"}),)),
        Reply(
            thinking="The edit is in place.",
            text="Fixed: add() now returns a + b; the output stays CSV.",
            output_tokens=40,
        ),
        Reply(tool_calls=(ToolCall("Bash", {"command": "python3 app.py", "description": "Run app"}),)),
        Reply(text="It prints 5."),
    )
    session = claude.run(FIRST_PROMPT)
    claude.run(SECOND_PROMPT, resume=session)
    assert not claude.fake.script, "the client did not use every scripted reply"
    return Recorded(claude.home, claude.cwd, session, claude.session_file(session))


PATCH = "*** Begin Patch\n*** Update File: app.py\n@@\n-    return a - b\n+    return a + b\n*** End Patch\n"


def codex_session(codex: Codex) -> Recorded:
    codex.fake.enqueue(
        Reply(
            thinking="The bug is probably in add(); read it and the notes first.",
            text="Reading app.py and the notes.",
            tool_calls=(
                ToolCall("exec_command", {"cmd": "cat app.py"}),
                ToolCall("exec_command", {"cmd": "cat notes.txt"}),
            ),
            output_tokens=120,
        ),
        Reply(text="Checking the long log.", tool_calls=(ToolCall("exec_command", {"cmd": LONG_COMMAND}),)),
        Reply(tool_calls=(ToolCall("apply_patch", PATCH),)),
        Reply(tool_calls=(ToolCall("exec_command", {"cmd": "cat app.py"}),)),
        Reply(tool_calls=(ToolCall("exec_command", {"cmd": "cat notes.txt"}),)),
        Reply(tool_calls=(ToolCall("exec_command", {"cmd": LONG_COMMAND}),)),
        Reply(
            thinking="The patch applied.",
            text="Fixed: add() now returns a + b; the output stays CSV.",
            output_tokens=40,
        ),
        Reply(tool_calls=(ToolCall("exec_command", {"cmd": "python3 app.py"}),)),
        Reply(text="It prints 5."),
    )
    codex.run(FIRST_PROMPT)
    (rollout,) = codex.rollouts()
    thread = re.search(r"([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.jsonl$", rollout.name)
    assert thread, rollout
    codex.run(SECOND_PROMPT, resume=thread.group(1))
    assert not codex.fake.script, "the client did not use every scripted reply"
    return Recorded(codex.home, codex.cwd, thread.group(1), rollout)


def claude_code_compacts(claude: ClaudeCode, recorded: Recorded) -> Recorded:
    """Claude Code's own ``/compact`` on the recorded session (the fake answers its summary request)."""
    claude.run("/compact", resume=recorded.session)
    return recorded


def codex_compacts(codex: Codex, recorded: Recorded) -> Recorded:
    """Codex's own (remote) compaction, triggered by a low auto-compact limit on the next turn."""
    codex.extra_config = "model_auto_compact_token_limit = 3000\n"
    codex.fake.enqueue(Reply(text="Nothing is left to do."))
    codex.run("Anything left?", resume=recorded.session)
    codex.extra_config = ""
    assert b'"type":"compacted"' in recorded.path.read_bytes().replace(b" ", b""), "Codex did not compact"
    return recorded


def gemini_session(gemini: Gemini) -> Recorded:
    """The same task for Gemini CLI, with its own tools (read_file, run_shell_command, replace).

    The prompts come the other way round: the first one gets a plain answer, and the tool work
    follows in the resumed session. Gemini CLI 0.61 cannot resume its own session once it holds
    tool calls (it sends every response twice: google-gemini/gemini-cli#29365), so a resume
    after the tools would be refused.
    """
    gemini.fake.enqueue(Reply(thinking="A question first.", text="I will look at app.py next.", output_tokens=30))
    gemini.fake.enqueue(
        Reply(
            thinking="The bug is probably in add(); read it and the notes first.",
            text="Reading app.py and the notes.",
            tool_calls=(
                ToolCall("read_file", {"file_path": "app.py"}),
                ToolCall("run_shell_command", {"command": "cat notes.txt"}),
            ),
            output_tokens=120,
        ),
        Reply(text="Checking the long log.", tool_calls=(ToolCall("run_shell_command", {"command": LONG_COMMAND}),)),
        Reply(
            tool_calls=(
                ToolCall(
                    "replace",
                    {
                        "file_path": "app.py",
                        "instruction": "Fix add() to add.",
                        "old_string": "return a - b",
                        "new_string": "return a + b",
                    },
                ),
            )
        ),
        Reply(tool_calls=(ToolCall("read_file", {"file_path": "app.py"}),)),
        Reply(tool_calls=(ToolCall("run_shell_command", {"command": "cat notes.txt"}),)),
        Reply(tool_calls=(ToolCall("run_shell_command", {"command": LONG_COMMAND}),)),
        Reply(tool_calls=(ToolCall("run_shell_command", {"command": "python3 app.py"}),)),
        Reply(
            thinking="The edit is in place.",
            text="Fixed: add() now returns a + b; it prints 5 and the output stays CSV.",
            output_tokens=40,
        ),
    )
    session = gemini.run(SECOND_PROMPT)
    gemini.run(FIRST_PROMPT, resume=session)
    assert not gemini.fake.script, "the client did not use every scripted reply"
    assert (gemini.cwd / "app.py").read_text() == APP.replace("a - b", "a + b"), "the client's edit did not apply"
    return Recorded(gemini.home, gemini.cwd, session, gemini.chat(session))


# -- a session grown past its window: long tool outputs, one prompt ----------------------------

LONG_PARTS = 12  # tool calls of about 25k characters each: under the 30k Claude Code keeps in the session
STUCK_PROMPT = "Check every part of the log."


def _part_command(n: int) -> str:
    # Prose, not digits: the fakes count four characters a token, which is about what a tokenizer
    # makes of words (a run of numbers is far denser), so the session's usage matches its text.
    return f"yes 'part {n}: the quick brown fox jumps over the lazy dog' | head -n 450"


def long_session(driver: ClaudeCode | Codex | Gemini) -> Recorded:
    """One prompt answered with ``LONG_PARTS`` long command outputs read one after another: the kind of
    session that outgrows its window. (Gemini CLI first answers a plain prompt and does the work in the
    resumed session: see :func:`gemini_session`.)"""
    if isinstance(driver, ClaudeCode):
        call = lambda n: ToolCall("Bash", {"command": _part_command(n), "description": f"Part {n}"})  # noqa: E731
    elif isinstance(driver, Codex):
        call = lambda n: ToolCall("exec_command", {"cmd": _part_command(n)})  # noqa: E731
    else:
        call = lambda n: ToolCall("run_shell_command", {"command": _part_command(n)})  # noqa: E731
    replies = [Reply(text=f"Reading part {n}.", tool_calls=(call(n),)) for n in range(LONG_PARTS)]
    replies.append(Reply(text="Every part is a run of consecutive numbers; nothing is missing."))
    if isinstance(driver, Gemini):
        driver.fake.enqueue(Reply(text="Ready when you are."))
        driver.fake.enqueue(*replies)
        session = driver.run("Hello.")
        driver.run(STUCK_PROMPT, resume=session)
        return Recorded(driver.home, driver.cwd, session, driver.chat(session))
    driver.fake.enqueue(*replies)
    if isinstance(driver, ClaudeCode):
        session = driver.run(STUCK_PROMPT)
        assert not driver.fake.script, "the client did not use every scripted reply"
        return Recorded(driver.home, driver.cwd, session, driver.session_file(session))
    driver.run(STUCK_PROMPT)
    assert not driver.fake.script, "the client did not use every scripted reply"
    (rollout,) = driver.rollouts()
    thread = re.search(r"([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.jsonl$", rollout.name)
    assert thread, rollout
    return Recorded(driver.home, driver.cwd, thread.group(1), rollout)
