"""List prices looked up once per machine: what genai-prices said for a model on a day, kept on disk.

Importing genai-prices and building its snapshot costs about 0.3 s of CPU, more than a replay of a
small session; a replay prices one or a few models. So each answer (the ``Prices``, or that the
model is unknown) is kept in a JSON file in the user's cache folder, named after the installed
package's data file (its path, size and modification time: another genai-prices version is another
file), and read back by later runs instead of importing the package. Nothing in the file is needed:
a missing, damaged or foreign file is ignored and written anew.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import os
from datetime import UTC, date, datetime
from importlib.util import find_spec
from pathlib import Path
from typing import TYPE_CHECKING, Any

from compactctl.digests import blake2b
from compactctl.replay.prices import Prices

if TYPE_CHECKING:
    from compactctl.recorded import Pricing

PRICES_CACHE_ENV = "COMPACTCTL_PRICES_CACHE"
# Bumped when the file's layout, Prices' fields or the look-up change (2: Bedrock and Vertex ids; 3: OpenAI's
# write prices where a model lists one; 5: a gateway's spelling at the maker's list price;
# 6: Claude Code's catalog for what genai-prices lacks; 7: a catalog price's caption names US-only inference).
FORMAT = 7


def cache_path() -> Path | None:
    """The cache file of the installed genai-prices (None: the package is not installed)."""
    spec = find_spec("genai_prices")  # finds the package without importing it
    if spec is None or not spec.submodule_search_locations:
        return None
    data = Path(next(iter(spec.submodule_search_locations))) / "data.py"
    try:
        stat = data.stat()
    except OSError:
        return None
    catalog = Path(__file__).with_name("claude_code_catalog.json").stat()  # a new catalog is a new file too
    stamp = f"{FORMAT}:{data.resolve()}:{stat.st_size}:{stat.st_mtime_ns}:{catalog.st_size}:{catalog.st_mtime_ns}"
    from compactctl.userdirs import user_cache_dir

    named = os.environ.get(PRICES_CACHE_ENV)
    folder = Path(named) if named else user_cache_dir() / "prices"
    return folder / f"genai-prices-{blake2b(stamp.encode(), digest_size=8).hexdigest()}.json"


def key(model: str, provider: str | None, day: date | None, pricing: Pricing = ()) -> str:
    # A look-up without a day is today's prices: kept under today's (UTC) date.
    when = day if day is not None else datetime.now(UTC).date()
    return json.dumps([model, provider, when.isoformat(), *([pricing] if pricing else [])])  # tuples as lists


@functools.cache
def _entries(path: Path) -> dict[str, Any]:
    """The file's entries as read at the first look-up (a run adds to this copy as it writes)."""
    try:
        raw = json.loads(path.read_bytes())
    except (OSError, ValueError):
        return {}
    return raw if isinstance(raw, dict) else {}


def cached(model: str, provider: str | None, day: date | None, pricing: Pricing = ()) -> tuple[bool, Prices | None]:
    """``(found, prices)``: whether the cache holds the look-up, and its answer (None: unknown model)."""
    path = cache_path()
    if path is None:
        return False, None
    entry = _entries(path).get(key(model, provider, day, pricing), False)
    if entry is False:
        return False, None
    if entry is None:
        return True, None
    try:
        return True, _prices(entry)
    except (TypeError, ValueError, KeyError):
        return False, None  # a damaged entry: looked up again and written anew


def keep(model: str, provider: str | None, day: date | None, prices: Prices | None, pricing: Pricing = ()) -> None:
    """Write a look-up's answer to the cache file (atomically; a file that cannot be written is skipped)."""
    path = cache_path()
    if path is None:
        return
    entries = _entries(path)
    entries[key(model, provider, day, pricing)] = None if prices is None else dataclasses.asdict(prices)
    import tempfile  # only when writing: a run that reads its prices does not pay for it

    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
        with os.fdopen(handle, "w") as out:
            json.dump(entries, out)
        os.replace(temporary, path)
    except OSError:
        return


def _prices(entry: dict[str, Any]) -> Prices:
    if not isinstance(entry, dict) or entry.get("summarizer") is not None:
        raise ValueError("not a listed price")
    tiers = tuple((int(start), _prices(tier)) for start, tier in entry["tiers"])
    return Prices(**{**entry, "tiers": tiers})
