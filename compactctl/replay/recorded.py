"""Replay in the API's units, on a session that records its usage.

Beside ``replay``'s rows this gives, for a Claude Code or Codex session with usage:

- the **baseline** (no compaction) as the bill, from the reported usage, where the producer did not compact; where
  it did, the baseline is an estimate (what the whole history would have cost uncompacted), and the bill is the
  **recorded** row: what the producer actually did, compacting where it compacted, priced from the usage;
- each setting as a **calibrated estimate**: the log's messages counted as the API counts them (the file's fitted
  tokenizer ratio, each response re-sent as its output tokens, images by the provider's rule), plus the fitted
  hidden prefix, so thresholds are in the API input tokens the producers' own auto-compaction compares with;
- the model priced is the one each call names, at its list price on the call's day (genai-prices, or the team's
  ``--prices`` table); a model no source knows is *unpriced*: its rows' cost is unknown (None) and a note names the
  model and ``--model-pricing``, never a $0.
"""

from __future__ import annotations

import dataclasses
import functools
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from compactctl.calibration import Calibration, calibrate, message_costs, read_thinking, segment_key
from compactctl.calibration.features import dropped_thinking, sent_tokens
from compactctl.model_input import owned_view
from compactctl.recorded import COMPACTCTL, ApiUsage, RecordedCompaction, RecordedContext, RecordedSession
from compactctl.recorded import producer as producer_named  # ``producer`` is the name below
from compactctl.replay.billed_apart import (
    CallsApart,
    calls_apart,
    copied_stretches,
    own_calls,
    passes_notes,
    price_model,
    share_of_1h_writes,
    side_request_notes,
    side_requests_carried,
    subagents_said,
    unbilled_note,
    usage_cost,
    usage_row,
    with_extra,
)
from compactctl.replay.price_source import priced_name, pricing_notes, unpriced_note
from compactctl.replay.prices import Prices, PriceTable
from compactctl.replay.simulate import (
    ApiCall,
    FigureCounter,
    ScenarioResult,
    ScenarioRun,
    Walker,
    aggregate,
    less,
    sum_costs,
    walk_in_step,
)
from compactctl.replay.stand_ins import stood_in
from compactctl.replay.triggers import BASELINE, Scenario
from compactctl.strategies import StrategyOptions
from compactctl.summarizers import Summarizer
from compactctl.tokens import DEFAULT_ENCODING, TokenCounter, counter_for
from compactctl.transcript import Message, facts_of

RECORDED, BILL, ESTIMATE = "recorded", "bill", "estimate"  # the trigger of the recorded row, and the rows' bases


class CalibratedCounter:
    """Counts as the API bills, for one recorded context: a ``TokenCounter`` stand-in for replay and strategies.

    A message read from the log costs what calibration measured for it (a response: its
    output tokens); any other text (a summary a strategy wrote) costs the file's ratio times
    its count in the chosen encoding. Every message also carries what the harness adds to each
    (``per_message``, fitted).
    """

    def __init__(
        self, base: TokenCounter, ratio: float, known: dict[int, tuple[Message, int]], per_message: int = 0
    ) -> None:
        self.base = base
        self.per_message = per_message
        self.encoding = base.encoding
        self.provider = base.provider
        self.ratio = ratio
        self.known = known

    def __call__(self, text: str) -> int:
        return round(self.ratio * self.base(text))

    def message(self, message: Message) -> int:
        hit = self.known.get(id(message))
        if hit is not None and hit[0] is message:
            return hit[1]
        content = message.get("content")
        parts = content if isinstance(content, list) else []
        images = sum(self.base.part(p) for p in parts if isinstance(p, dict) and p.get("type") == "image_url")
        return round(self.ratio * (sent_tokens(message, self.base) - images)) + images + self.per_message

    def messages(self, messages: Iterable[Message]) -> int:
        return sum(self.message(message) for message in messages)


