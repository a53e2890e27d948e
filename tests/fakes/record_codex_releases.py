"""Record one short session with each Codex release at a boundary of how the rollout is written (issue 20: real
users' ``~/.codex/sessions`` hold rollouts of many releases), against the loopback fake, with what it served
(``<fixture>.served.json``): the bill.

    CODEX_RELEASES=<dir> python -m tests.fakes.record_codex_releases [NAME ...]

``<dir>/npm-<version>/node_modules/.bin/codex`` is npm ``@openai/codex@<version>`` installed with
``npm install --prefix <dir>/npm-<version> @openai/codex@<version>``. NAME: a function's name below; all when none
is named. CI installs none of these releases: tests/recorded/test_codex_releases.py reads the fixtures.

The releases and what each writes differently:
- 0.45.0: ``shell`` (a command array), ``sandbox_policy: {mode}``, no ``model_provider`` or ``turn_id`` anywhere,
  ``token_count`` written before the response's items; compacts locally (a summarizing turn, ``compacted{message}``).
- 0.77.0: ``shell_command`` (a string), ``turn_context`` with ``effort``, ``truncation_policy``; compacts locally,
  ``compacted`` with ``replacement_history``.
  On the built-in openai provider it compacts remotely through the unary ``/v1/responses/compact`` endpoint
  (a ``compacted`` line, empty ``message``, ``replacement_history`` ending on the ``compaction`` item), mid-turn
  only, with no tools in the request.
- 0.110.0: ``exec_command``, on the built-in openai provider: ``/v1/responses/compact`` before the turn, no tools
  in the request (the last such release: 0.114.0); Codex's estimate of the compacted context after the line.
- 0.133.0: ``exec_command``, on the built-in openai provider: ``/v1/responses/compact`` before the turn, the
  tools sent too; ``session_meta.base_instructions``.
- 0.140.0: ``exec_command``, on the built-in openai provider: compacts remotely before the turn, a streamed
  request ending on a ``compaction_trigger`` item (as 0.171).
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.fakes.clients import Client, Codex
from tests.fakes.record_copies import RECORDED, _serving, record_named
from tests.fakes.record_fixtures import ANSWER
from tests.fakes.record_older_releases import OlderCodex
from tests.fakes.record_tiers import _kept
from tests.fakes.responses import FakeResponses
from tests.fakes.scenarios import project
from tests.fakes.server import Reply, ToolCall

PATCH = "*** Begin Patch\n*** Update File: app.py\n@@\n-    return a - b\n+    return a + b\n*** End Patch\n"
AFTER = "After the compaction: CSV, and app.py prints 5."
SUMMARY = "Summary: the notes say CSV; add() was fixed; app.py prints 5."


def release(version: str) -> Client:
    """npm ``@openai/codex@<version>`` under ``$CODEX_RELEASES``."""
    binary = Path(os.environ["CODEX_RELEASES"]) / f"npm-{version}" / "node_modules" / ".bin" / "codex"
    out = subprocess.run([str(binary), "--version"], capture_output=True, text=True, timeout=60).stdout
    assert out.split()[-1] == version, out
    return Client("codex", binary, version)


def releases_session(codex: Codex, command: Callable[[str], ToolCall], models: tuple[str, str],
                     compaction_turn: tuple[str | Reply, ...]) -> None:  # fmt: skip
    """A tool loop (two commands, reasoning before each, an answer); resumed: an ``apply_patch`` (a custom tool call)
    and an answer; resumed on the second model: a command and an answer; resumed with a low
    ``model_auto_compact_token_limit``: the client compacts before the turn (locally, a summarizing request the
    fake answers from its script; remotely, ``/v1/responses/compact``) and answers; resumed with the limit gone: a
    command and an answer."""
    fake = codex.fake
    fake.enqueue(
        Reply(thinking="Read the notes.", tool_calls=(command("cat notes.txt"),)),
        Reply(thinking="A longer log.", tool_calls=(command("seq 1 2000"),)),
        ANSWER,
    )
    codex.run("What do the notes say?")
    (rollout,) = codex.rollouts()
    thread = rollout.name.removesuffix(".jsonl")[-36:]
    fake.enqueue(Reply(thinking="Patch add().", tool_calls=(ToolCall("apply_patch", PATCH),)), "Fixed: add() adds.")
    codex.run("Fix add() in app.py.", resume=thread)
    codex.model = models[1]
    fake.enqueue(Reply(tool_calls=(command("python3 app.py"),)), "It prints 5.")
    codex.run("Run app.py.", resume=thread)
    # Below the context the last call sent, above what a compacted history sends: one compaction, and the turn
    # goes on (0.45 stops with an error where the compacted history is still over the limit).
    limit = _last_context(codex.rollouts()[-1]) - 400
    codex.extra_config = f"model_auto_compact_token_limit = {limit}\n"
    fake.enqueue(*compaction_turn)
    codex.run("Both answers again?", resume=thread)
    codex.extra_config = ""
    fake.enqueue(Reply(thinking="Count.", tool_calls=(command("wc -l notes.txt"),)), "Still CSV; 2 lines.")
    codex.run("Still CSV? Count the lines.", resume=thread)
    assert not fake.errors and not fake.script, (fake.errors, fake.script)


def _last_context(rollout: Path) -> int:
    """The tokens of the last call's context, from the rollout's last ``token_count``."""
    import json

    counts = [json.loads(line)["payload"] for line in rollout.read_text().splitlines() if '"token_count"' in line]
    return max(c["info"]["last_token_usage"]["total_tokens"] for c in counts[-2:] if c.get("info"))


def _recorded(version: str, client_class: type[Codex], command: Callable[[str], ToolCall], models: tuple[str, str],
              compaction_turn: tuple[str | Reply, ...], kind: str, root: Path) -> list[Path]:  # fmt: skip
    client = release(version)
    with _serving() as served, FakeResponses() as fake:
        codex = client_class(client, root, project(root), fake, model=models[0])
        releases_session(codex, command, models, compaction_turn)
        files = {path.name: path.read_bytes() for path in codex.rollouts()}
        return _kept(RECORDED / f"codex-{version}-{kind}-compacted", files, root, served)


class EnvBaseUrlCodex(Codex):
    """The built-in openai provider pointed at the fake by ``OPENAI_BASE_URL`` (0.77 reads no ``openai_base_url``
    in config.toml): on it 0.77 compacts remotely, through ``/v1/responses/compact``."""

    def env(self) -> dict[str, str]:
        return {**super().env(), "OPENAI_BASE_URL": f"{self.fake.url}/v1"}


def _shell(cmd: str) -> ToolCall:
    return ToolCall("shell", {"command": ["bash", "-lc", cmd]})


def _shell_command(cmd: str) -> ToolCall:
    return ToolCall("shell_command", {"command": cmd})


def _exec_command(cmd: str) -> ToolCall:
    return ToolCall("exec_command", {"cmd": cmd})


def codex_0_45_fixture(root: Path) -> list[Path]:
    """Codex 0.45.0 on gpt-5-codex then gpt-5, its own provider: local compaction."""
    # 0.45 checks the limit after a response: the turn's answer, the summarizing request, then the turn goes on.
    turn = ("Both: CSV, and 5.", SUMMARY, AFTER)
    return _recorded("0.45.0", OlderCodex, _shell, ("gpt-5-codex", "gpt-5"), turn, "local", root)


def codex_0_77_fixture(root: Path) -> list[Path]:
    """Codex 0.77.0 on gpt-5.1-codex-max then gpt-5.1, its own provider: local compaction."""
    # 0.77 compacts mid-turn only, where the response over the limit asked for a tool.
    turn = (Reply(thinking="Check.", tool_calls=(_shell_command("cat notes.txt"),)), SUMMARY, AFTER)
    return _recorded("0.77.0", OlderCodex, _shell_command, ("gpt-5.1-codex-max", "gpt-5.1"), turn, "local", root)


def codex_0_77_remote_fixture(root: Path) -> list[Path]:
    """Codex 0.77.0 as above on the built-in openai provider: remote compaction (``/v1/responses/compact``)."""
    turn = (Reply(thinking="Check.", tool_calls=(_shell_command("cat notes.txt"),)), AFTER)
    return _recorded("0.77.0", EnvBaseUrlCodex, _shell_command, ("gpt-5.1-codex-max", "gpt-5.1"), turn, "remote", root)


def codex_0_110_remote_fixture(root: Path) -> list[Path]:
    """Codex 0.110.0 on the built-in openai provider: ``/v1/responses/compact`` before the turn, still with no tools
    in its request (0.115.0 sends them); its estimate of the compacted context is written after the ``compacted``
    line (0.77's before it)."""
    turn = (Reply(thinking="Check.", tool_calls=(_exec_command("cat notes.txt"),)), AFTER)
    models = ("gpt-5.1-codex-max", "gpt-5.1")
    return _recorded("0.110.0", EnvBaseUrlCodex, _exec_command, models, turn, "remote", root)


def codex_0_133_fixture(root: Path) -> list[Path]:
    """Codex 0.133.0 on gpt-5.4 then gpt-5.5, the built-in openai provider: remote compaction before the turn
    through ``/v1/responses/compact``, which it sends the tools to (0.77 sends none)."""
    return _recorded("0.133.0", Codex, _exec_command, ("gpt-5.4", "gpt-5.5"), (AFTER,), "remote", root)


def codex_0_140_fixture(root: Path) -> list[Path]:
    """Codex 0.140.0 on gpt-5.4 then gpt-5.5, the built-in openai provider: remote compaction."""
    return _recorded("0.140.0", Codex, _exec_command, ("gpt-5.4", "gpt-5.5"), (AFTER,), "remote", root)


EVERY: tuple[Any, ...] = (codex_0_45_fixture, codex_0_77_fixture, codex_0_77_remote_fixture,
                         codex_0_110_remote_fixture, codex_0_133_fixture, codex_0_140_fixture)  # fmt: skip

if __name__ == "__main__":
    record_named(EVERY)
