"""The real Claude Code resumes what compactctl writes (``claude -p --resume`` against a loopback fake).

The session is recorded by Claude Code itself in the test run (tests/fakes/scenarios.py);
each case compacts or prunes it with compactctl, resumes the output, and checks the
request Claude Code then sends: accepted by the API's rules, no block twice, the summary
first, then exactly the kept tail, and smaller than the original's by about what
``report`` claimed.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from compactctl.formats.claude_code import SUMMARY_INTRO
from tests.fakes.anthropic import FakeAnthropic
from tests.fakes.clients import ClaudeCode, Client, require_client
from tests.fakes.resume import (
    CASES,
    SUMMARIZING,
    Compacted,
    Resumed,
    check_reduction,
    cut_after_last_call,
    expected_shape,
    resume_claude_code,
    run_compactctl,
)
from tests.fakes.scenarios import Recorded, claude_code_compacts, claude_code_session, project


@pytest.fixture(scope="module")
def claude() -> Client:
    return require_client("claude")


@pytest.fixture(scope="module")
def recorded(claude: Client, tmp_path_factory: pytest.TempPathFactory) -> Recorded:
    home = tmp_path_factory.mktemp("claude-home")
    with FakeAnthropic() as fake:
        session = claude_code_session(ClaudeCode(claude, home, project(home), fake))
        assert not fake.errors
    return session


@pytest.fixture(scope="module")
def original(claude: Client, recorded: Recorded) -> Resumed:
    return resume_claude_code(claude, recorded, recorded.path.read_bytes())


# Claude Code's own stand-in reply (model "<synthetic>") where a resumed history would have two user turns in a row.
NO_RESPONSE = "No response requested."


def _calls_and_results(messages: list[dict[str, Any]]) -> list[tuple[str, str]]:
    """Assistant texts and tool_use / tool_result ids in request order: the shape of the conversation."""
    found = []
    for message in messages:
        content = message.get("content")
        for block in content if isinstance(content, list) else []:
            if block.get("type") == "tool_use":
                found.append(("call", block["id"]))
            elif block.get("type") == "tool_result":
                found.append(("result", block["tool_use_id"]))
            elif block.get("type") == "text" and message["role"] == "assistant" and block["text"] != NO_RESPONSE:
                found.append(("text", block["text"]))
    return found


def _first_user_text(messages: list[dict[str, Any]]) -> str:
    content = messages[0]["content"]
    return content if isinstance(content, str) else " ".join(b.get("text", "") for b in content)


def check_resumed(source: bytes, compacted: Compacted, resumed: Resumed, original: Resumed, summarizes: bool) -> None:
    assert not resumed.rejected, resumed.rejected
    assert not resumed.repeated, f"blocks sent twice: {resumed.repeated}"
    if summarizes:
        assert _first_user_text(resumed.conversation).startswith(SUMMARY_INTRO)
    assert _calls_and_results(resumed.conversation) == expected_shape(compacted.data)
    check_reduction(source, compacted, resumed, original)


def test_the_original_session_resumes_with_every_block_once(original: Resumed, recorded: Recorded) -> None:
    assert not original.rejected
    assert not original.repeated
    assert _calls_and_results(original.conversation) == expected_shape(recorded.path.read_bytes())


@pytest.mark.parametrize("case", list(CASES))
def test_claude_code_resumes_the_compacted_session(
    case: str, claude: Client, recorded: Recorded, original: Resumed, tmp_path: Path
) -> None:
    compacted = run_compactctl(recorded.path, tmp_path / "out.jsonl", CASES[case])
    resumed = resume_claude_code(claude, recorded, compacted.data)
    check_resumed(recorded.path.read_bytes(), compacted, resumed, original, case in SUMMARIZING)


@pytest.fixture(scope="module")
def producer_compacted(claude: Client, tmp_path_factory: pytest.TempPathFactory) -> Recorded:
    """The same session, then compacted by Claude Code's own /compact."""
    home = tmp_path_factory.mktemp("claude-compacted-home")
    with FakeAnthropic() as fake:
        client = ClaudeCode(claude, home, project(home), fake)
        session = claude_code_compacts(client, claude_code_session(client))
        assert not fake.errors
    return session


def test_a_session_claude_code_compacted_reads_as_claude_code_resumes_it(
    claude: Client, producer_compacted: Recorded
) -> None:
    data = producer_compacted.path.read_bytes()
    assert b'"subtype":"compact_boundary"' in data and b'"preservedSegment"' in data
    resumed = resume_claude_code(claude, producer_compacted, data)
    assert not resumed.rejected and not resumed.repeated
    assert _calls_and_results(resumed.conversation) == expected_shape(data)


@pytest.mark.parametrize("case", ["compact", "prune-stub"])
def test_claude_code_resumes_a_compactctl_compaction_of_its_own_compacted_session(
    case: str, claude: Client, producer_compacted: Recorded, tmp_path: Path
) -> None:
    data = producer_compacted.path.read_bytes()
    before = resume_claude_code(claude, producer_compacted, data)
    compacted = run_compactctl(producer_compacted.path, tmp_path / "out.jsonl", CASES[case])
    resumed = resume_claude_code(claude, producer_compacted, compacted.data)
    check_resumed(data, compacted, resumed, before, case in SUMMARIZING)


@pytest.mark.parametrize("second", ["compact", "prune-stub"])
def test_claude_code_resumes_a_session_compacted_twice(
    second: str, claude: Client, recorded: Recorded, original: Resumed, tmp_path: Path
) -> None:
    run_compactctl(recorded.path, tmp_path / "once.jsonl", CASES["summary"])
    twice = run_compactctl(tmp_path / "once.jsonl", tmp_path / "twice.jsonl", CASES[second])
    resumed = resume_claude_code(claude, recorded, twice.data)
    check_resumed(recorded.path.read_bytes(), twice, resumed, original, True)


@pytest.mark.parametrize("case", ["compact", "prune-stub"])
def test_a_session_whose_last_call_is_unanswered_still_resumes(
    case: str, claude: Client, recorded: Recorded, tmp_path: Path
) -> None:
    cut = cut_after_last_call(recorded.path.read_bytes(), "tool_use")
    source = tmp_path / "cut.jsonl"
    source.write_bytes(cut)
    before = resume_claude_code(claude, recorded, cut)
    compacted = run_compactctl(source, tmp_path / "out.jsonl", CASES[case])
    resumed = resume_claude_code(claude, recorded, compacted.data)
    assert not before.rejected and not resumed.rejected, resumed.rejected
    assert not resumed.repeated
    # The client answers the dangling call itself (an interrupted result), after and before compaction alike.
    assert _calls_and_results(resumed.conversation)[-1][0] == "result"
    assert _calls_and_results(before.conversation)[-1][0] == "result"
