"""Record the fixtures of calls billed at other than the standard list price, made by the real clients against
the loopback fakes, with what the fakes served (``<fixture>.served.json``: each response's model, usage and the
tier the API answered): the bill.

    PATH=<.ci/cache/npm/node_modules/.bin>:$PATH python -m tests.fakes.record_tiers [NAME...]

Codex 0.171.0 with ``service_tier`` set in its config ("fast", which it sends as "priority", then "flex", then
none); Claude Code 2.1.332 answered by a fake that reports, as the API does for the requests that asked for them,
fast mode (``usage.speed``) and US-only inference (``usage.inference_geo``). The fixtures go to
tests/recorded/data/ (README.md there says what each holds).
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

from tests.fakes.anthropic import FakeAnthropic
from tests.fakes.clients import ClaudeCode, Codex, require_client
from tests.fakes.record_copies import RECORDED, _serving, record_named
from tests.fakes.record_fixtures import ANSWER, _claude_print, _version
from tests.fakes.responses import FakeResponses
from tests.fakes.scenarios import project
from tests.fakes.server import Reply, ToolCall


def _kept(folder: Path, files: dict[str, bytes], root: Path, served: list[dict]) -> list[Path]:
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    written = []
    for name, data in files.items():
        target = folder / name
        target.parent.mkdir(parents=True, exist_ok=True)  # a name may keep the client's folder (``<session>/x``)
        target.write_bytes(data.replace(str(root).encode(), b"/home/user"))
        written.append(target)
    (folder.parent / f"{folder.name}.served.json").write_text(json.dumps(served, indent=1) + "\n")
    return written


def codex_service_tiers_fixture(root: Path) -> list[Path]:
    """A thread on gpt-5.5 with ``service_tier = "fast"`` in the config, two turns of a command and an answer
    (the second resumed with "flex" in the config: the thread keeps the tier it started with, "priority" as
    0.171 sends "fast"), and a thread started with "flex", one such turn."""
    client = require_client("codex")
    with _serving() as served, FakeResponses() as fake:
        codex = Codex(client, root, project(root), fake, model="gpt-5.5")
        thread = None
        for n, (tier, resume) in enumerate([("fast", False), ("flex", True), ("flex", False)]):
            codex.extra_config = f'service_tier = "{tier}"\n'
            fake.enqueue(Reply(tool_calls=(ToolCall("exec_command", {"cmd": f"seq 1 {100 + 50 * n}"}),)),
                         f"Step {n} counted: " + "ok " * 30)  # fmt: skip
            codex.run(f"Step {n}: count.", resume=thread if resume else None)
            if thread is None:
                (rollout,) = codex.rollouts()
                found = re.search(r"([0-9a-f-]{36})\.jsonl$", rollout.name)
                assert found
                thread = found.group(1)
        assert not fake.errors and not fake.script, fake.errors
        files = {path.name: path.read_bytes() for path in codex.rollouts()}
        return _kept(RECORDED / f"codex-{_version(client.version)}-service-tiers", files, root, served)


def codex_compacted_priority_fixture(root: Path) -> list[Path]:
    """A thread on gpt-5.5 at "priority" (``service_tier = "fast"``), multi-agent on, compacting on a low limit
    (``model_auto_compact_token_limit = 1000``): a subagent spawned to read the notes (both compact), a resumed turn
    with a command (it compacts before and after), then ``codex exec fork`` and a turn (the fork compacts first).
    Every call, the compaction calls too, served at priority."""
    from tests.fakes.record_subagents import MULTI_AGENT, codex_subagent_session

    client = require_client("codex")
    with _serving() as served, FakeResponses() as fake:
        codex = Codex(client, root, project(root), fake, model="gpt-5.5")
        codex.extra_config = 'service_tier = "fast"\nmodel_auto_compact_token_limit = 1000\n' + MULTI_AGENT
        codex_subagent_session(codex, fake)
        first = min(codex.rollouts(), key=lambda p: p.name)  # UUIDv7 names: the root's thread is the first
        found = re.search(r"([0-9a-f-]{36})\.jsonl$", first.name)
        assert found
        fake.enqueue(Reply(tool_calls=(ToolCall("exec_command", {"cmd": "python3 app.py"}),)), "It prints -1.")
        codex.run("Run app.py.", resume=found.group(1))
        fake.enqueue("Forked: CSV.")
        codex.fork(found.group(1), "Anything else?")
        assert not fake.errors and not fake.script, fake.errors
        files = {path.name: path.read_bytes() for path in codex.rollouts()}
        assert sum(b'"type":"compacted"' in data.replace(b" ", b"") for data in files.values()) == 3
        return _kept(RECORDED / f"codex-{_version(client.version)}-compacted-priority", files, root, served)


FAST = (("speed", "fast"),)
US = (("inference_geo", "us"),)


def claude_code_fast_and_us_fixture(root: Path) -> list[Path]:
    """Three turns on claude-opus-5, a Read and an answer each: the first answered in fast mode, the second
    with US-only inference, the third standard (the fake reports ``speed`` and ``inference_geo`` in the
    usage, as the API does for a request that asked for them)."""
    client = require_client("claude")
    with _serving() as served, FakeAnthropic() as fake:
        claude = ClaudeCode(client, root, project(root), fake)
        notes = str(claude.cwd / "notes.txt")
        session = None
        for n, usage in enumerate([FAST, US, ()]):
            fake.enqueue(
                Reply(text=f"Reading {n}.", tool_calls=(ToolCall("Read", {"file_path": notes}),), usage=usage),
                Reply(text=f"{ANSWER} ({n})", usage=usage),
            )
            resume = ("--resume", session) if session else ()
            session = _claude_print(claude, f"Turn {n}: what do the notes say?", "--model", "claude-opus-5", *resume)
        assert session and not fake.errors and not fake.script, fake.errors
        files = {f"{session}.jsonl": claude.session_file(session).read_bytes()}
        return _kept(RECORDED / f"claude-code-{_version(client.version)}-fast-and-us", files, root, served)


if __name__ == "__main__":
    record_named((codex_service_tiers_fixture, claude_code_fast_and_us_fixture, codex_compacted_priority_fixture))
