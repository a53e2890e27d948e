"""The real Claude Code, Codex and Gemini CLI resume what compactctl writes, each against its loopback API fake.

Each client records a session itself in the test run (tests/fakes/scenarios.py); each case
compacts or prunes it with compactctl, resumes the output with the client (``claude -p
--resume``, ``codex exec resume``, ``gemini --resume <id> -p``), and checks the request the
client then sends: accepted by the API's rules (every call answered, no duplicate block, item
or part), nothing sent twice, the summary first, then exactly the kept tail, and smaller than
the original's by about what ``report`` claimed.

The checks every client shares are one test parametrized over a :class:`Producer`, which holds
what differs: how its request spells the conversation and where the summary shows. What only
one client has (Claude Code's compact boundary, Gemini CLI's own resume bug and its rewrite of
a resumed chat) has its own tests at the end.

Gemini CLI 0.61 cannot resume its own chat once it holds tool calls: it sends each response
twice (google-gemini/gemini-cli#29365) and the API refuses the request. A Gemini test pins
that; the original's request, counted with each response once, is the baseline of the others.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

import compactctl
from compactctl.formats.claude_code import SUMMARY_INTRO
from compactctl.formats.codex import SUMMARY_PREFIX
from compactctl.strategies.summarizing import SUMMARY_HEADER
from compactctl.transcript import content_text
from tests.fakes.anthropic import FakeAnthropic
from tests.fakes.clients import ClaudeCode, Client, Codex, Gemini, require_client
from tests.fakes.gemini import COUNT_MISMATCH, FakeGemini
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
    resume_claude_code,
    resume_codex,
    resume_gemini,
    run_compactctl,
    swapped,
)
from tests.fakes.scenarios import (
    Recorded,
    claude_code_compacts,
    claude_code_session,
    codex_compacts,
    codex_session,
    gemini_session,
    project,
)
from tests.helpers import SAMPLES_FOLDER

pytestmark = pytest.mark.clients

Shape = list[tuple[str, str]]  # ("text", ...), ("call", id), ("result", id) in request order

# --- Claude Code: Anthropic messages of content blocks ---------------------------------------

# Claude Code's own stand-in reply (model "<synthetic>") where a resumed history would have two user turns in a row.
NO_RESPONSE = "No response requested."


def claude_code_shape(messages: list[dict[str, Any]]) -> Shape:
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


def claude_code_first_text(messages: list[dict[str, Any]]) -> str:
    content = messages[0]["content"]
    return content if isinstance(content, str) else " ".join(b.get("text", "") for b in content)


# --- Codex: Responses input items ------------------------------------------------------------


def codex_shape(items: list[dict[str, Any]]) -> Shape:
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


def codex_first_text(items: list[Any]) -> str:
    """The first user message that is not harness context (``<environment_context>``, AGENTS.md, ...)."""
    for item in history(items):
        if item.get("role") == "user":
            text = " ".join(str(part.get("text", "")) for part in item["content"])
            if not text.startswith("<"):
                return text
    return ""


# --- Gemini CLI: Gemini API contents of parts ------------------------------------------------


def _gemini_call_id(value: str) -> str:
    """A call id as sent: Gemini CLI records ``<tool>__<id>`` and sends ``<id>``."""
    return value.split("__", 1)[-1]


def gemini_shape(contents: list[dict[str, Any]]) -> Shape:
    """Model texts and call / response ids in request order: the shape of the conversation."""
    found = []
    for content in contents:
        texts = [p["text"] for p in content["parts"] if "text" in p and not p.get("thought")]
        if content["role"] == "model" and texts:
            found.append(("text", "\n".join(texts)))
        for part in content["parts"]:
            if "functionCall" in part:
                found.append(("call", _gemini_call_id(part["functionCall"]["id"])))
            if "functionResponse" in part:
                found.append(("result", _gemini_call_id(part["functionResponse"]["id"])))
    return found


def gemini_expected_shape(data: bytes) -> Shape:
    """:func:`expected_shape`, with the client's merging of consecutive model turns (``coalesceConsecutiveRoles``):
    after ``prune --mode drop`` two answers can follow each other with no call between."""
    _, transcripts = compactctl.load(data, "chat.jsonl")
    found: Shape = []
    previous = None
    for message in transcripts[0].messages:
        role = message.get("role")
        text = content_text(message)
        if role == "assistant" and text:
            if previous == "assistant" and found and found[-1][0] == "text":
                found[-1] = ("text", f"{found[-1][1]}\n{text}")
            else:
                found.append(("text", text))
        found.extend(("call", _gemini_call_id(call["id"])) for call in message.get("tool_calls") or [])
        if role == "tool":
            found.append(("result", _gemini_call_id(message["tool_call_id"])))
        previous = "assistant" if role == "assistant" and not message.get("tool_calls") else role
    return found


def gemini_first_text(contents: list[dict[str, Any]]) -> str:
    """The first user text that is not the client's own context (``<session_context>``)."""
    for content in history(contents):
        for part in content["parts"]:
            if content["role"] == "user" and "text" in part:
                return str(part["text"])
    return ""


