"""The simulation: walk a saved transcript as if it were live, and price each way of compacting it.

Every assistant message is one model call. Its context is the messages held at
that moment (the system prompt, a summary if a compaction left one, and the
messages kept since); its billed input is that context plus the reply's priming
(``REPLY_PRIMING_TOKENS``, the OpenAI cookbook's +3 per request); the assistant
message itself is the call's output. Between calls the context only grows, by the
messages the transcript adds. Thresholds, peaks and means are about the context,
the part a compaction can change.

*When* to compact is a policy (a ``Trigger``, in ``triggers``), kept apart from *how*
(the strategy steps, run through the same pure functions as ``compact``).

A compaction is run once per trigger: one that cannot get under the threshold is
counted (``over_threshold_after_compaction``), never looped on.

Prompt caching is modelled per message: a call's cached tokens are the tokens of the
longest run of leading messages unchanged since the previous call (the previous
call's whole context when nothing was compacted in between; after a compaction, usually
just the system prompt). The rest of the input is written to the cache, which is what
a provider bills a cache write for. Prompts shorter than the model's minimum are not
cached at all.

Counting is incremental: a message's tokens, facts and stage end are computed once
per run (shared by every setting), and a context keeps running prefix sums, so a call
costs O(1) unless a compaction just changed the context.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from compactctl.errors import InputError
from compactctl.facts import fold
from compactctl.replay.prices import Prices, shipped_prices
from compactctl.replay.triggers import BASELINE, Setting, Trigger, stage_pattern
from compactctl.strategies import STRATEGIES, StepContext, options_from
from compactctl.summarizers import Summarizer
from compactctl.tokens import REPLY_PRIMING_TOKENS, TokenCounter, counter_for
from compactctl.transcript import Message, annotations_of, facts_of, message_text
from compactctl.usage import SummarizerUsage


@dataclass(frozen=True)
class SettingResult:
    """The figures of one setting; the field names are the JSON keys, in order."""

    trigger: str
    threshold: int | None
    strategy: str
    calls: int
    compactions: int
    over_threshold_after_compaction: int
    peak_context: int
    mean_context: float
    input_tokens: int
    cached_tokens: int
    cache_write_tokens: int
    output_tokens: int
    summarizer_calls: int
    summarizer_tokens: int
    cost: float
    facts_lost: int
    context_per_call: list[int] = field(repr=False)


def aggregate(rows: Sequence[Sequence[SettingResult]]) -> list[SettingResult]:
    """Sum the same settings over several transcripts or files (peak is the max, mean is recomputed)."""
    if not rows:
        return []
    merged = []
    for same in zip(*rows, strict=True):
        first = same[0]
        calls = sum(r.calls for r in same)
        input_tokens = sum(r.input_tokens for r in same)
        context_tokens = sum(sum(r.context_per_call) for r in same)
        merged.append(
            SettingResult(
                trigger=first.trigger,
                threshold=first.threshold,
                strategy=first.strategy,
                calls=calls,
                compactions=sum(r.compactions for r in same),
                over_threshold_after_compaction=sum(r.over_threshold_after_compaction for r in same),
                peak_context=max(r.peak_context for r in same),
                mean_context=round(context_tokens / calls, 1) if calls else 0.0,
                input_tokens=input_tokens,
                cached_tokens=sum(r.cached_tokens for r in same),
                cache_write_tokens=sum(r.cache_write_tokens for r in same),
                output_tokens=sum(r.output_tokens for r in same),
                summarizer_calls=sum(r.summarizer_calls for r in same),
                summarizer_tokens=sum(r.summarizer_tokens for r in same),
                cost=round(sum(r.cost for r in same), 9),
                facts_lost=sum(r.facts_lost for r in same),
                context_per_call=[n for r in same for n in r.context_per_call],
            )
        )
    return merged


@dataclass(frozen=True)
class ApiCall:
    """What a recorded call adds to a replay in the API's units, beside the context it builds."""

    prefix: int  # the hidden prefix the API saw beside the log's messages (calibrated)
    output: int  # the output tokens the API reported
    reasoning: int = 0  # reasoning kept in the context until the next prompt (OpenAI), then dropped
    prices: Prices | None = None  # the model this call ran on, when it is in the table
    timestamp: float | None = None  # a pause longer than the cache's lifetime makes the next write cold
    long_cache_share: float = 0.0  # the share of cache writes kept one hour (from the usage split)
    observed_cached: int | None = None  # the cache reads the usage reported for this call
    # The share of the previous call's input the cache still held at this call (from the usage);
    # None: decided by the model's cache_ttl and the pause before the call.
    cache_hit: float | None = None
    output_cached: bool = False  # the previous response is cached with its input (OpenAI)


