"""Codex's subagents, as the real 0.171.0 wrote them (tests/fakes/record_subagents.py): the spawned agent's rollout
beside the root's, read and billed with it, once, whether the root's rollout is given alone or in its folder."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import orjson
import pytest
from typer.testing import CliRunner

from compactctl.cli.main import app
from compactctl.files.io import read_with_its_session
from compactctl.formats import get_format, load
from compactctl.formats.records import parse_records
from compactctl.model_input import model_input
from compactctl.recorded import RecordedCall, RecordedContext, RecordedSession, codex, with_subagents
from compactctl.transcript import content_text, find_violation
from tests.fakes.clients import Codex, require_client
from tests.fakes.record_subagents import MULTI_AGENT, codex_subagent_session
from tests.fakes.responses import FakeResponses
from tests.fakes.resume import run_compactctl, swapped
from tests.fakes.scenarios import project
from tests.replay.test_price_conditions import _served, _served_cost

SUBAGENT = Path(__file__).parent / "data" / "codex-0.171.0-subagent"
ROOT, CHILD = sorted(SUBAGENT.glob("rollout-*.jsonl"))  # the root started first: its name sorts first


FORKED = Path(__file__).parent / "data" / "codex-0.171.0-subagent-forked"
FORKED_ROOT, FORKED_CHILD = sorted(FORKED.glob("rollout-*.jsonl"))


def _read(path: Path) -> codex.RecordedSession:
    return codex.read(parse_records(path.read_bytes(), str(path))[0], str(path))


def _replayed(*paths: Path) -> dict[str, Any]:
    result = CliRunner().invoke(app, ["replay", *map(str, paths), "-t", "100000", "--json", "-q"])
    assert result.exit_code == 0, result.stderr
    return dict(orjson.loads(result.stdout))


def test_the_root_rollout_bills_its_subagents_calls_with_its_own():
    session = _read(ROOT)
    assert [(c.label, len(c.calls)) for c in session.contexts] == [("main", 3), ("subagent /root/reader", 2)]
    served = _served("codex-0.171.0-subagent")
    total = session.usage_total()
    assert total.input_tokens == sum(r["usage"]["input_tokens"] for r in served) == 55_762
    assert total.output_tokens == sum(r["usage"]["output_tokens"] for r in served)
    assert session.reported_total == total  # each thread's own total, summed


def test_the_subagents_rollout_alone_is_its_own_two_calls():
    session = _read(CHILD)
    assert [(c.label, len(c.calls)) for c in session.contexts] == [("main", 2)]


def test_the_messages_between_the_agents_are_model_input():
    # agent_message items: the task the root sent, the answer the subagent sent back.
    (child,) = load(CHILD.read_bytes(), str(CHILD))[1]
    (root,) = load(ROOT.read_bytes(), str(ROOT))[1]
    assert any(m["role"] == "user" and "Message Type: NEW_TASK" in content_text(m) for m in child.messages)
    assert any(m["role"] == "user" and "Message Type: FINAL_ANSWER" in content_text(m) for m in root.messages)
    recorded_child = _read(CHILD).contexts[0].messages
    assert any("Message Type: NEW_TASK" in content_text(m) for m in recorded_child)


def test_commentary_written_after_the_spawn_call_is_one_turn_with_it():
    (root,) = load(ROOT.read_bytes(), str(ROOT))[1]
    (turn,) = [m for m in root.messages if m["role"] == "assistant" and m.get("tool_calls")][:1]
    assert content_text(turn) == "Asking a reader." and turn["tool_calls"][0]["function"]["name"] == "spawn_agent"
    assert find_violation(root.messages) is None


@pytest.mark.parametrize("given", ["root", "folder", "both"])
def test_replay_bills_every_call_once_at_the_price_served(given: str):
    paths = {"root": (ROOT,), "folder": (SUBAGENT,), "both": (ROOT, CHILD)}[given]
    report = _replayed(*paths)
    none = report["total"]["settings"][0]
    assert none["calls"] == 5
    assert none["cost"] == pytest.approx(_served_cost("codex-0.171.0-subagent", "openai"), rel=1e-6)


def test_a_subagents_rollout_is_read_with_its_parent_only_where_the_parent_is_given(tmp_path: Path):
    assert read_with_its_session(str(CHILD), {str(ROOT), str(CHILD)})
    assert not read_with_its_session(str(ROOT), {str(ROOT), str(CHILD)})
    assert not read_with_its_session(str(CHILD), {str(CHILD)})
    # Its parent elsewhere does not read it (it reads the rollouts beside it): the child stays a file of its own.
    elsewhere = tmp_path / ROOT.name
    shutil.copy(ROOT, elsewhere)
    assert not read_with_its_session(str(CHILD), {str(elsewhere), str(CHILD)})
    assert [c.label for c in _read(elsewhere).contexts] == ["main"]


def test_a_subagent_started_after_midnight_is_found_in_the_next_days_folder(tmp_path: Path):
    # Codex files a rollout by the day its thread started: a subagent spawned past midnight is a folder on.
    days = tmp_path / "sessions" / "2026" / "12"
    for day, path in (("04", ROOT), ("05", CHILD)):
        (days / day).mkdir(parents=True)
        shutil.copy(path, days / day / path.name)
    root, child = days / "04" / ROOT.name, days / "05" / CHILD.name
    assert [c.label for c in _read(root).contexts] == ["main", "subagent /root/reader"]
    assert read_with_its_session(str(child), {str(root), str(child)})


def test_a_subagent_forked_with_the_turns_bills_its_own_calls_not_its_copy_of_the_roots():
    # Its rollout opens on a copy of the root's, items marked inherited_user_message: those 3 calls are the root's.
    child = _read(FORKED_CHILD)
    ((main,),) = [[c for c in child.contexts]]
    assert [call.copied for call in main.calls] == [True] * 3 + [False] * 4
    assert child.copied_from == (orjson.loads(FORKED_ROOT.read_bytes().splitlines()[0])["payload"]["id"],)
    session = _read(FORKED_ROOT)
    assert [(c.label, len(c.calls)) for c in session.contexts] == [("main", 7), ("subagent /root/reader", 7)]
    served = _served("codex-0.171.0-subagent-forked")
    assert session.usage_total().input_tokens == sum(r["usage"]["input_tokens"] for r in served)
    for paths in ((FORKED_ROOT,), (FORKED,)):
        none = _replayed(*paths)["total"]["settings"][0]
        assert none["calls"] == len(served) == 11
        assert none["cost"] == pytest.approx(_served_cost("codex-0.171.0-subagent-forked", "openai"), rel=1e-6)
    assert _replayed(FORKED_CHILD)["total"]["settings"][0]["calls"] == 4


def test_the_spawning_call_the_copy_cuts_is_answered_aborted_as_codex_sends_it():
    # Codex gives a call with no output an "aborted" one when it sends the history (normalize_history): the
    # subagent's copy of the spawning turn is valid, not an unanswered call.
    (child,) = load(FORKED_CHILD.read_bytes(), str(FORKED_CHILD))[1]
    carried = get_format("codex").carried_parts
    assert find_violation(child.messages, carried) is not None  # as the file holds it
    sent = model_input(child)
    aborted = [m for m in sent if m["role"] == "tool" and m["content"] == "aborted"]
    assert [m["tool_call_id"] for m in aborted] == ["call_spawn"]
    assert find_violation(sent, carried) is None
    report = CliRunner().invoke(app, ["report", str(FORKED_CHILD), "--json"])
    assert orjson.loads(report.stdout)["files"][0]["valid_before"] is True


WRITTEN = [["compact"], ["compact", "-s", "window", "--keep-recent", "2"], ["prune", "--mode", "stub"]]


@pytest.mark.slow  # drives the real Codex
@pytest.mark.parametrize("args", WRITTEN)
def test_codex_resumes_the_root_agents_rollout_compactctl_wrote(tmp_path: Path, args: list[str]) -> None:
    client = require_client("codex")
    cwd = project(tmp_path)
    with FakeResponses() as fake:
        codex_subagent_session(Codex(client, tmp_path, cwd, fake, model="gpt-5.5", extra_config=MULTI_AGENT), fake)
    root = min(Codex(client, tmp_path, cwd, fake).rollouts(), key=lambda p: p.name)
    compacted = run_compactctl(root, tmp_path / "out.jsonl", args)
    assert compacted.report["valid_before"] and compacted.report["valid_after"], compacted.report
    thread = orjson.loads(root.read_bytes().splitlines()[0])["payload"]["id"]
    with swapped(root, compacted.data), FakeResponses() as again:
        Codex(client, tmp_path, cwd, again, model="gpt-5.5", extra_config=MULTI_AGENT).run("And now?", resume=thread)
        (first, *_) = again.model_calls()
    assert not again.errors, again.errors
    sent = [item.get("type") for item in first["input"]]
    if args[0] == "prune":  # everything kept: the subagent's answer, and the spawn call before its commentary
        assert "agent_message" in sent
        spawn = next(i for i, item in enumerate(first["input"]) if item.get("name") == "spawn_agent")
        assert first["input"][spawn + 1].get("type") == "message"


def test_each_subagents_context_keeps_a_label_of_its_own():
    # Calibration fits a hidden prefix per label: two agents of one name, and a subagent's own subagent, stay apart.
    def calls(label: str) -> RecordedContext:
        return RecordedContext(label, [{"role": "assistant", "content": "x"}], [RecordedCall(0, "gpt-5.5", None, None)])

    nested = RecordedSession("codex", [calls("main"), calls("subagent /root/a/b")])
    merged = with_subagents(
        RecordedSession("codex", [calls("main")]),
        [("/root/a", nested), ("/root/a", RecordedSession("codex", [calls("main")]))],
    )
    assert [c.label for c in merged.contexts] == [
        "main",
        "subagent /root/a",
        "subagent /root/a/b",
        "subagent /root/a 2",
    ]


# Codex's approvals reviewer (tests/fakes/record_side_calls.py): approvals_reviewer = "auto_review", two turns, each
# process reviewing in a guardian thread of its own, the second after a compaction.
AUTO_REVIEW = Path(__file__).parent / "data" / "codex-0.171.0-auto-review"


def _rollout_of(folder: Path, kind: str | None) -> list[Path]:
    """The folder's rollouts whose source is Codex's subagent ``kind`` (None: the thread's own), by name."""
    from compactctl.recorded.codex_agents import first_meta, kind_of

    return [path for path in sorted(folder.glob("rollout-*.jsonl")) if kind_of(first_meta(path)) == kind]


def test_the_reviewers_calls_are_billed_once_with_the_session_whose_requests_they_reviewed():
    (thread,) = _rollout_of(AUTO_REVIEW, None)
    session = _read(thread)
    labels = [(c.label, len(c.calls)) for c in session.contexts]
    # 4 calls of the turns' (the 2 compactions apart), a review each.
    assert labels == [("main", 4), ("subagent guardian", 1), ("subagent guardian 2", 1)]
    served = _served("codex-0.171.0-auto-review")
    reviews = [r["usage"]["input_tokens"] for r in served if r.get("caller") == "guardian"]
    assert [c.calls[0].usage.input_tokens for c in session.contexts[1:] if c.calls[0].usage] == reviews
    for given in ((thread,), (AUTO_REVIEW,)):
        (entry,) = _replayed(*given)["files"]
        assert entry["api"]["bill_cost"] == pytest.approx(_served_cost("codex-0.171.0-auto-review", "openai"), rel=1e-6)
        (note,) = [n for n in entry["api"]["notes"] if "approvals reviewer" in n]
        assert note.startswith(f"{len(reviews)} of the {len(served)} billed calls are Codex's approvals reviewer")


def test_the_reviewers_rollout_alone_says_whose_it_is():
    first, second = _rollout_of(AUTO_REVIEW, "guardian")
    (thread,) = _rollout_of(AUTO_REVIEW, None)
    (entry,) = _replayed(second)["files"]
    (review,) = [r for r in _served("codex-0.171.0-auto-review") if r.get("caller") == "guardian"][1:]
    assert entry["api"]["bill_input_tokens"] == review["usage"]["input_tokens"]  # its own call, as a session alone
    (note,) = entry["api"]["notes"]
    assert note.startswith("this rollout is Codex's approvals reviewer") and thread.name[-42:-6] in note
    assert not read_with_its_session(str(thread), {str(thread), str(first)})
    assert read_with_its_session(str(first), {str(thread), str(first)})  # a folder run bills it with the thread


def test_the_reviewer_after_a_compaction_is_sent_the_threads_compaction_first():
    # 0.171 reuses the reviewed thread's compaction: the reviewer's rollout opens on that compaction item, which its
    # request sent before the review's messages; its length is model input, as a compacted line's is.
    _, second = _rollout_of(AUTO_REVIEW, "guardian")
    (context,) = _read(second).contexts
    assert [m.get("encrypted_chars") is not None for m in context.messages[:2]] == [False, True]
    assert context.messages[0]["role"] == "system" and context.messages[1]["role"] == "user"


@pytest.mark.parametrize(
    ("source", "kind"),
    [
        ({"subagent": {"other": "guardian"}}, "guardian"),
        ({"subagent": "review"}, "review"),
        ({"subagent": "memory_consolidation"}, "memory_consolidation"),
        ({"subagent": {"thread_spawn": {"parent_thread_id": "p", "depth": 1}}}, None),
        ("exec", None),
    ],
)
def test_a_rollouts_source_says_which_of_codexs_own_subagents_it_is(source: Any, kind: str | None):
    from compactctl.recorded.codex_agents import kind_of

    assert kind_of({"source": source}) == kind


def test_a_review_thread_named_as_the_client_names_it_is_billed_with_the_thread_that_asked_for_it(tmp_path: Path):
    # codex-0.171.0-review keeps the two rollouts as host.jsonl and review.jsonl; under the names the client gave
    # them (their ids and start times) the host reads its review's rollout, once, and says what it is.
    from tests.recorded.test_codex_calls import _each_response_at_its_model

    review = Path(__file__).parents[1] / "formats" / "data" / "real-clients" / "codex-0.171.0-review"
    named, folder = {}, tmp_path / "sessions"
    folder.mkdir()
    for name in ("host", "review"):
        meta = orjson.loads((review / f"{name}.jsonl").read_bytes().splitlines()[0])["payload"]
        stamp = meta["timestamp"][:19].replace(":", "-")
        named[name] = folder / f"rollout-{stamp}-{meta['id']}.jsonl"
        shutil.copy(review / f"{name}.jsonl", named[name])
    session = _read(named["host"])
    assert [c.label for c in session.contexts] == ["main", "subagent review"]
    (entry,) = _replayed(folder)["files"]
    both = sum(_each_response_at_its_model(review / f"{name}.jsonl")[0] for name in ("host", "review"))
    assert entry["api"]["bill_cost"] == pytest.approx(both, rel=1e-6)
    calls = {name: _read(review / f"{name}.jsonl").calls for name in ("host", "review")}
    said = f"{calls['review']} of the {sum(calls.values())} billed calls are the code review the thread asked for"
    assert any(n.startswith(said) for n in entry["api"]["notes"]), entry["api"]["notes"]


@pytest.mark.slow  # drives the real Codex
def test_the_real_reviewers_calls_are_billed_with_the_session_it_reviewed_for(tmp_path: Path) -> None:
    from tests.fakes.record_copies import _serving
    from tests.fakes.record_side_calls import AUTO_REVIEW as REVIEW_CONFIG
    from tests.fakes.record_side_calls import codex_auto_review_session

    client = require_client("codex")
    with _serving() as served, FakeResponses() as fake:
        codex = Codex(client, tmp_path, project(tmp_path), fake, model="gpt-5.5", extra_config=REVIEW_CONFIG)
        codex_auto_review_session(codex, fake)
    assert [r.get("caller") for r in served].count("guardian") == 2
    report = _replayed(codex.codex_home / "sessions")
    (entry,) = report["files"]
    expected = sum(_openai_cost(r) for r in served)
    assert entry["api"]["bill_cost"] == pytest.approx(expected, rel=1e-6)
    assert any(n.startswith("2 of the 8 billed calls are Codex's approvals reviewer") for n in entry["api"]["notes"])


def _openai_cost(response: dict[str, Any]) -> float:
    """One served response at its model's list price (genai-prices), as tests/replay/test_price_conditions.py."""
    from genai_prices import Usage, calc_price

    usage = response["usage"]
    counts = Usage(
        input_tokens=usage["input_tokens"],
        cache_read_tokens=usage["input_tokens_details"]["cached_tokens"],
        output_tokens=usage["output_tokens"],
    )
    return float(calc_price(counts, response["model"], provider_id="openai").total_price)
