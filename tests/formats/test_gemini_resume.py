"""The real Gemini CLI resumes what compactctl writes (``gemini --resume <id> -p`` against a loopback Gemini API).

The chat is recorded by Gemini CLI itself in the test run (tests/fakes/scenarios.py); each
case compacts or prunes it with compactctl, resumes the output, and checks the request the
client then sends: accepted by the API's rules (every call answered by as many responses,
roles user/model, no empty parts), no part twice, the summary first, then exactly the kept
tail, and smaller than the original's by about what ``report`` claimed.

Gemini CLI 0.61 cannot resume its own chat once it holds tool calls: it sends each response
twice (google-gemini/gemini-cli#29365) and the API refuses the request. The first test pins
that; the original's request, counted with each response once, is the baseline of the others.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import compactctl
from compactctl.strategies.summarizing import SUMMARY_HEADER
from compactctl.transcript import content_text
from tests.fakes.clients import Client, Gemini, require_client
from tests.fakes.gemini import COUNT_MISMATCH, FakeGemini
from tests.fakes.resume import (
    CASES,
    Compacted,
    Resumed,
    check_reduction,
    history,
    resume_gemini,
    run_compactctl,
    swapped,
)
from tests.fakes.scenarios import Recorded, gemini_session, project

GEMINI_CASES = {case: CASES[case] for case in ("compact", "summary", "trim-tools", "prune-stub", "prune-drop")}
SUMMARIZING = {"compact", "summary"}


@pytest.fixture(scope="module")
def gemini() -> Client:
    return require_client("gemini")


@pytest.fixture(scope="module")
def recorded(gemini: Client, tmp_path_factory: pytest.TempPathFactory) -> Recorded:
    home = tmp_path_factory.mktemp("gemini-home")
    with FakeGemini() as fake:
        session = gemini_session(Gemini(gemini, home, project(home), fake))
        assert not fake.errors
    return session


@pytest.fixture(scope="module")
def original(gemini: Client, recorded: Recorded) -> Resumed:
    return resume_gemini(gemini, recorded, recorded.path.read_bytes())


def _call_id(value: str) -> str:
    """A call id as sent: Gemini CLI records ``<tool>__<id>`` and sends ``<id>``."""
    return value.split("__", 1)[-1]


def _calls_and_responses(contents: list[dict[str, Any]]) -> list[tuple[str, str]]:
    """Model texts and call / response ids in request order: the shape of the conversation."""
    found = []
    for content in contents:
        texts = [p["text"] for p in content["parts"] if "text" in p and not p.get("thought")]
        if content["role"] == "model" and texts:
            found.append(("text", "\n".join(texts)))
        for part in content["parts"]:
            if "functionCall" in part:
                found.append(("call", _call_id(part["functionCall"]["id"])))
            if "functionResponse" in part:
                found.append(("result", _call_id(part["functionResponse"]["id"])))
    return found


def _expected(data: bytes) -> list[tuple[str, str]]:
    """:func:`expected_shape`, with the client's merging of consecutive model turns (``coalesceConsecutiveRoles``):
    after ``prune --mode drop`` two answers can follow each other with no call between."""
    _, transcripts = compactctl.load(data, "chat.jsonl")
    found: list[tuple[str, str]] = []
    previous = None
    for message in transcripts[0].messages:
        role = message.get("role")
        text = content_text(message)
        if role == "assistant" and text:
            if previous == "assistant" and found and found[-1][0] == "text":
                found[-1] = ("text", f"{found[-1][1]}\n{text}")
            else:
                found.append(("text", text))
        found.extend(("call", _call_id(call["id"])) for call in message.get("tool_calls") or [])
        if role == "tool":
            found.append(("result", _call_id(message["tool_call_id"])))
        previous = "assistant" if role == "assistant" and not message.get("tool_calls") else role
    return found


def _first_text(contents: list[dict[str, Any]]) -> str:
    """The first user text that is not the client's own context (``<session_context>``)."""
    for content in history(contents):
        for part in content["parts"]:
            if content["role"] == "user" and "text" in part:
                return str(part["text"])
    return ""


