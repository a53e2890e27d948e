"""Claude Code 2.1.332's old tool results sent as a stand-in after the user was idle an hour, as the real client
wrote them (tests/fakes/record_context_edits.py): cleared by the API (``applied_edits`` in the response's record),
with the cleared Writes' inputs too (``clear_tool_inputs``), or cut by the client (a ``tool_results_cut``
attachment). Each call is estimated from what it was sent, the
stand-ins counted in place of the results, within calibration's tolerance of what the fake billed; counting the
results as the file holds them (what compactctl did before) is far off, or bends the fitted hidden prefix."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import orjson
import pytest

from compactctl.calibration import Calibration, calibrate
from compactctl.calibration.features import CallFeatures, call_features
from compactctl.formats.records import parse_records
from compactctl.recorded import RecordedSession, claude_code
from compactctl.recorded.claude_code_cleared import STAND_IN
from compactctl.tokens import DEFAULT_ENCODING, counter_for
from tests.recorded.sessions import ClaudeSession
from tests.replay.test_price_conditions import _served, _served_cost

DATA = Path(__file__).parent / "data"
CLEARED = "claude-code-2.1.332-cleared-after-idle"
CUT = "claude-code-2.1.332-cut-after-idle"
INPUTS = "claude-code-2.1.332-inputs-cleared-after-idle"
RETURN = 32  # the first call after the pause: 31 Reads and an answer before it
TOLERANCE = 0.02  # the held-out per-call median the calibration is held to


def _read(path: Path) -> RecordedSession:
    return claude_code.read(parse_records(path.read_bytes(), str(path))[0], str(path))


def _session(name: str) -> RecordedSession:
    (path,) = (DATA / name).glob("*.jsonl")
    return _read(path)


def _as_logged(session: RecordedSession) -> RecordedSession:
    """The session read as before: every call counted with the results as the file holds them."""
    return dataclasses.replace(session, contexts=[dataclasses.replace(c, stand_ins={}) for c in session.contexts])


def _results_only(session: RecordedSession) -> RecordedSession:
    """The session read with only the results the API cleared as their stand-in, the calls' inputs as logged."""
    return dataclasses.replace(
        session,
        contexts=[
            dataclasses.replace(
                c,
                stand_ins={
                    n: {at: m for at, m in sent.items() if c.messages[at]["role"] == "tool"}
                    for n, sent in c.stand_ins.items()
                },
            )
            for c in session.contexts
        ],
    )


def _errors_on_the_prefix_before_the_pause(session: RecordedSession, calibration: Calibration) -> list[float]:
    """Each call's error after the pause, predicted with the hidden prefix fitted before it (the system prompt
    and tools do not change at a pause): what the log's messages explain of each call's input."""
    (context,) = session.contexts
    counter = counter_for(calibration.encoding, calibration.provider)
    features = call_features(context, counter, counter_for(DEFAULT_ENCODING))

    def predicted(f: CallFeatures) -> float:
        return calibration.prefix["main"] + calibration.ratio * f.text + f.resent + f.images

    return [abs(predicted(f) - f.reported) / f.reported for f in features[RETURN:] if f.reported]


def test_the_apis_report_of_each_call_names_how_many_results_it_sent_cleared():
    (context,) = _session(CLEARED).contexts
    served = _served(CLEARED)  # one response per call, in order: the client's side queries stream none
    assert len(served) == len(context.calls)
    truth = [
        sum(e["cleared_tool_uses"] for e in r.get("context_management", {}).get("applied_edits", [])) for r in served
    ]
    assert truth[:RETURN] == [0] * RETURN and truth[RETURN:] == [19, 20, 21, 22, 23, 24, 25]
    assert [len(context.stand_ins.get(n, {})) for n in range(len(context.calls))] == truth
    # The oldest Reads' results, each as the stand-in; the last 12 tool uses' are sent whole.
    last = context.stand_ins[len(context.calls) - 1]
    results = [at for at, m in enumerate(context.messages) if m["role"] == "tool"]
    assert sorted(last) == results[:25] and {m["content"] for m in last.values()} == {STAND_IN}


