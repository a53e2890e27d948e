"""List prices from the ``genai-prices`` package (pydantic/genai-prices): the data bundled with
the installed version, never fetched at run time.

``genai-prices`` knows the models real logs name this month (``claude-opus-4-7``, ``gpt-5.5``,
dated ids), with their cache-read and cache-write prices, the one-hour cache write, price
changes by date and long-context tiers (over 200k input at Anthropic, 272k at OpenAI: the
whole request at the higher rate). Importing it costs about 0.2 s, so it is imported here, and
only when a call is priced. Its ``UpdatePrices`` (a background download from GitHub) is never
started: a run is priced by the package version it names (``source_label``), the same offline
as online.

A model genai-prices has not listed yet is looked up in Claude Code's own baked-in model catalog
(``claude_code_catalog.json``, cut from the client by ``bench/claude_code_catalog.py``): the prices
its ``/cost`` showed the user. In 2.1.337 it lists ``claude-mythos-5`` and ``claude-mythos-5-1``,
which genai-prices 0.2.5 does not; where both list a model they agree to the cent (a test).

What genai-prices does not carry is caching *behaviour*: the shortest prompt a provider caches
and how long an unused prefix lives; ``CACHE_RULES`` keeps those, per provider and model family.
"""

from __future__ import annotations

import functools
import json
import re
from collections import Counter
from collections.abc import Sequence
from datetime import UTC, date, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from compactctl.recorded import Pricing, RecordedCall
    from compactctl.replay.prices import Prices

PACKAGE = "genai-prices"

# (provider, model prefix, min_cached_tokens): the first match wins. From the providers' prompt
# caching pages: OpenAI caches prompts of 1,024 tokens and more; Anthropic 1,024 for Sonnet and
# Opus 4.x before 4.5, 4,096 for Opus 4.5 and later and Haiku 4.5, 2,048 for the Haiku 3.x models.
CACHE_RULES: tuple[tuple[str, str, int], ...] = (
    ("anthropic", "claude-haiku-4", 4096),
    ("anthropic", "claude-opus-4-5", 4096),
    ("anthropic", "claude-opus-4-6", 4096),
    ("anthropic", "claude-opus-4-7", 4096),
    ("anthropic", "claude-opus-4-8", 4096),
    ("anthropic", "claude-opus-5", 4096),
    ("anthropic", "claude-3-5-haiku", 2048),
    ("anthropic", "claude-3-haiku", 2048),
    ("anthropic", "", 1024),
    ("openai", "", 1024),
    # Gemini's implicit cache (2.5 and later; ai.google.dev/gemini-api/docs/caching, the table updated
    # 2026-10-13: 2.5 Flash and Pro 2,048, 3.1 Pro and the Flash models from 3.5 4,096; 3 Flash
    # preview 1,024, 3 Pro preview 4,096 in its earlier table; Flash-Lite unlisted, the API refuses
    # under 2,048). Older Gemini models cache nothing implicitly: no rule, as before.
    ("google", "gemini-2.5", 2048),
    ("google", "gemini-3-flash", 1024),
    ("google", "gemini-3", 4096),
    ("google", "gemini-4", 4096),
)
CACHE_TTL_SECONDS = 300.0  # both providers' default: a prefix unused for 5 minutes is gone
# The price conditions genai-prices keeps variants for (OpenAI's service tiers, Anthropic's fast mode).
VARIANT_KEYS = frozenset({"service_tier", "speed"})
# What genai-prices does not carry: Anthropic bills US-only inference (``inference_geo`` "us", Opus and
# Sonnet 4.6 and later) at 1.1x every token price, the searches as listed (its data-residency page; Claude
# Code's own cost works it out so).
GEO_SURCHARGE = {("anthropic", "us"): 1.1}


def source_version() -> str:
    """The installed genai-prices version (read from its metadata, without importing it)."""
    from importlib import metadata  # not at import: it costs more than a price read from the cache

    try:
        return metadata.version(PACKAGE)
    except metadata.PackageNotFoundError:
        return "not installed"