# --- what differs between the clients ----------------------------------------------------------


@dataclass(frozen=True)
class Producer:
    """A real client that writes sessions and resumes them, and how to read the request it sends."""

    command: str  # its executable: "claude", "codex", "gemini"
    driver: Any  # ClaudeCode, Codex or Gemini (tests/fakes/clients.py)
    fake: Any  # the loopback API it talks to
    session: Callable[[Any], Recorded]  # the scenario it records (tests/fakes/scenarios.py)
    resume: Callable[[Client, Recorded, bytes], Resumed]
    shape: Callable[[list[dict[str, Any]]], Shape]  # the conversation's shape, as sent
    expected: Callable[[bytes], Shape]  # the shape a resume of this file must send
    first_text: Callable[[list[dict[str, Any]]], str]  # the first user text sent: the summary, if any
    summary_start: str  # how compactctl's summary begins in this format
    unit: str  # what its request is made of ("blocks", "items", "parts"): named when one is sent twice
    cases: tuple[str, ...]  # the CASES it resumes
    compacts: Callable[[Any, Recorded], Recorded] | None = None  # its own compaction, where it has one
    compaction_marks: tuple[bytes, ...] = ()  # what its own compaction leaves in the file
    call_type: str = ""  # the record type of a tool call in its file ("": its file is not cut mid-turn here)

    def __str__(self) -> str:
        return self.command


CLAUDE_CODE = Producer(
    "claude",
    ClaudeCode,
    FakeAnthropic,
    claude_code_session,
    resume_claude_code,
    claude_code_shape,
    expected_shape,
    claude_code_first_text,
    SUMMARY_INTRO,
    "blocks",
    tuple(CASES),
    claude_code_compacts,
    (b'"subtype":"compact_boundary"', b'"preservedSegment"'),  # /compact's boundary and the segment it keeps
    "tool_use",
)
CODEX = Producer(
    "codex",
    Codex,
    FakeResponses,
    codex_session,
    resume_codex,
    codex_shape,
    expected_shape,
    codex_first_text,
    SUMMARY_PREFIX,
    "items",
    tuple(CASES),
    codex_compacts,
    (b'"type":"compacted"',),  # the remote compaction's replacement history
    "function_call",
)
GEMINI_CLI = Producer(
    "gemini",
    Gemini,
    FakeGemini,
    gemini_session,
    resume_gemini,
    gemini_shape,
    gemini_expected_shape,
    gemini_first_text,
    SUMMARY_HEADER.split("{", 1)[0],
    "parts",
    ("compact", "summary", "trim-tools", "prune-stub", "prune-drop"),
)
PRODUCERS = (CLAUDE_CODE, CODEX, GEMINI_CLI)
COMPACTING = tuple(p for p in PRODUCERS if p.compacts)  # Claude Code's /compact, Codex's remote compaction
CUT_MID_TURN = tuple(p for p in PRODUCERS if p.call_type)


def over(producers: tuple[Producer, ...], *cases: str) -> pytest.MarkDecorator:
    """Parametrize a test over the producers, and over ``cases`` if given."""
    if not cases:
        return pytest.mark.parametrize("producer", producers, ids=str)
    return over_cases([(p, case) for p in producers for case in cases])


