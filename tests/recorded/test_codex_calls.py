"""Codex: a run of model-output items is one call, paired with the one changed token_count beside it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from compactctl.formats.records import parse_records
from compactctl.recorded import codex
from tests.conftest import SHARED_TRANSCRIPTS, needs_transcripts


def _line(kind: str, payload: dict[str, Any]) -> dict[str, Any]:
    return {"timestamp": "2026-01-01T00:00:00.000Z", "type": kind, "payload": payload}


def _count(total: int, last: int, info: bool = True) -> dict[str, Any]:
    usage = {"input_tokens": last, "cached_input_tokens": 0, "output_tokens": 10, "reasoning_output_tokens": 4}
    totals = {**usage, "input_tokens": total}
    return _line(
        "event_msg",
        {"type": "token_count", "info": {"total_token_usage": totals, "last_token_usage": usage} if info else None},
    )


def _call(n: int) -> list[dict[str, Any]]:
    return [
        _line("response_item", {"type": "reasoning", "summary": [], "encrypted_content": "e" * 2000}),
        _line("response_item", {"type": "function_call", "name": "shell", "arguments": "{}", "call_id": f"c{n}"}),
    ]


def _output(n: int) -> dict[str, Any]:
    return _line("response_item", {"type": "function_call_output", "call_id": f"c{n}", "output": "ok"})


def _read(lines: list[dict[str, Any]]) -> codex.RecordedSession:
    data = b"".join(orjson.dumps(line) + b"\n" for line in lines)
    return codex.read(parse_records(data, "r.jsonl")[0], "r.jsonl")


START = [
    _line("session_meta", {"id": "x", "base_instructions": {"text": "You are Codex."}}),
    _line("turn_context", {"model": "gpt-5.1-codex"}),
    _line("response_item", {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "fix it"}]}),
]


def test_counts_written_after_the_response_and_its_outputs_pair_in_order():
    lines = [
        *START,
        *_call(1),
        _output(1),
        _count(1000, 1000),
        _count(1000, 1000),
        *_call(2),
        _output(2),
        _count(2100, 1100),
    ]
    recorded = _read(lines)
    assert [c.usage.input_tokens for c in recorded.contexts[0].calls] == [1000, 1100]
    assert recorded.usage_total().input_tokens == recorded.reported_total.input_tokens == 2100


def test_counts_written_before_the_response_pair_with_the_next_one():
    # 0.5x-0.6x: a null count first, then each count just before the items of the response it counts.
    lines = [*START, _count(0, 0, info=False), _count(1000, 1000), *_call(1), _output(1), _count(1000, 1000)]
    lines += [_count(2100, 1100), *_call(2), _output(2)]
    recorded = _read(lines)
    assert [c.usage.input_tokens for c in recorded.contexts[0].calls] == [1000, 1100]


def test_a_count_whose_response_was_never_written_is_kept_apart():
    lines = [*START, _count(1000, 1000), *_call(1), _output(1), _count(2100, 1100)]
    recorded = _read(lines)
    assert [c.usage.input_tokens for c in recorded.contexts[0].calls] == [1000]
    assert recorded.unpaired.input_tokens == 1100
    assert recorded.usage_total().input_tokens + recorded.unpaired.input_tokens == recorded.reported_total.input_tokens
    assert (recorded.unheld_calls, recorded.compaction_calls) == (1, 0)


@needs_transcripts
def test_replay_counts_a_response_cut_off_before_it_was_written_among_the_bills_calls():
    # kcosr's real rollout (Codex 0.63) ends on a token count whose response was never written:
    # 65 responses in the log, 66 billed. The bill's calls and cost hold it, and a note says so.
    from typer.testing import CliRunner

    from compactctl.cli.main import app

    path = SHARED_TRANSCRIPTS / "codex" / "kcosr__chat-to-html" / "codex.jsonl"
    recorded = codex.read(parse_records(path.read_bytes(), str(path))[0], str(path))
    assert recorded.unheld_calls == 1 and sum(len(c.calls) for c in recorded.contexts) == 65
    result = CliRunner().invoke(app, ["replay", str(path), "-t", "100000", "--json"])
    assert result.exit_code == 0, result.output
    (entry,) = orjson.loads(result.stdout)["files"]
    none, simulated = entry["settings"][0], entry["settings"][1]
    assert (none["calls"], simulated["calls"]) == (66, 65)
    assert entry["api"]["unpaired_cost"] > 0
    assert any("1 billed response(s) the log holds no message for" in note for note in entry["api"]["notes"])


def test_a_compacted_line_is_a_recorded_compaction_and_the_history_goes_on():
    compacted = _line(
        "compacted",
        {
            "message": "",
            "replacement_history": [
                {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "fix it"}]},
                {"type": "compaction", "encrypted_content": "z" * 5000},
            ],
        },
    )
    lines = [*START, *_call(1), _output(1), _count(1000, 1000), compacted, *_call(2), _output(2), _count(1500, 500)]
    (context,) = _read(lines).contexts
    assert len(context.calls) == 2
    (compaction,) = context.compactions
    assert compaction.before_call == 1
    assert [m["role"] for m in compaction.replacement] == ["system", "user", "user"]
    assert compaction.replacement[-1]["encrypted_chars"] > 0
    assert [m["role"] for m in context.messages].count("tool") == 2  # the whole history, both outputs


@needs_transcripts
@pytest.mark.parametrize(
    "name",
    [
        "qiushiyan__duet/codex-session.jsonl",
        "kcosr__chat-to-html/codex.jsonl",
        "AcidicSoil__codex-session-view/rollout-2025-11-17T15-30-28-019a93b9-f380-7600-98ff-940e6b99603c.jsonl",
        "yoavf__ai-sessions/codex-pomodor-timer.jsonl",
    ],
)
def test_paired_usage_adds_up_to_the_session_total_codex_reports(name):
    path = SHARED_TRANSCRIPTS / "codex" / name
    recorded = codex.read(parse_records(path.read_bytes(), str(path))[0], str(path))
    paired = recorded.usage_total()
    if recorded.unpaired is not None:
        paired = paired + recorded.unpaired
    assert paired.input_tokens == recorded.reported_total.input_tokens
    assert paired.output_tokens == recorded.reported_total.output_tokens


REAL_COMPACTED = Path(__file__).parent / "data" / "codex-0.171.0-compacted.jsonl"


def _real_lines() -> list[dict[str, Any]]:
    return [orjson.loads(line) for line in REAL_COMPACTED.read_bytes().splitlines() if line]


def test_a_real_codex_compaction_is_recorded_and_its_own_call_billed():
    # Codex 0.171 auto-compacted on a low limit against the loopback fake (tests/fakes/record_fixtures.py):
    # its /responses/compact request wrote no response item, only a token_usage_record.
    recorded = _read(_real_lines())
    (context,) = recorded.contexts
    assert len(context.calls) == 3
    assert [c.before_call for c in context.compactions] == [2]
    records = [line["payload"] for line in _real_lines() if line["type"] == "token_usage_record"]
    thread_total = records[-1]["thread_token_usage"]
    # token_count's running total leaves the compaction call out; the records' thread total does not.
    assert recorded.reported_total.input_tokens == thread_total["input_tokens"]
    assert (recorded.compaction_calls, recorded.compaction_calls_estimated) == (1, 0)
    compaction = records[2]["usage"]  # the one record with no model output before it
    assert recorded.unpaired.input_tokens == compaction["input_tokens"]
    assert recorded.usage_total() + recorded.unpaired == recorded.reported_total


def test_a_compaction_the_rollout_has_no_usage_for_is_estimated_as_the_request_it_was():
    # The same real rollout as an older Codex writes it (no token_usage_record): the compaction
    # call is estimated from the last call's input and output; the recorded figure is the check.
    lines = _real_lines()
    recorded = _read([line for line in lines if line["type"] != "token_usage_record"])
    truth = next(line["payload"]["usage"] for n, line in enumerate(lines) if lines[n + 1]["type"] == "compacted")
    assert (recorded.compaction_calls, recorded.compaction_calls_estimated) == (1, 1)
    assert recorded.unpaired is None  # what the log reports still adds up without it
    assert recorded.compaction_estimate.input_tokens == pytest.approx(truth["input_tokens"], rel=0.01)
    assert recorded.usage_total() == recorded.reported_total


def test_replay_bills_the_producers_compaction_call_in_the_recorded_row():
    from typer.testing import CliRunner

    from compactctl.cli.main import app

    result = CliRunner().invoke(app, ["replay", str(REAL_COMPACTED), "-t", "30000", "--json"])
    assert result.exit_code == 0, result.output
    (entry,) = orjson.loads(result.stdout)["files"]
    recorded = next(row for row in entry["settings"] if row["trigger"] == "recorded")
    thread_total = [line for line in _real_lines() if line["type"] == "token_usage_record"][-1]["payload"]
    assert recorded["input_tokens"] == thread_total["thread_token_usage"]["input_tokens"]
    assert any("1 compaction call(s) are in the bill" in note for note in entry["api"]["notes"])


@needs_transcripts
def test_the_window_codex_worked_with_is_read_from_the_rollout():
    path = SHARED_TRANSCRIPTS / "codex" / "qiushiyan__duet" / "codex-session.jsonl"
    recorded = codex.read(parse_records(path.read_bytes(), str(path))[0], str(path))
    assert recorded.context_window == 258_400  # token_count's model_context_window (genai-prices says 1M for gpt-5.5)


REAL_FORK = Path(__file__).resolve().parents[1] / "formats" / "data" / "real-clients" / "codex-0.171.0-fork"


def test_a_real_codex_fork_bills_its_own_calls_once_beside_its_parent():
    # `codex exec fork` (0.171) against the loopback fake: the fork's rollout copies no call of its
    # parent, but its running totals go on from the parent's.
    parent, fork = REAL_FORK / "parent.jsonl", REAL_FORK / "fork.jsonl"
    forked = _read([orjson.loads(line) for line in fork.read_bytes().splitlines() if line])
    assert forked.forked_from is not None and forked.reported_total is None
    assert [len(c.calls) for c in forked.contexts] == [1]
    from typer.testing import CliRunner

    from compactctl.cli.main import app

    result = CliRunner().invoke(app, ["replay", str(parent), str(fork), "-t", "100000", "--json"])
    assert result.exit_code == 0, result.output
    doc = orjson.loads(result.stdout)
    responses = {
        line["payload"]["response_id"]: line["payload"]["usage"]
        for path in (parent, fork)
        for line in map(orjson.loads, path.read_bytes().splitlines())
        if line["type"] == "token_usage_record"
    }
    baseline = doc["total"]["settings"][0]
    assert baseline["calls"] == len(responses) == 3
    assert baseline["input_tokens"] == sum(u["input_tokens"] for u in responses.values())
    (fork_entry,) = [entry for entry in doc["files"] if entry["file"] == str(fork)]
    assert any("a fork of session" in note for note in fork_entry["api"]["notes"])


MODEL_SWITCH = (
    Path(__file__).parents[1] / "formats" / "data" / "real-clients" / "codex-0.171.0-model-switch-compacted.jsonl"
)


def _each_response_at_its_model(path: Path) -> tuple[float, int]:
    """The rollout's bill worked out apart from replay: each ``token_usage_record`` (one per response,
    the compaction's too) at the model the turn runs on, named by ``thread_settings_applied`` before the
    turn starts and by its ``turn_context``."""
    from genai_prices import Usage, calc_price

    from compactctl.tokens import bare_model
    from tests.replay.test_bill import openai_counts

    def price(counts: Any, at: str | None) -> float:  # a gateway's ``openai/gpt-5.5`` at the maker's list price
        return float(calc_price(counts, bare_model(at), provider_id="openai").total_price)

    model, cost, calls, searches = None, 0.0, 0, 0
    # A compaction right after a turn's settings (before its turn_context) runs on the turn's model, but on the
    # model before it where the turn_context names another compaction family (comp_hash): priced at that context.
    turn_model, comp_hash, at_turn_start, waiting = None, None, False, []
    for line in path.read_bytes().splitlines():
        record = orjson.loads(line)
        payload = record.get("payload") or {}
        if record.get("type") == "turn_context":
            switched = bool(comp_hash and payload.get("comp_hash") and comp_hash != payload["comp_hash"])
            model = payload.get("model") or model
            cost += sum(price(counts, turn_model if switched else model) for counts in waiting)
            turn_model, comp_hash, at_turn_start, waiting = model, payload.get("comp_hash"), False, []
        elif payload.get("type") == "thread_settings_applied":
            model, at_turn_start = payload["thread_settings"].get("model") or model, True
        elif record.get("type") == "response_item":
            at_turn_start = False
            searches += payload.get("type") == "web_search_call"  # billed per call beside the response's tokens
        elif record.get("type") == "token_usage_record":
            counts = Usage(**openai_counts(payload["usage"]), **({"web_searches": searches} if searches else {}))
            if at_turn_start and turn_model is not None:
                waiting.append(counts)
            else:
                cost += price(counts, model)
            calls, searches = calls + 1, 0
    return cost + sum(price(counts, model) for counts in waiting), calls


def test_a_compaction_at_the_start_of_a_turn_on_another_model_is_billed_at_that_model():
    """The real 0.171 client ran two turns on gpt-5.6-terra, then one on gpt-5.4 under a low auto-compact
    limit: the compaction ran on gpt-5.4 (the loopback fake served it so: 23,541 tokens in, 23 out), its
    usage recorded before the turn's turn_context, after the thread_settings_applied naming gpt-5.4."""
    from genai_prices import Usage, calc_price
    from typer.testing import CliRunner

    from compactctl.cli.main import app

    result = CliRunner().invoke(app, ["replay", str(MODEL_SWITCH), "-t", "100000", "--json"])
    (entry,) = orjson.loads(result.stdout)["files"]
    compaction = calc_price(Usage(input_tokens=23541, output_tokens=23), "gpt-5.4", provider_id="openai")
    assert entry["api"]["unpaired_cost"] == pytest.approx(float(compaction.total_price))
    expected, calls = _each_response_at_its_model(MODEL_SWITCH)
    assert calls == 5  # 3 on gpt-5.6-terra, the compaction and 1 on gpt-5.4
    bill = next(row for row in entry["settings"] if row["basis"] == "bill")
    assert bill["cost"] == pytest.approx(expected, rel=1e-6)