def package_label() -> str:
    return f"{PACKAGE} {source_version()}"


def source_label() -> str:
    """Where a run's list prices come from: genai-prices, and Claude Code's catalog for what it lacks."""
    return f"{package_label()}, else {catalog_label()}"


def both_sources() -> str:
    """The sources a model was looked up in, as a reader is told it is in neither."""
    return f"{package_label()} or Claude Code's catalog"


def unpriced_note(models: Sequence[str], fallback: Prices | None) -> str:
    """What a reader is told (before the table) when a model is in no price source."""
    names, sources = ", ".join(models), both_sources()
    if fallback is not None:
        return f"model {names} is not in {sources}: its calls are priced as {fallback.model} (--model-pricing)"
    return (
        f"model {names} is not in {sources}: its calls are unpriced, so cost is unknown; "
        "pass --model-pricing NAME (or --prices FILE) to price them, or upgrade genai-prices, whose data may list it"
    )


@functools.cache
def _snapshot() -> Any:
    # The bundled data, built here rather than through get_snapshot(): if another library in the
    # process started UpdatePrices, its downloaded snapshot is not used, so a run's prices are
    # always those of the version it names.
    from genai_prices.data import providers
    from genai_prices.data_snapshot import DataSnapshot

    return DataSnapshot(providers=providers, from_auto_update=False)


def _find(model: str, provider: str | None) -> tuple[Any, Any] | None:
    from compactctl.tokens import bare_model, claude_model, provider_of, served_by

    snapshot = _snapshot()
    # A Bedrock or Vertex spelling is that cloud's listing first (its own prices: Bedrock's regional
    # endpoints cost more than its global ones), then, failing it, Anthropic's list price of the model.
    # A gateway's spelling (``anthropic/claude-sonnet-4.6``) is the maker's list price of the model
    # after its prefix, which genai-prices does not match with the prefix on.
    served, own, bare = served_by(model), claude_model(model), bare_model(model)
    tries = [(model, hint) for hint in dict.fromkeys((served, provider, None))]
    tries += [(own, "anthropic")] if served is not None and own is not None else []
    tries += [(bare, provider_of(bare)), (bare, None)] if bare != model.lower() and served is None else []
    for name, hint in tries:
        try:
            return snapshot.find_provider_model(name, None, hint, None)  # type: ignore[no-any-return]
        except LookupError:
            continue
    return None


def _min_cached(provider: str, model: str) -> int:
    from compactctl.tokens import claude_model

    own = claude_model(model)
    provider, model = ("anthropic", own) if own is not None else (provider, model)  # Claude on Bedrock, Vertex
    for who, prefix, minimum in CACHE_RULES:
        if who == provider and model.startswith(prefix):
            return minimum
    return 0


@functools.lru_cache(maxsize=1024)
def listed_prices(
    model: str, provider: str | None = None, day: date | None = None, pricing: Pricing = ()
) -> Prices | None:
    """A model's list prices on ``day`` (today when None), as genai-prices has them; None: unknown.

    ``provider`` (``anthropic``, ``openai``) is tried first, then any provider that lists the
    name (a Claude Code session pointed at another backend names that backend's model).
    ``pricing``: the call's price conditions (``RecordedCall.pricing``): a service tier or fast
    mode the model lists no price for is unknown too, not the standard price. An answer is kept
    on disk (``price_cache``): later runs read it without importing genai-prices.
    """
    from compactctl.replay import price_cache

    found, prices = price_cache.cached(model, provider, day, pricing)
    if not found:
        prices = _looked_up(model, provider, day, pricing)
        price_cache.keep(model, provider, day, prices, pricing)
    return prices


def priced_name(model: str | None, pricing: Pricing = ()) -> str:
    """A model as a reader is told it is unpriced: with the conditions it was billed under."""
    return str(model) + "".join(f" ({key} {value})" for key, value in pricing)