class _Memo:
    """What each message costs and holds, computed once per run and shared by every setting.

    Keyed by identity (the message is kept alive beside its figures, so an id is never
    reused for another message while the memo lives).
    """

    def __init__(self, counter: TokenCounter, facts: Iterable[str], marker: re.Pattern[str] | None) -> None:
        self.counter = counter
        self.facts = tuple(dict.fromkeys(folded for folded in map(fold, facts) if folded))  # matched folded
        self.marker = marker
        self._tokens: dict[int, tuple[Message, int]] = {}
        self._found: dict[int, tuple[Message, tuple[str, ...]]] = {}
        self._stage: dict[int, tuple[Message, bool]] = {}

    def tokens(self, message: Message) -> int:
        hit = self._tokens.get(id(message))
        if hit is None:
            hit = self._tokens[id(message)] = (message, self.counter.message(message))
        return hit[1]

    def facts_in(self, message: Message) -> tuple[str, ...]:
        if not self.facts:
            return ()
        hit = self._found.get(id(message))
        if hit is None:
            text = fold(message_text(message))
            hit = self._found[id(message)] = (message, tuple(f for f in self.facts if f in text))
        return hit[1]

    def ends_stage(self, message: Message) -> bool:
        if annotations_of(message).get("stage_end") is True:
            return True
        if self.marker is None:
            return False
        hit = self._stage.get(id(message))
        if hit is None:
            hit = self._stage[id(message)] = (message, self.marker.search(message_text(message)) is not None)
        return hit[1]


class _Context:
    """The messages a call would send, with running token prefix sums and what they hold."""

    def __init__(self, memo: _Memo, messages: Iterable[Message] = ()) -> None:
        self.memo = memo
        self.messages: list[Message] = []
        self.prefix = [0]  # prefix[k] = tokens of the first k messages
        self.facts: Counter[str] = Counter()  # tracked facts found in the text, with multiplicity
        self.keys: Counter[str] = Counter()  # dependency keys defined by messages present
        for message in messages:
            self.append(message)

    @property
    def tokens(self) -> int:
        return self.prefix[-1]

    def append(self, message: Message) -> None:
        self.messages.append(message)
        self.prefix.append(self.prefix[-1] + self.memo.tokens(message))
        self.facts.update(self.memo.facts_in(message))
        self.keys.update(_keys(annotations_of(message).get("defines")))

    def shared_prefix_tokens(self, previous: _Context, previous_length: int) -> int:
        """Tokens of the leading messages this context shares with ``previous``'s first messages."""
        if previous is self:  # nothing was compacted: the whole previous context is a prefix
            return self.prefix[previous_length]
        limit = min(previous_length, len(self.messages))
        shared = 0
        while shared < limit:
            a, b = self.messages[shared], previous.messages[shared]
            if a is not b and a != b:
                break
            shared += 1
        return self.prefix[shared]


def strategy_settings(options: Mapping[str, Any], trigger: Trigger) -> dict[str, Any]:
    """The settings a strategy step sees: the trigger has already decided *when*.

    A strategy that has its own ``threshold`` option (the summarizing ones) gets the
    trigger's threshold, so "over the threshold" means the same thing to both; a
    stage trigger has none, so the strategy is told to compact whatever the size.
    """
    return {**options, "threshold": trigger.threshold if trigger.threshold is not None else 0}


