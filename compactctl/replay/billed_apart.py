"""Billed calls a replay does not simulate, priced as billed: calls off the live thread, the producer's own
compaction calls, and the responses the log holds no message for.

A rewound branch's calls were billed whatever the setting, so every row carries them; a producer's compaction
call the log recorded usage for is in the bill; one it recorded none for (an older Codex's remote compaction,
Claude Code's summarizing request, Gemini CLI's compression) is estimated from the request it was and said apart,
in no row: the bill is the file's own usage.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from dataclasses import dataclass

from compactctl.recorded import ApiUsage, RecordedCall
from compactctl.replay.price_source import day_of
from compactctl.replay.prices import Prices, PriceTable
from compactctl.replay.simulate import ScenarioResult, sum_costs


def price_model(
    table: PriceTable, model: str | None, provider: str | None = None, timestamp: float | None = None
) -> Prices | None:
    """The prices of a model as a transcript names it, on the call's day; None: unpriced."""
    return table.find(model, provider, day_of(timestamp))


def bill_cost(usage: ApiUsage, prices: Prices, provider: str) -> float:
    plain = usage.input_tokens - usage.cached_tokens - usage.cache_write_tokens
    if provider == "anthropic" and plain < 0:
        return 0.0
    # The writes the usage reports at the write price (OpenAI's where the model lists one, else the input
    # price: price_source); an OpenAI usage that reports none bills its uncached input as plain input.
    return prices.call_cost(
        usage.input_tokens, usage.cached_tokens, usage.cache_write_tokens if plain >= 0 else 0, usage.output_tokens,
        usage.cache_write_1h_tokens,
    ) + usage.web_searches * prices.web_search  # fmt: skip


@dataclass(frozen=True)
class CallsApart:
    """Billed calls a replay does not simulate: how many, their usage and cost (None: unpriced)."""

    calls: int = 0
    usage: ApiUsage = ApiUsage(0)
    cost: float | None = 0.0
    unpriced: frozenset[str] = frozenset()


def calls_apart(
    calls: Iterable[RecordedCall], table: PriceTable, provider: str | None, fallback: Prices | None, priced_as: str
) -> CallsApart:
    """The calls with usage among ``calls``, each priced at the model it names on its day."""
    usage, cost, unpriced = ApiUsage(0), 0.0, set()
    billed = [call for call in calls if call.usage is not None]
    for call in billed:
        assert call.usage is not None
        usage = usage + call.usage
        prices = price_model(table, call.model, provider, call.timestamp) or fallback
        if prices is None:
            unpriced.add(str(call.model))
        else:
            cost += bill_cost(call.usage, prices, priced_as)
    return CallsApart(len(billed), usage, None if unpriced else round(cost, 9), frozenset(unpriced))


def usage_cost(
    usage: ApiUsage,
    named: Iterable[tuple[str | None, ApiUsage]],
    main: Prices,
    table: PriceTable,
    provider: str | None,
    priced_as: str,
) -> float:
    """The cost of ``usage`` at the session's prices, the parts whose model the log names (``named``,
    Codex's compaction calls) at their own."""
    cost = bill_cost(usage, main, priced_as)
    for model, part in named:
        own = price_model(table, model, provider) or main
        cost += bill_cost(part, own, priced_as) - bill_cost(part, main, priced_as)
    return cost


def with_extra(row: ScenarioResult, usage: ApiUsage, cost: float | None, calls: int = 0) -> ScenarioResult:
    """A row with billed calls it does not simulate added as billed (``calls`` of them counted)."""
    return dataclasses.replace(
        row,
        calls=row.calls + calls,
        input_tokens=row.input_tokens + usage.input_tokens,
        cached_tokens=row.cached_tokens + usage.cached_tokens,
        cache_write_tokens=row.cache_write_tokens + usage.cache_write_tokens,
        output_tokens=row.output_tokens + usage.output_tokens,
        cost=sum_costs([row.cost, cost]),
    )
