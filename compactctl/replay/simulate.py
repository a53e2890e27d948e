"""The simulation: walk a saved transcript as if it were live, and price each way of compacting it.

Every assistant message is one model call. Its context is the messages held at that moment (the system prompt, a
summary if a compaction left one, and the messages kept since); its billed input is that context plus the reply's
priming (``REPLY_PRIMING_TOKENS``, the OpenAI cookbook's +3 per request); the assistant message itself is the call's
output. Between calls the context only grows, by the messages the transcript adds. Thresholds, peaks and means are
about the context, the part a compaction can change.

*When* to compact is a policy (a ``Trigger``, in ``triggers``), kept apart from *how* (the strategy steps, run
through the same pure functions as ``compact``).

A compaction is run once per trigger: one that cannot get under the threshold is counted
(``over_threshold_after_compaction``), never looped on. Its result is what the client resumes, as ``compact``'s
output: the client's own context (Codex's) is never folded and is sent again (``transcript.resumed_compaction``).

Prompt caching is modelled per message: a call's cached tokens are the tokens of the longest run of leading messages
unchanged since the previous call (the previous call's whole context when nothing was compacted in between; after a
compaction, usually just the system prompt). The rest of the input is written to the cache, which is what a provider
bills a cache write for. Prompts shorter than the model's minimum are not cached at all.

Counting is incremental and the transcript is walked once: every setting takes each message in step
(``walk_in_step``), its ``Figures`` (tokens, facts, keys, stage end) worked out once for all of them, and a context
keeps running prefix sums, so a call costs O(1) unless a compaction just changed the context; a compaction runs the
strategy on that setting's context only, and the messages it kept keep their figures. Nothing holds the transcript
itself: a setting that never compacts keeps only its sums, one that compacts keeps its context (what its strategy
left), so ``replay_streamed`` replays a file read a line at a time in memory bounded by the contexts, not the file.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from compactctl.errors import InputError
from compactctl.facts import fold
from compactctl.message_memo import remembering
from compactctl.replay.context import Context, FigureCounter, Figures, KnownTokens, keys_of
from compactctl.replay.prices import Prices, prices_for, shipped_prices
from compactctl.replay.triggers import BASELINE, Scenario, Trigger, stage_pattern
from compactctl.startup_gc import fewer_collections, old_objects_frozen
from compactctl.strategies import STRATEGIES, ClientView, StepContext, StrategyOptions
from compactctl.summarizers import Summarizer
from compactctl.tokens import REPLY_PRIMING_TOKENS, KnownCounter, TokenCounter, counter_for
from compactctl.transcript import Message, annotations_of, facts_of, resumed_compaction
from compactctl.usage import SummarizerUsage


@dataclass(frozen=True)
class ScenarioResult:
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
    cost: float | None  # None: some call ran on a model no price source knows (unpriced), never a made-up $0
    facts_lost: int
    context_per_call: list[int] = field(repr=False)
    unpriced_calls: int = 0  # calls whose model no price source knows
    calls_over_threshold: int = 0  # calls whose context was over the setting's threshold (spent above it)


def aggregate(rows: Sequence[Sequence[ScenarioResult]]) -> list[ScenarioResult]:
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
            ScenarioResult(
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
                cost=sum_costs(r.cost for r in same),
                facts_lost=sum(r.facts_lost for r in same),
                context_per_call=[n for r in same for n in r.context_per_call],
                unpriced_calls=sum(r.unpriced_calls for r in same),
                calls_over_threshold=sum(r.calls_over_threshold for r in same),
            )
        )
    return merged


def sum_costs(costs: Iterable[float | None]) -> float | None:
    """A sum of costs that is unknown (None) as soon as one of them is."""
    total = 0.0
    for cost in costs:
        if cost is None:
            return None
        total += cost
    return round(total, 9)


@dataclass(frozen=True)
class ApiCall:
    """What a recorded call adds to a replay in the API's units, beside the context it builds."""

    prefix: int  # the hidden prefix the API saw beside the log's messages (calibrated)
    output: int  # the output tokens the API reported
    reasoning: int = 0  # reasoning kept in the context until the next prompt (OpenAI), then dropped
    prices: Prices | None = None  # the model this call ran on; None: no price source knows it (unpriced)
    timestamp: float | None = None  # a pause longer than the cache's lifetime makes the next write cold
    long_cache_share: float = 0.0  # the share of cache writes kept one hour (from the usage split)
    observed_cached: int | None = None  # the cache reads the usage reported for this call
    # The share of the previous call's input the cache still held at this call (from the usage);
    # None: decided by the model's cache_ttl and the pause before the call.
    cache_hit: float | None = None
    output_cached: bool = False  # the previous response is cached with its input (OpenAI)
    # Whether the producer's usage reports cache writes at all: False where it reports none (a provider or
    # proxy that never caches, an OpenAI usage that counts no writes): what no call reads is then billed
    # as plain input, as the bill bills it, not as a write.
    cache_writes: bool = True
    # The reads are the usage's own, up to what the call shares with the one before: the producer's own
    # compaction replayed as it ran, whose new history no earlier call's hit rate describes.
    reads_observed: bool = False
    # The history's tool results this call sent as a short stand-in (cut by the client or cleared by the API), and the
    # responses whose calls' inputs the API cleared with them: each as the log holds it, as sent, and the tokens that
    # saves; a setting's context saves it where it still holds that call's result (the client replaces a result by
    # its call's id, whatever a compaction made of it), or that response as the log holds it.
    stand_ins: tuple[tuple[Message, Message, int], ...] = ()


