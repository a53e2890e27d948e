"""Gemini CLI's subagents, as the real 0.61.0 wrote them (tests/fakes/record_gemini_subagents.py): the chat of the
``generalist`` the session's model started with ``invoke_agent``, in the folder named by the session's id beside
the session's file, read and billed with it, once, whether the session's file is given alone or in its folder."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import orjson
import pytest
from genai_prices import Usage, calc_price
from typer.testing import CliRunner

from compactctl.cli.main import app
from compactctl.files.io import read_with_its_session
from compactctl.formats.records import parse_records
from compactctl.recorded import gemini
from compactctl.recorded.gemini_agents import subagent_chats
from tests.fakes.clients import Gemini, require_client
from tests.fakes.gemini import FakeGemini
from tests.fakes.record_gemini_subagents import PINNED, gemini_subagent_session
from tests.fakes.scenarios import project
from tests.replay.test_bill import google_counts
from tests.replay.test_price_conditions import _served, _served_cost

NAME = "gemini-cli-0.61.0-subagent"
SUBAGENT = Path(__file__).parent / "data" / NAME
(SESSION,) = SUBAGENT.glob("session-*.jsonl")
(CHAT,) = SUBAGENT.glob("*/*.jsonl")  # <session id>/<agent id>.jsonl


def _read(path: Path) -> gemini.RecordedSession:
    return gemini.read(parse_records(path.read_bytes(), str(path))[0], str(path))


def _replayed(*paths: Path) -> dict[str, Any]:
    result = CliRunner().invoke(app, ["replay", *map(str, paths), "-t", "100000", "--json", "-q"])
    assert result.exit_code == 0, result.stderr
    return dict(orjson.loads(result.stdout))


def _priced(responses: list[dict[str, Any]]) -> float:
    return sum(
        float(calc_price(Usage(**google_counts(r["usage"])), r["model"], provider_id="google").total_price)
        for r in responses
    )


def test_the_chat_is_filed_by_the_session_id_and_named_by_the_sessions_tool_call():
    header = orjson.loads(SESSION.read_bytes().splitlines()[0])
    chat_header = orjson.loads(CHAT.read_bytes().splitlines()[0])
    assert CHAT.parent.name == header["sessionId"] and CHAT.stem == chat_header["sessionId"]
    assert (header["kind"], chat_header["kind"]) == ("main", "subagent")
    assert f'"agentId":"{CHAT.stem}"'.encode() in SESSION.read_bytes()  # the invoke_agent call's record


def test_the_session_bills_its_subagents_calls_with_its_own():
    session = _read(SESSION)
    assert [(c.label, len(c.calls)) for c in session.contexts] == [("main", 2), ("subagent generalist", 2)]
    served = [r["usage"] for r in _served(NAME)]
    total = session.usage_total()
    assert total.input_tokens == sum(u["promptTokenCount"] for u in served) == 47_327
    assert total.cached_tokens == sum(u.get("cachedContentTokenCount", 0) for u in served) == 11_925
    assert total.output_tokens == sum(u["candidatesTokenCount"] + u.get("thoughtsTokenCount", 0) for u in served)
    assert total.reasoning_tokens == 5


def test_the_subagents_chat_alone_is_its_own_two_calls():
    session = _read(CHAT)
    assert [(c.label, len(c.calls)) for c in session.contexts] == [("main", 2)]
    assert session.contexts[0].messages[0]["content"] == "Read notes.txt and say what it says."


@pytest.mark.parametrize("given", ["session", "folder", "both"])
def test_replay_bills_every_call_once_at_the_price_served(given: str):
    paths = {"session": (SESSION,), "folder": (SUBAGENT,), "both": (SESSION, CHAT)}[given]
    report = _replayed(*paths)
    assert [Path(f["file"]).name for f in report["files"]] == [SESSION.name]  # the chat read with it, not apart
    none = report["total"]["settings"][0]
    assert none["calls"] == 4
    assert none["cost"] == pytest.approx(_served_cost(NAME, "google"), rel=1e-6)
    assert none["cost"] == pytest.approx(0.075073, abs=1e-6)


def test_a_subagents_chat_given_without_its_session_is_billed_on_its_own():
    served = _served(NAME)  # the session's call, the subagent's two, the session's answer
    report = _replayed(CHAT)
    none = report["total"]["settings"][0]
    assert none["calls"] == 2
    assert none["cost"] == pytest.approx(_priced(served[1:3]), rel=1e-6)


def test_a_subagents_chat_is_read_with_its_session_only_where_the_session_is_given(tmp_path: Path):
    assert read_with_its_session(str(CHAT), {str(SESSION), str(CHAT)})
    assert not read_with_its_session(str(SESSION), {str(SESSION), str(CHAT)})
    assert not read_with_its_session(str(CHAT), {str(CHAT)})
    # The session's file elsewhere does not read it (it reads the folder beside it): the chat stays a file of its own.
    elsewhere = tmp_path / SESSION.name
    shutil.copy(SESSION, elsewhere)
    assert not read_with_its_session(str(CHAT), {str(elsewhere), str(CHAT)})
    assert [c.label for c in _read(elsewhere).contexts] == ["main"]


def test_a_resumes_file_that_holds_no_call_names_no_subagent(tmp_path: Path):
    # A resume in a later minute leaves a file of the session with its header and start-up history: no call there.
    folder = tmp_path / NAME
    shutil.copytree(SUBAGENT, folder)
    stub = folder / SESSION.name.replace("T21-28-", "T21-40-")
    stub.write_bytes(b"".join(SESSION.read_bytes().splitlines(keepends=True)[:2]))
    assert _read(stub).calls == 0 and [c.label for c in _read(stub).contexts] == ["main"]
    none = _replayed(folder)["total"]["settings"][0]
    assert none["calls"] == 4 and none["cost"] == pytest.approx(_served_cost(NAME, "google"), rel=1e-6)


def test_a_subagents_chat_that_does_not_read_is_left_out_not_the_session(tmp_path: Path):
    folder = tmp_path / NAME
    shutil.copytree(SUBAGENT, folder)
    (folder / CHAT.relative_to(SUBAGENT)).write_bytes(b'{"sessionId": "x", "kind": "subagent"}\n[1, 2]\n')
    session = _read(folder / SESSION.name)
    assert [(c.label, len(c.calls)) for c in session.contexts] == [("main", 2)]


def test_two_subagents_of_one_name_are_told_apart_by_their_chats_ids(tmp_path: Path):
    values = [orjson.loads(line) for line in SESSION.read_bytes().splitlines()]
    other = "0f0e0d0c-0000-4000-8000-000000000000"
    second = next(v for v in values if v.get("toolCalls"))
    second = {**second, "id": "another", "toolCalls": [{**second["toolCalls"][0], "agentId": other}]}
    folder = tmp_path / CHAT.parent.name
    folder.mkdir()
    for agent in (CHAT.stem, other):
        shutil.copy(CHAT, folder / f"{agent}.jsonl")
    found = subagent_chats(str(tmp_path / SESSION.name), [*values, second])
    assert [name for name, _ in found] == [f"generalist {CHAT.stem[:8]}", "generalist 0f0e0d0c"]


@pytest.mark.slow  # drives the real Gemini CLI
def test_the_real_clients_subagent_calls_are_all_in_the_sessions_bill(tmp_path: Path) -> None:
    client = require_client("gemini")
    with FakeGemini() as fake:
        runner = Gemini(client, tmp_path, project(tmp_path), fake, PINNED)
        session = gemini_subagent_session(runner)
        chat = runner.chat(session)
    read = _read(chat)
    assert [(c.label, len(c.calls)) for c in read.contexts] == [("main", 2), ("subagent generalist", 2)]
    served = [usage for _, usage, _ in fake.served]
    assert len(served) == 4 and read.usage_total().input_tokens == sum(u["promptTokenCount"] for u in served)
    assert read_with_its_session(str(next(chat.parent.glob("*/*.jsonl"))), {str(chat)})