def over_cases(pairs: list[tuple[Producer, str]]) -> pytest.MarkDecorator:
    return pytest.mark.parametrize(("producer", "case"), pairs, ids=[f"{p}-{case}" for p, case in pairs])


class Sessions:
    """Each client's recorded session, its resumed original and its own compaction, made once a module.

    The tests ask for them in any order and any client, so they are made where first asked for;
    a failure is kept and raised again to every test that asks, as a failing fixture would be.
    """

    def __init__(self, tmp_path_factory: pytest.TempPathFactory) -> None:
        self.tmp = tmp_path_factory
        self.made: dict[tuple[str, str], Any] = {}

    def _once(self, key: tuple[str, str], make: Callable[[], Any]) -> Any:
        if key not in self.made:
            try:
                self.made[key] = make()
            except Exception as error:  # pytest's skips and failures are BaseException: not kept
                self.made[key] = error
        if isinstance(self.made[key], Exception):
            raise self.made[key]
        return self.made[key]

    def client(self, producer: Producer) -> Client:
        return require_client(producer.command)

    def _record(self, producer: Producer, compacted: bool) -> Recorded:
        client = self.client(producer)
        home = self.tmp.mktemp(f"{producer}-compacted-home" if compacted else f"{producer}-home")
        with producer.fake() as fake:
            driver = producer.driver(client, home, project(home), fake)
            session = producer.session(driver)
            if compacted:
                assert producer.compacts
                session = producer.compacts(driver, session)
            assert not fake.errors
        return session

    def recorded(self, producer: Producer) -> Recorded:
        return self._once((producer.command, "recorded"), lambda: self._record(producer, compacted=False))

    def original(self, producer: Producer) -> Resumed:
        """The recorded session resumed as the client wrote it."""

        def resume() -> Resumed:
            recorded = self.recorded(producer)
            return producer.resume(self.client(producer), recorded, recorded.path.read_bytes())

        return self._once((producer.command, "original"), resume)

    def producer_compacted(self, producer: Producer) -> Recorded:
        """The same session, then compacted by the client itself."""
        return self._once((producer.command, "compacted"), lambda: self._record(producer, compacted=True))


@pytest.fixture(scope="module")
def sessions(tmp_path_factory: pytest.TempPathFactory) -> Sessions:
    return Sessions(tmp_path_factory)


@pytest.fixture
def client(producer: Producer, sessions: Sessions) -> Client:
    return sessions.client(producer)


@pytest.fixture
def recorded(producer: Producer, sessions: Sessions) -> Recorded:
    return sessions.recorded(producer)


@pytest.fixture
def original(producer: Producer, sessions: Sessions) -> Resumed:
    return sessions.original(producer)


@pytest.fixture
def producer_compacted(producer: Producer, sessions: Sessions) -> Recorded:
    return sessions.producer_compacted(producer)


def check_resumed(
    producer: Producer, source: bytes, compacted: Compacted, resumed: Resumed, original: Resumed, summarizes: bool
) -> None:
    assert not resumed.rejected, resumed.rejected
    assert not resumed.repeated, f"{producer.unit} sent twice: {resumed.repeated}"
    if summarizes:
        assert producer.first_text(resumed.conversation).startswith(producer.summary_start)
    assert producer.shape(resumed.conversation) == producer.expected(compacted.data)
    check_reduction(source, compacted, resumed, original)


# --- what every client does --------------------------------------------------------------------


@over_cases([(p, case) for p in PRODUCERS for case in p.cases])
def test_the_client_resumes_the_compacted_session(
    producer: Producer, case: str, client: Client, recorded: Recorded, original: Resumed, tmp_path: Path
) -> None:
    compacted = run_compactctl(recorded.path, tmp_path / "out.jsonl", CASES[case])
    resumed = producer.resume(client, recorded, compacted.data)
    check_resumed(producer, recorded.path.read_bytes(), compacted, resumed, original, case in SUMMARIZING)