@pytest.mark.parametrize("name", [CLEARED, INPUTS])
def test_what_the_stand_ins_save_is_what_the_api_reported_cleared(name):
    """The fake counts in cl100k: the cleared results (and inputs) less their stand-ins are its
    ``cleared_input_tokens``."""
    (context,) = _session(name).contexts
    counter = counter_for(DEFAULT_ENCODING)
    reported = [
        e["cleared_input_tokens"]
        for r in _served(name)
        for e in r.get("context_management", {}).get("applied_edits", [])
    ]
    saved = [
        sum(counter.message(context.messages[at]) - counter.message(sent) for at, sent in context.stand_ins[n].items())
        for n in sorted(context.stand_ins)
    ]
    assert saved == pytest.approx(reported, rel=0.01)


@pytest.mark.parametrize("name", [CLEARED, CUT, INPUTS])
def test_each_call_after_the_pause_is_estimated_from_what_it_was_sent(name):
    session = _session(name)
    after = _errors_on_the_prefix_before_the_pause(session, calibrate(session, "claude-code"))
    assert len(after) == 7 and max(after) < TOLERANCE
    # Counted as the file holds the results: 86-153 % over what the API billed when it cleared them, 98 % when cut,
    # 43 % with the cleared Writes' inputs.
    before = _errors_on_the_prefix_before_the_pause(_as_logged(session), calibrate(_as_logged(session), "claude-code"))
    assert min(before) > 0.2


@pytest.mark.parametrize("name", [CLEARED, CUT, INPUTS])
def test_the_hidden_prefix_after_the_pause_is_fitted_as_before_it_and_the_calls_held_out_are_within_tolerance(name):
    session = _session(name)
    calibration = calibrate(session, "claude-code")
    assert calibration.prefix[f"main@{RETURN}"] == pytest.approx(calibration.prefix["main"], rel=0.05)
    assert calibration.held_out.median < TOLERANCE and calibration.held_out.p90 < 0.05
    assert calibration.unlogged == {} and calibration.warnings == ()
    # Before, the fit took the results the model never saw for a hidden prefix below zero.
    assert calibrate(_as_logged(session), "claude-code").prefix[f"main@{RETURN}"] < 0


def test_the_api_clears_the_inputs_of_the_cleared_writes_the_request_names_and_replay_counts_them_so():
    """After its note of the pause, each request names the tools whose inputs to clear (Write, Edit, Bash,
    PowerShell); of the 19 oldest tool uses the API cleared, the Writes' calls are sent as ``{}``, the Reads' as
    they were. Counted with their inputs as logged, the calls after the pause are 43 % over what was billed."""
    session = _session(INPUTS)
    (context,) = session.contexts
    (path,) = (DATA / INPUTS).glob("*.jsonl")
    records = [orjson.loads(line) for line in path.read_bytes().splitlines()]
    sent = [
        e.get("clear_tool_inputs")
        for r in records
        if r.get("type") == "api-request"
        for e in r["params"].get("context_management", {}).get("edits", [])
        if e["type"] == "clear_tool_uses_20250919"
    ]
    assert len(sent) == 7 and all(s is not None and {"Write", "Edit", "Bash", "PowerShell"} <= set(s) for s in sent)
    assert any(r.get("attachment", {}).get("content", "").startswith("This chat has resumed") for r in records)
    served = _served(INPUTS)
    assert [sum(e["cleared_tool_uses"] for e in r.get("context_management", {}).get("applied_edits", [])) for r in
            served][RETURN:] == [19] * 7  # fmt: skip
    results = [at for at, m in enumerate(context.messages) if m["role"] == "tool"][:19]
    cleared = {context.messages[at]["tool_call_id"] for at in results}
    writes = {
        c["id"]
        for m in context.messages
        if m["role"] == "assistant"
        for c in m.get("tool_calls") or []
        if c["function"]["name"] == "Write" and c["id"] in cleared
    }
    for n in range(RETURN, len(context.calls)):
        stood = context.stand_ins[n]
        calls = [
            (c["id"], c["function"]["name"], c["function"]["arguments"])
            for at, m in stood.items()
            if m["role"] == "assistant"
            for c in m["tool_calls"]
        ]
        assert sorted(at for at in stood if context.messages[at]["role"] == "tool") == results
        assert {i for i, _, _ in calls} == writes
        assert len(calls) == 10 and {(name, arguments) for _, name, arguments in calls} == {("Write", "{}")}
    # The Reads' calls among the cleared are sent whole: they are no stand-in.
    reads = [m for m in context.messages if m["role"] == "assistant" and "Read" in str(m.get("tool_calls"))]
    assert all(id(m) not in {id(context.messages[at]) for at in context.stand_ins[RETURN]} for m in reads)
    calibration = calibrate(_results_only(session), "claude-code")
    assert min(_errors_on_the_prefix_before_the_pause(_results_only(session), calibration)) > 0.2


