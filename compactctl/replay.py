"""Replay: walk a saved transcript as if it were live, and price each way of compacting it.

Every assistant message is one model call. Its context is the messages held at
that moment (the system prompt, a summary if a compaction left one, and the
messages kept since); its billed input is that context plus the reply's priming
(``REPLY_PRIMING_TOKENS``, the OpenAI cookbook's +3 per request); the assistant
message itself is the call's output. Between calls the context only grows, by the
messages the transcript adds. Thresholds, peaks and means are about the context,
the part a compaction can change.

*When* to compact is a policy (a ``Trigger``), kept apart from *how* (the strategy
steps, run through the same pure functions as ``compact``), as openai-agents-python
keeps ``should_trigger_compaction`` beside the compaction itself:

- threshold: compact before the next call when the last call's context exceeded N tokens;
- stage: compact before the next call when a stage ended (a ``compactctl.stage_end``
  annotation, or a message matching ``--stage-marker``);
- both: a stage end first, the threshold as a safety net.

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

import dataclasses
import json
import re
import tomllib
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from compactctl.errors import InputError
from compactctl.report import SummarizerUsage
from compactctl.strategies import STRATEGIES, StepContext, options_from
from compactctl.summarizers import Summarizer
from compactctl.tokens import REPLY_PRIMING_TOKENS, TokenCounter, counter_for
from compactctl.transcript import Message, annotations_of, facts_of, message_text

REPLAY_VERSION = 1
PRICE_FIELDS = ("input", "cached_input", "cache_write", "output")
MILLION = 1_000_000


# --- triggers: when to compact ------------------------------------------------------------


@dataclass(frozen=True)
class Trigger:
    """When to compact: after a call over ``threshold`` tokens, at a stage end, both, or never."""

    threshold: int | None = None
    stage: bool = False

    @property
    def name(self) -> str:
        if self.threshold is None:
            return "stage" if self.stage else "none"
        return "stage+threshold" if self.stage else "threshold"

    def should_compact(self, last_context: int | None, stage_ended: bool) -> bool:
        """Decide before a call, from the previous call's context and whether a stage ended since."""
        if self.stage and stage_ended:
            return True
        return self.threshold is not None and last_context is not None and last_context > self.threshold


@dataclass(frozen=True)
class Setting:
    """One row of a replay: a trigger and the strategy steps it runs."""

    trigger: Trigger
    steps: tuple[str, ...] = ()

    @property
    def strategy(self) -> str:
        return "+".join(self.steps) if self.steps and self.trigger.name != "none" else "none"


BASELINE = Setting(Trigger())


def settings_grid(thresholds: Iterable[int], stage: bool, steps: Sequence[str]) -> list[Setting]:
    """The baseline, then one row per threshold, a stage row, and stage+threshold rows when both are asked for."""
    thresholds = list(dict.fromkeys(thresholds))
    rows = [BASELINE]
    rows += [Setting(Trigger(threshold), tuple(steps)) for threshold in thresholds]
    if stage:
        rows.append(Setting(Trigger(None, True), tuple(steps)))
        rows += [Setting(Trigger(threshold, True), tuple(steps)) for threshold in thresholds]
    return rows


def parse_thresholds(values: Iterable[str]) -> list[int]:
    """``["8000,16000", "32k"]`` -> ``[8000, 16000, 32000]``; a bad value is a usage error."""
    found: list[int] = []
    for value in values:
        for piece in value.split(","):
            piece = piece.strip().lower().replace("_", "")
            if not piece:
                continue
            scale = 1000 if piece.endswith("k") else 1
            try:
                number = int(float(piece.removesuffix("k")) * scale)
            except (ValueError, OverflowError):  # "lots", "nan", "inf"
                raise InputError(f"--threshold: {piece!r} is not a number of tokens") from None
            if number <= 0:
                raise InputError(f"--threshold: {piece!r} must be a positive number of tokens")
            found.append(number)
    return found


def stage_pattern(marker: str | None) -> re.Pattern[str] | None:
    if marker is None:
        return None
    try:
        return re.compile(marker)
    except re.error as error:
        raise InputError(f"--stage-marker: bad regular expression {marker!r}: {error}") from None


