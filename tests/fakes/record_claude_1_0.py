"""The Claude Code 1.0.x fixtures of tests/recorded/data: the real 1.0.x clients (the versions of the
real sessions in shared/transcripts) against the loopback fake, each showing what the session file
leaves out of what the client sent. Run through ``python -m tests.fakes.record_fixtures NAME``."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from tests.fakes.anthropic import FakeAnthropic
from tests.fakes.clients import ClaudeCode
from tests.fakes.scenarios import project
from tests.fakes.server import Reply, ToolCall

RECORDED = Path(__file__).resolve().parents[1] / "recorded" / "data"


def claude_code_1_0_fixture(root: Path) -> list[Path]:
    """Claude Code 1.0.108 (``$CLAUDE_1_0``: an executable running the cli.js of npm
    ``@anthropic-ai/claude-code@1.0.108``), the version of the real sessions in shared/transcripts,
    with what its log leaves out: a file it read changed on disk by a command (``sed -i``, as a
    formatter would: the client sends a reminder with the changed lines, logs none), and a long
    Write whose stream sends its final usage 1.5 s after the block (the client writes the block's
    record with the usage of the stream's start). Six calls of reads and long outputs come first,
    so the held-out half holds both. Also written: the reminder the client sent, as the fake got it."""
    import json
    import os

    from tests.fakes.clients import Client
    from tests.fakes.server import text_tokens

    binary = Path(os.environ["CLAUDE_1_0"])
    client = Client("claude", binary, "1.0.108")
    big = "".join(f"def f{n}(x):\n    return x * {n}  # step {n}\n" for n in range(120))
    report = "".join(f"- item {n}: the value of f{n}(2) is {2 * n}\n" for n in range(150))
    with FakeAnthropic() as fake:
        fake.count = text_tokens
        claude = ClaudeCode(client, root, project(root), fake)
        cwd = claude.cwd
        (cwd / "big.py").write_text(big)

        def bash(command: str) -> ToolCall:
            return ToolCall("Bash", {"command": command, "description": command})

        def read(name: str) -> ToolCall:
            return ToolCall("Read", {"file_path": str(cwd / name)})

        fake.enqueue(
            Reply(text="The notes first.", tool_calls=(read("notes.txt"),)),
            Reply(text="A long log.", tool_calls=(bash("seq 1 600"),)),
            Reply(text="Show.", tool_calls=(bash("cat app.py"),)),
            Reply(text="Another log.", tool_calls=(bash("seq 1000 1500"),)),
            Reply(text="Date.", tool_calls=(bash("date +%Y"),)),
            Reply(text="Reading.", tool_calls=(read("big.py"),)),
            Reply(text="Reformat.", tool_calls=(bash("sed -i 's/# step/# stage/' big.py"),)),
            Reply(text="Check.", tool_calls=(bash("grep -c stage big.py"),)),
            Reply(
                tool_calls=(ToolCall("Write", {"file_path": str(cwd / "report.md"), "content": report}),),
                usage_after=1.5,
            ),
            Reply(text="Read again.", tool_calls=(read("big.py"),)),
            Reply(text="List again.", tool_calls=(bash("ls"),)),
            "Done: big.py says stage, report.md is written.",
        )
        session = claude.run("Read big.py, reformat it, write the report.")
        fake.enqueue(Reply(text="Count.", tool_calls=(bash("wc -l big.py report.md"),)), "Fine.")
        claude.run("Anything else?", resume=session)
        assert not fake.errors and not fake.script
        sent = _reminders_sent(fake)
        data = claude.session_file(session).read_bytes()
    RECORDED.mkdir(parents=True, exist_ok=True)
    target = RECORDED / "claude-code-1.0.108-changed-file.jsonl"
    target.write_bytes(data.replace(str(root).encode(), b"/home/user"))
    reminder = RECORDED / "claude-code-1.0.108-changed-file.reminder.json"
    reminder.write_text(json.dumps([text.replace(str(root), "/home/user") for text in sent[:1]], indent=1) + "\n")
    return [target, reminder]


def claude_code_1_0_formatter_fixture(root: Path) -> list[Path]:
    """Claude Code 1.0.69 (``$CLAUDE_1_0``: an executable running the cli.js of npm
    ``@anthropic-ai/claude-code@1.0.69``, the version of kesslerio's session) writes a TypeScript
    file with indented blank lines as a model does, shows another one (``lib.ts``, there before) with
    ``cat``, runs the real prettier on both (``$PRETTIER``: the prettier of npm ``prettier@3``) and
    never looks at them again: the client sends a reminder for each with the formatted lines (for
    lib.ts because the fake answers the client's query for the files a command showed as Haiku
    does for a ``cat``), logs none, and the log holds only prettier's ``app.ts 40ms``. Also
    written: the reminders the client sent, as the fake got them."""
    import json
    import os

    from tests.fakes.clients import Client
    from tests.fakes.server import text_tokens

    binary = Path(os.environ["CLAUDE_1_0"])
    prettier = os.environ["PRETTIER"]
    client = Client("claude", binary, "1.0.69")
    body = "".join(
        f"export function f{n}(x: number): number {{\n  const y = x * {n}\n  \n  return y + {n}\n}}\n  \n"
        for n in range(40)
    )
    with FakeAnthropic() as fake:
        fake.count = text_tokens
        claude = ClaudeCode(client, root, project(root), fake)
        cwd = claude.cwd
        (cwd / "lib.ts").write_text(body.replace("export function f", "export function g"))

        def bash(command: str) -> ToolCall:
            return ToolCall("Bash", {"command": command, "description": command})

        write = (ToolCall("Write", {"file_path": str(cwd / "app.ts"), "content": body}),)
        fake.enqueue(
            Reply(text="The notes first.", tool_calls=(ToolCall("Read", {"file_path": str(cwd / "notes.txt")}),)),
            Reply(text="A long log.", tool_calls=(bash("seq 1 600"),)),
            Reply(text="Writing.", tool_calls=write),
            Reply(text="Another log.", tool_calls=(bash("seq 1000 1500"),)),
            Reply(text="The library.", tool_calls=(bash("cat lib.ts"),)),
            Reply(text="Date.", tool_calls=(bash("date +%Y"),)),
            Reply(text="Format.", tool_calls=(bash(f"{prettier} --write app.ts lib.ts"),)),
            Reply(text="List.", tool_calls=(bash("ls"),)),
            Reply(text="Count.", tool_calls=(bash("seq 1 300 | wc -l"),)),
            Reply(text="Again.", tool_calls=(bash("seq 2000 2400"),)),
            "Done: app.ts is written and formatted.",
        )
        session = claude.run("Write app.ts, format it and lib.ts with prettier.")
        assert not fake.errors and not fake.script
        sent = _reminders_sent(fake)
        data = claude.session_file(session).read_bytes()
    RECORDED.mkdir(parents=True, exist_ok=True)
    target = RECORDED / "claude-code-1.0.69-formatted-file.jsonl"
    target.write_bytes(data.replace(str(root).encode(), b"/home/user").replace(prettier.encode(), b"npx prettier"))
    reminder = RECORDED / "claude-code-1.0.69-formatted-file.reminder.json"
    reminder.write_text(json.dumps([text.replace(str(root), "/home/user") for text in sent], indent=1) + "\n")
    return [target, reminder]


# The hook set's UserPromptSubmit hook as it logs (claude-code-hooks-mastery: the input appended to a
# JSON list, ``json.dump(..., indent=2)``).
PROMPT_HOOK = """import json, os, sys
data = json.load(sys.stdin)
path = os.path.join(data["cwd"], "logs", "user_prompt_submit.json")
os.makedirs(os.path.dirname(path), exist_ok=True)
entries = json.load(open(path)) if os.path.exists(path) else []
entries.append(data)
json.dump(entries, open(path, "w"), indent=2)
"""


def claude_code_1_0_prompt_log_fixture(root: Path) -> list[Path]:
    """Claude Code 1.0.69 (``$CLAUDE_1_0``) in its terminal interface, three prompts typed into one
    process, with a UserPromptSubmit hook logging each prompt to ``logs/user_prompt_submit.json``;
    a ``cat`` of that log in the first turn (the fake answers the client's query for the files a
    command showed as Haiku does for a ``cat``). After each later prompt the client sends the log's
    new entry as a changed-file reminder with the first tool result and logs none. Also written: the
    reminders the client sent, as the fake got them."""
    import json
    import os

    from tests.fakes.clients import Client
    from tests.fakes.server import text_tokens

    client = Client("claude", Path(os.environ["CLAUDE_1_0"]), "1.0.69")
    with FakeAnthropic() as fake:
        fake.count = text_tokens
        claude = ClaudeCode(client, root, project(root), fake)
        hook = root / "prompt_hook.py"
        hook.write_text(PROMPT_HOOK)
        (claude.home / ".claude").mkdir(parents=True, exist_ok=True)
        hooks = {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": f"python3 {hook}"}]}]}
        (claude.home / ".claude" / "settings.json").write_text(json.dumps({"hooks": hooks}))
        turns = [
            ("Show the prompt log.", [_bash("cat logs/user_prompt_submit.json"), _bash("seq 1 300")], "Shown."),
            ("Now the year.", [_bash("date +%Y"), _bash("seq 1 200")], "2026."),
            ("And a last count.", [_bash("seq 1 120 | wc -l"), _bash("seq 500 700")], "Counted."),
        ]
        data = _in_the_terminal(claude, fake, turns)
        sent = _reminders_sent(fake)
    return _written("claude-code-1.0.69-prompt-log", root, data, sent)


def claude_code_1_0_ide_fixture(root: Path) -> list[Path]:
    """Claude Code 1.0.69 (``$CLAUDE_1_0``) in its terminal interface with an IDE connected
    (``tests.fakes.ide``: its linter warns at each ``any``). First prompt: the model reads
    ``lib.ts`` and its Edit adds two lines at the top, which moves all 60 warnings; the client sends
    them as new diagnostics inside the Edit's result and logs none. Second prompt: a partial Read, a
    ``sed -i`` inserting a line (no edit of the client's own in that turn): no diagnostics are sent,
    since the client keeps a baseline only for files it edited since the prompt; the changed-file
    reminder of the partially read file follows the ``sed``. Also written: the diagnostics and the
    changed-file reminder the client sent, as the fake got them."""
    import os

    from tests.fakes.clients import Client
    from tests.fakes.ide import FakeIde
    from tests.fakes.server import text_tokens

    client = Client("claude", Path(os.environ["CLAUDE_1_0"]), "1.0.69")
    with FakeAnthropic() as fake:
        fake.count = text_tokens
        claude = ClaudeCode(client, root, project(root), fake)
        lib = claude.cwd / "lib.ts"
        lib.write_text("".join(f"export function f{n}(x: any): any {{\n  return x * {n}\n}}\n" for n in range(30)))
        head = "export function f0("
        edit = ToolCall("Edit", {"file_path": str(lib), "old_string": head, "new_string": f"// a\n// b\n{head}"})
        part = ToolCall("Read", {"file_path": str(lib), "offset": 10, "limit": 10})
        turns = [
            ("Edit lib.ts then look.", [ToolCall("Read", {"file_path": str(lib)}), edit, _bash("date +%Y")], "Done."),
            ("Now read a part.", [part, _bash("sed -i '1i // top' lib.ts"), _bash("seq 1 30")], "Read."),
        ]
        on = {"CLAUDE_CODE_AUTO_CONNECT_IDE": "1"}
        with FakeIde(claude.home, claude.cwd) as ide:
            data = _in_the_terminal(claude, fake, turns, {"autoConnectIde": True}, on)
        assert ("getDiagnostics", {"uri": f"file://{lib}"}) in ide.calls  # the baseline taken before the edit
        sent = [
            str(block["content"])[str(block["content"]).index("<system-reminder>") :]
            for body in fake.model_calls()
            for block in body["messages"][-1]["content"]
            if isinstance(block, dict) and any(mark in str(block.get("content")) for mark in SENT_MARKS)
        ]
    return _written("claude-code-1.0.69-ide-diagnostics", root, data, sent)


# What the IDE fixture keeps of the requests: the diagnostics, and the reminder of the file the ``sed`` changed.
SENT_MARKS = ("<new-diagnostics>", "was modified, either by the user or by a linter")


def _written(name: str, root: Path, data: bytes, sent: Sequence[object]) -> list[Path]:
    """The session file and what the client sent that it leaves out, under ``RECORDED``, with the
    temporary folder written as ``/home/user``."""
    import json

    RECORDED.mkdir(parents=True, exist_ok=True)
    target = RECORDED / f"{name}.jsonl"
    target.write_bytes(data.replace(str(root).encode(), b"/home/user"))
    reminder = RECORDED / f"{name}.reminder.json"
    reminder.write_text(json.dumps([str(text).replace(str(root), "/home/user") for text in sent], indent=1) + "\n")
    return [target, reminder]


def _bash(command: str) -> ToolCall:
    return ToolCall("Bash", {"command": command, "description": command})


def _in_the_terminal(
    claude: ClaudeCode,
    fake: FakeAnthropic,
    turns: list[tuple[str, list[ToolCall], str]],
    state: dict[str, object] | None = None,
    env: dict[str, str] | None = None,
) -> bytes:
    """The client in its terminal interface (a pseudo-terminal), each turn's prompt typed into one
    process and answered by the fake with one tool call a response, then the turn's last text; the
    session file it wrote. ``state`` is added to the client's ``~/.claude.json``, ``env`` to its
    environment."""
    import json
    import os
    import pty
    import select
    import signal
    import time

    key = claude.env()["ANTHROPIC_API_KEY"]
    settings = {
        "hasCompletedOnboarding": True,
        "theme": "dark",
        "customApiKeyResponses": {"approved": [key[-20:]], "rejected": []},
        "projects": {str(claude.cwd): {"hasTrustDialogAccepted": True, "allowedTools": []}},
        **(state or {}),
    }
    (claude.home / ".claude.json").write_text(json.dumps(settings))
    for _, calls, last in turns:
        fake.enqueue(*(Reply(text="On it.", tool_calls=(call,)) for call in calls), last)
    environment = {**claude.env(), "TERM": "xterm-256color", **(env or {})}
    args = [str(claude.client.binary), "--permission-mode", "acceptEdits", "--allowedTools", "Bash Read Edit Write"]
    pid, fd = pty.fork()
    if pid == 0:  # the child: the client in its terminal interface
        os.chdir(claude.cwd)
        os.execve(args[0], args, environment)

    def pump(seconds: float) -> None:
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            if select.select([fd], [], [], 0.1)[0]:
                try:
                    os.read(fd, 65536)
                except OSError:
                    return

    try:
        pump(15)  # the interface starts
        for n, (prompt, _calls, _) in enumerate(turns):
            for character in prompt:  # typed: a paste arrives as one burst the interface may drop
                os.write(fd, character.encode())
                pump(0.05)
            pump(1)
            os.write(fd, b"\r")
            left = sum(len(c) + 1 for _, c, _ in turns[n + 1 :])
            deadline = time.monotonic() + 90
            while len(fake.script) > left and time.monotonic() < deadline:
                pump(0.5)
            pump(5)  # the turn's last records written
    finally:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    assert not fake.errors and not fake.script
    (session,) = list(claude.projects.glob("*/*.jsonl"))
    return session.read_bytes()


def _reminders_sent(fake: FakeAnthropic) -> list[object]:
    """The changed-file reminders the client sent inside the last message's tool results."""
    return [
        block["content"]
        for body in fake.model_calls()
        for block in body["messages"][-1]["content"]
        if isinstance(block, dict)
        and block.get("type") == "tool_result"
        and "was modified, either by the user or by a linter" in str(block.get("content"))
    ]


def claude_code_1_0_web_search_fixture(root: Path) -> Path:
    """Claude Code 1.0.69 (``$CLAUDE_1_0``), one prompt and two WebSearch calls on claude-sonnet-4-5: the tool runs
    as a request of the client's own whose only tool is the API's ``web_search`` (billed per search beside its
    tokens), which writes no message; 1.0.x writes no ``cost-state`` either, so only the tool results hold the
    searches (``results``: one ``tool_use_id`` entry per search)."""
    import os

    from tests.fakes.anthropic import web_search_reply
    from tests.fakes.clients import Client
    from tests.fakes.record_fixtures import _claude_print

    client = Client("claude", Path(os.environ["CLAUDE_1_0"]), "1.0.69")
    with FakeAnthropic() as fake:
        claude = ClaudeCode(client, root, project(root), fake)
        searches = [
            (n, query, ToolCall("WebSearch", {"query": query})) for n, query in ((1, "csv rfc"), (2, "csv quoting"))
        ]
        fake.enqueue(
            *(r for n, q, call in searches for r in (Reply(text="Searching.", tool_calls=(call,)),
                                                     web_search_reply(q, f"Result {n} says CSV is RFC 4180.", n))),
            "CSV is RFC 4180 [Result 1](https://example.org/1); fields with commas are quoted.",
        )  # fmt: skip
        prompt = "Search the web for the CSV RFC, then for its quoting rules."
        session = _claude_print(claude, prompt, "--allowedTools", "WebSearch", "--model", "claude-sonnet-4-5")
        assert session and not fake.errors and not fake.script, (fake.errors, fake.script)
        data = claude.session_file(session).read_bytes()
    target = RECORDED / "claude-code-1.0.69-web-search.jsonl"
    target.write_bytes(data.replace(str(root).encode(), b"/home/user"))
    return target


def claude_code_1_0_resume_fixture(root: Path) -> list[Path]:
    """Claude Code 1.0.69 (``$CLAUDE_1_0``), one prompt (a Bash call, then an answer), then ``--resume`` with one
    more: 1.0.x writes the resumed session to a NEW file under a new session id, which begins with a copy of the
    first session's records (new uuids and sessionId, the same ``message.id``s and usage) and goes on. Three
    requests were served; the two files hold five responses. (2.1.332's ``--resume`` appends to the same file.)"""
    import os

    from tests.fakes.clients import Client

    client = Client("claude", Path(os.environ["CLAUDE_1_0"]), "1.0.69")
    with FakeAnthropic() as fake:
        claude = ClaudeCode(client, root, project(root), fake)
        fake.enqueue(Reply(text="Reading.", tool_calls=(_bash("ls"),)), "Listed.")
        first = claude.run("List the files.")
        fake.enqueue("Nothing else.")
        resumed = claude.run("Anything else?", resume=first)
        assert resumed != first and not fake.errors and not fake.script, (resumed, fake.errors)
        assert len(fake.model_calls()) == 3
        files = [claude.session_file(first), claude.session_file(resumed)]
        folder = RECORDED / "claude-code-1.0.69-resume"
        folder.mkdir(parents=True, exist_ok=True)
        written = []
        for name, path in zip(("first", "resumed"), files, strict=True):
            target = folder / f"{name}.jsonl"
            target.write_bytes(path.read_bytes().replace(str(root).encode(), b"/home/user"))
            written.append(target)
    return written


def claude_code_1_0_resume_chain_fixture(root: Path) -> list[Path]:
    """Claude Code 1.0.69 (``$CLAUDE_1_0``), a resume of a resume: one prompt (a Bash call, an answer), ``--resume``
    it with a second (a Read, an answer), then ``--resume`` that with a third. Each resume writes a new file that
    copies the one it resumed (the third copies the first's calls and the second's own): five requests served,
    the three files hold 2 + 4 + 5 = 11 responses."""
    import os

    from tests.fakes.clients import Client

    client = Client("claude", Path(os.environ["CLAUDE_1_0"]), "1.0.69")
    with FakeAnthropic() as fake:
        claude = ClaudeCode(client, root, project(root), fake)
        fake.enqueue(Reply(text="Reading.", tool_calls=(_bash("ls"),)), "Listed.")
        first = claude.run("List the files.")
        notes = ToolCall("Read", {"file_path": str(claude.cwd / "notes.txt")})
        fake.enqueue(Reply(text="The notes.", tool_calls=(notes,)), "They say CSV.")
        second = claude.run("What do the notes say?", resume=first)
        fake.enqueue("Nothing else.")
        third = claude.run("Anything else?", resume=second)
        assert len({first, second, third}) == 3 and not fake.errors and not fake.script, fake.errors
        assert len(fake.model_calls()) == 5
        folder = RECORDED / "claude-code-1.0.69-resume-chain"
        folder.mkdir(parents=True, exist_ok=True)
        written = []
        for name, session in zip(("first", "second", "third"), (first, second, third), strict=True):
            target = folder / f"{name}.jsonl"
            data = claude.session_file(session).read_bytes()
            target.write_bytes(data.replace(str(root).encode(), b"/home/user"))
            written.append(target)
    return written


def claude_code_1_0_resume_web_search_fixture(root: Path) -> list[Path]:
    """Claude Code 1.0.69 (``$CLAUDE_1_0``), one prompt and a WebSearch on claude-sonnet-4-5 (its request of its own
    writes no message, and 1.0.x no cost-state: the tool result's ``results`` is all that shows it), then
    ``--resume`` with a prompt answered at once. The resumed file copies the search's tool result with the
    rest: the search was made once, before the resume."""
    import os

    from tests.fakes.anthropic import web_search_reply
    from tests.fakes.clients import Client
    from tests.fakes.record_fixtures import _claude_print

    client = Client("claude", Path(os.environ["CLAUDE_1_0"]), "1.0.69")
    with FakeAnthropic() as fake:
        claude = ClaudeCode(client, root, project(root), fake)
        search = ToolCall("WebSearch", {"query": "csv rfc"})
        fake.enqueue(
            Reply(text="Searching.", tool_calls=(search,)),
            web_search_reply("csv rfc", "Result 1 says CSV is RFC 4180.", 1),
            "CSV is RFC 4180.",
        )
        model = ("--allowedTools", "WebSearch", "--model", "claude-sonnet-4-5")
        first = _claude_print(claude, "Search the web for the CSV RFC.", *model)
        fake.enqueue("Quote fields with commas.")
        resumed = _claude_print(claude, "And its quoting rule?", "--resume", first, *model)
        assert resumed != first and not fake.errors and not fake.script, (fake.errors, fake.script)
        assert len(fake.model_calls()) == 4  # the first session's two, the search's own request, the resumed one
        folder = RECORDED / "claude-code-1.0.69-resume-web-search"
        folder.mkdir(parents=True, exist_ok=True)
        written = []
        for name, session in (("first", first), ("resumed", resumed)):
            target = folder / f"{name}.jsonl"
            target.write_bytes(claude.session_file(session).read_bytes().replace(str(root).encode(), b"/home/user"))
            written.append(target)
    return written