@dataclass(frozen=True)
class RecordedReplay:
    """A session's replay rows in API units, with the calibration behind them."""

    settings: list[ScenarioResult]
    basis: list[str]  # per row: "bill" (from the usage) or "estimate" (calibrated)
    calibration: Calibration
    baseline_estimate: ScenarioResult  # the calibrated estimate of no compaction
    recorded_estimate: ScenarioResult  # the calibrated estimate of what the producer did: compare with the bill
    bill: ScenarioResult  # what the usage says the session cost as it ran
    notes: tuple[str, ...]
    compactions: int  # how many times the producer compacted
    history_before_last_compaction: int  # messages the producer's last compaction replaced
    pre_tokens_check: list[tuple[int, int, int]]  # (call, recorded preTokens, the recorded row's context there)
    unpaired_cost: float | None = 0.0  # of the bill: calls the log holds no message for (summarizing, cut off)
    unpriced_models: tuple[str, ...] = ()  # models no price source knows (and no --model-pricing)
    off_thread: CallsApart | None = None  # billed calls on abandoned branches, in every row as billed
    # The producer's compaction calls the log records no usage for, estimated: in no row (not the file's usage).
    compaction_estimate: CallsApart | None = None
    side_requests: int = 0  # a client's side requests (WebSearch's, WebFetch's): in the bill and its calls
    passes_apart: CallsApart | None = None  # responses' other sampling passes (an advisor's), in every row as billed
    subagents: CallsApart | None = None  # the calls of its subagents' own files: in the bill, replayed with it

    @property
    def live_thread_bill_cost(self) -> float | None:
        """The bill of the calls ``recorded_estimate`` simulates (no off-thread, unpaired ones, passes apart); None:
        unpriced."""
        apart = [part.cost for part in (self.off_thread, self.passes_apart) if part is not None]
        if self.bill.cost is None or self.unpaired_cost is None or None in apart:
            return None
        return round(self.bill.cost - self.unpaired_cost - sum(c for c in apart if c is not None), 9)


def _api_calls(
    context: RecordedContext,
    calibration: Calibration,
    prices_of: list[Prices | None],
    share_1h: float,
    as_recorded: bool = False,
    cache_writes: bool = True,
    cache_reads: bool = True,
) -> list[ApiCall]:
    """Per call, what replay adds beside the context: hidden prefix, output, reasoning, model, time."""
    starts = set(context.segment_starts())
    compaction_starts = {c.before_call for c in context.compactions}
    calls: list[ApiCall] = []
    prefix = calibration.prefix_of(segment_key(context.label, 0))
    previous: ApiUsage | None = None
    # OpenAI's cache holds a response with the input it followed (measured: a Codex call's cached tokens exceed the
    # previous call's whole input); Anthropic's ends at the last cache breakpoint.
    openai = calibration.provider != "anthropic"
    counter = counter_for(calibration.encoding, calibration.provider)
    for n, call in enumerate(context.calls):
        # A stretch the producer's compaction began carries what the compaction re-attached; an
        # uncompacted replay would not, so it keeps the prefix from before. A resume's is its own.
        if n in starts and (as_recorded or n not in compaction_starts):
            prefix = calibration.prefix_of(segment_key(context.label, n))
        usage = call.usage
        output = usage.output_tokens if usage else call.hidden_output_estimate
        reasoning = usage.reasoning_tokens if usage else call.hidden_output_estimate
        if calibration.provider == "anthropic":  # the thinking the API strips at the next prompt, else 0
            reasoning = dropped_thinking(call, context.messages[call.position], counter)
        # How much of what the previous call sent the cache still held is a fact of the timeline (pauses,
        # the provider's routing), the same in every setting; at the producer's own compaction it says
        # nothing about an uncompacted history. A session that never caches reads nothing, in any row.
        cache_hit: float | None = None
        if not cache_reads:
            cache_hit = 0.0
        elif usage is not None and previous is not None and n not in compaction_starts and previous.input_tokens:
            sent = previous.input_tokens + (previous.output_tokens if openai else 0)
            cache_hit = min(1.0, usage.cached_tokens / sent)
        calls.append(
            ApiCall(
                prefix=prefix,
                output=output,
                # Kept until the next prompt at OpenAI (and Anthropic's models that strip earlier
                # turns' thinking); otherwise Anthropic bills it in the output re-sent, Gemini never.
                reasoning=reasoning if calibration.provider in ("openai", "anthropic") else 0,
                prices=prices_of[n],
                timestamp=call.timestamp,
                long_cache_share=share_1h,
                observed_cached=usage.cached_tokens if usage else None,
                cache_hit=cache_hit,
                output_cached=openai,
                cache_writes=cache_writes,
                # Replayed as the producer ran it, the call after its compaction read what its usage says.
                reads_observed=as_recorded and n in compaction_starts,
            )
        )
        previous = usage
    return calls