@over(PRODUCERS, "compact", "prune-stub")
def test_the_client_resumes_a_session_compacted_twice(
    producer: Producer, case: str, client: Client, recorded: Recorded, original: Resumed, tmp_path: Path
) -> None:
    run_compactctl(recorded.path, tmp_path / "once.jsonl", CASES["summary"])
    twice = run_compactctl(tmp_path / "once.jsonl", tmp_path / "twice.jsonl", CASES[case])
    resumed = producer.resume(client, recorded, twice.data)
    check_resumed(producer, recorded.path.read_bytes(), twice, resumed, original, True)


# --- Claude Code and Codex: their own session resumes, their own compaction, a file cut mid-turn ---


@over((CLAUDE_CODE, CODEX))  # Gemini CLI's own chat does not resume: see below
def test_the_clients_own_session_resumes_with_everything_once(
    producer: Producer, original: Resumed, recorded: Recorded
) -> None:
    assert not original.rejected
    assert not original.repeated
    assert producer.shape(original.conversation) == producer.expected(recorded.path.read_bytes())


@over(COMPACTING)
def test_a_session_the_client_compacted_reads_as_the_client_resumes_it(
    producer: Producer, client: Client, producer_compacted: Recorded
) -> None:
    data = producer_compacted.path.read_bytes()
    assert all(mark in data for mark in producer.compaction_marks), producer.compaction_marks
    resumed = producer.resume(client, producer_compacted, data)
    assert not resumed.rejected and not resumed.repeated
    assert producer.shape(resumed.conversation) == producer.expected(data)


@over(COMPACTING, "compact", "prune-stub")
def test_the_client_resumes_a_compactctl_compaction_of_its_own_compacted_session(
    producer: Producer, case: str, client: Client, producer_compacted: Recorded, tmp_path: Path
) -> None:
    data = producer_compacted.path.read_bytes()
    before = producer.resume(client, producer_compacted, data)
    compacted = run_compactctl(producer_compacted.path, tmp_path / "out.jsonl", CASES[case])
    resumed = producer.resume(client, producer_compacted, compacted.data)
    # Codex's own compaction leaves its initial context (which it writes again on resume, so no
    # summary may fold it) and a few messages: compact and prune then have nothing to fold, say
    # why, and the file they were asked to write anyway is the input's bytes.
    unchanged = compacted.report["status"] == "unchanged"
    if unchanged:
        assert compacted.data == data
        assert compacted.report["reason"], compacted.report
    check_resumed(producer, data, compacted, resumed, before, case in SUMMARIZING and not unchanged)


@over(CUT_MID_TURN, "compact", "prune-stub")
def test_a_session_whose_last_call_is_unanswered_still_resumes(
    producer: Producer, case: str, client: Client, recorded: Recorded, tmp_path: Path
) -> None:
    cut = cut_after_last_call(recorded.path.read_bytes(), producer.call_type)
    source = tmp_path / "cut.jsonl"
    source.write_bytes(cut)
    before = producer.resume(client, recorded, cut)
    compacted = run_compactctl(source, tmp_path / "out.jsonl", CASES[case])
    resumed = producer.resume(client, recorded, compacted.data)
    assert not before.rejected and not resumed.rejected, resumed.rejected
    assert not resumed.repeated
    # The client answers the dangling call itself (an interrupted or "aborted" result), after and before compaction.
    assert producer.shape(resumed.conversation)[-1][0] == "result"
    assert producer.shape(before.conversation)[-1][0] == "result"


@over((CODEX,))
def test_codex_resumes_a_window_of_a_world_state_rollout_with_its_initial_context_once(
    producer: Producer, client: Client, recorded: Recorded, tmp_path: Path
) -> None:
    # Codex 0.171 restates world_state after the compacted line and sends nothing it says the model
    # holds: a window that dropped the environment left the model without it (0 sent), while replay
    # counted it sent again (``model_input.resumed_compaction``).
    assert b'"type":"world_state"' in recorded.path.read_bytes().replace(b" ", b"")
    compacted = run_compactctl(recorded.path, tmp_path / "out.jsonl", ["compact", "-s", "window", "--keep-recent", "1"])
    resumed = producer.resume(client, recorded, compacted.data)
    assert not resumed.rejected and not resumed.repeated
    sent = [content_text(item) for item in resumed.conversation if item.get("type") == "message"]
    assert sum(text.startswith("<environment_context>") for text in sent) == 1


