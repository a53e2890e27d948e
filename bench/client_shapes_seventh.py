"""Issue 20's seventh sweep of shapes the real clients write, audited as bench/client_audit.py audits its own.

    PYTHONPATH=. python bench/client_shapes_seventh.py [--keep DIR] [--only claude7|codex7|gemini7]

Sessions compactctl itself wrote, then continued by the real client: ``compactctl compact --session ID`` (its
default strategy, a new session beside the original) of a Claude Code 2.1.332, Codex 0.171.0 and Gemini CLI 0.61.0
session, resumed by the client with two more turns. Each is audited twice: the folder holding both sessions (every
response the fake served across both runs, once) and the new session alone (only the two turns the client added:
the history it copies was billed in the original). Each bills both exactly since compactctl marks the copies: Claude
Code's copied responses name the original in ``requestSessionId``, Codex's new rollout names it in ``forked_from_id``
with every item ``inherited_user_message``, Gemini CLI's copied responses name it in ``compactctlCopiedFrom`` (see
tests/recorded/data/README.md's *-compactctl-session entries).
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import bench.client_audit as ca  # noqa: E402
from bench.client_shapes import _made  # noqa: E402
from tests.fakes.anthropic import FakeAnthropic  # noqa: E402
from tests.fakes.clients import ClaudeCode, Codex, Gemini, require_client  # noqa: E402
from tests.fakes.gemini import FakeGemini  # noqa: E402
from tests.fakes.responses import FakeResponses  # noqa: E402
from tests.fakes.scenarios import project  # noqa: E402
from tests.fakes.server import Reply, ToolCall  # noqa: E402


def compactctl_session(env: dict[str, str], cwd: Path, session: str, client: str) -> str:
    """``compactctl compact --session ID`` as the user types it in the client's home: the new session's id
    (``--force``: the client has exited; a user would have waited the minute compactctl asks for)."""
    done = subprocess.run(
        [sys.executable, "-m", "compactctl", "compact", "--session", session, "--client", client, "--json", "--force"],
        capture_output=True, text=True, timeout=600, cwd=cwd,
        env={**env, "PYTHONPATH": str(ROOT), "COLUMNS": "200"},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    return str(json.loads(done.stdout)["session"]["new_id"])


def claude_seventh_sweep(root: Path, out: Path) -> list[ca.Made]:
    client = require_client("claude")
    made: list[ca.Made] = []
    with FakeAnthropic() as fake:
        claude = ClaudeCode(client, root, project(root), fake)
        notes = str(claude.cwd / "notes.txt")
        sonnet = ("--model", "claude-sonnet-4-6")

        # 1. compactctl's new session of a session, continued by the client with two more turns.
        mark, before = len(ca.SERVED), ca._fake_calls(fake)
        log = claude.cwd / "build.log"
        log.write_text("".join(f"{n:04d} step ok, results stay in CSV\n" for n in range(800)))
        reads = (ToolCall("Read", {"file_path": notes}), ToolCall("Read", {"file_path": str(log)}))
        fake.enqueue(Reply(text="Reading.", tool_calls=reads), ca.ANSWER)
        first = ca._claude(claude, "What do the notes and the build log say?", *sonnet)
        # Four turns: structured (compact's default, the last 2 turns kept) summarizes the first two.
        for n, prompt in enumerate(("And the interface?", "Anything else?", "In one word?"), start=1):
            fake.enqueue(f"Answer {n}: the interface stays, in CSV.")
            ca._claude(claude, prompt, *sonnet, "--resume", first)
        split = len(ca.SERVED)
        new = compactctl_session(claude.env(), claude.cwd, first, "claude-code")
        fake.enqueue("After compactctl: CSV.", "Still CSV.")
        ca._claude(claude, "Still CSV?", *sonnet, "--resume", new)
        ca._claude(claude, "Sure?", *sonnet, "--resume", new)
        both = _made("compactctl's new session, continued", claude, fake, [first, new], out, mark, before)
        made.append(both)
        alone = ca.Made("claude-code: compactctl's new session alone, continued", "claude-code",
                        [p for p in both.paths if p.stem == new], 2, 0, resume=both.resume,
                        served=ca.SERVED[split:])  # fmt: skip
        made.append(alone)
        assert not fake.errors, fake.errors
        for m in made[:1]:
            m.notes.append(str(m.resume()))
    return made


def codex_seventh_sweep(root: Path, out: Path) -> list[ca.Made]:
    client = require_client("codex")
    made: list[ca.Made] = []
    with FakeResponses() as fake:
        codex = Codex(client, root, project(root), fake, model="gpt-5.5")

        # 1. compactctl's new session of a rollout, continued by the client with two more turns.
        known, mark, before = set(codex.rollouts()), len(ca.SERVED), ca._fake_calls(fake)
        fake.enqueue(Reply(thinking="List it.", tool_calls=(ToolCall("exec_command", {"cmd": "seq 1 3000"}),)),
                     "It counts to 3000.")  # fmt: skip
        codex.run("Print the numbers to 3000.")
        (rollout,) = set(codex.rollouts()) - known
        thread = ca._thread(rollout)
        for n, prompt in enumerate(("And the notes?", "Anything else?", "In one word?"), start=1):
            fake.enqueue(f"Answer {n}: CSV.")
            codex.run(prompt, resume=thread)
        split = len(ca.SERVED)
        new = compactctl_session(codex.env(), codex.cwd, thread, "codex")
        fake.enqueue("After compactctl: CSV.", "Still CSV.")
        codex.run("Still CSV?", resume=new)
        codex.run("Sure?", resume=new)
        after = ca._fake_calls(fake)
        folder = out / "codex-compactctl-new-session-continued"
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
        for path in sorted(set(codex.rollouts()) - known):
            shutil.copy(path, folder / path.name)
        paths = sorted(folder.glob("*.jsonl"))
        resume = ca._codex_resumer(codex, fake, [thread, new])
        made.append(ca.Made("codex: compactctl's new session, continued (both rollouts)", "codex", paths,
                            after[0] - before[0], after[1] - before[1], resume=resume, target=folder,
                            served=ca.SERVED[mark:]))  # fmt: skip
        alone = [p for p in paths if p.name.endswith(f"{new}.jsonl")]
        made.append(ca.Made("codex: compactctl's new session alone, continued", "codex", alone, 2, 0,
                            served=ca.SERVED[split:]))  # fmt: skip
        assert not fake.errors, fake.errors
        made[0].notes.append(str(made[0].resume()))
    return made


def gemini_seventh_sweep(root: Path, out: Path) -> list[ca.Made]:
    """Gemini CLI 0.61: compactctl's new session continued (no tool call: gemini-cli#29365 refuses a resumed chat
    holding one)."""
    client = require_client("gemini")
    made: list[ca.Made] = []
    with FakeGemini() as fake:
        gemini = Gemini(client, root, project(root), fake, {"model": {"name": "gemini-3.1-pro-preview"}})
        long = " ".join(f"Row {n} stays in CSV." for n in range(600))
        fake.enqueue(f"The notes: {long}", f"The interface: {long}", "Answer 3: CSV.", "Answer 4: CSV.")
        session = gemini.run("What do the notes say? From memory, at length.")
        for prompt in ("And the interface, at length?", "Anything else?", "In one word?"):
            gemini.run(prompt, resume=session)
        split = len(fake.served)
        new = compactctl_session(gemini.env(), gemini.cwd, session, "gemini")
        fake.enqueue("After compactctl: CSV.", "Still CSV.")
        gemini.run("Still CSV?", resume=new)
        gemini.run("Sure?", resume=new)
        assert not fake.errors, fake.errors
        folder = out / "gemini-compactctl-new-session-continued"
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
        for path in gemini.chats():
            shutil.copy(path, folder / path.name)
        given = [("google", m, usage, tools) for m, usage, tools in fake.served]
        calls = sum(1 for g in given if g[3])
        paths = sorted(folder.glob("*.json*"))
        made.append(ca.Made("gemini-cli: compactctl's new session, continued (both chats)", "gemini", paths, calls,
                            len(given) - calls, target=folder, served=given))  # fmt: skip
        alone = [folder / gemini.chat(new).name]
        made.append(ca.Made("gemini-cli: compactctl's new session alone, continued", "gemini", alone, 2, 0,
                            served=given[split:]))  # fmt: skip
        for m in made:
            m.notes.append(f"files: {[p.name for p in paths]}; not resumed by the audit (gemini-cli#29365)")
    return made


SWEEPS = {"claude7": claude_seventh_sweep, "codex7": codex_seventh_sweep, "gemini7": gemini_seventh_sweep}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--keep", type=Path)
    parser.add_argument("--only", choices=sorted(SWEEPS))
    args = parser.parse_args()
    from bench.client_shapes import review_and_eval
    from compactctl.strategies import STRATEGIES

    ca._serving()
    out = args.keep or Path(tempfile.mkdtemp(prefix="client-shapes7"))
    out.mkdir(parents=True, exist_ok=True)
    made: list[ca.Made] = []
    with tempfile.TemporaryDirectory(prefix="homes") as homes:
        for name, sweep in SWEEPS.items():
            if args.only in (None, name):
                made += sweep(Path(homes) / name, out)
    for session in made:
        print("\n".join(ca.audit(session, sorted(STRATEGIES)) + review_and_eval(session)), flush=True)


if __name__ == "__main__":
    main()