def _simulate(
    messages: Sequence[Message],
    setting: Setting,
    memo: _Memo,
    options: Mapping[str, Any],
    prices: Prices,
    summarizer: Summarizer | None,
    api_calls: Sequence[ApiCall] | None = None,
    replacements: Mapping[int, Sequence[Message]] | None = None,
) -> SettingResult:
    """One setting over the transcript; ``replacements`` (call index -> new context) replays
    compactions that already happened, as the producer made them."""
    trigger = setting.trigger
    step_context = StepContext(memo.counter, summarizer)
    # The run's facts are the whole transcript's: a compaction of a context that no longer
    # holds a fact's declaration still keeps its copy.
    step_settings = {**strategy_settings(options, trigger), "require": [*options.get("require", ()), *memo.facts]}
    steps = [(STRATEGIES[name], options_from(STRATEGIES[name].options, step_settings)) for name in setting.steps]
    compacting = bool(steps) and trigger.name != "none"

    context = _Context(memo)
    previous, previous_length = context, 0
    first_call = True
    last_context: int | None = None
    stage_ended = False
    per_call: list[int] = []
    cached_total = written_total = output_total = 0
    compactions = over = lost = 0
    cost = 0.0
    usage = SummarizerUsage()
    definers: dict[str, Message] = {}
    unchecked: list[Message | None] = []  # per reference since the last call: its definer

    turn_reasoning = 0  # reasoning of the current turn's responses, in the context until the next prompt
    last_time: float | None = None
    for message in messages:
        marks = annotations_of(message)
        for key in _keys(marks.get("references")):
            unchecked.append(definers.get(key))
        if message.get("role") == "user":
            turn_reasoning = 0
        if message.get("role") == "assistant":
            call = api_calls[len(per_call)] if api_calls is not None else None
            if replacements and len(per_call) in replacements:
                context = _Context(memo, replacements[len(per_call)])
                compactions += 1
                turn_reasoning = 0
            if compacting and trigger.should_compact(last_context, stage_ended):
                current = list(context.messages)
                for strategy, step_options in steps:
                    result = strategy.run(current, step_options, step_context)
                    current = result.messages
                    usage = usage + result.usage
                context = _Context(memo, current)
                compactions += 1
                stage_ended = False
                turn_reasoning = 0
                hidden = call.prefix if call is not None else 0
                if trigger.threshold is not None and context.tokens + hidden > trigger.threshold:
                    over += 1
            call_prices = call.prices if call is not None and call.prices is not None else prices
            if call is None:
                # The API bills the reply's priming as input too; it follows the messages,
                # so it is never part of a cached prefix and is written with the new input.
                context_tokens = context.tokens
                input_tokens = context_tokens + REPLY_PRIMING_TOKENS
                output = memo.tokens(message)
                hidden = 0
            else:
                # In the API's units: the hidden prefix (priming included) is part of the input
                # thresholds are compared with, as the producers' own auto-compaction does.
                hidden = call.prefix
                context_tokens = input_tokens = context.tokens + hidden + turn_reasoning
                output = call.output
            shared = 0 if first_call else context.shared_prefix_tokens(previous, previous_length) + hidden
            expired = (
                call is not None
                and call_prices.cache_ttl is not None
                and call.timestamp is not None
                and last_time is not None
                and call.timestamp - last_time > call_prices.cache_ttl
            )
            warm_output = call is not None and call.output_cached and not first_call and previous is context
            if warm_output and len(context.messages) > previous_length:
                # The previous response, its reasoning too while the turn lasts, was cached with its input.
                shared += context.prefix[previous_length + 1] - context.prefix[previous_length] + turn_reasoning
            if call is not None and call.cache_hit is not None and not first_call:
                shared = round(shared * call.cache_hit)
            elif call is not None and first_call and call.observed_cached is not None:
                # A first call may read the harness's prefix another session cached.
                shared = min(call.observed_cached, hidden)
            elif expired:
                shared = 0  # the cache lapsed during the pause: a cold write
            cacheable = input_tokens >= call_prices.min_cached_tokens
            cached = shared if cacheable and shared >= call_prices.min_cached_tokens else 0
            written = input_tokens - cached if cacheable else 0
            written_1h = round(written * call.long_cache_share) if call is not None else 0
            cost += call_prices.call_cost(input_tokens, cached, written, output, written_1h)
            cached_total += cached
            written_total += written
            output_total += output
            per_call.append(context_tokens)
            lost += sum(1 for definer in unchecked if definer is not None and not _still_known(definer, context))
            unchecked.clear()
            previous, previous_length, first_call = context, len(context.messages), False
            last_context = context_tokens
            if call is not None:
                turn_reasoning += call.reasoning
                last_time = call.timestamp if call.timestamp is not None else last_time
        context.append(message)
        for key in _keys(marks.get("defines")):
            definers[key] = message
        if memo.ends_stage(message):
            stage_ended = True

    lost += sum(1 for fact in memo.facts if context.facts[fact] == 0)
    calls = len(per_call)
    context_total = sum(per_call)
    return SettingResult(
        trigger=trigger.name,
        threshold=trigger.threshold,
        strategy=setting.strategy,
        calls=calls,
        compactions=compactions,
        over_threshold_after_compaction=over,
        peak_context=max(per_call, default=0),
        mean_context=round(context_total / calls, 1) if calls else 0.0,
        input_tokens=context_total + (REPLY_PRIMING_TOKENS * calls if api_calls is None else 0),
        cached_tokens=cached_total,
        cache_write_tokens=written_total,
        output_tokens=output_total,
        summarizer_calls=usage.calls,
        summarizer_tokens=usage.prompt_tokens + usage.completion_tokens,
        cost=round(cost + prices.summarizer_cost(usage), 9),
        facts_lost=lost,
        context_per_call=per_call,
    )