# --- Gemini CLI: its own resume bug, and its rewrite of a chat it resumed --------------------------


@over((GEMINI_CLI,))
def test_gemini_clis_own_chat_resumes_with_each_tool_response_twice(
    producer: Producer, original: Resumed, recorded: Recorded
) -> None:
    # The client's bug, not compactctl's: if a new version fixes it, this fails, and the baseline can be the original.
    assert original.rejected == [COUNT_MISMATCH]
    responses = [p for c in original.conversation for p in c["parts"] if "functionResponse" in p]
    calls = [p for c in original.conversation for p in c["parts"] if "functionCall" in p]
    assert len(responses) == 2 * len(calls) and len(original.repeated) == len(calls)
    # Counted once each, it is exactly compactctl's reading of the file.
    once = gemini_shape(history(original.conversation))
    assert once == gemini_expected_shape(recorded.path.read_bytes())


@over((GEMINI_CLI,), "compact", "prune-stub")
def test_a_compacted_chat_resumes_again_after_gemini_cli_rewrote_it(
    producer: Producer, case: str, client: Client, recorded: Recorded, tmp_path: Path
) -> None:
    # On resume the client appends its own checkpoint of the history it loaded (and copies any
    # toolCalls result back into it); what compactctl wrote must survive that, resume after resume.
    compacted = run_compactctl(recorded.path, tmp_path / "out.jsonl", CASES[case])
    with swapped(recorded.path, compacted.data), FakeGemini() as fake:
        Gemini(client, recorded.home, recorded.cwd, fake).run("A first question.", resume=recorded.session)
        rewritten = recorded.path.read_bytes()
    assert len(rewritten) > len(compacted.data)
    resumed = resume_gemini(client, recorded, rewritten, "A second question.")
    assert not resumed.rejected and not resumed.repeated
    assert gemini_shape(resumed.conversation) == gemini_expected_shape(rewritten)
    assert gemini_shape(resumed.conversation)[-1] == ("text", "Done.")


@over((GEMINI_CLI,))
def test_clearing_the_thoughts_makes_gemini_clis_own_chat_resumable(
    producer: Producer, client: Client, recorded: Recorded, original: Resumed, tmp_path: Path
) -> None:
    # The client does not send thoughts back, so this changes nothing it sends, but the chat is
    # written in the layout it resumes: the way out of its own bug for a chat too small to compact.
    compacted = run_compactctl(recorded.path, tmp_path / "out.jsonl", ["compact", "-s", "clear-thinking"])
    resumed = resume_gemini(client, recorded, compacted.data)
    assert original.rejected and not resumed.rejected and not resumed.repeated

    def unsigned(contents: list[dict[str, Any]]) -> list[Any]:
        # With thought parts to strip, the client signs the first call with its placeholder; without, not.
        return [[{k: v for k, v in p.items() if k != "thoughtSignature"} for p in c["parts"]] for c in contents]

    assert unsigned(history(resumed.conversation)) == unsigned(history(original.conversation))


SAMPLE_CHAT = SAMPLES_FOLDER / "coding-agent.jsonl"


# --- another format converted: the client resumes it with the whole history ----------------------


def test_codex_resumes_a_chat_converted_to_codex_with_every_item(tmp_path: Path) -> None:
    # Codex 0.171 called a rollout with ``"id": ""`` empty, and resumed lines without an ordinal and a
    # timestamp silently as nothing: the model got the new prompt alone.
    client = require_client("codex")
    work, compacted = _converted(tmp_path, "codex")
    meta = json.loads(compacted.data.splitlines()[0])["payload"]
    sessions = tmp_path / "home" / ".codex" / "sessions" / "1970" / "01" / "01"
    sessions.mkdir(parents=True)
    (sessions / f"rollout-1970-01-01T00-00-00-{meta['id']}.jsonl").write_bytes(compacted.data)
    with FakeResponses() as fake:
        fake.enqueue("Resumed.")
        Codex(client, tmp_path / "home", work, fake).run("go on", resume=meta["id"])
        (sent,) = fake.model_calls()
    assert not fake.errors
    written = [json.loads(line)["payload"] for line in compacted.data.splitlines()[1:]]
    resumed = [item for item in sent["input"] if _same_item(item, written)]
    assert len(resumed) == len(written) >= 4
    instructions = sent["input"][0]
    assert instructions["role"] == "developer" and content_text(instructions) == meta["base_instructions"]["text"]


