"""Gemini CLI sessions recorded by the real client, compacted and pruned by compactctl, resumed by it.

    python bench/resume_gemini_sessions.py

There are no real Gemini CLI chats in the public transcripts, so the real client records
them here: each session works on a copy of this repository's own files with the client's
own tools (read_file, list_directory, search, run_shell_command, replace, write_file) against
the loopback Gemini fake of tests/fakes, the model's turns scripted. Then, as
bench/resume_real_sessions.py does for Claude Code and Codex: resume the original and each
compactctl output (compact, prune in both modes, compact twice) and print one row per resume:
whether the client resumed, whether the fake (which checks what the API checks) refused the
request, parts sent twice, request bytes and the history's tokens against the original's
(its duplicate responses counted once), and the reduction report claimed.
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.resume_real_sessions import VARIANTS, _claimed, _row
from tests.fakes.clients import Client, Gemini, find_client
from tests.fakes.gemini import FakeGemini
from tests.fakes.resume import Resumed, resume_gemini, run_compactctl
from tests.fakes.scenarios import Recorded
from tests.fakes.server import Reply, ToolCall

ROOT = Path(__file__).resolve().parents[1]


def _project(root: Path) -> Path:
    cwd = root / "project"
    shutil.copytree(ROOT / "compactctl", cwd / "compactctl", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "README.md", cwd / "README.md")
    shutil.copy(ROOT / "pyproject.toml", cwd / "pyproject.toml")
    return cwd


def _read(path: str) -> ToolCall:
    return ToolCall("read_file", {"file_path": path})


def _shell(command: str) -> ToolCall:
    return ToolCall("run_shell_command", {"command": command})


def explore(fake: FakeGemini) -> tuple[str, str]:
    """A question about the code: list, search, read several modules (some in parallel), answer."""
    fake.enqueue(Reply(thinking="Just a greeting.", text="Hello. What should I look at?", output_tokens=20))
    fake.enqueue(
        Reply(
            thinking="Start from the README and the package layout.",
            text="Reading the README and listing the package.",
            tool_calls=(_read("README.md"), ToolCall("list_directory", {"dir_path": "compactctl/formats"})),
            output_tokens=90,
        ),
        Reply(tool_calls=(ToolCall("grep_search", {"pattern": "def write\\("}),), output_tokens=30),
        Reply(
            text="Reading the Claude Code and Codex writers.",
            tool_calls=(_read("compactctl/formats/claude_code.py"), _read("compactctl/formats/codex.py")),
        ),
        Reply(thinking="The registry decides detection order.", tool_calls=(_read("compactctl/formats/__init__.py"),)),
        Reply(tool_calls=(_shell("wc -l compactctl/formats/*.py"),)),
        Reply(tool_calls=(_read("compactctl/formats/claude_code.py"),)),  # read again: prune has one to drop
        Reply(
            thinking="Enough to answer.",
            text="Each format is one module with NAME, detect, read and write, registered in FORMATS; the "
            "writers keep every old record and append what the producer itself writes after compacting.",
            output_tokens=80,
        ),
    )
    return "Hi.", "How do the format writers in compactctl/formats work? Look at the code."


def long_logs(fake: FakeGemini) -> tuple[str, str]:
    """A debugging run: commands with long outputs, run again after an edit, a new file written."""
    fake.enqueue(Reply(text="Sure, send the task.", output_tokens=10))
    fake.enqueue(
        Reply(
            thinking="Look at the token counter first, and the size of the sources.",
            tool_calls=(_read("compactctl/tokens.py"), _shell("find compactctl -name '*.py' | xargs wc -c")),
            output_tokens=60,
        ),
        Reply(text="A long listing first.", tool_calls=(_shell("seq 1 6000"),)),
        Reply(tool_calls=(_shell("grep -rn 'def ' compactctl | head -400"),)),
        Reply(
            tool_calls=(
                ToolCall(
                    "replace",
                    {
                        "file_path": "compactctl/tokens.py",
                        "instruction": "Note the module's purpose.",
                        "old_string": '"""',
                        "new_string": '"""(edited) ',
                    },
                ),
            )
        ),
        Reply(tool_calls=(_shell("seq 1 6000"),)),
        Reply(tool_calls=(_shell("grep -rn 'def ' compactctl | head -400"),)),
        Reply(tool_calls=(ToolCall("write_file", {"file_path": "NOTES.md", "content": "See tokens.py.\n"}),)),
        Reply(tool_calls=(_read("compactctl/tokens.py"),)),
        Reply(thinking="Done.", text="Edited tokens.py and wrote NOTES.md; outputs unchanged.", output_tokens=30),
    )
    return "I have a task for you.", "Check the token counter, run the long listings, note it in NOTES.md."


