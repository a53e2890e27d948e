"""Gemini CLI's subagents stopped while they run, as the real 0.61.0 wrote them
(tests/fakes/record_gemini_subagents.py): the ``generalist``'s chat, its first call answered and its second held by
the fake, when the user pressed Esc in the interactive client (``-subagent-cancelled``) or sent ``gemini -p`` SIGINT
(``-subagent-interrupted``). No tool call names the chat (no ``agentId``); its calls were billed, so the session's
bill holds them, once."""

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
from compactctl.formats.records import annotations_of, parse_records
from compactctl.recorded import gemini
from compactctl.recorded.gemini_agents import subagent_chats
from tests.fakes.clients import Gemini, require_client
from tests.fakes.gemini import FakeGemini
from tests.fakes.record_gemini_subagents import (
    PINNED,
    gemini_cancelled_subagent_session,
    gemini_interrupted_subagent_session,
)
from tests.fakes.scenarios import project
from tests.replay.test_bill import google_counts
from tests.replay.test_price_conditions import _served, _served_cost

DATA = Path(__file__).parent / "data"
CANCELLED, INTERRUPTED = "gemini-cli-0.61.0-subagent-cancelled", "gemini-cli-0.61.0-subagent-interrupted"
# The bill the fake served (2 calls each: the main agent's invoke_agent, the subagent's read_file), at genai-prices.
COSTS = {CANCELLED: 0.050566, INTERRUPTED: 0.048284}


def _session(name: str) -> Path:
    (session,) = (DATA / name).glob("session-*.jsonl")
    return session


def _chat(name: str) -> Path:
    (chat,) = (DATA / name).glob("*/*.jsonl")  # <session id>/<agent id>.jsonl
    return chat


def _values(path: Path) -> list[dict[str, Any]]:
    return [orjson.loads(line) for line in path.read_bytes().splitlines() if line.strip()]


def _read(path: Path) -> gemini.RecordedSession:
    return gemini.read(parse_records(path.read_bytes(), str(path))[0], str(path))


def _replayed(*paths: Path) -> dict[str, Any]:
    result = CliRunner().invoke(app, ["replay", *map(str, paths), "-t", "100000", "--json", "-q"])
    assert result.exit_code == 0, result.stdout
    return dict(orjson.loads(result.stdout))


def _priced(usages: list[dict[str, Any]], model: str) -> float:
    return sum(float(calc_price(Usage(**google_counts(u)), model, provider_id="google").total_price) for u in usages)


def test_esc_records_the_cancelled_call_on_a_tokenless_record_that_names_no_chat():
    values = _values(_session(CANCELLED))
    (cancelled,) = [v for v in values if v.get("toolCalls")]
    assert cancelled["type"] == "gemini" and "tokens" not in cancelled
    (call,) = cancelled["toolCalls"]
    assert (call["name"], call["status"], call.get("agentId")) == ("invoke_agent", "cancelled", None)
    # Only its activity shows the chat it ran: each step's id is ``<chat id>#<turn>-<n>``.
    (step,) = call["resultDisplay"]["recentActivity"]
    assert step["id"].split("#")[0] == _chat(CANCELLED).stem


def test_sigint_records_no_tool_call_at_all():
    assert not any(v.get("toolCalls") for v in _values(_session(INTERRUPTED)))
    assert b"agentId" not in _session(INTERRUPTED).read_bytes()


@pytest.mark.parametrize(("name", "label"), [(CANCELLED, "subagent generalist"), (INTERRUPTED, "subagent 5f95989c")])
def test_the_session_bills_the_stopped_subagents_calls_with_its_own(name: str, label: str):
    # Named by the agent where the cancelled call's activity names the chat, else by the chat's id.
    session = _read(_session(name))
    assert [(c.label, len(c.calls)) for c in session.contexts] == [("main", 1), (label, 1)]
    served = [r["usage"] for r in _served(name)]
    total = session.usage_total()
    assert total.input_tokens == sum(u["promptTokenCount"] for u in served)
    assert total.output_tokens == sum(u["candidatesTokenCount"] + u.get("thoughtsTokenCount", 0) for u in served)
    assert total.reasoning_tokens == 5  # the subagent's thought


def test_the_cancelled_calls_record_is_context_but_no_call():
    (main, _) = _read(_session(CANCELLED)).contexts
    held = [n for n, m in enumerate(main.messages) if m.get("tool_calls")]
    assert held == [2] and annotations_of(main.messages[2]).get("kind") == "harness"
    assert [c.position for c in main.calls] == [1]  # the response that asked for it, billed on a record of its own


@pytest.mark.parametrize("name", [CANCELLED, INTERRUPTED])
@pytest.mark.parametrize("given", ["session", "folder", "both"])
def test_replay_bills_every_call_once_at_the_price_served(name: str, given: str):
    paths = {"session": (_session(name),), "folder": (DATA / name,), "both": (_session(name), _chat(name))}[given]
    report = _replayed(*paths)
    assert [Path(f["file"]).name for f in report["files"]] == [_session(name).name]  # the chat read with it
    none = report["total"]["settings"][0]
    assert none["calls"] == 2
    assert none["cost"] == pytest.approx(_served_cost(name, "google"), rel=1e-6)
    assert none["cost"] == pytest.approx(COSTS[name], abs=1e-6)