def test_a_clear_thinking_edit_in_a_report_clears_no_result_and_is_billed_as_its_usage():
    """2.1.332 sends ``clear_thinking_20251015`` with ``keep: "all"`` only (``MHn``): the API clears no thinking.
    A report of one (another client's request) names no tool result: nothing stands in, and the call is billed
    as its usage says, whatever the report's ``cleared_input_tokens``."""
    from compactctl.replay import settings_grid, shipped_prices
    from compactctl.replay.recorded import replay_recorded
    from compactctl.strategies import StrategyOptions

    def built(report: bool) -> RecordedSession:
        session = ClaudeSession()
        session.user("Look around.")
        session.response(thinking="Which files?", text="Listing.", tools=[("Bash", {"command": "ls"}, "a\nb\n" * 40)])
        session.user("Go on.")
        session.response(thinking="Now the answer.", text="Done.")
        if report:
            edit = {"type": "clear_thinking_20251015", "cleared_thinking_turns": 1, "cleared_input_tokens": 900}
            session.records[-1]["message"]["context_management"] = {"applied_edits": [edit]}
        return claude_code.read(session.parsed(), "s.jsonl")

    plain, reported = built(False), built(True)
    assert reported.contexts[0].stand_ins == {}
    assert reported.contexts[0].calls[-1].usage == plain.contexts[0].calls[-1].usage
    window = StrategyOptions.from_values({"keep_recent": 4})
    grid = settings_grid([60_000], False, ["window"])
    bills = [replay_recorded(s, "claude-code", grid, window, shipped_prices(), None).bill for s in (plain, reported)]
    assert bills[1].cost == pytest.approx(bills[0].cost, rel=1e-9) and bills[1].input_tokens == bills[0].input_tokens
    assert bills[0].cost > 0


def test_the_clients_cut_stands_in_for_the_results_its_record_names_from_the_next_request_on():
    (context,) = _session(CUT).contexts
    (path,) = (DATA / CUT).glob("*.jsonl")
    records = [orjson.loads(line) for line in path.read_bytes().splitlines()]
    (cut,) = [
        r["attachment"]
        for r in records
        if r.get("type") == "attachment" and r["attachment"]["type"] == "tool_results_cut"
    ]
    assert cut["standIn"] == STAND_IN and len(cut["callIds"]) == 17
    assert sorted(context.stand_ins) == list(range(RETURN, len(context.calls)))
    for sent in context.stand_ins.values():
        assert sorted(context.messages[at]["tool_call_id"] for at in sent) == sorted(cut["callIds"])


@pytest.mark.parametrize("name", [CLEARED, CUT, INPUTS])
def test_replay_estimates_what_the_client_did_as_billed_and_bills_what_the_fake_served(name):
    from compactctl.replay import settings_grid, shipped_prices
    from compactctl.replay.recorded import replay_recorded
    from compactctl.strategies import StrategyOptions

    session = _session(name)
    window = StrategyOptions.from_values({"keep_recent": 4})
    played = replay_recorded(
        session, "claude-code", settings_grid([60_000], False, ["window"]), window, shipped_prices(), None
    )
    assert played.bill.cost == pytest.approx(_served_cost(name, "anthropic"), rel=1e-6)
    assert played.recorded_estimate.input_tokens == pytest.approx(played.bill.input_tokens, rel=TOLERANCE)
    # The context of the last call, as calibrated, is what the model saw: the fake's input less the prefix.
    last = session.contexts[0].calls[-1].usage
    context = played.recorded_estimate.context_per_call[-1]
    assert context == pytest.approx(last.input_tokens, rel=TOLERANCE)