def short(fake: FakeGemini) -> tuple[str, str]:
    """A short exchange: one read, one command, an answer."""
    fake.enqueue(Reply(text="Ready.", output_tokens=5))
    fake.enqueue(
        Reply(thinking="Read the config.", tool_calls=(_read("pyproject.toml"),), output_tokens=20),
        Reply(tool_calls=(_shell("python3 --version"),)),
        Reply(text="It needs Python 3.11 and declares its extras in pyproject.toml.", output_tokens=25),
    )
    return "Ready?", "Which Python does this project need?"


SESSIONS: dict[str, Callable[[FakeGemini], tuple[str, str]]] = {
    "explore-code": explore,
    "long-logs": long_logs,
    "short": short,
}


def record(client: Client, root: Path, script: Callable[[FakeGemini], tuple[str, str]]) -> Recorded:
    with FakeGemini() as fake:
        gemini = Gemini(client, root, _project(root), fake)
        first, second = script(fake)
        session = gemini.run(first)
        gemini.run(second, resume=session)  # no tool call yet, so the client resumes its own chat
        assert not fake.script, f"unused replies: {list(fake.script)[:2]}; refused: {fake.errors}"
        (chat,) = [p for p in gemini.chats() if b'"toolCalls"' in p.read_bytes()]
        return Recorded(gemini.home, gemini.cwd, session, chat)


def _responses_once(contents: list[dict]) -> list[dict]:
    """The original's request as it should have been: each functionResponse once (the client sends two)."""
    seen: set[str] = set()
    out = []
    for content in contents:
        parts = []
        for part in content.get("parts") or []:
            response = part.get("functionResponse")
            if isinstance(response, dict):
                if response.get("id") in seen:
                    continue
                seen.add(response.get("id"))
            parts.append(part)
        out.append({**content, "parts": parts})
    return out


def main() -> None:
    client = find_client("gemini")
    if client is None:
        sys.exit("gemini not installed (run .ci/run, or npm install the version in .ci/clients.txt)")
    print(f"Gemini CLI {client.version}")
    print("| session | variant | resumed | repeated | request (vs original) | history tokens sent | report |")
    print("|---|---|---|---|---|---|---|")
    for name, script in SESSIONS.items():
        with tempfile.TemporaryDirectory(prefix="resume-gemini-") as work:
            recorded = record(client, Path(work) / "home", script)
            size = recorded.path.stat().st_size
            original: Resumed = resume_gemini(client, recorded, recorded.path.read_bytes())
            label = f"{name} ({size / 1e3:.0f} kB chat)"
            print(_row(label, "original", original, None, None), flush=True)
            once = len(json.dumps(_responses_once(original.conversation), ensure_ascii=False).encode())
            print(f"| {label} | original, each response once | | | {once / 1e3:.1f} kB | | |", flush=True)
            for variant, steps in VARIANTS.items():
                current = recorded.path
                for n, args in enumerate(steps):
                    out = Path(work) / f"{variant.replace(' ', '_')}-{n}.jsonl"
                    compacted = run_compactctl(current, out, args)
                    current = out
                claimed = _claimed(recorded.path.read_bytes(), compacted.data)
                resumed = resume_gemini(client, recorded, compacted.data)
                print(_row(label, variant, resumed, original, claimed), flush=True)


if __name__ == "__main__":
    main()