def pricing_notes(calls: Sequence[RecordedCall]) -> list[str]:
    """What a reader is told of the calls billed under a service tier, fast mode or US-only inference."""
    counts = Counter(condition for call in calls for condition in call.pricing)
    return [
        f"{n} of {len(calls)} calls billed at {key.replace('_', ' ')} {value} prices, as the log records "
        "(every row prices them so)"
        for (key, value), n in sorted(counts.items())
    ]


def _looked_up(model: str, provider: str | None, day: date | None, pricing: Pricing = ()) -> Prices | None:
    found = _find(model, provider)
    if found is None:
        return _from_catalog(model, provider, pricing)
    listing, info = found
    when = datetime.combine(day, datetime.min.time(), UTC) if day is not None else datetime.now(UTC)
    variant = {key: value for key, value in pricing if key in VARIANT_KEYS}
    listed = [v.when for v in info.price_variants or () if v.constraint is None or v.constraint.active(when)]
    if variant and not any(all(variant.get(k) == v for k, v in conditions.items()) for conditions in listed):
        return None  # billed at a tier the listing has no price for
    price = info.get_prices(when, variant or None)
    surcharge = GEO_SURCHARGE.get((listing.id, dict(pricing).get("inference_geo", "")), 1.0)
    applied = _applied(pricing, surcharge)
    fields = {
        "input": getattr(price, "input_mtok", None),
        "cached_input": getattr(price, "cache_read_mtok", None),
        "cache_write": getattr(price, "cache_write_5m_mtok", None) or getattr(price, "cache_write_mtok", None),
        "cache_write_1h": getattr(price, "cache_write_1h_mtok", None),
        "output": getattr(price, "output_mtok", None),
    }
    if fields["input"] is None or fields["output"] is None:
        return None  # priced per request or per second only: not a token price replay can use
    starts = sorted({tier.start for value in fields.values() for tier in getattr(value, "tiers", ())})
    openai = listing.id == "openai"

    def at(tier: int | None) -> dict[str, float | None]:
        figures: dict[str, float | None] = {}
        for key, value in fields.items():
            if value is not None and hasattr(value, "base"):  # TieredPrices: the highest tier started
                chosen = value.base
                for step in value.tiers:
                    if tier is not None and step.start <= tier:
                        chosen = step.price
                value = chosen
            figures[key] = None if value is None else float(value) * surcharge
        if figures["cached_input"] is None:
            figures["cached_input"] = figures["input"]
        if figures["cache_write"] is None:
            # OpenAI caches automatically and, but for the models that list a write price (the gpt-5.6
            # family, whose usage reports the writes), bills no write: a write is plain input.
            figures["cache_write"] = figures["input"]
        return figures

    def prices(figures: dict[str, float | None], tiers: tuple[tuple[int, Prices], ...] = ()) -> Prices:
        return _token_prices(
            model,
            {**figures, "cache_write_1h": None if openai else figures["cache_write_1h"]},
            listed_as=(listing.id, info.id),
            source=f"{package_label()} ({listing.id}/{info.id}{applied})",
            tiers=tiers,
            web_search=float(getattr(price, "web_searches_kcount", None) or 0) / 1000,
        )

    tiers = tuple((start, prices(at(start))) for start in starts)
    return prices(at(None), tiers)


def _applied(pricing: Pricing, surcharge: float) -> str:
    """The conditions a price was looked up at, for its caption: the tier, and the region where it costs more."""
    return "".join(f", {k} {v}" for k, v in pricing if k in VARIANT_KEYS or surcharge != 1.0)


def _token_prices(
    model: str,
    figures: dict[str, float | None],
    *,
    listed_as: tuple[str, str],
    source: str,
    tiers: tuple[tuple[int, Prices], ...],
    web_search: float,
) -> Prices:
    """``Prices`` from USD per million tokens by field (``input``, ``cached_input``, ``cache_write``, ...)."""
    from compactctl.replay.prices import Prices

    provider, listed_model = listed_as
    return Prices(
        model,
        input=figures["input"] or 0.0,
        cached_input=figures["cached_input"] or 0.0,
        cache_write=figures["cache_write"] or 0.0,
        output=figures["output"] or 0.0,
        min_cached_tokens=_min_cached(provider, listed_model),
        provider=provider,
        cache_write_1h=figures["cache_write_1h"],
        cache_ttl=CACHE_TTL_SECONDS,
        source=source,
        tiers=tiers,
        web_search=web_search,
    )