def _saved(call: ApiCall, context: Context, counter: TokenCounter) -> int:
    """What the stand-ins ``call`` sent save of ``context``: of the results it still holds (every one, where it
    keeps only sums: a setting that never compacts holds the whole history), a result a compaction shortened
    saving what it still costs over its stand-in."""
    if not call.stand_ins:
        return 0
    if not context.keep_messages:
        return sum(saving for _, _, saving in call.stand_ins)
    by_call = {
        original.get("tool_call_id"): (original, stand_in, saving)
        for original, stand_in, saving in call.stand_ins
        if original.get("role") == "tool"
    }
    # A response whose calls' inputs the API cleared saves where the context still holds it as the log does.
    responses = {id(original): saving for original, _, saving in call.stand_ins if original.get("role") != "tool"}
    saved = 0
    for message in context.messages:
        if responses and id(message) in responses:
            saved += responses[id(message)]
            continue
        found = by_call.get(message.get("tool_call_id")) if message.get("role") == "tool" else None
        if found is not None:
            original, stand_in, saving = found
            saved += saving if message is original else max(0, counter.message(message) - counter.message(stand_in))
    return saved


def triggered(strategies: StrategyOptions, trigger: Trigger) -> StrategyOptions:
    """The options a strategy step runs with: the trigger has already decided *when*.

    A strategy that has its own ``threshold`` option (the summarizing ones) gets the
    trigger's threshold, so "over the threshold" means the same thing to both; a
    stage trigger has none, so the strategy is told to compact whatever the size.
    """
    return strategies.replaced(threshold=trigger.threshold if trigger.threshold is not None else 0)