# --- prices ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Prices:
    """USD per million tokens for one model; cache-read discounts differ per model."""

    model: str
    input: float
    cached_input: float
    cache_write: float
    output: float
    min_cached_tokens: int = 0
    provider: str = ""
    summarizer: Prices | None = None  # the summarizer's model, when it is priced apart
    cache_write_1h: float | None = None  # a write kept one hour (Anthropic: 2x input); None: as cache_write
    cache_ttl: float | None = None  # seconds a cached prefix lives unused; None: never expires here
    source: str = ""  # where the figures were read, and when

    @property
    def cache_discount(self) -> float:
        """What a cached token costs as a fraction of an uncached one (0.1 to 0.5 in practice)."""
        return self.cached_input / self.input if self.input else 0.0

    def call_cost(self, input_tokens: int, cached: int, written: int, output: int, written_1h: int = 0) -> float:
        plain = input_tokens - cached - written
        long_write = self.cache_write if self.cache_write_1h is None else self.cache_write_1h
        return (
            cached * self.cached_input
            + (written - written_1h) * self.cache_write
            + written_1h * long_write
            + plain * self.input
            + output * self.output
        ) / MILLION

    def summarizer_cost(self, usage: SummarizerUsage) -> float:
        """Summaries are requests of their own, with no cache, at the summarizer's model's prices if known."""
        model = self.summarizer or self
        return (usage.prompt_tokens * model.input + usage.completion_tokens * model.output) / MILLION


@dataclass(frozen=True)
class PriceTable:
    models: dict[str, Prices]
    default: str


def _read_table_file(data: bytes, source: str) -> Any:
    try:
        if source.endswith(".toml"):
            return tomllib.loads(data.decode("utf-8"))
        return json.loads(data)
    except (tomllib.TOMLDecodeError, json.JSONDecodeError, UnicodeDecodeError) as error:
        raise InputError(f"bad price file: {error}", source) from None


def parse_price_table(raw: Any, source: str) -> PriceTable:
    """Check a price table (``{"default"?, "models": {NAME: {input, cached_input, cache_write, output, ...}}}``)."""
    if not isinstance(raw, dict) or not isinstance(raw.get("models"), dict) or not raw["models"]:
        raise InputError('bad price file: expected a "models" table of model names', source)
    models: dict[str, Prices] = {}
    for name, entry in raw["models"].items():
        if not isinstance(entry, dict):
            raise InputError(f"bad price file: model {name!r} is not a table", source)
        figures: dict[str, float] = {}
        for key in PRICE_FIELDS:
            value = entry.get(key)
            if key == "cache_write" and value is None:
                value = entry.get("input")  # no write surcharge unless the table says so
            if key == "cached_input" and value is None:
                value = entry.get("input")
            if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
                raise InputError(f"bad price file: model {name!r}: {key} must be a number >= 0, got {value!r}", source)
            figures[key] = float(value)
        minimum = entry.get("min_cached_tokens", 0)
        if isinstance(minimum, bool) or not isinstance(minimum, int) or minimum < 0:
            raise InputError(f"bad price file: model {name!r}: min_cached_tokens must be an integer >= 0", source)
        optional: dict[str, float | None] = {}
        for key in ("cache_write_1h", "cache_ttl"):
            value = entry.get(key)
            if value is not None and (isinstance(value, bool) or not isinstance(value, int | float) or value < 0):
                raise InputError(f"bad price file: model {name!r}: {key} must be a number >= 0, got {value!r}", source)
            optional[key] = None if value is None else float(value)
        where = " ".join(str(entry[k]) for k in ("source", "as_of") if entry.get(k))
        models[str(name)] = Prices(
            str(name),
            input=figures["input"],
            cached_input=figures["cached_input"],
            cache_write=figures["cache_write"],
            output=figures["output"],
            min_cached_tokens=minimum,
            provider=str(entry.get("provider", "")),
            cache_write_1h=optional["cache_write_1h"],
            cache_ttl=optional["cache_ttl"],
            source=where,
        )
        aliases = entry.get("aliases", [])
        if not isinstance(aliases, list) or not all(isinstance(a, str) for a in aliases):
            raise InputError(f"bad price file: model {name!r}: aliases must be a list of names", source)
        for alias in aliases:
            models.setdefault(alias, dataclasses.replace(models[str(name)], model=alias))
    default = raw.get("default", next(iter(models)))
    if default not in models:
        raise InputError(f"bad price file: default model {default!r} is not in the table", source)
    return PriceTable(models, default)


def shipped_prices() -> PriceTable:
    data = resources.files("compactctl").joinpath("prices.json").read_bytes()
    return parse_price_table(json.loads(data), "compactctl/prices.json")


def load_prices(path: str | Path | None = None) -> PriceTable:
    """The shipped table, with a team's own file (JSON or TOML) laid over it when given."""
    table = shipped_prices()
    if path is None:
        return table
    source = str(path)
    try:
        data = Path(path).read_bytes()
    except OSError as error:
        raise InputError(f"cannot read price file: {error.strerror}", source) from None
    raw = _read_table_file(data, source)
    own = parse_price_table(raw, source)
    # A team's file that names no default keeps the shipped one, so adding one model changes nothing else.
    return PriceTable({**table.models, **own.models}, own.default if "default" in raw else table.default)