def _converted(tmp_path: Path, to: str) -> tuple[Path, Compacted]:
    """The sample chat's window converted to a client's format, and the folder the client runs in."""
    work = tmp_path / "work"
    work.mkdir()
    args = ["compact", "-s", "window", "--keep-recent", "4", "--to", to]
    return work, run_compactctl(SAMPLE_CHAT, tmp_path / f"converted-{to}.jsonl", args)


def _sent_texts(conversation: list[dict[str, Any]]) -> list[str]:
    """Every text the request carries (Anthropic blocks or Gemini parts), stripped: Claude Code joins a
    run of user messages into one, each text but the last with a line break added."""
    found = []
    for entry in conversation:
        for part in entry.get("content") or entry.get("parts") or []:
            if isinstance(part, dict) and isinstance(part.get("text"), str):
                found.append(part["text"].strip())
    return found


def test_claude_code_resumes_a_chat_converted_to_claude_code_with_every_message(tmp_path: Path) -> None:
    client = require_client("claude")
    work, compacted = _converted(tmp_path, "claude-code")
    records = [json.loads(line) for line in compacted.data.splitlines()]
    session = records[0]["sessionId"]
    project = tmp_path / "home" / ".claude" / "projects" / re.sub(r"[^a-zA-Z0-9]", "-", str(work))
    project.mkdir(parents=True)
    (project / f"{session}.jsonl").write_bytes(compacted.data)
    with FakeAnthropic() as fake:
        fake.enqueue("Resumed.")
        ClaudeCode(client, tmp_path / "home", work, fake).run("go on", resume=session)
        (sent,) = fake.model_calls()
    assert not fake.errors
    messages = [r["message"] for r in records if isinstance(r.get("message"), dict)]
    written = [part["text"] for message in messages for part in _parts(message) if isinstance(part.get("text"), str)]
    missing = [text for text in written if text.strip() not in _sent_texts(sent["messages"])]
    assert written and not missing, missing


def test_gemini_cli_resumes_a_chat_converted_to_gemini_with_every_message(tmp_path: Path) -> None:
    client = require_client("gemini")
    work, compacted = _converted(tmp_path, "gemini")
    lines = [json.loads(line) for line in compacted.data.splitlines()]
    session = lines[0]["sessionId"]
    with FakeGemini() as fake:
        fake.enqueue("first")
        gemini = Gemini(client, tmp_path / "home", work, fake)
        gemini.run("hello")  # the client makes the project's chats folder
        chats = gemini.chats()[0].parent
        (chats / f"session-1970-01-01T00-00-{session[:8]}.jsonl").write_bytes(compacted.data)
        fake.enqueue("Resumed.")
        gemini.run("go on", resume=session)
        sent = fake.model_calls()[-1]
    assert not fake.errors
    written = [part["text"] for line in lines[1:] for part in _parts(line) if isinstance(part.get("text"), str)]
    missing = [text for text in written if text.strip() not in _sent_texts(sent["contents"])]
    assert written and not missing, missing


def _parts(record: dict[str, Any]) -> list[dict[str, Any]]:
    """A written record's content as parts: Claude Code's and Gemini CLI's records hold a text or a list."""
    content = record.get("content")
    if isinstance(content, str):
        return [{"text": content}]
    return [part for part in content or [] if isinstance(part, dict)]


def _same_item(sent: dict[str, Any], written: list[dict[str, Any]]) -> bool:
    """Codex adds ids and metadata to the items it sends; every key the rollout wrote is sent as written."""
    return any(all(sent.get(key) == value for key, value in item.items()) for item in written)