class ScenarioRun:
    """One setting walking the transcript: fed each message (with its figures) in order, then ``result()``.

    ``replacements`` (call index -> new context) replays compactions that already happened, as
    the producer made them. Every setting of a replay walks in step, so the transcript is read once.
    """

    def __init__(
        self,
        scenario: Scenario,
        counts: FigureCounter,
        strategies: StrategyOptions,
        prices: Prices,
        summarizer: Summarizer | None,
        api_calls: Sequence[ApiCall] | None = None,
        replacements: Mapping[int, Sequence[Message]] | None = None,
        client: ClientView = ClientView(),
    ) -> None:
        self.scenario = scenario
        self.trigger = trigger = scenario.trigger
        self.counts, self.prices = counts, prices
        self.api_calls, self.replacements = api_calls, replacements
        self.step_context = StepContext(counts.counter, summarizer, client)  # the client's view, as compact's
        # The run's facts are the whole transcript's: a context that lost a fact's declaration still keeps its copy.
        step_options = triggered(strategies, trigger).keeping(counts.facts)
        self.steps = [(STRATEGIES[name], step_options.of(name)) for name in scenario.steps]
        self.compacting = bool(self.steps) and trigger.name != "none"
        self.context = Context(keep_messages=self.compacting or bool(replacements))
        self.previous, self.previous_length, self.first_call = self.context, 0, True
        self.last_context: int | None = None
        self.stage_ended = False
        self.per_call: list[int] = []
        self.cached_total = self.written_total = self.output_total = 0
        self.compactions = self.over = self.lost = 0
        self.cost, self.unpriced, self.over_calls = 0.0, 0, 0
        self.usage = SummarizerUsage()
        self.definers: dict[str, Message] = {}
        self.unchecked: list[Message | None] = []  # per reference since the last call: its definer
        self.turn_reasoning = 0  # reasoning of the current turn's responses, in the context until the next prompt
        self.reasoning_sent = 0  # of which the previous call sent (cached with its input at Anthropic)
        self.last_time: float | None = None

    def add(self, message: Message, figures: Figures) -> None:
        for key in figures.references:
            self.unchecked.append(self.definers.get(key))
        if figures.opens_turn:  # a harness reminder ends no turn
            self.turn_reasoning = 0
        elif figures.is_call:  # not an assistant message the client wrote itself
            self._call(figures)
        self.context.append(message, figures)
        for key in figures.defines:
            self.definers[key] = message
        if figures.ends_stage:
            self.stage_ended = True

    def _compact(self) -> None:
        current = list(self.context.messages)
        # What the context's messages cost is known already: the steps count them again and again.
        known = KnownTokens(self.context)
        client = self.step_context.client
        context = StepContext(KnownCounter(self.counts.counter, known), self.step_context.summarizer, client)
        for strategy, step_options in self.steps:
            result = strategy.run(current, step_options, context)
            current = result.messages
            self.usage = self.usage + result.usage
        if client.owns_any:  # the client sends its own context again
            current = resumed_compaction(self.context.messages, current, client.owned)
        self.context = Context.rebuilt(current, self.context, self.counts)

    def _call(self, figures: Figures) -> None:
        trigger, prices = self.trigger, self.prices
        n = len(self.per_call)
        call = self.api_calls[n] if self.api_calls is not None else None
        if self.replacements and n in self.replacements:
            self.context = Context.rebuilt(self.replacements[n], self.context, self.counts)
            self.compactions += 1
            self.turn_reasoning = 0
        if self.compacting and trigger.should_compact(self.last_context, self.stage_ended):
            self._compact()
            self.compactions += 1
            self.stage_ended = False
            self.turn_reasoning = 0
            hidden = call.prefix if call is not None else 0
            if trigger.threshold is not None and self.context.tokens + hidden > trigger.threshold:
                self.over += 1
        context, previous, previous_length = self.context, self.previous, self.previous_length
        call_prices = call.prices if call is not None and call.prices is not None else prices
        if call is not None and call.prices is None:
            self.unpriced += 1  # counted and cached as the run's prices say, but not priced
        if call is None:
            # The API bills the reply's priming as input too: after the messages, never cached, written anew.
            context_tokens = context.tokens
            input_tokens = context_tokens + REPLY_PRIMING_TOKENS
            output = figures.tokens
            hidden = 0
        else:
            # In the API's units: the hidden prefix (priming included) is part of the input
            # thresholds are compared with, as the producers' own auto-compaction does.
            hidden = call.prefix
            saved = _saved(call, context, self.counts.counter)
            context_tokens = input_tokens = context.tokens + hidden + self.turn_reasoning - saved
            output = call.output
        first_call = self.first_call
        shared = 0 if first_call else context.shared_prefix_tokens(previous, previous_length) + hidden
        expired = (
            call is not None
            and call_prices.cache_ttl is not None
            and call.timestamp is not None
            and self.last_time is not None
            and call.timestamp - self.last_time > call_prices.cache_ttl
        )
        warm_output = call is not None and call.output_cached and not first_call and previous is context
        if warm_output and context.length > previous_length:
            # The previous response, its reasoning too while the turn lasts, was cached with its input.
            shared += context.prefix[previous_length + 1] - context.prefix[previous_length] + self.turn_reasoning
        elif call is not None and not call.output_cached and not first_call and previous is context:
            # Anthropic caches to its last breakpoint: the turn's thinking the previous call sent is read back.
            shared += min(self.reasoning_sent, self.turn_reasoning)
        if call is not None and call.cache_hit is not None and not first_call:
            shared = round(shared * call.cache_hit)
        elif call is not None and first_call and call.observed_cached is not None:
            # A first call may read the harness's prefix another session cached.
            shared = min(call.observed_cached, hidden)
        elif call is not None and call.reads_observed and call.observed_cached is not None:
            shared = min(call.observed_cached, shared)
        elif expired:
            shared = 0  # the cache lapsed during the pause: a cold write
        cacheable = input_tokens >= call_prices.min_cached_tokens
        cached = shared if cacheable and shared >= call_prices.min_cached_tokens else 0
        written = input_tokens - cached if cacheable and (call is None or call.cache_writes) else 0
        written_1h = round(written * call.long_cache_share) if call is not None else 0
        if call is None or call.prices is not None:
            self.cost += call_prices.call_cost(input_tokens, cached, written, output, written_1h)
        self.cached_total += cached
        self.written_total += written
        self.output_total += output
        self.per_call.append(context_tokens)
        if trigger.threshold is not None and context_tokens > trigger.threshold:
            self.over_calls += 1
        if self.unchecked:  # most calls follow no reference
            lost = (definer for definer in self.unchecked if definer is not None and not _still_known(definer, context))
            self.lost += sum(1 for _ in lost)
            self.unchecked.clear()
        self.previous, self.previous_length, self.first_call = context, context.length, False
        self.last_context = context_tokens
        if call is not None:
            self.reasoning_sent = self.turn_reasoning
            self.turn_reasoning += call.reasoning
            self.last_time = call.timestamp if call.timestamp is not None else self.last_time

    def result(self) -> ScenarioResult:
        per_call = self.per_call
        lost = self.lost + sum(1 for fact in self.counts.facts if self.context.facts[fact] == 0)
        calls = len(per_call)
        context_total = sum(per_call)
        return ScenarioResult(
            trigger=self.trigger.name,
            threshold=self.trigger.threshold,
            strategy=self.scenario.strategy,
            calls=calls,
            compactions=self.compactions,
            over_threshold_after_compaction=self.over,
            peak_context=max(per_call, default=0),
            mean_context=round(context_total / calls, 1) if calls else 0.0,
            input_tokens=context_total + (REPLY_PRIMING_TOKENS * calls if self.api_calls is None else 0),
            cached_tokens=self.cached_total,
            cache_write_tokens=self.written_total,
            output_tokens=self.output_total,
            summarizer_calls=self.usage.calls,
            summarizer_tokens=self.usage.prompt_tokens + self.usage.completion_tokens,
            cost=None if self.unpriced else round(self.cost + self.prices.summarizer_cost(self.usage), 9),
            facts_lost=lost,
            context_per_call=per_call,
            unpriced_calls=self.unpriced,
            calls_over_threshold=self.over_calls,
        )


