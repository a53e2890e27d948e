"""Settings: flags, then ``compactctl.toml`` or ``[tool.compactctl]`` in ``pyproject.toml``, then defaults.

Settings are one flat mapping of option names (``keep_recent``, ``encoding``...);
each strategy takes the fields its options dataclass has.
"""

from __future__ import annotations

import dataclasses
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from compactctl.errors import InputError
from compactctl.strategies import STRATEGIES
from compactctl.summarizers.build import SUMMARIZER_DEFAULTS

DEFAULT_STRATEGY = "structured"

DEFAULTS: dict[str, Any] = {
    "strategy": [DEFAULT_STRATEGY],
    "format": "auto",
    "encoding": "cl100k_base",
    "jobs": 1,
    "on_error": "fail",
    "require": [],
    "fail_under": None,
    **SUMMARIZER_DEFAULTS,
}


def known_keys() -> set[str]:
    keys = set(DEFAULTS)
    for strategy in STRATEGIES.values():
        keys.update(field.name for field in dataclasses.fields(strategy.options))
    return keys


def find_config(start: Path) -> Path | None:
    """``compactctl.toml`` in the working directory, else a ``pyproject.toml`` with ``[tool.compactctl]``."""
    for name in ("compactctl.toml", "pyproject.toml"):
        candidate = start / name
        if candidate.is_file() and (name == "compactctl.toml" or b"[tool.compactctl" in candidate.read_bytes()):
            return candidate
    return None


def load_config(path: Path | None, cwd: Path | None = None) -> dict[str, Any]:
    """The settings a config file gives, with dashes in keys read as underscores."""
    if path is None:
        path = find_config(cwd or Path.cwd())
        if path is None:
            return {}
    elif not path.is_file():
        raise InputError("config file not found", str(path))
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as error:
        raise InputError(f"bad TOML: {error}", str(path)) from None
    if path.name == "pyproject.toml":
        data = data.get("tool", {}).get("compactctl", {})
    settings = {key.replace("-", "_"): value for key, value in data.items()}
    unknown = sorted(set(settings) - known_keys())
    if unknown:
        raise InputError(f"unknown setting {unknown[0]!r} (known: {', '.join(sorted(known_keys()))})", str(path))
    if isinstance(settings.get("strategy"), str):
        settings["strategy"] = [settings["strategy"]]
    return settings


def merge(flags: Mapping[str, Any], config: Mapping[str, Any]) -> dict[str, Any]:
    """Flags that were given win over the config file, which wins over the defaults."""
    given = {key: value for key, value in flags.items() if value is not None and value != []}
    return {**DEFAULTS, **config, **given}
