"""Gemini CLI: each ``gemini`` record with ``tokens`` is one call, billed from its own usage, across
the client's checkpoints, rewinds and compressions (compactctl/recorded/gemini.py)."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import orjson
import pytest
from genai_prices import Usage, calc_price

from compactctl.calibration import calibrate, call_features
from compactctl.formats.records import parse_records
from compactctl.recorded import gemini
from compactctl.replay import settings_grid, shipped_prices
from compactctl.replay.recorded import replay_recorded
from compactctl.strategies import StrategyOptions
from compactctl.tokens import counter_for

USAGE = Path(__file__).parents[1] / "formats" / "data" / "real-clients" / "gemini-cli-0.61.0-usage.jsonl"
HEADER = {"sessionId": "s", "projectHash": "p", "startTime": "2026-12-01T10:00:00.000Z", "kind": "main"}


def _user(n: int, text: str) -> dict[str, Any]:
    return {"id": f"u{n}", "timestamp": f"2026-12-01T10:00:{n:02d}.000Z", "type": "user", "content": [{"text": text}]}


def _model(n: int, text: str, tokens: dict[str, int] | None, model: str = "gemini-2.5-pro") -> dict[str, Any]:
    record: dict[str, Any] = {"id": f"g{n}", "timestamp": f"2026-12-01T10:00:{n:02d}.500Z", "type": "gemini"}
    record |= {"content": text, "thoughts": [], "model": model}
    if tokens is not None:
        record["tokens"] = {"input": 0, "output": 0, "cached": 0, "thoughts": 0, "tool": 0, **tokens}
    return record


def _read(lines: list[dict[str, Any]]) -> gemini.RecordedSession:
    data = b"".join(orjson.dumps(line) + b"\n" for line in lines)
    return gemini.read(parse_records(data, "chat.jsonl")[0], "chat.jsonl")


def _bill(record: dict[str, Any]) -> float:
    tokens = record["tokens"]
    usage = Usage(
        input_tokens=tokens["input"] + tokens["tool"],
        cache_read_tokens=tokens["cached"],
        output_tokens=tokens["output"] + tokens["thoughts"],
    )
    return float(calc_price(usage, model_ref=record["model"], provider_id="google").total_price)


def _replay(session: gemini.RecordedSession, thresholds: list[int] = [50_000]):  # noqa: B006
    window = StrategyOptions.from_values({"keep_recent": 4})
    grid = settings_grid(thresholds, False, ["window"])
    return replay_recorded(session, "gemini", grid, window, shipped_prices(), None)


def test_tool_prompt_tokens_are_input_and_thoughts_output_never_sent_again():
    first = _model(1, "Reading.", {"input": 9000, "output": 20, "thoughts": 300, "tool": 50})
    second = _model(3, "Done.", {"input": 9400, "cached": 9000, "output": 5})
    session = _read([HEADER, _user(0, "Go."), first, _user(2, "Again."), second])
    (context,) = session.contexts
    usage = context.calls[0].usage
    assert (usage.input_tokens, usage.output_tokens, usage.reasoning_tokens) == (9050, 320, 300)
    # The second call is sent the first response as its 20 output tokens, not its 320 billed.
    features = call_features(context, counter_for("cl100k_base", "google"), counter_for())
    assert features[1].resent == 20
    replayed = _replay(session)
    assert replayed.basis[0] == "bill"
    assert replayed.settings[0].cost == pytest.approx(_bill(first) + _bill(second), rel=1e-9)


def test_a_call_over_200k_input_is_billed_whole_at_the_long_context_price():
    long = _model(1, "Read it all.", {"input": 250_000, "output": 1_000})
    short = _model(1, "Read it all.", {"input": 150_000, "output": 1_000})
    costs = [_replay(_read([HEADER, _user(0, "Read."), record])).settings[0].cost for record in (long, short)]
    assert costs == [pytest.approx(_bill(long), rel=1e-9), pytest.approx(_bill(short), rel=1e-9)]
    assert costs[0] / 250_000 > 1.5 * costs[1] / 150_000  # gemini-2.5-pro: $2.50 over 200k, $1.25 under


def test_a_copy_without_tokens_keeps_the_calls_usage():
    """On resume 0.61 writes the list again as a ``$set`` checkpoint whose records lost their ``tokens``."""
    answer = _model(1, "Hi.", {"input": 9000, "output": 4})
    copy = {k: v for k, v in answer.items() if k != "tokens"}
    session = _read([HEADER, _user(0, "Hello."), answer, HEADER, {"$set": {"messages": [_user(0, "Hello."), copy]}}])
    (context,) = session.contexts
    assert [c.usage.input_tokens for c in context.calls] == [9000]


def test_calls_a_rewind_or_a_rolled_back_turn_cut_are_off_the_thread_and_billed():
    kept = _model(1, "First.", {"input": 9000, "output": 4})
    rewound = _model(3, "Second.", {"input": 9100, "cached": 9000, "output": 6})
    failed = _model(5, "Third.", {"input": 9200, "output": 3})
    again = _model(7, "Second, edited.", {"input": 9150, "cached": 9000, "output": 7})
    lines = [HEADER, _user(0, "one"), kept, _user(2, "two"), rewound, {"$rewindTo": "u2"}]
    lines += [_user(4, "three"), failed, {"$set": {"messages": [_user(0, "one"), kept]}}, _user(6, "two again"), again]
    session = _read(lines)
    (context,) = session.contexts
    assert [m.get("content") for m in context.messages] == ["one", "First.", "two again", "Second, edited."]
    assert [c.usage.input_tokens for c in session.off_thread] == [9100, 9200]
    assert not context.compactions
    replayed = _replay(session)
    assert replayed.settings[0].calls == 4
    assert replayed.settings[0].cost == pytest.approx(sum(map(_bill, [kept, rewound, failed, again])), rel=1e-9)


def _usage_fixture() -> tuple[gemini.RecordedSession, list[dict[str, Any]]]:
    records = parse_records(USAGE.read_bytes(), str(USAGE))[0]
    responses = {}
    for record in records:
        value = record.value
        if isinstance(value, dict) and value.get("type") == "gemini" and value.get("tokens"):
            responses.setdefault(value["id"], value)
    return gemini.read(records, str(USAGE)), list(responses.values())


def test_the_clients_compression_is_a_compaction_and_the_recorded_row_is_its_bill():
    session, responses = _usage_fixture()
    (context,) = session.contexts
    assert len(context.calls) == len(responses) == 9
    (compaction,) = context.compactions
    assert compaction.before_call == 2  # the second call was past the threshold with the log
    assert compaction.replacement[0]["content"] == "Loopback."  # the fake's summary, as the client kept it
    assert session.compaction_calls == 2  # the summary and its check, recorded nowhere
    replayed = _replay(session, [20_000])
    recorded = replayed.settings[replayed.basis.index("bill")]
    assert recorded.trigger == "recorded" and recorded.calls == 9
    estimate = session.compaction_estimate
    assert estimate is not None
    # The bill: every response's own tokens, what the file records; the compression's two calls, which it
    # records nothing of, estimated apart and said in a note, in no row.
    assert recorded.cost == pytest.approx(sum(map(_bill, responses)), rel=1e-6)
    compression = Usage(input_tokens=estimate.input_tokens, cache_read_tokens=estimate.cached_tokens,
                        output_tokens=estimate.output_tokens)  # fmt: skip
    model = responses[0]["model"]
    extra = float(calc_price(compression, model_ref=model, provider_id="google").total_price)
    apart = replayed.compaction_estimate
    assert apart is not None and apart.calls == 2 and apart.cost == pytest.approx(extra, rel=1e-6)
    assert any("2 compaction call(s) record no usage" in note for note in replayed.notes)
    # What the producer did, estimated from the log by the calibration, against that bill.
    paid = (replayed.bill.cost or 0) - (replayed.unpaired_cost or 0)
    assert abs((replayed.recorded_estimate.cost or 0) / paid - 1) <= 0.03


def test_the_calibration_predicts_its_held_out_calls():
    session, _ = _usage_fixture()
    calibration = calibrate(session, "gemini")
    assert calibration.provider == "google" and calibration.held_out.calls == 3
    assert calibration.held_out.median <= 0.02 and calibration.held_out.p90 <= 0.05


@pytest.mark.slow
def test_the_compression_estimate_is_the_requests_the_real_client_sent():
    """Gemini CLI 0.61 against the fake, as the fixture was made: the two compressor requests it sent
    (no tools), as the fake counted them, against the reader's estimate from the file alone."""
    from tests.fakes.clients import Gemini, require_client
    from tests.fakes.gemini import FakeGemini
    from tests.fakes.record_fixtures import GEMINI_COMPRESSING, gemini_usage_session
    from tests.fakes.scenarios import project
    from tests.fakes.server import text_tokens

    client = require_client("gemini")
    with tempfile.TemporaryDirectory(prefix="gemini-") as folder, FakeGemini(count=text_tokens) as fake:
        root = Path(folder)
        fake.implicit_cache = True
        runner = Gemini(client, root, project(root), fake, GEMINI_COMPRESSING)
        chat = runner.chat(gemini_usage_session(runner))
        session = gemini.read(parse_records(chat.read_bytes(), str(chat))[0], str(chat))
    compressor = [
        text_tokens([r.body.get("systemInstruction"), r.body.get("contents")])
        for r in fake.requests
        if isinstance(r.body, dict)
        and "enerateContent" in r.path
        and not r.body.get("tools")
        # The model router's requests ask for JSON; the compressor's for text.
        and "json" not in str((r.body.get("generationConfig") or {}).get("responseMimeType", ""))
    ]
    assert len(compressor) == session.compaction_calls == 2
    assert session.compaction_estimate is not None
    assert abs(session.compaction_estimate.input_tokens / sum(compressor) - 1) <= 0.05, compressor


