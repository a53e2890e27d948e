"""Billed calls a replay does not simulate, priced as billed: calls off the live thread, the producer's own
compaction calls, and the responses the log holds no message for.

A rewound branch's calls were billed whatever the setting, so every row carries them; a producer's compaction
call the log recorded usage for is in the bill; one it recorded none for (an older Codex's remote compaction,
Claude Code's summarizing request, Gemini CLI's compression) is estimated from the request it was and said apart,
in no row: the bill is the file's own usage. A client's side requests (Claude Code's WebSearch and WebFetch
requests) send no context, so every row carries them as billed.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from dataclasses import dataclass

from compactctl.recorded import SUBAGENT, ApiUsage, Pricing, RecordedCall, RecordedContext, RecordedSession
from compactctl.replay.price_source import day_of, priced_name
from compactctl.replay.prices import Prices, PriceTable
from compactctl.replay.simulate import ScenarioResult, sum_costs


def price_model(
    table: PriceTable,
    model: str | None,
    provider: str | None = None,
    timestamp: float | None = None,
    pricing: Pricing = (),
) -> Prices | None:
    """The prices of a model as a transcript names it, on the call's day, under the call's
    price conditions (``RecordedCall.pricing``); None: unpriced."""
    return table.find(model, provider, day_of(timestamp), pricing)


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


def copied_stretches(context: RecordedContext) -> list[tuple[int, int]]:
    """The runs of calls (first, end) that another session made and billed, or that compactctl copied after its
    boundary: a fork opens on its parent's, plain ``compact``'s output goes on after the calls it holds."""
    stretches: list[tuple[int, int]] = []
    for n, call in enumerate(context.calls):
        if not call.copied:
            continue
        if stretches and stretches[-1][1] == n:
            stretches[-1] = (stretches[-1][0], n + 1)
        else:
            stretches.append((n, n + 1))
    return stretches


def own_calls(context: RecordedContext) -> list[RecordedCall]:
    """The calls a context bills (``copied_stretches``: not the copies)."""
    return [call for call in context.calls if not call.copied]


def usage_row(
    context: RecordedContext, trigger: str, prices_of: list[Prices | None], provider: str, compactions: int
) -> ScenarioResult:
    """A context's calls as billed: their usage at the prices of each (``trigger`` "recorded": the producer's
    own compactions)."""
    own = own_calls(context)  # the copies are billed where they were made
    prices_of = [p for c, p in zip(context.calls, prices_of, strict=True) if not c.copied]
    per_call = [c.usage.input_tokens if c.usage else 0 for c in own]
    usages = [c.usage for c in own if c.usage is not None]
    billed = [(c.usage, p) for c, p in zip(own, prices_of, strict=True) if c.usage]
    unpriced = sum(1 for _, p in billed if p is None)
    cost = sum(bill_cost(u, p, provider) for u, p in billed if p is not None)
    return ScenarioResult(
        trigger=trigger,
        threshold=None,
        strategy="producer" if trigger == "recorded" else "none",
        calls=len(own),
        compactions=compactions,
        over_threshold_after_compaction=0,
        peak_context=max(per_call, default=0),
        mean_context=round(sum(per_call) / len(per_call), 1) if per_call else 0.0,
        input_tokens=sum(u.input_tokens for u in usages),
        cached_tokens=sum(u.cached_tokens for u in usages),
        cache_write_tokens=sum(u.cache_write_tokens for u in usages),
        output_tokens=sum(u.output_tokens for u in usages),
        summarizer_calls=0,
        summarizer_tokens=0,
        cost=None if unpriced else round(cost, 9),
        facts_lost=0,
        context_per_call=per_call,
        unpriced_calls=unpriced,
    )


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
    """The calls with usage among ``calls``, each priced at the model it names on its day; a copy of a call another
    file of the run bills (``copied``: a copied rollout's turns a revert dropped) is billed there, not here."""
    usage, cost, unpriced = ApiUsage(0), 0.0, set()
    billed = [call for call in calls if call.usage is not None and not call.copied]
    for call in billed:
        assert call.usage is not None
        usage = usage + call.usage
        prices = price_model(table, call.model, provider, call.timestamp, call.pricing) or fallback
        if prices is None:
            unpriced.add(priced_name(call.model, call.pricing))
        else:
            cost += bill_cost(call.usage, prices, priced_as)
    return CallsApart(len(billed), usage, None if unpriced else round(cost, 9), frozenset(unpriced))


def usage_cost(
    usage: ApiUsage,
    named: Iterable[tuple[str | None, ApiUsage, Pricing]],
    main: Prices,
    table: PriceTable,
    provider: str | None,
    priced_as: str,
) -> float:
    """The cost of ``usage`` at the session's prices, the parts whose model the log names (``named``,
    Codex's compaction calls) at their own, under their price conditions (the thread's service tier)."""
    cost = bill_cost(usage, main, priced_as)
    for model, part, pricing in named:
        own = price_model(table, model, provider, None, pricing) or main
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


def side_requests_carried(
    session: RecordedSession, unpaired_cost: float | None, search_fee: float
) -> tuple[ApiUsage, float | None, int]:
    """What every simulated row carries of a client's side requests (Claude Code's WebSearch and WebFetch requests):
    their usage, cost and calls. Their input is the query or the page, not the context, so they are billed whatever
    the setting. Where ``unpaired`` is theirs alone (no compaction call, no cut-off response in it) that is all of it,
    as billed; else only their searches' fee is told apart. Measured on the real 2.1.332 web-search fixture: the
    rows left out the requests' 285 input and 203 output tokens, -1.3 % "vs none" with no compaction."""
    unpaired = session.unpaired
    alone = unpaired is not None and session.side_calls and not session.compaction_calls and not session.unheld_calls
    if alone and unpaired is not None:
        return unpaired, unpaired_cost, session.side_calls
    return ApiUsage(0), search_fee, 0


def side_request_notes(session: RecordedSession, carried_calls: int) -> list[str]:
    """Replay's note on a client's side requests (``side_requests_carried``: ``carried_calls`` of them in every row)."""
    if not session.side_calls:
        return []
    said = f"{session.side_calls} side request(s) the client made for WebSearch or WebFetch write no message"
    if session.searches_stood_in:
        return [
            f"{said}, and this log has no cost-state to bill them: their {session.searches_stood_in} search(es), as "
            "the tool results count them, stand in for the fee, counted in the bill's calls; their tokens are in no "
            "row (side_requests in --json)"
        ]
    billed = f"{said}: their usage (the cost-state's) is in the bill and they are counted in its calls"
    if carried_calls:
        return [
            f"{billed}; they do not depend on the context, so every row carries them as billed "
            "(side_requests in --json)"
        ]
    return [
        f"{billed}; the cost-state bills them with the producer's compaction calls, so the other rows bill their "
        "searches, not their tokens (side_requests in --json)"
    ]


def passes_notes(session: RecordedSession, passes: CallsApart, bills: list[ScenarioResult]) -> list[str]:
    """Replay's note on the other billed passes of responses that took several (``RecordedSession.passes_apart``:
    ``passes`` as priced), ``bills`` the bill's rows."""
    if not passes.calls:
        return []
    models = ", ".join(sorted({call.model or "the call's model" for call in session.passes_apart}))
    total = sum_costs(bill.cost for bill in bills)
    priced = "unpriced" if passes.cost is None else f"${passes.cost:.4f}"
    share = f", {passes.cost / total:.1%} of the bill" if passes.cost is not None and total else ""
    return [
        f"{passes.calls} more sampling pass(es) of responses that took several (usage.iterations: an advisor's, a "
        f"server-side compaction's, the executor's after either; on {models}) are billed beside their calls "
        f"({priced}{share}): every row carries them as billed, each at its own model's prices (passes_apart in --json)"
    ]


def unbilled_note(session: RecordedSession, unbilled: int) -> str:
    """What the responses without usage are: the run's last, which it stopped before writing; or a response the run
    went on past (calls with usage after it), whose stream broke and the client retried (Codex 0.171 keeps no usage of
    a broken stream, whatever the API reported: tests/recorded/test_codex_long_sessions.py)."""
    retried = 0
    for context in session.contexts:
        last = max((n for n, c in enumerate(context.calls) if c.usage is not None), default=-1)
        retried += sum(1 for c in context.calls[:last] if c.usage is None and not c.copied)
    stopped = unbilled - retried
    said = [
        f"{stopped} response(s) have no usage in the log (the run stopped before it was written)" if stopped else "",
        f"{retried} response(s) the run went on past have no usage in the log (a broken stream the client retried: "
        "billed if the API reported usage for it, which the client did not keep)"
        if retried
        else "",
    ]
    return "; ".join(s for s in said if s) + (
        ": the none row is the calibrated estimate, which counts them; the usage's own sum is bill_cost in --json"
    )


def share_of_1h_writes(session: RecordedSession) -> float:
    """The part of the session's cache writes kept one hour (billed 2x input, not 1.25x)."""
    written = sum(c.usage.cache_write_tokens for x in session.contexts for c in x.calls if c.usage)
    long = sum(c.usage.cache_write_1h_tokens for x in session.contexts for c in x.calls if c.usage)
    return long / written if written else 0.0


def subagents_said(
    session: RecordedSession,
    table: PriceTable,
    provider: str | None,
    fallback: Prices | None,
    priced_as: str,
    billed_calls: int,
    bill: float | None,
) -> tuple[CallsApart, list[str]]:
    """The billed calls the session's subagents made (the contexts read from their own files), as billed, and what
    replay says of them (``billed_calls`` and ``bill``: the whole bill's): in the bill and replayed with the session,
    each in a context of its own, said apart so a reader sees how much of the bill is theirs."""
    contexts = [x for x in session.contexts if x.label.startswith(SUBAGENT) and x.calls]
    part = calls_apart((c for x in contexts for c in x.calls), table, provider, fallback, priced_as)
    if not part.calls:
        return part, []
    share = f", ${part.cost:.4f}, {part.cost / bill:.1%} of the bill" if part.cost is not None and bill else ""
    return part, [
        f"{part.calls} of the {billed_calls} billed calls{share} are subagents' ({len(contexts)} context(s) read from "
        "their own files beside the session's): in the bill, each replayed as a context of its own"
    ]