def with_summarizer_prices(prices: Prices, table: PriceTable, settings: Mapping[str, Any]) -> Prices:
    """Bill an LLM summarizer's tokens at its own model's prices when the table has them (gpt-4o-mini...)."""
    model = settings.get("model")
    if settings.get("summarizer") != "openai" or model not in table.models:
        return prices
    return dataclasses.replace(prices, summarizer=table.models[model])


def prices_for(table: PriceTable, model: str | None = None, **overrides: float | None) -> Prices:
    """One model's prices, with any of ``input``, ``cached_input``, ``cache_write``, ``output``
    (and ``min_cached_tokens``) overridden."""
    name = model or table.default
    if name not in table.models:
        raise InputError(
            f"unknown model {name!r} for pricing (known: {', '.join(table.models)}); or pass --prices FILE"
        )
    prices = table.models[name]
    given: dict[str, Any] = {key: float(value) for key, value in overrides.items() if value is not None}
    if "min_cached_tokens" in given:
        given["min_cached_tokens"] = int(given["min_cached_tokens"])
    unknown = set(given) - {*PRICE_FIELDS, "min_cached_tokens"}
    if unknown:
        raise InputError(f"unknown price field {sorted(unknown)[0]!r}")
    if any(value < 0 for value in given.values()):
        raise InputError("prices must be >= 0")
    if given:
        prices = dataclasses.replace(prices, model=f"{name} (overridden)", **given)
    return prices


# --- results --------------------------------------------------------------------------------


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


# --- the simulation -------------------------------------------------------------------------


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
        self.facts = tuple(dict.fromkeys(facts))
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
            text = message_text(message)
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
    step_settings = strategy_settings(options, trigger)
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
        return all(context.facts[fact] > 0 for fact in facts)
    return any(context.keys[key] > 0 for key in _keys(annotations_of(definer).get("defines")))