@pytest.mark.slow
def test_a_resume_in_a_later_minute_leaves_a_second_file_that_holds_no_call():
    """0.61, resuming, writes a header to a file named by the current minute before it goes on in the
    session's own: the session's file dated a minute before makes that happen every time."""
    from compactctl.sessions import find_session
    from tests.fakes.clients import Gemini, require_client
    from tests.fakes.gemini import FakeGemini
    from tests.fakes.scenarios import project
    from tests.fakes.server import Reply

    client = require_client("gemini")
    with tempfile.TemporaryDirectory(prefix="gemini-") as folder, FakeGemini() as fake:
        root = Path(folder)
        runner = Gemini(client, root, project(root), fake)
        fake.enqueue(Reply(text="Hi."))
        session = runner.run("Hello.")
        (first,) = runner.chats()
        earlier = first.with_name(f"session-2026-01-01T00-00-{session[:8]}.jsonl")
        first.rename(earlier)
        fake.enqueue(Reply(text="Again."))
        runner.run("Again.", resume=session)
        assert not fake.errors and not fake.script
        files = runner.chats()
        assert len(files) == 2 and runner.chat(session) == earlier
        (stub,) = set(files) - {earlier}
        read = [gemini.read(parse_records(path.read_bytes(), str(path))[0], str(path)) for path in (earlier, stub)]
        assert [sum(len(c.calls) for c in r.contexts) for r in read] == [2, 0]
        assert find_session(session, "gemini", {"HOME": str(root)}, root).path == earlier