def walk_in_step(
    messages: Iterable[Message], runs: Sequence[ScenarioRun], counts: FigureCounter
) -> list[ScenarioResult]:
    """Feed every message, its figures worked out once, to every run; the runs' results in order."""
    for message in messages:
        figures = counts.figures(message)
        for run in runs:
            run.add(message, figures)
    return [run.result() for run in runs]


Walker = Callable[[Iterable[Message], Sequence[ScenarioRun], FigureCounter], list[ScenarioResult]]


def _still_known(definer: Message, context: Context) -> bool:
    """A reference is served when its definer's facts are all in the context (or, with no facts, the definer is)."""
    facts = facts_of(definer)
    if facts:
        return all(context.facts[fold(fact)] > 0 for fact in facts if fold(fact))
    return any(context.keys[key] > 0 for key in keys_of(annotations_of(definer).get("defines")))


def replay(
    messages: Sequence[Message],
    settings: Sequence[Scenario] = (),
    options: StrategyOptions | Mapping[str, Any] | None = None,
    *,
    counter: TokenCounter | None = None,
    prices: Prices | None = None,
    summarizer: Summarizer | None = None,
    stage_marker: str | re.Pattern[str] | None = None,
    walker: Walker | None = None,
) -> list[ScenarioResult]:
    """Replay one transcript under each setting; the first row is always the baseline (no compaction).

    ``options`` are the strategies' options, or flat values (``{"keep_recent": 8}``) as ``compact`` takes them.
    ``walker``: how the settings walk the messages, ``walk_in_step`` unless given (``files.replay_apart``: forked).
    """
    options = options if isinstance(options, StrategyOptions) else StrategyOptions.from_values(options)
    return replay_streamed(
        lambda: messages, settings, options, counter=counter, prices=prices, summarizer=summarizer,
        stage_marker=stage_marker, walker=walker,
    )  # fmt: skip


