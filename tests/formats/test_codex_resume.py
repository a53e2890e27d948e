"""The real Codex resumes what compactctl writes (``codex exec resume`` against a loopback Responses fake).

The rollout is recorded by Codex itself in the test run (tests/fakes/scenarios.py); each
case compacts or prunes it with compactctl, resumes the output, and checks the request
Codex then sends: accepted by the API's rules (every call answered, no duplicate item),
no item twice, the summary first, then exactly the kept tail, and smaller than the
original's by about what ``report`` claimed.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import compactctl
from compactctl.formats.codex import SUMMARY_PREFIX
from tests.fakes.clients import Client, Codex, require_client
from tests.fakes.responses import FakeResponses
from tests.fakes.resume import (
    CASES,
    SUMMARIZING,
    Compacted,
    Resumed,
    history,
    resume_codex,
    claimed_reduction,
    run_compactctl,
    sent_reduction,
)
from tests.fakes.scenarios import Recorded, codex_session, project


@pytest.fixture(scope="module")
def codex() -> Client:
    return require_client("codex")


@pytest.fixture(scope="module")
def recorded(codex: Client, tmp_path_factory: pytest.TempPathFactory) -> Recorded:
    home = tmp_path_factory.mktemp("codex-home")
    with FakeResponses() as fake:
        session = codex_session(Codex(codex, home, project(home), fake))
        assert not fake.errors
    return session


@pytest.fixture(scope="module")
def original(codex: Client, recorded: Recorded) -> Resumed:
    return resume_codex(codex, recorded, recorded.path.read_bytes())


def _calls_and_outputs(items: list[dict[str, Any]]) -> list[tuple[str, str]]:
    found = []
    for item in items:
        kind = item.get("type")
        if kind in ("function_call", "custom_tool_call"):
            found.append(("call", item["call_id"]))
        elif kind in ("function_call_output", "custom_tool_call_output"):
            found.append(("output", item["call_id"]))
    return found


def _expected_tail(data: bytes) -> list[tuple[str, str]]:
    _, transcripts, _ = compactctl.load(data, "rollout.jsonl")
    found = []
    for message in transcripts[0].messages:
        found.extend(("call", c["id"]) for c in message.get("tool_calls") or [])
        if message.get("role") == "tool":
            found.append(("output", message["tool_call_id"]))
    return found


def _first_request_text(items: list[Any]) -> str:
    """The first user message that is not harness context (``<environment_context>``, AGENTS.md, ...)."""
    for item in items:
        if item.get("role") == "user":
            text = " ".join(str(part.get("text", "")) for part in item["content"])
            if not text.startswith("<"):
                return text
    return ""


def check_resumed(source: bytes, compacted: Compacted, resumed: Resumed, original: Resumed, summarizes: bool) -> None:
    assert not resumed.rejected, resumed.rejected
    assert not resumed.repeated, f"items sent twice: {resumed.repeated}"
    if summarizes:
        assert _first_request_text(history(resumed.conversation)).startswith(SUMMARY_PREFIX)
    assert _calls_and_outputs(resumed.conversation) == _expected_tail(compacted.data)
    assert resumed.size < original.size
    # What the client regenerates on resume (its context, reminders) is left out of both sides.
    claimed = claimed_reduction(source, compacted.data)
    sent = sent_reduction(original, resumed)
    print(f"{resumed.size} vs {original.size} bytes sent; history tokens sent -{sent:.1%}, report -{claimed:.1%}")
    assert sent == pytest.approx(claimed, abs=0.03)


def test_the_original_rollout_resumes_with_every_item_once(original: Resumed, recorded: Recorded) -> None:
    assert not original.rejected
    assert not original.repeated
    assert _calls_and_outputs(original.conversation) == _expected_tail(recorded.path.read_bytes())


@pytest.mark.parametrize("case", list(CASES))
def test_codex_resumes_the_compacted_rollout(
    case: str, codex: Client, recorded: Recorded, original: Resumed, tmp_path: Path
) -> None:
    compacted = run_compactctl(recorded.path, tmp_path / "out.jsonl", CASES[case])
    resumed = resume_codex(codex, recorded, compacted.data)
    check_resumed(recorded.path.read_bytes(), compacted, resumed, original, case in SUMMARIZING)
