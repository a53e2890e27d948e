"""Replay's simulated compactions keep what the producer's client owns, as ``compact``'s output does.

Codex's initial context (permissions, AGENTS.md, environment) is never folded by ``compact``, and a
compacted rollout that leaves it out has it written again when Codex resumes it (``model_input``). A
replayed compaction is the same compaction: every call after one still sends that context, on a
rollout replayed by its messages and on one replayed in the API's units from its usage.
"""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from compactctl.model_input import resumed_compaction
from tests.cli.conftest import Cli

ENVIRONMENT = "<environment_context>\n" + "".join(
    f"  <path_{n}>/srv/app/module_{n}.py</path_{n}>\n" for n in range(150)
)


def _rollout(path: Path, usage: bool, turns: int = 10) -> Path:
    """A Codex rollout whose initial context outweighs its short turns, with or without token counts."""

    def item(payload: dict, second: int) -> dict:
        return {"timestamp": f"2026-03-03T10:00:{second:02d}.000Z", "type": "response_item", "payload": payload}

    def message(role: str, text: str, second: int) -> dict:
        kind = "output_text" if role == "assistant" else "input_text"
        return item({"type": "message", "role": role, "content": [{"type": kind, "text": text}]}, second)

    meta = {"cwd": "/srv/app", "cli_version": "0.142.4", "base_instructions": {"text": "You are Codex."}}
    lines = [{"timestamp": "2026-03-03T10:00:00.000Z", "type": "session_meta", "payload": {"id": "s1", **meta}}]
    lines += [message("developer", "<permissions instructions>workspace-write</permissions instructions>", 0)]
    lines += [message("user", ENVIRONMENT + "</environment_context>", 0)]
    turn = {"turn_id": "t1", "cwd": "/srv/app", "model": "gpt-5-codex"}
    lines += [{"timestamp": "2026-03-03T10:00:00.500Z", "type": "turn_context", "payload": turn}]
    total = 0
    for n in range(turns):
        lines += [message("user", f"Step {n}: rename helper_{n} and run its test.", 1 + 2 * n)]
        lines += [message("assistant", f"Renamed helper_{n}; its test passes.", 2 + 2 * n)]
        if usage:
            last = {"input_tokens": 3200 + 40 * n, "cached_input_tokens": 0, "output_tokens": 12}
            last |= {"reasoning_output_tokens": 0, "total_tokens": 3212 + 40 * n}
            total += last["total_tokens"]
            info = {"total_token_usage": {**last, "total_tokens": total}, "last_token_usage": last}
            stamp = f"2026-03-03T10:00:{2 + 2 * n:02d}.500Z"
            lines += [{"timestamp": stamp, "type": "event_msg", "payload": {"type": "token_count", "info": info}}]
    path.write_bytes(b"".join(orjson.dumps(line) + b"\n" for line in lines))
    return path


# A threshold a few turns above the first call: by its messages about 2,600 tokens, in the usage's 3,200.
@pytest.mark.parametrize(("usage", "threshold"), [(False, "2700"), (True, "3300")], ids=["by-messages", "in-api-units"])
@pytest.mark.parametrize("strategy", [["window", "--keep-recent", "2"], ["summary"], ["rolling"]])
def test_a_replayed_compaction_still_sends_codex_s_initial_context(tmp_path, usage, threshold, strategy):
    source = _rollout(tmp_path / "rollout.jsonl", usage)
    replayed = Cli()("replay", source, "-t", threshold, "-s", *strategy, "--json", "-q")
    assert replayed.exit_code == 0, replayed.stderr
    none, compacted = orjson.loads(replayed.stdout)["files"][0]["settings"]
    assert compacted["compactions"] > 0
    # Every call sends the initial context (over 3,000 tokens; a turn is about 20): a compaction that
    # dropped it would leave calls of a few hundred tokens, the prefix and the recent turns.
    first = none["context_per_call"][0]
    assert min(compacted["context_per_call"]) > first - 100, (first, compacted["context_per_call"])


def test_the_client_s_context_a_compaction_left_out_is_sent_again_all_of_it_after_the_system_prompt():
    owned = lambda m: m["content"].startswith("<")  # noqa: E731
    system, rules, env, ask, answer = (
        {"role": "system", "content": "S"},
        {"role": "developer", "content": "<permissions>"},
        {"role": "user", "content": "<env>"},
        {"role": "user", "content": "ask"},
        {"role": "assistant", "content": "answer"},
    )
    before = [system, rules, env, ask, answer]
    assert resumed_compaction(before, [system, answer], owned) == [system, rules, env, answer]
    assert resumed_compaction(before, [system, rules, answer], owned) == [system, rules, env, answer]
    assert resumed_compaction(before, [system, rules, ask, env, answer], owned) == [system, rules, ask, env, answer]
    assert resumed_compaction(before, [answer], owned) == [rules, env, answer]
    assert resumed_compaction([system, ask], [system], owned) == [system]
