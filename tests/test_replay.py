"""Replay: every figure of a small transcript worked out by hand, triggers, caching, prices, facts."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from compactctl.errors import InputError
from compactctl.replay import (
    BASELINE,
    Prices,
    Scenario,
    ScenarioResult,
    Trigger,
    aggregate,
    load_prices,
    parse_thresholds,
    prices_for,
    replay,
    settings_grid,
    shipped_prices,
)
from compactctl.replay.prices import with_summarizer_prices
from compactctl.replay.results import FileReplay, replay_json
from compactctl.strategies import STRATEGIES, StepContext, StepResult, Strategy
from compactctl.summarizers import SummaryRequest
from compactctl.tokens import TokenCounter
from tests.conftest import unchanged
from tests.helpers import call
from tests.properties import examples

# USD per million tokens, chosen so each figure shows up in the cost on its own.
PRICES = Prices("test", input=2.0, cached_input=0.5, cache_write=2.5, output=8.0)
SETTING_KEYS = [
    "trigger", "threshold", "strategy", "calls", "compactions", "over_threshold_after_compaction",
    "peak_context", "mean_context", "input_tokens", "cached_tokens", "cache_write_tokens", "output_tokens",
    "summarizer_calls", "summarizer_tokens", "cost", "facts_lost", "context_per_call", "unpriced_calls",
    "calls_over_threshold",
]  # fmt: skip


def msg(role: str, text: str, **marks: Any) -> dict[str, Any]:
    message: dict[str, Any] = {"role": role, "content": text}
    if marks:
        message["compactctl"] = marks
    return message


@pytest.fixture
def approx() -> TokenCounter:
    return TokenCounter("approx")


@pytest.fixture
def talk() -> list[dict[str, Any]]:
    """Four calls. With approx (chars/4, rounded up), a message costs 3 tokens of framing, its
    role's text ("system" 2, "user" 1, "assistant" 3) and its content, so the sizes are:

    system 3+2+100 = 105, u1 3+1+10 = 14, a2 3+3+5 = 11, u3 3+1+20 = 24, a4 3+3+10 = 16,
    u5 14, a6 11, u7 14, a8 11.
    """
    return [
        msg("system", "S" * 400),
        msg("user", "u" * 40),
        msg("assistant", "a" * 20),
        msg("user", "v" * 80),
        msg("assistant", "b" * 40),
        msg("user", "w" * 40),
        msg("assistant", "c" * 20),
        msg("user", "x" * 40),
        msg("assistant", "d" * 20),
    ]


def test_the_hand_built_transcript_has_the_sizes_the_figures_below_assume(talk, approx):
    assert [approx.message(m) for m in talk] == [105, 14, 11, 24, 16, 14, 11, 14, 11]


def test_no_compaction_every_figure_by_hand(talk, approx):
    original = unchanged(talk)
    [base] = replay(talk, [], counter=approx, prices=PRICES)
    assert talk == original
    # Contexts: 105+14 = 119; +11+24 = 154; +16+14 = 184; +11+14 = 209.
    assert base.context_per_call == [119, 154, 184, 209]
    # Each call's billed input is its context plus 3 tokens of reply priming.
    assert base.input_tokens == 122 + 157 + 187 + 212 == 678
    # Each call reads the previous call's whole context from the cache and writes what is new
    # (the priming included: it follows the messages, so it is never a cached prefix).
    assert base.cached_tokens == 0 + 119 + 154 + 184 == 457
    assert base.cache_write_tokens == 122 + 38 + 33 + 28 == 221
    assert base.output_tokens == 11 + 16 + 11 + 11 == 49
    assert base.cost == pytest.approx((457 * 0.5 + 221 * 2.5 + 0 * 2.0 + 49 * 8.0) / 1e6)
    assert (base.calls, base.compactions, base.peak_context, base.mean_context) == (4, 0, 209, 166.5)
    assert (base.trigger, base.threshold, base.strategy, base.facts_lost) == ("none", None, "none", 0)


def test_threshold_window_every_figure_by_hand(talk, approx):
    _, row = replay(talk, [Scenario(Trigger(170), ("window",))], {"keep_recent": 2}, counter=approx, prices=PRICES)
    # Calls 1-3 as without compaction (119, 154, 184). Call 3's context exceeded 170, so before
    # call 4 the window keeps the system prompt and the last two messages: 105+11+14 = 130.
    assert row.context_per_call == [119, 154, 184, 130]
    assert row.input_tokens == 119 + 154 + 184 + 130 + 4 * 3 == 599
    assert (row.compactions, row.over_threshold_after_compaction) == (1, 0)
    # Call 4 shares only the system prompt with call 3's context: 105 cached, 133-105 = 28 written anew.
    assert row.cached_tokens == 0 + 119 + 154 + 105 == 378
    assert row.cache_write_tokens == 122 + 38 + 33 + 28 == 221
    assert row.output_tokens == 49
    assert row.cost == pytest.approx((378 * 0.5 + 221 * 2.5 + 49 * 8.0) / 1e6)
    # Mean 587/4 = 146.75, rounded half to even.
    assert (row.peak_context, row.mean_context) == (184, 146.8)


def test_a_compaction_that_cannot_get_under_the_threshold_is_counted_not_looped(talk, approx):
    # The system prompt alone (105) is over 100: every compaction ends over the threshold.
    _, row = replay(talk, [Scenario(Trigger(100), ("window",))], {"keep_recent": 2}, counter=approx, prices=PRICES)
    assert row.calls == 4
    assert row.compactions == 3  # once before each of calls 2, 3 and 4, never more
    assert row.over_threshold_after_compaction == 3
    assert row.context_per_call == [119, 105 + 11 + 24, 105 + 16 + 14, 105 + 11 + 14]


def test_short_prompts_are_not_cached_below_the_model_minimum(talk, approx):
    prices = dataclasses.replace(PRICES, min_cached_tokens=125)
    [base] = replay(talk, [], counter=approx, prices=prices)
    # Call 1 (119 + 3 priming = 122) is too short to cache: plain input. Call 2 (157) shares
    # 119 (< 125): nothing read, 157 written. Calls 3 and 4 read 154 and 184, write 33 and 28.
    assert base.cached_tokens == 0 + 0 + 154 + 184
    assert base.cache_write_tokens == 0 + 157 + 33 + 28
    assert base.cost == pytest.approx((338 * 0.5 + 218 * 2.5 + 122 * 2.0 + 49 * 8.0) / 1e6)


def test_stage_end_annotation_compacts_before_the_next_call(talk, approx):
    talk[3]["compactctl"] = {"stage_end": True}
    _, row = replay(
        talk, [Scenario(Trigger(None, True), ("window",))], {"keep_recent": 2}, counter=approx, prices=PRICES
    )
    # u3 ends a stage: before call 2 the context becomes system, a2, u3 = 105+11+24.
    assert row.context_per_call == [119, 140, 140 + 16 + 14, 140 + 16 + 14 + 11 + 14]
    assert (row.trigger, row.threshold, row.compactions) == ("stage", None, 1)


def test_stage_marker_matches_message_text(talk, approx):
    talk[5]["content"] = "STAGE DONE" + "w" * 30  # same length, so still 14 tokens
    rows = replay(
        talk,
        [Scenario(Trigger(None, True), ("window",))],
        {"keep_recent": 2},
        counter=approx,
        prices=PRICES,
        summarizer=None,
        stage_marker=r"STAGE DONE",
    )
    assert rows[1].context_per_call == [119, 154, 105 + 16 + 14, 105 + 16 + 14 + 11 + 14]
    assert rows[1].compactions == 1


def test_stage_first_threshold_as_safety_net(talk, approx):
    talk[1]["compactctl"] = {"stage_end": True}
    setting = Scenario(Trigger(170, True), ("window",))
    _, row = replay(talk, [setting], {"keep_recent": 2}, counter=approx, prices=PRICES)
    # u1 ends a stage before call 1: the window keeps everything (system, u1), the call sees 119.
    # No later stage end, but call 3's 184 exceeds 170: the threshold compacts before call 4.
    assert row.trigger == "stage+threshold"
    assert row.context_per_call == [119, 154, 184, 130]
    assert row.compactions == 2


def test_baseline_input_is_the_sum_of_the_tokens_before_each_call(agent_messages, approx):
    [base] = replay(agent_messages, [], counter=approx, prices=PRICES)
    calls = [i for i, m in enumerate(agent_messages) if m["role"] == "assistant"]
    # Plus 3 tokens of reply priming per call.
    assert base.input_tokens == sum(approx.messages(agent_messages[:i]) for i in calls) + 3 * len(calls)
    assert base.output_tokens == sum(approx.message(agent_messages[i]) for i in calls)


TEXT = st.text(alphabet="abc xyz\n", min_size=1, max_size=60)


@st.composite
def agent_transcripts(draw: Any) -> list[dict[str, Any]]:
    messages = [msg("system", draw(TEXT))]
    for turn in range(draw(st.integers(1, 12))):
        messages.append(msg("user", draw(TEXT)))
        for step in range(draw(st.integers(0, 2))):
            call_id = f"c{turn}_{step}"
            messages.append({"role": "assistant", "content": None, "tool_calls": [call(call_id, "run", draw(TEXT))]})
            messages.append({"role": "tool", "tool_call_id": call_id, "content": draw(TEXT)})
        messages.append(msg("assistant", draw(TEXT)))
    return messages


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(messages=agent_transcripts(), threshold=st.integers(5, 120), keep=st.integers(0, 6))
def test_window_replay_invariants(messages, threshold, keep, approx):
    original = unchanged(messages)
    base, row = replay(
        messages, [Scenario(Trigger(threshold), ("window",))], {"keep_recent": keep}, counter=approx, prices=PRICES
    )
    assert messages == original
    calls = [i for i, m in enumerate(messages) if m["role"] == "assistant"]
    assert base.context_per_call == [approx.messages(messages[:i]) for i in calls]
    assert row.calls == base.calls == len(calls)
    # A window keeps a subset, so no call can be bigger than without compaction.
    assert all(a <= b for a, b in zip(row.context_per_call, base.context_per_call, strict=True))
    for r in (base, row):
        assert r.cached_tokens + r.cache_write_tokens <= r.input_tokens
        assert r.input_tokens == sum(r.context_per_call) + 3 * r.calls  # 3 tokens of reply priming a call
    assert row.over_threshold_after_compaction <= row.compactions < max(1, row.calls)


def test_each_message_is_counted_once_per_run(talk, approx, monkeypatch):
    counted: list[int] = []
    real = approx.message
    monkeypatch.setattr(approx, "message", lambda m: counted.append(id(m)) or real(m))
    replay(talk, settings_grid([100, 150, 170], False, ["window"]), {"keep_recent": 2}, counter=approx, prices=PRICES)
    assert sorted(counted) == sorted(id(m) for m in talk)


# --- a fake strategy, with the scripted summarizer of tests/helpers.py -----------------------------------------------


def summarize_all(messages: list[dict[str, Any]], options: Any, context: StepContext) -> StepResult:
    """Keep system messages; everything else becomes one summary message."""
    system = [i for i, m in enumerate(messages) if m["role"] == "system"]
    rest = [m for m in messages if m["role"] != "system"]
    assert context.summarizer is not None
    summary = context.summarizer.summarize(SummaryRequest(rest, "summary", 100))
    out = [messages[i] for i in system] + [{"role": "user", "content": summary.text}]
    return StepResult(out, [*system, None], usage=summary.usage)


@dataclasses.dataclass(frozen=True)
class NoOptions:
    threshold: int = -1


@pytest.fixture
def fake_strategy(monkeypatch):
    monkeypatch.setitem(STRATEGIES, "summarize-all", Strategy("summarize-all", summarize_all, NoOptions, "test"))


def test_summarizing_strategy_figures_by_hand(talk, approx, scripted, fake_strategy):
    scripted.enqueue("s" * 36, prompt_tokens=400, completion_tokens=50)  # the summary (user): 3+1+9 = 13 tokens
    _, row = replay(
        talk, [Scenario(Trigger(170), ("summarize-all",))], {}, counter=approx, prices=PRICES, summarizer=scripted
    )
    # Before call 4 the context (system + 7 messages) becomes system + summary = 105 + 13 = 118.
    assert [m["role"] for m in scripted.requests[0].messages] == ["user", "assistant"] * 3 + ["user"]
    assert row.context_per_call == [119, 154, 184, 118]
    assert (row.summarizer_calls, row.summarizer_tokens) == (1, 450)
    assert row.cached_tokens == 0 + 119 + 154 + 105
    # Call 4 bills 118 + 3 = 121, of which 121 - 105 = 16 are written.
    assert row.cache_write_tokens == 122 + 38 + 33 + 16
    calls_cost = (378 * 0.5 + 209 * 2.5 + 49 * 8.0) / 1e6
    summarizer_cost = (400 * 2.0 + 50 * 8.0) / 1e6
    assert row.cost == pytest.approx(calls_cost + summarizer_cost)


def test_strategy_threshold_option_follows_the_trigger(talk, approx, monkeypatch):
    seen: list[int] = []

    def spy(messages: list[dict[str, Any]], options: NoOptions, context: StepContext) -> StepResult:
        seen.append(options.threshold)
        return StepResult(list(messages), list(range(len(messages))))

    monkeypatch.setitem(STRATEGIES, "spy", Strategy("spy", spy, NoOptions, "test"))
    talk[3]["compactctl"] = {"stage_end": True}
    replay(
        talk,
        [Scenario(Trigger(170), ("spy",)), Scenario(Trigger(None, True), ("spy",))],
        {},
        counter=approx,
        prices=PRICES,
    )
    assert sorted(seen) == [0, 170]  # the settings walk the transcript in step: their calls interleave


# --- facts ---------------------------------------------------------------------------------------


def test_a_reference_whose_definer_was_compacted_away_is_a_lost_fact(talk, approx):
    talk[1]["compactctl"] = {"defines": ["order"]}
    talk[7]["compactctl"] = {"references": ["order"]}
    base, row = replay(talk, [Scenario(Trigger(170), ("window",))], {"keep_recent": 2}, counter=approx, prices=PRICES)
    assert base.facts_lost == 0
    assert row.facts_lost == 1  # u7 needs u1, which the window dropped before call 4


def test_facts_missing_from_the_final_context_are_lost(talk, approx, scripted, fake_strategy):
    talk[1]["content"] = "Alice" + "u" * 35
    talk[1]["compactctl"] = {"facts": ["Alice"]}
    scripted.enqueue("Customer Alice " + "s" * 21, "s" * 36)
    _, kept = replay(
        talk, [Scenario(Trigger(170), ("summarize-all",))], {}, counter=approx, prices=PRICES, summarizer=scripted
    )
    _, dropped = replay(
        talk, [Scenario(Trigger(170), ("summarize-all",))], {}, counter=approx, prices=PRICES, summarizer=scripted
    )
    assert (kept.facts_lost, dropped.facts_lost) == (0, 1)


def test_a_definer_with_facts_is_served_by_a_summary_that_keeps_them(talk, approx, scripted, fake_strategy):
    talk[1]["content"] = "Alice" + "u" * 35
    talk[1]["compactctl"] = {"defines": ["customer"], "facts": ["Alice"]}
    talk[7]["compactctl"] = {"references": ["customer"]}
    scripted.enqueue("Customer Alice " + "s" * 21)
    _, row = replay(
        talk, [Scenario(Trigger(170), ("summarize-all",))], {}, counter=approx, prices=PRICES, summarizer=scripted
    )
    assert row.facts_lost == 0


# --- settings, JSON ------------------------------------------------------------------------------


def test_settings_grid_puts_the_baseline_first_and_compares_triggers():
    grid = settings_grid([8000, 16000], True, ["window"])
    assert grid[0] == BASELINE
    assert [(s.trigger.name, s.trigger.threshold) for s in grid[1:]] == [
        ("threshold", 8000),
        ("threshold", 16000),
        ("stage", None),
        ("stage+threshold", 8000),
        ("stage+threshold", 16000),
    ]


def test_parse_thresholds():
    assert parse_thresholds(["8000,16000", "32k", " 1_000 "]) == [8000, 16000, 32000, 1000]
    for bad in ("lots", "nan", "inf"):
        with pytest.raises(InputError, match="not a number"):
            parse_thresholds([bad])
    with pytest.raises(InputError, match="positive"):
        parse_thresholds(["0"])


def test_unknown_strategy_is_a_usage_error(talk):
    with pytest.raises(InputError, match="unknown strategy 'nope'"):
        replay(talk, [Scenario(Trigger(10), ("nope",))])


def test_json_setting_keys_are_pinned(talk, approx):

    rows = replay(talk, [Scenario(Trigger(170), ("window",))], {"keep_recent": 2}, counter=approx, prices=PRICES)
    data = replay_json([FileReplay("talk.jsonl", "chat", 1, rows, "", [])])
    assert list(data) == ["files", "failed", "total"]
    assert [list(row) for row in data["total"]["settings"]] == [SETTING_KEYS, SETTING_KEYS]
    assert data["total"]["settings"][0]["trigger"] == "none"
    assert data["files"][0]["settings"] == data["total"]["settings"]
    assert list(ScenarioResult.__dataclass_fields__) == SETTING_KEYS


def test_aggregate_sums_transcripts_and_recomputes_the_mean(talk, approx):
    one = replay(talk, [Scenario(Trigger(170), ("window",))], {"keep_recent": 2}, counter=approx, prices=PRICES)
    two = replay(talk[:5], [Scenario(Trigger(170), ("window",))], {"keep_recent": 2}, counter=approx, prices=PRICES)
    total = aggregate([one, two])
    assert total[0].calls == 4 + 2
    # Contexts 666 and 119 + 154 = 273; billed input adds 3 tokens of priming per call.
    assert total[0].input_tokens == 678 + 122 + 157
    assert total[0].mean_context == round((666 + 273) / 6, 1)
    assert total[1].peak_context == 184
    assert total[1].context_per_call == one[1].context_per_call + two[1].context_per_call
    assert total[1].cost == pytest.approx(one[1].cost + two[1].cost)


# --- prices --------------------------------------------------------------------------------------


def test_listed_prices_carry_per_model_cache_discounts():
    table = shipped_prices()
    discounts = {name: round(prices_for(table, name).cache_discount, 3) for name in ("gpt-4o", "gpt-4.1", "gpt-5")}
    assert discounts == {"gpt-4o": 0.5, "gpt-4.1": 0.25, "gpt-5": 0.1}
    assert prices_for(table, "claude-sonnet-4-5").cache_discount == pytest.approx(0.1)


def test_an_llm_summarizer_is_billed_at_its_own_model(talk, approx, scripted, fake_strategy):
    table = shipped_prices()
    prices = with_summarizer_prices(PRICES, table, "openai", "gpt-4o-mini")
    assert prices.summarizer == prices_for(table, "gpt-4o-mini")
    assert with_summarizer_prices(PRICES, table, "extractive", "gpt-4o-mini") is PRICES
    scripted.enqueue("s" * 36, prompt_tokens=400, completion_tokens=50)
    _, row = replay(
        talk, [Scenario(Trigger(170), ("summarize-all",))], {}, counter=approx, prices=prices, summarizer=scripted
    )
    calls_cost = (378 * 0.5 + 209 * 2.5 + 49 * 8.0) / 1e6
    assert row.cost == pytest.approx(calls_cost + (400 * 0.15 + 50 * 0.60) / 1e6)


def test_price_flags_override_one_figure_of_the_model():
    prices = prices_for(shipped_prices(), "gpt-4o", output=99.0)
    assert (prices.input, prices.output) == (2.5, 99.0)


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("{", "bad price file"),
        ('{"models": {}}', '"models" table'),
        ('{"models": {"m": {"input": "cheap", "output": 1}}}', "'m': input must be a number"),
        ('{"models": {"m": {"input": 1, "output": -2}}}', "output must be a number >= 0"),
        ('{"default": "x", "models": {"m": {"input": 1, "output": 2}}}', "default model 'x'"),
    ],
)
def test_bad_price_files_name_the_file_and_the_problem(tmp_path, text, problem):
    path = tmp_path / "p.json"
    path.write_text(text)
    with pytest.raises(InputError, match=problem) as raised:
        load_prices(path)
    assert str(path) in str(raised.value)


@settings(max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(messages=agent_transcripts(), data=st.data())
def test_nothing_is_lost_without_compaction_and_protected_facts_survive_a_window(messages, data, approx):
    # Facts are words of their own message; references point back at earlier definers.
    definers: list[str] = []
    for index, message in enumerate(messages):
        text = message.get("content") or ""
        if message["role"] == "user" and text.strip() and data.draw(st.booleans()):
            message["compactctl"] = {"facts": [text.split()[0]], "defines": [f"k{index}"]}
            definers.append(f"k{index}")
        elif message["role"] == "assistant" and definers and data.draw(st.booleans()):
            message["compactctl"] = {"references": [data.draw(st.sampled_from(definers))]}
    base, row = replay(
        messages, [Scenario(Trigger(20), ("window",))], {"keep_recent": 2}, counter=approx, prices=PRICES
    )
    assert base.facts_lost == 0
    assert row.facts_lost == 0  # the window keeps fact-bearing messages, so their facts stay in context


def test_a_key_written_as_a_string_counts_as_in_prune(talk, approx):
    talk[1]["compactctl"] = {"defines": "order"}
    talk[7]["compactctl"] = {"references": "order"}
    base, row = replay(talk, [Scenario(Trigger(170), ("window",))], {"keep_recent": 2}, counter=approx, prices=PRICES)
    assert (base.facts_lost, row.facts_lost) == (0, 1)
