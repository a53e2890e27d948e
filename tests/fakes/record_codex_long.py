"""Record shapes of long real Codex 0.171.0 sessions, made by the real client against the loopback fake, with what the
fake served (``<fixture>.served.json``): the bill.

    PATH=<.ci/cache/npm/node_modules/.bin>:$PATH python -m tests.fakes.record_codex_long [NAME...]

- Stream errors: a 500 answered once, a response stream cut mid-way (the connection dropped after its output items, no
  usage: nothing billed), a ``response.failed`` carrying its usage (billed); Codex retries each. A 429 it does not
  retry: the turn ends (a refused turn).
- Parallel calls: two commands in one response, a goal (``create_goal``, ``update_goal``), an image (``-i``).
- Models resumed: ``codex exec -m MODEL resume --last`` onto another model, a turn killed mid-command, resumed.
- Web searches: the hosted ``web_search`` tool's calls, billed per search.

The fixtures go to tests/recorded/data/ (README.md there says what each holds).
"""

from __future__ import annotations

import os
import signal
import struct
import subprocess
import time
import zlib
from pathlib import Path

from tests.fakes.clients import Codex, _run, require_client
from tests.fakes.record_copies import RECORDED, _serving, record_named
from tests.fakes.record_fixtures import _version
from tests.fakes.record_tiers import _kept
from tests.fakes.responses import FakeResponses, web_search_call
from tests.fakes.scenarios import project
from tests.fakes.server import Reply, ToolCall


def _thread(codex: Codex) -> str:
    (first,) = codex.rollouts()
    return first.name.removesuffix(".jsonl")[-36:]


def codex_stream_errors_session(codex: Codex, fake: FakeResponses) -> None:
    """Two turns on gpt-5.5: the first's first request answered 500 (retried; 0.171 retries no 429: the turn ends),
    its retry's stream cut after its reasoning and command (retried whole), then the answer; the second's (resumed)
    answer failed with usage (retried). 6 requests: 3 answered whole and 1 failed with usage, 4 billed."""
    fake.broken.append("cut")
    fake.enqueue(Reply(thinking="Read it.", tool_calls=(ToolCall("exec_command", {"cmd": "cat notes.txt"}),)))
    fake.enqueue("The notes say results must stay in CSV.")
    fake.failures.append(500)
    codex.run("What do the notes say?")
    thread = _thread(codex)
    fake.broken.append("failed")
    fake.enqueue(Reply(thinking="From the notes.", text="Keep the results in CSV, as the notes say."))
    codex.run("So what format?", resume=thread)
    assert not fake.errors and not fake.script and not fake.broken and not fake.failures, fake.errors


def codex_stream_errors_fixture(root: Path) -> list[Path]:
    """``codex_stream_errors_session``, its rollout kept with what the fake served."""
    client = require_client("codex")
    with _serving() as served, FakeResponses() as fake:
        codex = Codex(client, root, project(root), fake, model="gpt-5.5")
        codex_stream_errors_session(codex, fake)
        files = {path.name: path.read_bytes() for path in codex.rollouts()}
        return _kept(RECORDED / f"codex-{_version(client.version)}-stream-errors", files, root, served)


def codex_refused_turn_session(codex: Codex, fake: FakeResponses) -> None:
    """A turn on gpt-5.5 (a command, an answer); a resumed turn whose request the fake refuses with 429, which 0.171
    does not retry (``codex exec`` exits 1, "exceeded retry limit, last status: 429"): the rollout keeps the prompt
    and no response; the user runs it again (an answer). 4 requests, 3 billed."""
    fake.enqueue(Reply(tool_calls=(ToolCall("exec_command", {"cmd": "cat notes.txt"}),)), "The notes ask for CSV.")
    codex.run("What do the notes say?")
    thread = _thread(codex)
    fake.failures.append(429)
    try:
        codex.run("What does app.py print?", resume=thread)
    except AssertionError as refused:
        assert "429" in str(refused), refused
    else:
        raise AssertionError("the refused turn exited 0")
    fake.enqueue("It prints -1: add() subtracts.")
    codex.run("Again: what does app.py print?", resume=thread)
    assert not fake.errors and not fake.script and not fake.failures, fake.errors