def replay(
    messages: Sequence[Message],
    settings: Sequence[Setting] = (),
    options: Mapping[str, Any] | None = None,
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


# --- files ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class FileReplay:
    """One file's replay: settings summed over its transcripts, and the longest one for charts."""

    file: str
    format: str
    transcripts: int
    settings: list[SettingResult]
    chart_label: str  # which transcript the chart shows
    chart: list[list[int]]  # per setting: its context size per call in that transcript
    api: Any = None  # api_replay.RecordedReplay: the rows in API units, where the file records its usage


def replay_file(
    source: str,
    name: str,
    settings: Sequence[Setting],
    options: Mapping[str, Any],
    counter: TokenCounter,
    prices: Prices,
    summarizer: Summarizer | None = None,
    stage_marker: re.Pattern[str] | None = None,
    fallback_prices: Prices | None = None,
) -> FileReplay:
    """Read one file and replay each transcript in it on its own (a tau-bench file holds 200 runs).

    A Claude Code or Codex file that records its usage is replayed in the API's units instead
    (``api_replay``): calibrated on that usage, priced per call by the model it names
    (``fallback_prices``, from ``--model-pricing``, for a model the table lacks).
    """
    from compactctl.batch import read_source
    from compactctl.formats import load

    data = read_source(source)
    fmt, transcripts, _ = load(data, source, str(options.get("format") or "auto"))
    recorded = _recorded_replay(data, source, fmt.name, settings, options, fallback_prices, summarizer, stage_marker)
    if recorded is not None:
        chart = [row.context_per_call for row in recorded.settings]
        return FileReplay(name, fmt.name, 1, recorded.settings, "", chart, recorded)
    runs = [replay(t.messages, settings, options, counter, prices, summarizer, stage_marker) for t in transcripts]
    longest = max(range(len(runs)), key=lambda i: runs[i][0].calls, default=0)
    label = transcripts[longest].label if transcripts else ""
    chart = [row.context_per_call for row in runs[longest]] if runs else []
    return FileReplay(name, fmt.name, len(transcripts), aggregate(runs), label, chart)


def _recorded_replay(
    data: bytes,
    source: str,
    format_name: str,
    settings: Sequence[Setting],
    options: Mapping[str, Any],
    fallback: Prices | None,
    summarizer: Summarizer | None,
    stage_marker: re.Pattern[str] | None,
) -> Any:
    from compactctl.api_replay import replay_recorded
    from compactctl.formats.records import parse_records
    from compactctl.recorded import read_recorded

    if format_name not in ("claude-code", "codex"):
        return None
    session = read_recorded(format_name, parse_records(data, source)[0], source)
    if session is None or not session.has_usage:
        return None
    return replay_recorded(
        session, format_name, settings, options, shipped_prices(), fallback, summarizer, stage_marker
    )


def setting_json(row: SettingResult, basis: str | None = None) -> dict[str, Any]:
    data = dataclasses.asdict(row)
    if basis is not None:
        data["basis"] = basis  # "bill": from the usage the API reported; "estimate": calibrated
    return data


def api_json(api: Any) -> dict[str, Any]:
    """The calibration behind a replay in API units, and the producer's compactions."""
    from compactctl.calibration import calibration_json

    return {
        "calibration": calibration_json(api.calibration),
        "bill_cost": api.bill.cost,
        "baseline_estimate_cost": api.baseline_estimate.cost,
        # The producer's own compactions replayed with calibrated counts: the check on the estimates.
        "recorded_estimate_cost": api.recorded_estimate.cost,
        "recorded_estimate_input_tokens": api.recorded_estimate.input_tokens,
        "bill_input_tokens": api.bill.input_tokens,
        "baseline_estimate_input_tokens": api.baseline_estimate.input_tokens,
        "producer_compactions": api.compactions,
        "history_before_last_compaction": api.history_before_last_compaction,
        "pre_tokens_check": [
            {"call": call, "pre_tokens": pre, "recorded_context": seen} for call, pre, seen in api.pre_tokens_check
        ],
        "notes": list(api.notes),
    }


def replay_json(
    file: str, files: Sequence[FileReplay], errors: Sequence[Mapping[str, Any]] = (), per_file: bool = False
) -> dict[str, Any]:
    """``{"version", "file", "settings"}``; a folder or several files (``per_file``) add per-file rows and failures."""
    rows = aggregate([f.settings for f in files])
    bases = files[0].api.basis if len(files) == 1 and files[0].api is not None else [None] * len(rows)
    data: dict[str, Any] = {
        "version": REPLAY_VERSION,
        "file": file,
        "settings": [setting_json(row, basis) for row, basis in zip(rows, bases, strict=True)],
    }
    if len(files) == 1 and files[0].api is not None:
        data["api"] = api_json(files[0].api)
    if per_file or len(files) != 1 or errors:
        data["files"] = [
            {
                "file": f.file,
                "format": f.format,
                "transcripts": f.transcripts,
                "settings": [setting_json(r) for r in f.settings],
            }
            for f in files
        ]
        data["failed"] = list(errors)
    return data


def check_plot(path: str | Path) -> None:
    """Fail before any work when ``--plot`` cannot be honoured: a suffix matplotlib will not write, or no matplotlib."""
    if Path(path).suffix.lower() not in (".png", ".svg"):
        raise InputError(f"--plot: {path} must end in .png or .svg")
    _pyplot()


def _pyplot() -> Any:
    try:
        import matplotlib

        matplotlib.use("Agg")  # files only: never needs a display
        import matplotlib.pyplot as plt
    except ImportError:
        raise InputError("--plot needs matplotlib: pip install 'compactctl[plot]'") from None
    return plt


def write_plot(path: str | Path, source: FileReplay) -> None:
    """Context size per call for each setting, as PNG or SVG (by suffix), with matplotlib from the plot extra."""
    plt = _pyplot()
    figure, axes = plt.subplots(figsize=(10, 5))
    for row, series in zip(source.settings, source.chart, strict=True):
        name = row.trigger if row.threshold is None else f"{row.trigger} {row.threshold:,}"
        label = name if row.strategy == "none" else f"{name} ({row.strategy})"
        (line,) = axes.plot(range(1, len(series) + 1), series, label=label, linewidth=1.2)
        if row.threshold is not None:
            axes.axhline(row.threshold, color=line.get_color(), linestyle=":", linewidth=0.8)
    axes.xaxis.get_major_locator().set_params(integer=True)
    axes.set_xlabel("model call (dotted: each setting's threshold)")
    axes.set_ylabel("context (input tokens)")
    which = f" ({source.chart_label})" if source.chart_label else ""
    axes.set_title(f"context per call: {Path(source.file).name}{which}", fontsize="medium")
    axes.legend(fontsize="small")
    axes.grid(alpha=0.3)
    figure.tight_layout()
    try:
        figure.savefig(str(path))
    except OSError as error:
        raise InputError(f"cannot write the chart: {error.strerror}", str(path)) from None
    finally:
        plt.close(figure)