def test_an_error_result_is_never_cut_and_a_microcompact_boundary_cuts_the_results_it_names():
    session = ClaudeSession()
    session.user("Look around.")
    long = "line of output " * 40
    first = session.response(text="Listing.", tools=[("Bash", {"command": "ls"}, long)])
    second = session.response(text="Failing.", tools=[("Bash", {"command": "false"}, long)])
    session.records[-1]["message"]["content"][0]["is_error"] = True
    short = session.response(text="Short.", tools=[("Bash", {"command": "true"}, "ok")])
    ids = [f"toolu_{m}_0" for m in (first, second, short)]
    session._envelope("system", subtype="microcompact_boundary", microcompactMetadata={"compactedToolIds": ids})
    session.user("Go on.")
    session.response(text="Done.")
    (context,) = claude_code.read(session.parsed(), "s.jsonl").contexts
    assert list(context.stand_ins) == [3]  # the call after the boundary
    (cut,) = context.stand_ins[3].values()  # the error and the result shorter than the stand-in are sent as they are
    assert cut == {"role": "tool", "tool_call_id": ids[0], "content": STAND_IN}


@pytest.mark.clients
@pytest.mark.parametrize("flags", ["cleared", "cut"])
def test_a_real_claude_code_session_back_after_an_idle_hour_calibrates_within_tolerance(tmp_path, flags):
    from tests.fakes.record_context_edits import CLEARED_BY_THE_API, CUT_BY_THE_CLIENT, idle_session

    claude, session_id = idle_session(tmp_path, CLEARED_BY_THE_API if flags == "cleared" else CUT_BY_THE_CLIENT, 44)
    session = _read(claude.session_file(session_id))
    (context,) = session.contexts
    assert len(context.calls) == 39 and sorted(context.stand_ins) == list(range(RETURN, 39))
    calibration = calibrate(session, "claude-code")
    assert calibration.held_out.median < TOLERANCE and calibration.held_out.p90 < 0.05
    assert max(_errors_on_the_prefix_before_the_pause(session, calibration)) < TOLERANCE
    assert (
        min(_errors_on_the_prefix_before_the_pause(_as_logged(session), calibrate(_as_logged(session), "claude-code")))
        > 0.2
    )


@pytest.mark.clients
def test_a_real_claude_code_session_whose_writes_inputs_the_api_cleared_calibrates_within_tolerance(tmp_path):
    from tests.fakes.record_context_edits import INPUTS_CLEARED_BY_THE_API, idle_session

    claude, session_id = idle_session(tmp_path, INPUTS_CLEARED_BY_THE_API, 14, writes=True)
    path = claude.session_file(session_id)
    assert b'"clear_tool_inputs":["Write"' in path.read_bytes()
    session = _read(path)
    (context,) = session.contexts
    assert len(context.calls) == 39 and sorted(context.stand_ins) == list(range(RETURN, 39))
    assert all(any(m["role"] == "assistant" for m in context.stand_ins[n].values()) for n in context.stand_ins)
    calibration = calibrate(session, "claude-code")
    assert calibration.held_out.median < TOLERANCE and calibration.held_out.p90 < 0.05
    assert max(_errors_on_the_prefix_before_the_pause(session, calibration)) < TOLERANCE
    only = _results_only(session)
    assert min(_errors_on_the_prefix_before_the_pause(only, calibrate(only, "claude-code"))) > 0.2


@pytest.mark.clients
def test_a_real_claude_code_session_resumed_after_its_cut_sends_what_model_input_says(tmp_path):
    """Resumed once more (no pause), the real client sends the results it cut as the stand-in: the request the fake
    got holds what ``model_input`` gives of the file."""
    from compactctl.formats import load
    from compactctl.model_input import model_input
    from tests.fakes.anthropic import FakeAnthropic
    from tests.fakes.record_context_edits import CUT_BY_THE_CLIENT, idle_session
    from tests.fakes.record_fixtures import _claude_print

    claude, session_id = idle_session(tmp_path, CUT_BY_THE_CLIENT, 44)
    path = claude.session_file(session_id)
    _, (transcript,) = load(path.read_bytes(), str(path))
    expected = {m["tool_call_id"]: m["content"] for m in model_input(transcript) if m["role"] == "tool"}
    with FakeAnthropic() as fake:
        claude.fake = fake
        fake.enqueue("Still 14 lines each.")
        _claude_print(claude, "Anything else?", "--resume", session_id)
        (request,) = fake.model_calls()
    sent = {
        b["tool_use_id"]: b["content"]
        for m in request["messages"]
        if m["role"] == "user" and isinstance(m["content"], list)
        for b in m["content"]
        if b.get("type") == "tool_result"
    }
    cut = {call for call, content in expected.items() if content == STAND_IN}
    assert len(cut) == 17 and {call for call, content in sent.items() if content == STAND_IN} == cut