def test_replay_says_which_billed_side_calls_the_session_file_holds_nothing_of():
    """Gemini CLI's router classifier and loop check are billed calls its file records nowhere: named in the notes."""
    lines = [HEADER, _user(1, "Fix the test."), _model(2, "Done.", {"input": 9000, "output": 20})]
    lines += [_user(3, "Now the docs."), _model(4, "Done too.", {"input": 9100, "output": 20}, "gemini-2.5-flash")]
    result = _replay(_read(lines))
    (note,) = [n for n in result.notes if n.startswith("not in the bill")]
    assert "router's classifier" in note and "2 prompt(s) here" in note and "loop check" in note
    assert "the calls name gemini-2.5-flash and gemini-2.5-pro: the router ran here, or the model was switched" in note
    (one_model,) = [n for n in _replay(_read(lines[:3])).notes if n.startswith("not in the bill")]
    assert "1 prompt(s) here)" in one_model and "router ran" not in one_model


@pytest.mark.parametrize(
    ("model", "minimum"),
    [
        ("gemini-2.5-pro", 2048),
        ("gemini-2.5-flash", 2048),
        ("gemini-2.5-flash-lite", 2048),
        ("gemini-3-flash-preview", 1024),
        ("gemini-3-pro-preview", 4096),
        ("gemini-3.1-pro-preview", 4096),
    ],
)
def test_gemini_s_implicit_cache_holds_no_prompt_under_the_model_s_minimum(model, minimum):
    prices = shipped_prices().find(model, "google")
    assert prices is not None and prices.min_cached_tokens == minimum


CHAT_RESUME = USAGE.parent / "gemini-cli-0.61.0-compress-chat-resume.jsonl"


def test_a_saved_chat_loaded_replaces_the_history_with_no_call():
    """The real interactive 0.61 client: a turn, ``/compress``, ``/chat save snap``, a turn, ``/chat resume snap``,
    a turn. The load writes the saved (compressed) history as new records, then sets the list to them: a new
    context as a compression's, but the fake served no call for it (two for the compression)."""
    session = gemini.read(parse_records(CHAT_RESUME.read_bytes(), str(CHAT_RESUME))[0], str(CHAT_RESUME))
    (context,) = session.contexts
    assert [c.trigger for c in context.compactions] == ["", "load"]
    compression, load = context.compactions
    assert (compression.before_call, load.before_call) == (2, 3)
    assert [m["role"] for m in load.replacement] == ["user", "assistant"]
    assert "Loopback." in str(load.replacement[0]["content"])  # the saved chat is the compressed one
    assert session.compaction_calls == 2  # the compression's summary and its check; the load made none
    # No message of the loaded list is history a call was made on: every assistant message there is a call.
    history = context.messages[: load.position]
    assert sum(m["role"] == "assistant" for m in history) == load.before_call == 3
    responses = {r["id"]: r for r in orjson_lines(CHAT_RESUME) if r.get("type") == "gemini" and r.get("tokens")}
    replayed = _replay(session, [100_000])
    recorded = replayed.settings[replayed.basis.index("bill")]
    assert recorded.calls == len(responses) == 4
    assert recorded.cost == pytest.approx(sum(map(_bill, responses.values())), rel=1e-6)


def orjson_lines(path: Path) -> list[dict[str, Any]]:
    return [orjson.loads(line) for line in path.read_bytes().splitlines() if line.strip()]
