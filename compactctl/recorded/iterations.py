"""An Anthropic response's usage, and the sampling passes of one that took several (``usage.iterations``).

Claude Code 2.1 writes the API's usage into each record of a response, ``iterations`` among it. What each entry is,
and how the client prices it (read in 2.1.332's own bundle, its cost functions):

- ``message``: a pass of the executor, the request's model. The top-level usage is their sum: the client prices
  each at its own long-context tier where the four token counts of the ``message`` entries sum to the top-level's.
- ``advisor_message``: the advisor tool's pass (``advisor_20260301``) on the advisor model, its own ``model``; not in
  the top-level usage. The client adds each at that model's price, under the response's ``inference_geo`` (never
  fast mode).
- ``compaction``: a server-side compaction's summarizing pass (``compact_20260112``), on the request's model; not in
  the top-level usage either (the client's context measure skips it as it skips the advisor's). Claude Code's own
  requests never ask for one and its cost leaves such a pass out; the API bills it.
- ``fallback_message``: a pass a fallback model served after a refusal (its ``model``). Where one served, the client
  prices the ``fallback_message`` entries alone, each at its model, less a last one the response still ended refused
  on (``stop_reason`` "refusal"); the refused ``message`` passes are not billed (``fallback_credit``).

A call stands for its request's first billed executor pass (the context as sent: what calibration fits and the rows
simulate) with the output of every executor pass (its content holds all of it, priced at that first pass's prices);
every other billed pass is billed apart at its own model (``RecordedSession.passes_apart``), so the call and its
passes sum to what was billed and the top-level usage is counted once.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from compactctl.recorded import ApiUsage, Pricing, RecordedCall, integer, usage_pricing

EXECUTOR, FALLBACK, ADVISOR, COMPACTION = "message", "fallback_message", "advisor_message", "compaction"
_TOKENS = ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens", "output_tokens")


def usage_of(raw: Any) -> ApiUsage | None:
    """An Anthropic usage (top-level or one pass) in compactctl's shape; None where it reports nothing."""
    if not isinstance(raw, dict):
        return None
    uncached = integer(raw.get("input_tokens"))
    read = integer(raw.get("cache_read_input_tokens"))
    written = integer(raw.get("cache_creation_input_tokens"))
    split: dict[str, Any] = raw["cache_creation"] if isinstance(raw.get("cache_creation"), dict) else {}
    server: dict[str, Any] = raw["server_tool_use"] if isinstance(raw.get("server_tool_use"), dict) else {}
    usage = ApiUsage(
        input_tokens=uncached + read + written,
        cached_tokens=read,
        cache_write_tokens=written,
        cache_write_1h_tokens=integer(split.get("ephemeral_1h_input_tokens")),
        output_tokens=integer(raw.get("output_tokens")),
        web_searches=integer(server.get("web_search_requests")),
    )
    return None if usage.is_empty else usage


@dataclass(frozen=True)
class Billed:
    """A response's bill: the usage its call stands for, the model that served that pass (a fallback's, else the
    response's), and its other billed passes, each a call of its own model."""

    usage: ApiUsage | None
    model: str | None
    passes: tuple[RecordedCall, ...] = ()
    output_counted: int = 0  # output tokens counted from the response, over a log's (``claude_code_output``)


def billed(raw: Any, model: str | None, timestamp: float | None, stop_reason: Any = None) -> Billed:
    """What a response with usage ``raw`` billed, its call on ``model`` written at ``timestamp``."""
    entries = [e for e in raw.get("iterations") or [] if isinstance(e, dict)] if isinstance(raw, dict) else []
    if not entries:
        return Billed(usage_of(raw), model)
    pricing = usage_pricing(raw)
    fallbacks = [n for n, e in enumerate(entries) if e.get("type") == FALLBACK and isinstance(e.get("model"), str)]
    if fallbacks:
        refused = fallbacks[-1] if stop_reason == "refusal" else None
        executor = [entries[n] for n in fallbacks if n != refused]
    else:
        executor = [e for e in entries if e.get("type") == EXECUTOR]
        if not all(sum(integer(e.get(key)) for e in executor) == integer(raw.get(key)) for key in _TOKENS):
            executor = []  # passes that do not add up to the top-level: it stands for them (the client's rule too)
    own: Any = raw
    served_by = model
    passes: list[RecordedCall] = []
    if executor:
        first, rest = executor[0], executor[1:]
        # A pass that does not split its writes by TTL keeps the response's split.
        counts = {key: first.get(key) for key in (*_TOKENS[:3], "cache_creation") if key in first}
        own = {**raw, **counts, "output_tokens": sum(integer(e.get("output_tokens")) for e in executor)}
        served_by = str(first["model"]) if isinstance(first.get("model"), str) else model
        passes += [
            _pass(e.get("model") or model, {**e, "output_tokens": 0}, timestamp, pricing) for e in rest
        ]  # their output is the call's
    geo = tuple(condition for condition in pricing if condition[0] == "inference_geo")
    for entry in entries:
        if entry.get("type") in (ADVISOR, COMPACTION):
            named = entry.get("model") if isinstance(entry.get("model"), str) else model
            passes.append(_pass(named, entry, timestamp, geo if entry.get("type") == ADVISOR else pricing))
    return Billed(usage_of(own), served_by, tuple(p for p in passes if p.usage is not None))


def _pass(model: Any, raw: dict[str, Any], timestamp: float | None, pricing: Pricing) -> RecordedCall:
    return RecordedCall(-1, model if isinstance(model, str) else None, timestamp, usage_of(raw), pricing=pricing)


def stop_reason_of(messages: list[Any]) -> Any:
    """The stop reason a response's records end on (the last that says one)."""
    said = [m.get("stop_reason") for m in messages if isinstance(m, dict) and m.get("stop_reason")]
    return said[-1] if said else None