SWITCH_COMPACTION = Path(__file__).resolve().parents[1] / "formats" / "data" / "real-clients"
SWITCH_COMPACTION = SWITCH_COMPACTION / "codex-0.171.0-switch-compaction.jsonl"


def test_a_switch_to_a_model_of_another_compaction_family_compacts_on_the_model_before_it():
    """The real 0.171 client: two turns on gpt-5.5, then one resumed on gpt-5.6-terra, whose turn_context names
    another ``comp_hash`` (2911, then 3000). Codex compacts before the switch, with no limit reached, on gpt-5.5:
    the loopback fake served that request on it (tests/fakes/record_server_tools.py asserts it). Its usage is
    written after the thread_settings_applied naming gpt-5.6-terra, as an auto-compaction at a turn's start is
    (which does run on the new model: the test above); replay priced it at gpt-5.6-terra, $0.030099 under."""
    from genai_prices import Usage, calc_price
    from typer.testing import CliRunner

    from compactctl.cli.main import app

    usages = [
        orjson.loads(line)["payload"]["usage"]
        for line in SWITCH_COMPACTION.read_bytes().splitlines()
        if b'"token_usage_record"' in line
    ]
    models = ["gpt-5.5"] * 4 + ["gpt-5.6-terra"]  # three calls, the compaction, the call after the switch
    assert len(usages) == len(models)
    expected = sum(
        float(calc_price(Usage(input_tokens=u["input_tokens"], output_tokens=u["output_tokens"]), m,
                         provider_id="openai").total_price)
        for u, m in zip(usages, models, strict=True)
    )  # fmt: skip
    result = CliRunner().invoke(app, ["replay", str(SWITCH_COMPACTION), "-t", "100000", "--json", "-q"])
    (entry,) = orjson.loads(result.stdout)["files"]
    bill = next(row for row in entry["settings"] if row["basis"] == "bill")
    assert bill["cost"] == pytest.approx(expected, rel=1e-6)
    compaction = Usage(input_tokens=usages[3]["input_tokens"], output_tokens=usages[3]["output_tokens"])
    assert entry["api"]["unpaired_cost"] == pytest.approx(
        float(calc_price(compaction, "gpt-5.5", provider_id="openai").total_price)
    )