def _keys(value: Any) -> list[str]:
    if isinstance(value, str):  # one key written without its list, as prune reads it too
        return [value]
    return [key for key in value if isinstance(key, str)] if isinstance(value, list) else []


def _still_known(definer: Message, context: _Context) -> bool:
    """A reference is served when its definer's facts are all in the context (or, with no facts, the definer is)."""
    facts = facts_of(definer)
    if facts:
        return all(context.facts[fold(fact)] > 0 for fact in facts if fold(fact))
    return any(context.keys[key] > 0 for key in _keys(annotations_of(definer).get("defines")))


def replay(
    messages: Sequence[Message],
    settings: Sequence[Setting] = (),
    options: Mapping[str, Any] | None = None,
    *,
    counter: TokenCounter | None = None,
    prices: Prices | None = None,
    summarizer: Summarizer | None = None,
    stage_marker: str | re.Pattern[str] | None = None,
) -> list[SettingResult]:
    """Replay one transcript under each setting; the first row is always the baseline (no compaction).

    ``options`` are the flat strategy settings (``keep_recent``...), as ``compact`` takes them.
    """
    for setting in settings:
        unknown = [name for name in setting.steps if name not in STRATEGIES]
        if unknown:
            raise InputError(f"unknown strategy {unknown[0]!r} (known: {', '.join(STRATEGIES)})")
    rows = list(settings)
    if not rows or rows[0] != BASELINE:
        rows.insert(0, BASELINE)
    marker = stage_pattern(stage_marker) if isinstance(stage_marker, str) else stage_marker
    facts = [fact for message in messages for fact in facts_of(message)]
    memo = _Memo(counter or counter_for(), facts, marker)
    if prices is None:
        table = shipped_prices()
        prices = table.models[table.default]
    return [_simulate(messages, row, memo, options or {}, prices, summarizer) for row in rows]
