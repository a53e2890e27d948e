"""What model calls cost: list prices from genai-prices, a team's own table laid over them, and overrides.

A model no source knows is *unpriced* (``PriceTable.find`` gives None): its cost is reported as
unknown, never as a computed $0.
"""

from __future__ import annotations

import dataclasses
import json
import tomllib
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, Any

from compactctl import lazyre
from compactctl.errors import InputError
from compactctl.usage import SummarizerUsage

if TYPE_CHECKING:
    from compactctl.recorded import Pricing

PRICE_FIELDS = ("input", "cached_input", "cache_write", "output")
MILLION = 1_000_000
DEFAULT_MODEL = "gpt-4o"  # what a transcript that names no model is priced as, unless --model-pricing
_DATE_SUFFIX = lazyre.compile(r"-(\d{8}|\d{4}-\d{2}-\d{2})$")


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
    # Long-context prices: above ``start`` input tokens the whole call is billed at that tier's
    # prices (Anthropic over 200k, OpenAI's gpt-5.4 and later over 272k), highest start last.
    tiers: tuple[tuple[int, Prices], ...] = ()
    web_search: float = 0.0  # USD per web search the server tool made (Anthropic, OpenAI: $10 per 1,000); 0: unlisted

    def at(self, input_tokens: int) -> Prices:
        """The prices a call of ``input_tokens`` is billed at (its long-context tier, if it reached one)."""
        chosen = self
        for start, prices in self.tiers:
            if input_tokens > start:
                chosen = prices
        return chosen

    @property
    def cache_discount(self) -> float:
        """What a cached token costs as a fraction of an uncached one (0.1 to 0.5 in practice)."""
        return self.cached_input / self.input if self.input else 0.0

    def call_cost(self, input_tokens: int, cached: int, written: int, output: int, written_1h: int = 0) -> float:
        """One call's cost; ``written_1h`` of the ``written`` tokens are kept one hour (billed higher)."""
        if self.tiers:
            tier = self.at(input_tokens)
            if tier is not self:
                return tier.call_cost(input_tokens, cached, written, output, written_1h)
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
    """A team's own prices (``--prices FILE``; empty when none), over the list prices of genai-prices."""

    models: dict[str, Prices]
    default: str = DEFAULT_MODEL

    def find(
        self, model: str | None, provider: str | None = None, day: date | None = None, pricing: Pricing = ()
    ) -> Prices | None:
        """A model's prices as a transcript names it (a dated id matches its undated row): the
        team's table first, then genai-prices at ``day`` under the call's ``pricing`` conditions
        (a service tier, fast mode, US-only inference); None when no source knows it (unpriced).
        A team's own row is what the team pays, whatever the tier."""
        if not model:
            return None
        # No team table (the usual case): its dated-id pattern need not be compiled for nothing.
        for name in (model, _DATE_SUFFIX.sub("", model)) if self.models else ():
            if name in self.models:
                return self.models[name]
        from compactctl.replay.price_source import listed_prices

        return listed_prices(model, provider, day, pricing)


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
        for key in ("cache_write_1h", "cache_ttl", "web_search"):
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
            source=where or f"--prices {source}",  # a caption names where a row came from, never the list prices
            web_search=optional["web_search"] or 0.0,
        )
        aliases = entry.get("aliases", [])
        if not isinstance(aliases, list) or not all(isinstance(a, str) for a in aliases):
            raise InputError(f"bad price file: model {name!r}: aliases must be a list of names", source)
        for alias in aliases:  # another name of the same model (a dated id, a codex variant)
            models.setdefault(alias, dataclasses.replace(models[str(name)], model=alias))
    default = raw.get("default", next(iter(models)))
    if default not in models and PriceTable({}).find(str(default)) is None:
        raise InputError(f"bad price file: default model {default!r} is not in the table", source)
    return PriceTable(models, default)


def shipped_prices() -> PriceTable:
    """The list prices alone (genai-prices), no team table."""
    return PriceTable({}, DEFAULT_MODEL)


def load_prices(path: str | Path | None = None) -> PriceTable:
    """The list prices, with a team's own file (JSON or TOML) laid over them when given."""
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
    return PriceTable(own.models, own.default if "default" in raw else table.default)


def with_summarizer_prices(prices: Prices, table: PriceTable, summarizer: str, model: str) -> Prices:
    """Bill an LLM summarizer's tokens at its own model's prices when the table has them (gpt-4o-mini...)."""
    if summarizer != "openai" or not model:
        return prices
    own = table.find(str(model))
    return prices if own is None else dataclasses.replace(prices, summarizer=own)


def prices_for(table: PriceTable, model: str | None = None, **overrides: float | None) -> Prices:
    """One model's prices, with any of ``input``, ``cached_input``, ``cache_write``, ``output``
    (and ``min_cached_tokens``) overridden."""
    name = model or table.default
    found = table.find(name)
    if found is None:
        from compactctl.replay.price_source import both_sources

        own = f" or your table ({', '.join(table.models)})" if table.models else ""
        raise InputError(f"unknown model {name!r} for pricing: not in {both_sources()}{own}; pass `prices` FILE")
    prices = found
    given: dict[str, Any] = {key: float(value) for key, value in overrides.items() if value is not None}
    if "min_cached_tokens" in given:
        given["min_cached_tokens"] = int(given["min_cached_tokens"])
    unknown = set(given) - {*PRICE_FIELDS, "min_cached_tokens"}
    if unknown:
        raise InputError(f"unknown price field {sorted(unknown)[0]!r}")
    if any(value < 0 for value in given.values()):
        raise InputError("prices must be >= 0")
    if given:
        # An overridden figure is the whole call's: the listed long-context tiers no longer apply.
        prices = dataclasses.replace(prices, model=f"{name} (overridden)", tiers=(), **given)
    return prices