@pytest.mark.parametrize("name", [CANCELLED, INTERRUPTED])
def test_report_and_compact_read_the_session(name: str, tmp_path: Path):
    report = CliRunner().invoke(app, ["report", str(_session(name)), "--json"])
    assert report.exit_code == 0, report.stdout
    (file,) = orjson.loads(report.stdout)["files"]
    assert file["valid_before"] and file["api_calibration"]["calls"] == 2  # the subagent's call with the session's
    out = tmp_path / "out.jsonl"
    args = ["compact", str(_session(name)), "-s", "window", "--keep-recent", "1", "-o", str(out), "--json"]
    compacted = CliRunner().invoke(app, args)
    assert compacted.exit_code == 0, compacted.stdout
    (written,) = orjson.loads(compacted.stdout)["files"]
    assert written["valid_after"] and written["messages_after"] < written["messages_before"]
    assert out.is_file()


def test_a_stopped_subagents_chat_given_alone_is_billed_on_its_own():
    none = _replayed(_chat(INTERRUPTED))["total"]["settings"][0]
    assert none["calls"] == 1
    assert none["cost"] == pytest.approx(_priced([_served(INTERRUPTED)[1]["usage"]], "gemini-3.1-pro-preview"))
    assert read_with_its_session(str(_chat(INTERRUPTED)), {str(_session(INTERRUPTED)), str(_chat(INTERRUPTED))})


def test_a_resumes_file_that_holds_no_call_does_not_read_the_chat_again(tmp_path: Path):
    # A resume's stub (its header, its start-up history), named first or last, holds no response: the session's
    # file that holds one reads the chat.
    folder = tmp_path / INTERRUPTED
    shutil.copytree(DATA / INTERRUPTED, folder)
    session = folder / _session(INTERRUPTED).name
    head = b"".join(session.read_bytes().splitlines(keepends=True)[:2])
    for minute in ("T00-10-", "T00-50-"):
        (folder / session.name.replace("T00-30-", minute)).write_bytes(head)
    for stub in folder.glob("session-*"):
        chats = subagent_chats(str(stub), _values(stub))
        assert [p.name for _, p in chats] == ([_chat(INTERRUPTED).name] if stub == session else []), stub.name
    none = _replayed(folder)["total"]["settings"][0]
    assert none["calls"] == 2 and none["cost"] == pytest.approx(_served_cost(INTERRUPTED, "google"), rel=1e-6)


def test_of_two_files_of_the_session_that_hold_responses_the_first_reads_the_chat(tmp_path: Path):
    folder = tmp_path / CANCELLED
    shutil.copytree(DATA / CANCELLED, folder)
    later = folder / _session(CANCELLED).name
    earlier = folder / later.name.replace("T00-30-", "T00-29-")
    shutil.copy(later, earlier)
    assert [name for name, _ in subagent_chats(str(earlier), _values(earlier))] == ["generalist"]
    assert subagent_chats(str(later), _values(later)) == []


def test_a_chat_another_file_of_the_session_names_is_not_read_as_stopped(tmp_path: Path):
    # The chat claimed (agentId) by the session's later file: that file reads it, not the first one as unnamed.
    folder = tmp_path / INTERRUPTED
    shutil.copytree(DATA / INTERRUPTED, folder)
    first = folder / _session(INTERRUPTED).name
    values = _values(first)
    billed = next(v for v in values if v.get("tokens"))
    call = {"id": "c1", "name": "invoke_agent", "args": {"agent_name": "generalist"}}
    naming = {**billed, "id": "x", "toolCalls": [{**call, "agentId": _chat(INTERRUPTED).stem}]}
    later = folder / first.name.replace("T00-30-", "T00-40-")
    later.write_bytes(b"".join(orjson.dumps(v) + b"\n" for v in [values[0], naming]))
    assert subagent_chats(str(first), values) == []
    assert [name for name, _ in subagent_chats(str(later), _values(later))] == ["generalist"]


def _real(tmp_path: Path, recorded: Any) -> tuple[Path, list[dict[str, Any]]]:
    client = require_client("gemini")
    with FakeGemini() as fake:
        runner = Gemini(client, tmp_path, project(tmp_path), fake, PINNED)
        session = recorded(runner)
        chat = runner.chat(session)
    return chat, [usage for _, usage, _ in fake.served]


@pytest.mark.slow  # drives the real Gemini CLI
@pytest.mark.parametrize(
    ("recorded", "label"),
    [(gemini_cancelled_subagent_session, "subagent generalist"), (gemini_interrupted_subagent_session, None)],
)
def test_the_real_clients_stopped_subagents_calls_are_in_the_sessions_bill(
    tmp_path: Path, recorded: Any, label: str | None
) -> None:
    chat, served = _real(tmp_path, recorded)
    (subagent,) = chat.parent.glob("*/*.jsonl")
    assert b"agentId" not in chat.read_bytes()
    read = _read(chat)
    named = label or f"subagent {subagent.stem[:8]}"  # no cancelled call shows the chat: its id
    assert [(c.label, len(c.calls)) for c in read.contexts] == [("main", 1), (named, 1)]
    assert len(served) == 2 and read.usage_total().input_tokens == sum(u["promptTokenCount"] for u in served)
    assert read_with_its_session(str(subagent), {str(chat)})
    for paths in ((chat,), (chat.parent,)):
        none = _replayed(*paths)["total"]["settings"][0]
        assert none["calls"] == 2
        assert none["cost"] == pytest.approx(_priced(served, PINNED["model"]["name"]), rel=1e-6)