def sent_after(context: RecordedContext, compaction: RecordedCompaction) -> list[Message]:
    """The context the first call after a producer's compaction sent: the new context, then what the log
    holds between the boundary and that call (Claude Code's re-attached files, tool, agent and skill
    listings, the next prompt), which the walk had appended and the rebuild at the call would drop."""
    calls = context.calls
    end = calls[compaction.before_call].position if compaction.before_call < len(calls) else len(context.messages)
    return [*compaction.replacement, *context.messages[compaction.position : end]]


def _known_costs(
    context: RecordedContext, calibration: Calibration, counter: TokenCounter
) -> dict[int, tuple[Message, int]]:
    raw = counter_for(DEFAULT_ENCODING)
    # What the harness sent after a message and never logged (measured as steps in the usage) goes with it.
    costs = message_costs(context, counter, raw, unlogged=calibration.unlogged_of(context.label))
    known: dict[int, tuple[Message, int]] = {}
    replaced = [m for compaction in context.compactions for m in compaction.replacement]
    for key, message in [*enumerate(context.messages), *((-id(m), m) for m in replaced)]:
        cost = costs.get(key)
        if cost is None:  # a preserved message of the history: counted with it
            continue
        # A response stays in the context as its output less what the provider drops after the turn.
        if cost.resent and not cost.text:
            value = cost.resent - cost.reasoning
        else:  # text (and an opaque compaction item's estimate)
            value = round(calibration.ratio * cost.text) + cost.resent
        known[id(message)] = (message, value + cost.images + cost.unlogged + round(calibration.per_message))
    return known


def _walk_to(
    n: int,
    context: RecordedContext,
    setups: Sequence[tuple[Scenario, list[ApiCall], Mapping[int, Sequence[Message]] | None]],
    run_of: Callable[..., ScenarioRun], walker: Walker, counts: FigureCounter,
) -> list[ScenarioResult]:  # fmt: skip
    """Every setting's row over the context's first ``n`` calls (all of them: the whole thread)."""
    end = context.calls[n].position if n < len(context.calls) else len(context.messages)
    runs = [run_of(row, api_calls=calls[:n], replacements=replaced) for row, calls, replaced in setups]
    return walker(context.messages[:end], runs, counts)


def _compacted(context: RecordedContext, trigger: str | None = None) -> bool:
    """Whether a compaction (of ``trigger``: any) changed the bill: a producer's is a call; compactctl's made none,
    and one only copies come after (plain ``compact``'s output) changed no billed call."""
    return any(
        c.trigger != COMPACTCTL or any(not call.copied for call in context.calls[c.before_call :])
        for c in context.compactions
        if trigger is None or c.trigger == trigger
    )


