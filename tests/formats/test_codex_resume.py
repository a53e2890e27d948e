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

from compactctl.formats.codex import SUMMARY_PREFIX
from tests.fakes.clients import Client, Codex, require_client
from tests.fakes.responses import FakeResponses
from tests.fakes.resume import (
    CASES,
    SUMMARIZING,
    Compacted,
    Resumed,
    check_reduction,
    cut_after_last_call,
    expected_shape,
    history,
    resume_codex,
    run_compactctl,
)
from tests.fakes.scenarios import Recorded, codex_compacts, codex_session, project


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
    """Assistant texts and call / output ids in request order: the shape of the conversation."""
    found = []
    for item in items:
        kind = item.get("type")
        if kind in ("function_call", "custom_tool_call"):
            found.append(("call", item["call_id"]))
        elif kind in ("function_call_output", "custom_tool_call_output"):
            found.append(("result", item["call_id"]))
        elif kind == "message" and item.get("role") == "assistant":
            found.append(("text", " ".join(part.get("text", "") for part in item["content"])))
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
    assert _calls_and_outputs(resumed.conversation) == expected_shape(compacted.data)
    check_reduction(source, compacted, resumed, original)


def test_the_original_rollout_resumes_with_every_item_once(original: Resumed, recorded: Recorded) -> None:
    assert not original.rejected
    assert not original.repeated
    assert _calls_and_outputs(original.conversation) == expected_shape(recorded.path.read_bytes())


@pytest.mark.parametrize("case", list(CASES))
def test_codex_resumes_the_compacted_rollout(
    case: str, codex: Client, recorded: Recorded, original: Resumed, tmp_path: Path
) -> None:
    compacted = run_compactctl(recorded.path, tmp_path / "out.jsonl", CASES[case])
    resumed = resume_codex(codex, recorded, compacted.data)
    check_resumed(recorded.path.read_bytes(), compacted, resumed, original, case in SUMMARIZING)


@pytest.fixture(scope="module")
def producer_compacted(codex: Client, tmp_path_factory: pytest.TempPathFactory) -> Recorded:
    """The same rollout, then compacted by Codex itself (remote compaction, as its openai provider does)."""
    home = tmp_path_factory.mktemp("codex-compacted-home")
    with FakeResponses() as fake:
        client = Codex(codex, home, project(home), fake)
        rollout = codex_compacts(client, codex_session(client))
        assert not fake.errors
    return rollout


def test_a_rollout_codex_compacted_reads_as_codex_resumes_it(codex: Client, producer_compacted: Recorded) -> None:
    data = producer_compacted.path.read_bytes()
    resumed = resume_codex(codex, producer_compacted, data)
    assert not resumed.rejected and not resumed.repeated
    assert _calls_and_outputs(resumed.conversation) == expected_shape(data)


@pytest.mark.parametrize("case", ["compact", "prune-stub"])
def test_codex_resumes_a_compactctl_compaction_of_its_own_compacted_rollout(
    case: str, codex: Client, producer_compacted: Recorded, tmp_path: Path
) -> None:
    data = producer_compacted.path.read_bytes()
    before = resume_codex(codex, producer_compacted, data)
    compacted = run_compactctl(producer_compacted.path, tmp_path / "out.jsonl", CASES[case])
    resumed = resume_codex(codex, producer_compacted, compacted.data)
    check_resumed(data, compacted, resumed, before, case in SUMMARIZING)


@pytest.mark.parametrize("second", ["compact", "prune-stub"])
def test_codex_resumes_a_rollout_compacted_twice(
    second: str, codex: Client, recorded: Recorded, original: Resumed, tmp_path: Path
) -> None:
    run_compactctl(recorded.path, tmp_path / "once.jsonl", CASES["summary"])
    twice = run_compactctl(tmp_path / "once.jsonl", tmp_path / "twice.jsonl", CASES[second])
    resumed = resume_codex(codex, recorded, twice.data)
    check_resumed(recorded.path.read_bytes(), twice, resumed, original, True)


@pytest.mark.parametrize("case", ["compact", "prune-stub"])
def test_a_rollout_whose_last_call_is_unanswered_still_resumes(
    case: str, codex: Client, recorded: Recorded, tmp_path: Path
) -> None:
    cut = cut_after_last_call(recorded.path.read_bytes(), "function_call")
    source = tmp_path / "cut.jsonl"
    source.write_bytes(cut)
    before = resume_codex(codex, recorded, cut)
    compacted = run_compactctl(source, tmp_path / "out.jsonl", CASES[case])
    resumed = resume_codex(codex, recorded, compacted.data)
    assert not before.rejected and not resumed.rejected, resumed.rejected
    assert not resumed.repeated
    # Codex answers the dangling call itself ("aborted"), after and before compaction alike.
    assert _calls_and_outputs(resumed.conversation)[-1][0] == "result"
    assert _calls_and_outputs(before.conversation)[-1][0] == "result"