def check_resumed(source: bytes, compacted: Compacted, resumed: Resumed, original: Resumed, summarizes: bool) -> None:
    assert not resumed.rejected, resumed.rejected
    assert not resumed.repeated, f"parts sent twice: {resumed.repeated}"
    if summarizes:
        assert _first_text(resumed.conversation).startswith(SUMMARY_HEADER.split("{", 1)[0])
    assert _calls_and_responses(resumed.conversation) == _expected(compacted.data)
    check_reduction(source, compacted, resumed, original)


def test_the_clients_own_chat_resumes_with_each_tool_response_twice(original: Resumed, recorded: Recorded) -> None:
    # The client's bug, not compactctl's: if a new version fixes it, this fails, and the baseline can be the original.
    assert original.rejected == [COUNT_MISMATCH]
    responses = [p for c in original.conversation for p in c["parts"] if "functionResponse" in p]
    calls = [p for c in original.conversation for p in c["parts"] if "functionCall" in p]
    assert len(responses) == 2 * len(calls) and len(original.repeated) == len(calls)
    # Counted once each, it is exactly compactctl's reading of the file.
    once = _calls_and_responses(history(original.conversation))
    assert once == _expected(recorded.path.read_bytes())


@pytest.mark.parametrize("case", list(GEMINI_CASES))
def test_gemini_resumes_the_compacted_chat(
    case: str, gemini: Client, recorded: Recorded, original: Resumed, tmp_path: Path
) -> None:
    compacted = run_compactctl(recorded.path, tmp_path / "out.jsonl", GEMINI_CASES[case])
    resumed = resume_gemini(gemini, recorded, compacted.data)
    check_resumed(recorded.path.read_bytes(), compacted, resumed, original, case in SUMMARIZING)


@pytest.mark.parametrize("second", ["compact", "prune-stub"])
def test_gemini_resumes_a_chat_compacted_twice(
    second: str, gemini: Client, recorded: Recorded, original: Resumed, tmp_path: Path
) -> None:
    run_compactctl(recorded.path, tmp_path / "once.jsonl", CASES["summary"])
    twice = run_compactctl(tmp_path / "once.jsonl", tmp_path / "twice.jsonl", CASES[second])
    resumed = resume_gemini(gemini, recorded, twice.data)
    check_resumed(recorded.path.read_bytes(), twice, resumed, original, True)


@pytest.mark.parametrize("case", ["compact", "prune-stub"])
def test_a_compacted_chat_resumes_again_after_the_client_rewrote_it(
    case: str, gemini: Client, recorded: Recorded, tmp_path: Path
) -> None:
    # On resume the client appends its own checkpoint of the history it loaded (and copies any
    # toolCalls result back into it); what compactctl wrote must survive that, resume after resume.
    compacted = run_compactctl(recorded.path, tmp_path / "out.jsonl", GEMINI_CASES[case])
    with swapped(recorded.path, compacted.data), FakeGemini() as fake:
        Gemini(gemini, recorded.home, recorded.cwd, fake).run("A first question.", resume=recorded.session)
        rewritten = recorded.path.read_bytes()
    assert len(rewritten) > len(compacted.data)
    resumed = resume_gemini(gemini, recorded, rewritten, "A second question.")
    assert not resumed.rejected and not resumed.repeated
    assert _calls_and_responses(resumed.conversation) == _expected(rewritten)
    assert _calls_and_responses(resumed.conversation)[-1] == ("text", "Done.")


def test_clearing_the_thoughts_makes_the_clients_own_chat_resumable(
    gemini: Client, recorded: Recorded, original: Resumed, tmp_path: Path
) -> None:
    # The client does not send thoughts back, so this changes nothing it sends, but the chat is
    # written in the layout it resumes: the way out of its own bug for a chat too small to compact.
    compacted = run_compactctl(recorded.path, tmp_path / "out.jsonl", ["compact", "-s", "clear-thinking"])
    resumed = resume_gemini(gemini, recorded, compacted.data)
    assert original.rejected and not resumed.rejected and not resumed.repeated

    def unsigned(contents: list[dict[str, Any]]) -> list[Any]:
        # With thought parts to strip, the client signs the first call with its placeholder; without, not.
        return [[{k: v for k, v in p.items() if k != "thoughtSignature"} for p in c["parts"]] for c in contents]

    assert unsigned(history(resumed.conversation)) == unsigned(history(original.conversation))