def codex_refused_turn_fixture(root: Path) -> list[Path]:
    """``codex_refused_turn_session``, its rollout kept with what the fake served."""
    client = require_client("codex")
    with _serving() as served, FakeResponses() as fake:
        codex = Codex(client, root, project(root), fake, model="gpt-5.5")
        codex_refused_turn_session(codex, fake)
        files = {path.name: path.read_bytes() for path in codex.rollouts()}
        return _kept(RECORDED / f"codex-{_version(client.version)}-refused-turn", files, root, served)


def png(width: int, height: int, rgb: tuple[int, int, int]) -> bytes:
    """A PNG of one colour (no imaging library here): signature, IHDR, one IDAT, IEND."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    rows = b"".join(b"\0" + bytes(rgb) * width for _ in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")


# 0.171's ``codex exec`` offers no ``update_plan`` (answered "unsupported call: update_plan"): its goals are the plan.
GOAL = {"objective": "Say what the picture, notes.txt and app.py hold."}


def codex_parallel_calls_session(codex: Codex, fake: FakeResponses) -> None:
    """``codex exec PROMPT -i shot.png`` on gpt-5.5: the model sets a goal (``create_goal``), runs two commands in one
    response (parallel tool calls), marks the goal complete (``update_goal``), then answers; a resumed turn (the image
    still in the history) answers at once. 5 responses."""
    (codex.cwd / "shot.png").write_bytes(png(48, 32, (200, 30, 30)))
    fake.enqueue(Reply(thinking="A goal first.", tool_calls=(ToolCall("create_goal", GOAL),)))
    both = (ToolCall("exec_command", {"cmd": "cat notes.txt"}), ToolCall("exec_command", {"cmd": "cat app.py"}))
    fake.enqueue(Reply(thinking="Both at once.", text="Reading both.", tool_calls=both))
    fake.enqueue(Reply(tool_calls=(ToolCall("update_goal", {"status": "complete"}),)))
    fake.enqueue("The picture is a red rectangle; the notes ask for CSV; app.py subtracts in add().")
    codex.configure()
    args = [str(codex.client.binary), "exec", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox"]
    _run([*args, "What is in the picture, the notes and app.py?", "-i", "shot.png"], codex.cwd, codex.env())
    fake.enqueue("It was red.")
    codex.run("What colour was the picture?", resume=_thread(codex))
    assert not fake.errors and not fake.script, fake.errors


def codex_parallel_calls_fixture(root: Path) -> list[Path]:
    """``codex_parallel_calls_session``, its rollout kept with what the fake served."""
    client = require_client("codex")
    with _serving() as served, FakeResponses() as fake:
        codex = Codex(client, root, project(root), fake, model="gpt-5.5")
        codex_parallel_calls_session(codex, fake)
        files = {path.name: path.read_bytes() for path in codex.rollouts()}
        first = fake.model_calls()[0]
        assert first.get("parallel_tool_calls") is True, first.get("parallel_tool_calls")
        return _kept(RECORDED / f"codex-{_version(client.version)}-parallel-calls", files, root, served)


def _exec(codex: Codex, prompt: str, *more: str) -> list[str]:
    """``codex exec`` as a user types it, ``more`` before the prompt (``-m MODEL``, ``resume --last``)."""
    codex.configure()
    args = [str(codex.client.binary), "exec", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox"]
    return [*args, *more, prompt]


def killed_once_written(codex: Codex, args: list[str], marker: bytes, settle: float) -> None:
    """Run ``args`` and kill it (the process group, as a closed terminal does) once the thread's rollout holds
    ``marker`` past what it held before, ``settle`` seconds later: a turn stopped mid-way. ``killed_while`` waits for a
    new rollout; a resumed thread writes on in its own."""
    (rollout,) = codex.rollouts()
    before = len(rollout.read_bytes())
    running = subprocess.Popen(
        args, cwd=codex.cwd, env=codex.env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        start_new_session=True,
    )  # fmt: skip
    try:
        for _ in range(120):
            time.sleep(1)
            if marker in rollout.read_bytes()[before:]:
                break
        time.sleep(settle)
    finally:
        os.killpg(running.pid, signal.SIGKILL)
        running.wait()


def codex_models_resumed_session(codex: Codex, fake: FakeResponses) -> None:
    """A thread on gpt-5.4 (a command, an answer); ``codex exec -m gpt-5.5 resume --last`` (a command, an answer);
    a turn on gpt-5.5 killed while its command (``sleep 60``) ran; ``resume --last`` again (an answer). 7 responses."""
    codex.model = "gpt-5.4"
    fake.enqueue(Reply(thinking="Read it.", tool_calls=(ToolCall("exec_command", {"cmd": "cat notes.txt"}),)),
                 "The notes ask for CSV.")  # fmt: skip
    _run(_exec(codex, "What do the notes say?"), codex.cwd, codex.env())
    fake.enqueue(Reply(tool_calls=(ToolCall("exec_command", {"cmd": "python3 app.py"}),)), "It prints -1.")
    _run(_exec(codex, "What does app.py print?", "-m", "gpt-5.5", "resume", "--last"), codex.cwd, codex.env())
    fake.enqueue(Reply(text="Waiting for it.", tool_calls=(ToolCall("exec_command", {"cmd": "sleep 60"}),)))
    killed_once_written(codex, _exec(codex, "Wait a minute.", "-m", "gpt-5.5", "resume", "--last"), b"sleep 60", 2)
    fake.enqueue("Stopped waiting: add() still subtracts.")
    _run(_exec(codex, "Where were we?", "-m", "gpt-5.5", "resume", "--last"), codex.cwd, codex.env())
    assert not fake.errors and not fake.script, fake.errors


def codex_models_resumed_fixture(root: Path) -> list[Path]:
    """``codex_models_resumed_session``, its rollout kept with what the fake served."""
    client = require_client("codex")
    with _serving() as served, FakeResponses() as fake:
        codex = Codex(client, root, project(root), fake)
        codex_models_resumed_session(codex, fake)
        files = {path.name: path.read_bytes() for path in codex.rollouts()}
        return _kept(RECORDED / f"codex-{_version(client.version)}-models-resumed", files, root, served)


def codex_web_searches_session(codex: Codex, fake: FakeResponses) -> None:
    """``web_search = "live"`` on gpt-5.5: a response that searches twice and runs a command, the answer; a resumed
    turn whose response searches once and answers. 3 responses, 3 searches."""
    searched = (web_search_call("csv rfc", 1), web_search_call("csv rfc 4180 quoting", 2))
    fake.enqueue(Reply(thinking="Search, then read.", blocks=searched,
                       tool_calls=(ToolCall("exec_command", {"cmd": "cat notes.txt"}),)))  # fmt: skip
    fake.enqueue("RFC 4180 defines CSV, which the notes ask for.")
    codex.run("Search the web for the CSV RFC and check the notes.")
    fake.enqueue(Reply(text="Fields with commas are quoted.", blocks=(web_search_call("csv quoting", 3),)))
    codex.run("And its quoting rules?", resume=_thread(codex))
    assert not fake.errors and not fake.script, fake.errors


def codex_web_searches_fixture(root: Path) -> list[Path]:
    """``codex_web_searches_session``, its rollout kept with what the fake served (each response's searches)."""
    client = require_client("codex")
    with _serving() as served, FakeResponses() as fake:
        codex = Codex(client, root, project(root), fake, model="gpt-5.5", extra_config='web_search = "live"\n')
        codex_web_searches_session(codex, fake)
        files = {path.name: path.read_bytes() for path in codex.rollouts()}
        return _kept(RECORDED / f"codex-{_version(client.version)}-web-searches", files, root, served)


if __name__ == "__main__":
    record_named(
        (codex_stream_errors_fixture, codex_refused_turn_fixture, codex_parallel_calls_fixture,
         codex_models_resumed_fixture, codex_web_searches_fixture)
    )  # fmt: skip