def replay_recorded(
    session: RecordedSession,
    producer: str,
    settings: Sequence[Scenario],
    strategies: StrategyOptions,
    table: PriceTable,
    fallback: Prices | None,
    summarizer: Summarizer | None = None,
    stage_marker: re.Pattern[str] | None = None,
    calibration: Calibration | None = None,
    claude_tokens: str = "fitted",
    walker: Walker = walk_in_step,
) -> RecordedReplay:
    """Replay every context of a recorded session in API units; rows summed over its contexts.

    ``fallback`` prices the calls whose model is not in the table (``--model-pricing``); None leaves them unpriced,
    with a note."""
    session = read_thinking(session, producer)  # what the file does not say of the requests, read from the usage
    calibration = calibration or calibrate(session, producer, claude_tokens)
    by = calibration.provider  # whose billing rules the usage follows
    share_1h = share_of_1h_writes(session)
    # A usage that never reports a cache write bills what no call reads as plain input: so does the estimate.
    writes = any(c.usage.cache_write_tokens for x in session.contexts for c in x.calls if c.usage)
    # A session no call of which read the cache (it never caches) reads nothing after a compaction either, in any row.
    reads = any(c.usage.cached_tokens for x in session.contexts for c in x.calls if c.usage)
    counter = counter_for(calibration.encoding, calibration.provider)
    rows_per_context: list[list[ScenarioResult]] = []
    estimates: list[ScenarioResult] = []
    recorded_estimates: list[ScenarioResult] = []  # the producer's own compactions, counted as calibrated
    bills: list[ScenarioResult] = []
    recorded_rows: list[ScenarioResult] = []
    unknown: set[str] = set()
    checks: list[tuple[int, int, int]] = []
    compacted = any(_compacted(context) for context in session.contexts)
    # A response whose usage was never written (a run killed before its count): the usage rows would count it as 0
    # tokens, so the none row is the calibrated estimate, which counts it.
    unbilled = sum(1 for x in session.contexts for c in x.calls if c.usage is None and not c.copied)
    estimated = compacted or bool(unbilled)
    grid = [row for row in settings if row != BASELINE]
    made_by = producer_named(producer)
    provider = made_by.provider if made_by is not None else None
    view = owned_view(producer)  # a compaction never folds the client's own context (Codex's), as compact's
    for context in session.contexts:
        prices_of: list[Prices | None] = []
        for call in context.calls:
            found = price_model(table, call.model, provider, call.timestamp, call.pricing)
            if found is None:
                unknown.add(priced_name(call.model, call.pricing))
                found = fallback
            prices_of.append(found)
        known = _known_costs(context, calibration, counter)
        calibrated = CalibratedCounter(counter, calibration.ratio, known, round(calibration.per_message))
        facts = [fact for message in context.messages for fact in facts_of(message)]
        counts = FigureCounter(calibrated, facts, stage_marker)  # type: ignore[arg-type]
        api_calls, as_recorded = (
            stood_in(context, calibrated, _api_calls(context, calibration, prices_of, share_1h, row, writes, reads))
            for row in (False, True)
        )
        fallback_prices = fallback or next((p for p in prices_of if p is not None), None) or _FREE
        replacements = {c.before_call: sent_after(context, c) for c in context.compactions}
        setups: list[tuple[Scenario, list[ApiCall], dict[int, list[Message]] | None]] = [
            (BASELINE, api_calls, None),
            (BASELINE, as_recorded, replacements),  # what the producer did, counted as calibrated
            *((row, api_calls, None) for row in grid),
        ]
        run_of = functools.partial(
            ScenarioRun,
            counts=counts,
            strategies=strategies,
            prices=fallback_prices,
            summarizer=summarizer,
            client=view,
        )
        rows = _walk_to(len(context.calls), context, setups, run_of, walker, counts)
        # A fork's thread opens on its parent's calls, billed there, and plain ``compact``'s output goes on with the
        # responses it copied after its boundary: each row is the whole thread simulated less the same runs up to
        # each copied stretch's end, plus those up to its start, so a call counts once in the files of a run.
        for first, end in reversed(copied_stretches(context)):
            to_end = rows if end == len(context.calls) else _walk_to(end, context, setups, run_of, walker, counts)
            to_first = _walk_to(first, context, setups, run_of, walker, counts) if first else [None] * len(rows)
            rows = [less(*three) for three in zip(rows, to_end, to_first, strict=True)]
        estimate, recorded_estimate, *grid_rows = rows
        recorded_estimates.append(recorded_estimate)
        made = len(context.compactions) if _compacted(context) else 0
        bill = usage_row(context, RECORDED if made else "none", prices_of, by, made)
        estimates.append(estimate)
        bills.append(bill)
        recorded_rows.append(dataclasses.replace(bill, trigger=RECORDED, strategy="producer"))
        rows_per_context.append([estimate if estimated else bill, *grid_rows])
        for compaction in context.compactions:
            if compaction.pre_tokens and compaction.before_call > 0:
                at = compaction.before_call - 1
                usage = context.calls[at].usage
                if usage is not None:
                    checks.append((at, compaction.pre_tokens, usage.input_tokens + usage.output_tokens))
    named = (price_model(table, c.model, provider, c.timestamp) for x in session.contexts for c in x.calls)
    main = next((p for p in named if p), fallback)
    extra = session.unpaired
    extra_cost: float | None = 0.0
    if extra is not None:
        # Billed calls the log holds no message for but records the usage of (a producer's compaction summaries, a
        # response cut off before it was written) are part of the bill.
        extra_cost = None if main is None else usage_cost(extra, session.priced_apart, main, table, provider, by)
        # The responses among them that were no compaction, and a client's side requests, are billed calls: counted
        # in the bill's calls.
        unheld = session.unheld_calls + session.side_calls
        bills[0] = with_extra(bills[0], extra, extra_cost, unheld)
        recorded_rows[0] = with_extra(recorded_rows[0], extra, extra_cost, unheld)
        if not estimated:
            rows_per_context[0][0] = bills[0]
    guessed = session.compaction_estimate  # the producer's compaction calls the log records no usage for
    apart = None
    if guessed is not None:  # estimated from the request each was, and kept out of every row: not the file's usage
        guess = None if main is None else usage_cost(guessed, session.estimated_apart, main, table, provider, by)
        apart = CallsApart(session.compaction_calls_estimated, guessed, None if guess is None else round(guess, 9))
    rows = aggregate(rows_per_context)
    # Calls off the live thread (a rewound branch) were billed whatever the setting, and so were the other passes of
    # responses that took several (an advisor's, on its own model): every row carries them as billed; the rows simulate
    # only the live thread's calls. A pass is no request of its own: in no row's calls.
    off = calls_apart(session.off_thread, table, provider, fallback, by)
    passes = calls_apart(session.passes_apart, table, provider, fallback, by)
    for part, counted in ((off, off.calls), (passes, 0)):
        if part.calls:
            rows = [with_extra(row, part.usage, part.cost, counted) for row in rows]
            recorded_rows[0] = with_extra(recorded_rows[0], part.usage, part.cost, counted)
            bills[0] = with_extra(bills[0], part.usage, part.cost, counted)
            unknown |= part.unpriced
    basis = [ESTIMATE if estimated else BILL, *(ESTIMATE for _ in grid)]
    # Web searches are made whatever the setting: simulated rows bill them as the bill does. Those of the calls
    # simulated (Codex's hosted search) are in --json's estimates too, as in the live thread's bill they are
    # compared with; those of side requests (Claude Code's WebSearch) are in ``unpaired``, which that bill leaves out.
    paired = sum(c.usage.web_searches for x in session.contexts for c in own_calls(x) if c.usage)
    searches = paired + (session.unpaired.web_searches if session.unpaired else 0)
    # At the session's first priced model, as unpaired calls; a per-search price no source lists is unknown, not $0.
    search_price = main.web_search if main is not None and main.web_search > 0 else None
    side_searches = searches - paired
    fee, paired_fee, side_fee = (count * (search_price or 0.0) for count in (searches, paired, side_searches))
    side, side_cost, side_calls = side_requests_carried(session, extra_cost, side_fee)
    carried = sum_costs([paired_fee, side_cost])
    rows = [
        with_extra(r, side, carried, side_calls) if b == ESTIMATE and (carried != 0 or side_calls) else r
        for r, b in zip(rows, basis, strict=True)
    ]
    sums = [
        with_extra(aggregate([[r] for r in rs])[0], ApiUsage(0), paired_fee) for rs in (estimates, recorded_estimates)
    ]
    if compacted:
        rows.insert(1, aggregate([[row] for row in recorded_rows])[0])
        basis.insert(1, BILL)
    notes = pricing_notes([c for x in session.contexts for c in own_calls(x)] + list(session.off_thread))
    if unknown:
        notes.append(unpriced_note(sorted(unknown), fallback))
    if searches and search_price is None:
        model = main.model if main is not None else ", ".join(sorted(unknown)) or "the session's model"
        notes.append(
            f"{searches} web search(es) are unpriced: no price source lists a per-search price for {model} (a "
            "--prices row takes web_search, USD per search); no row's cost holds them"
        )
    elif searches:
        notes.append(f"{searches} web search(es) (${fee:.4f}, billed per search) are in every row as billed")
    total_bill = aggregate([[row] for row in bills])[0]
    if off.calls:
        total_calls, bill_cost = sum(len(c.calls) for c in session.contexts) + off.calls, total_bill.cost
        share = f", {off.cost / bill_cost:.1%} of the bill" if off.cost is not None and bill_cost else ""
        notes.append(
            f"{off.calls} of {total_calls} billed calls{share} were off the live thread ({session.off_thread_why}): "
            "every row carries them as billed; the rows simulate the live thread"
        )
    if session.unheld_calls:
        notes.append(
            f"{session.unheld_calls} billed response(s) the log holds no message for (cut off before it was "
            "written, or kept nothing of) are in the bill and its calls; the other rows simulate what the log holds"
        )
    notes += side_request_notes(session, side_calls) + passes_notes(session, passes, bills)
    subagents, said = subagents_said(session, table, provider, fallback, by, total_bill.calls, total_bill.cost)
    notes += said
    if unbilled and not compacted:
        notes.append(unbilled_note(session, unbilled))
    recorded_calls = session.compaction_calls - session.compaction_calls_estimated
    if recorded_calls:
        notes.append(
            f"the producer's own {recorded_calls} compaction call(s) are in the bill (the recorded row); the "
            "compaction rows bill their own summarizer instead"
            # A bill summed from the messages' usage alone misses them: by how much, to reconcile the two.
            + (
                f"; ${extra_cost:.4f} of the bill is calls no message records (unpaired_cost in --json)"
                if extra_cost
                else ""
            )
        )
    if apart is not None:
        priced = "unpriced" if apart.cost is None else f"${apart.cost:.4f}"
        notes.append(
            f"the producer's own {apart.calls} compaction call(s) record no usage in the log: estimated {priced} "
            f"({apart.usage.input_tokens:,} input, {apart.usage.output_tokens:,} output tokens), in no row, as the "
            "bill is the file's own usage (compaction_estimate in --json)"
        )
    if session.forked_from:
        notes.append(
            f"a fork of session {session.forked_from}: its history before the fork is in that file and billed "
            "there; the rows count the fork's own calls, replayed from the fork point"
        )
    ours = sum(c.trigger == COMPACTCTL for context in session.contexts for c in context.compactions)
    if session.copied_calls > session.shared_calls:
        by_whom = "compactctl's compaction" if ours else "a fork"
        notes.append(
            f"{session.copied_calls - session.shared_calls} calls were copied from session "
            f"{', '.join(session.copied_from)} ({by_whom}): billed there, so in no row here; the rows simulate the "
            "whole thread and count this file's own calls"
        )
    if ours:
        after = (
            "the recorded row is what the client sent after it, the other rows replay the thread as if it had not "
            "been compacted"
            if any(_compacted(context, COMPACTCTL) for context in session.contexts)
            else "no billed call comes after it, so the bill is the thread's as it was"
        )
        notes.append(
            f"{ours} of the recorded compactions {'is' if ours == 1 else 'are'} compactctl's own, "
            f"not the producer's: no call made it; {after}"
        )
    if session.shared_calls:  # another file of the run holds them (replay.copies)
        notes.append(
            f"{session.shared_calls} calls are copies of calls {', '.join(session.shared_with)} made (a copy of a "
            "session: a user's, or Claude Code 1.x's --resume in a new file): billed there, so in no row here; the "
            "rows simulate the whole thread and count this file's own calls"
        )
    notes += [*session.in_bill, *session.not_in_bill, *calibration.warnings]
    last = [c for context in session.contexts for c in context.compactions[-1:]]
    return RecordedReplay(
        rows,
        basis,
        calibration,
        sums[0],  # baseline_estimate
        sums[1],  # recorded_estimate
        aggregate([[row] for row in bills])[0],
        tuple(notes),
        sum(len(context.compactions) for context in session.contexts),
        sum(c.position for c in last),
        checks,
        None if extra_cost is None else round(extra_cost, 9),
        tuple(sorted(unknown)) if fallback is None else (),
        off,
        apart,
        session.side_calls,
        passes,
        subagents,
    )


_FREE = Prices("unpriced", 0.0, 0.0, 0.0, 0.0)