CATALOG = Path(__file__).with_name("claude_code_catalog.json")
LONG_WINDOW = 1_000_000  # what a ``[1m]`` model id asks Claude Code for
# ``Prices``' fields and the catalog's names for them.
CATALOG_FIELDS = {
    "input": "input",
    "cached_input": "cache_read",
    "cache_write": "cache_write_5m",
    "cache_write_1h": "cache_write_1h",
    "output": "output",
}


@functools.cache
def claude_code_catalog() -> dict[str, Any]:
    """Claude Code's model catalog as shipped: ``{"version", "models": {id: {names, prices, ...}}}``."""
    return json.loads(CATALOG.read_bytes())  # type: ignore[no-any-return]


def catalog_label() -> str:
    return f"Claude Code {claude_code_catalog()['version']}'s model catalog"


def catalog_window(model: str) -> int | None:
    """The window Claude Code runs ``model`` on with no opt-in where its catalog says it is natively 1M, or 1M where
    the model id asks for it (``[1m]``); None where its default is the 200k every other Claude model has."""
    found = catalog_entry(model)
    if found is not None and found[1]["native_1m"]:
        return int(found[1]["window"])
    return LONG_WINDOW if "[1m]" in model.lower() else None


@functools.cache
def _catalog_ids() -> dict[str, str]:
    """Every spelling the catalog lists (its ids and each provider's), to the model's id."""
    models = claude_code_catalog()["models"]
    return {name: id_ for id_, entry in models.items() for name in (id_, *entry["names"])}


def catalog_entry(model: str) -> tuple[str, dict[str, Any]] | None:
    """A model's catalog id and entry, by its id or any provider's spelling (dated, Bedrock, ``[1m]``)."""
    from compactctl.tokens import bare_model, claude_model

    spelled = model.lower().replace("[1m]", "")
    for name in filter(None, (spelled, claude_model(spelled), bare_model(spelled))):
        for tried in (name, re.sub(r"-\d{8}$", "", name)):
            if tried in _catalog_ids():
                id_ = _catalog_ids()[tried]
                return id_, claude_code_catalog()["models"][id_]
    return None


def _from_catalog(model: str, provider: str | None, pricing: Pricing) -> Prices | None:
    found = catalog_entry(model) if provider in (None, "anthropic") else None
    if found is None or any(key in VARIANT_KEYS for key, _ in pricing):
        return None  # unknown, or billed at a tier (fast mode) the catalog lists no price for
    id_, entry = found
    surcharge = GEO_SURCHARGE.get(("anthropic", dict(pricing).get("inference_geo", "")), 1.0)
    source = f"{catalog_label()} (anthropic/{id_}{_applied(pricing, surcharge)})"

    def prices(listed: dict[str, float], tiers: tuple[tuple[int, Prices], ...] = ()) -> Prices:
        figures: dict[str, float | None] = {ours: listed[theirs] * surcharge for ours, theirs in CATALOG_FIELDS.items()}
        return _token_prices(
            model,
            figures,
            listed_as=("anthropic", id_),
            source=source,
            tiers=tiers,
            web_search=entry["prices"].get("web_search", 0.0),
        )

    long_prompt = entry.get("long_prompt")
    tiers = ((int(long_prompt["above_prompt_tokens"]), prices(long_prompt)),) if long_prompt else ()
    return prices(entry["prices"], tiers)


def day_of(timestamp: float | None) -> date | None:
    """The UTC day of a call's time (epoch seconds): prices change on dates."""
    return None if timestamp is None else datetime.fromtimestamp(timestamp, UTC).date()