REAL_REVERT = Path(__file__).resolve().parent / "data" / "codex-0.171.0-revert"


def test_a_turn_a_real_codex_revert_dropped_is_billed_off_the_live_thread(tmp_path):
    # The fifth sweep (bench/client_shapes_fifth.py): a /compact, a turn, that turn dropped by thread/revert, then
    # `exec resume --last`. The second rollout of the thread keeps the first up to its history_base; the dropped
    # turn's response stays in the first, billed, and is on no thread replay simulates.
    from typer.testing import CliRunner

    from compactctl.cli.main import app

    first, after = sorted(REAL_REVERT.glob("*.jsonl"))
    (base,) = [orjson.loads(line)["payload"]["history_base"] for line in after.read_bytes().splitlines()[:1]]
    records = [orjson.loads(line) for line in first.read_bytes().splitlines()]
    cut = base["end_ordinal_exclusive"]
    dropped = [r["payload"]["usage"] for r in records[cut:] if r["type"] == "token_usage_record"]
    assert len(dropped) == 1
    bill = sum(_each_response_at_its_model(path)[0] for path in (first, after))
    folder = tmp_path / "sessions"
    folder.mkdir()
    for path in (first, after):
        (folder / path.name).write_bytes(path.read_bytes())
    for inputs in ([str(folder)], [str(first), str(after)]):
        result = CliRunner().invoke(app, ["replay", *inputs, "--json", "-q"])
        assert result.exit_code == 0, result.output
        doc = orjson.loads(result.stdout)
        entry = next(e for e in doc["files"] if e["file"].endswith(first.name))
        assert entry["api"]["off_thread"]["calls"] == 1
        assert entry["api"]["off_thread"]["input_tokens"] == dropped[0]["input_tokens"]
        assert any("were off the live thread" in note and "thread/revert" in note for note in entry["api"]["notes"])
        # The rows simulate the live thread: the first file's two calls before the dropped turn.
        none = entry["settings"][0]
        assert none["trigger"] == "none" and len(none["context_per_call"]) == 2
        recorded = next(row for row in doc["total"]["settings"] if row["trigger"] == "recorded")
        assert recorded["cost"] == pytest.approx(bill, rel=1e-6), (recorded["cost"], bill)
    shown = CliRunner().invoke(app, ["replay", str(folder)])
    assert shown.exit_code == 0, shown.output
    assert "1 of 4 billed calls" in " ".join(shown.stderr.split()), shown.stderr
    # Alone, the first rollout cannot know a later one keeps only part of it: as it reads.
    alone = orjson.loads(CliRunner().invoke(app, ["replay", str(first), "--json", "-q"]).stdout)["files"][0]
    assert alone["api"]["off_thread"]["calls"] == 0
    assert len(alone["settings"][0]["context_per_call"]) == 3