def replay_streamed(
    walk: Callable[[], Iterable[Message]],
    settings: Sequence[Scenario] = (),
    options: StrategyOptions | None = None,
    *,
    counter: TokenCounter | None = None,
    prices: Prices | None = None,
    summarizer: Summarizer | None = None,
    stage_marker: str | re.Pattern[str] | None = None,
    facts: Iterable[str] | None = None,
    client: ClientView = ClientView(),
    walker: Walker | None = None,
) -> list[ScenarioResult]:
    """``replay`` of a transcript ``walk()`` gives a message at a time, walked twice (its facts,
    then the calls; once when the caller found its ``facts``), so it is never held whole: what
    stays is each setting's context (bounded by what its strategy keeps; the baseline keeps only
    token sums) and a few figures per call."""
    for setting in settings:
        unknown = [name for name in setting.steps if name not in STRATEGIES]
        if unknown:
            raise InputError(f"unknown strategy {unknown[0]!r} (known: {', '.join(STRATEGIES)})")
    rows = list(settings)
    if not rows or rows[0] != BASELINE:
        rows.insert(0, BASELINE)
    marker = stage_pattern(stage_marker) if isinstance(stage_marker, str) else stage_marker
    # Every fact of the transcript, declared before or after the message that holds its text.
    if facts is None:
        facts = [fact for message in walk() for fact in facts_of(message)]
    counts = FigureCounter(counter or counter_for(), facts, marker)
    if prices is None:
        prices = prices_for(shipped_prices())
    runs = [ScenarioRun(row, counts, options or StrategyOptions(), prices, summarizer, client=client) for row in rows]
    # The settings' steps work out each message's text and facts once (message_memo); the collector
    # leaves what was there before the walk alone, and runs less often over what the memos keep.
    with fewer_collections(), remembering(), old_objects_frozen():
        return (walker or walk_in_step)(walk(), runs, counts)


def less(row: ScenarioResult, part: ScenarioResult, before: ScenarioResult | None = None) -> ScenarioResult:
    """``row`` without the calls ``part`` makes after ``before``: runs of the same setting over the first calls
    of the thread (``before`` None: from its start)."""
    zero: dict[str, Any] = dict.fromkeys(_SUMMED, 0)
    start = before or dataclasses.replace(part, context_per_call=[], cost=0.0, **zero)
    own = row.context_per_call[: len(start.context_per_call)] + row.context_per_call[len(part.context_per_call) :]
    kept: dict[str, Any] = {name: getattr(row, name) - getattr(part, name) + getattr(start, name) for name in _SUMMED}
    costs = (row.cost, part.cost, start.cost)
    return dataclasses.replace(
        row,
        peak_context=max(own, default=0),
        mean_context=round(sum(own) / len(own), 1) if own else 0.0,
        cost=None if None in costs else round(row.cost - part.cost + start.cost, 9),  # type: ignore[operator]
        context_per_call=own,
        **kept,
    )


# The fields of a row that add up over its calls.
_SUMMED = (
    "calls", "compactions", "over_threshold_after_compaction", "input_tokens", "cached_tokens", "cache_write_tokens",
    "output_tokens", "summarizer_calls", "summarizer_tokens", "unpriced_calls", "calls_over_threshold",
)  # fmt: skip
