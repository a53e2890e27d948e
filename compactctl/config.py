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
    "strict_facts": False,
    **SUMMARIZER_DEFAULTS,
}


def known_keys() -> set[str]:
    keys = set(DEFAULTS)
    for strategy in STRATEGIES.values():
        keys.update(field.name for field in dataclasses.fields(strategy.options))
    return keys


# What a config file may hold for each setting, with the same bounds as the flags.
_INT_MIN = {
    "keep_recent": 0,
    "tool_max_tokens": 1,
    "head_lines": 0,
    "tail_lines": 0,
    "threshold": 0,
    "keep_turns": 0,
    "window": 0,
    "summary_max_tokens": 16,
    "summary_input_max_tokens": 1,
    "summary_retries": 0,
    "jobs": 1,
}
_NUMBER_MIN = {"summary_timeout": 0.001, "summary_backoff": 0.0, "fail_under": None}
_BOOLS = {"redact", "cache", "dry_run", "strict_facts"}
_STR_LISTS = {"strategy", "require", "keep_pattern", "prompt_file"}
_CHOICES = {"on_error": ("fail", "skip")}


def _check_value(key: str, value: Any) -> str | None:
    """Why ``value`` is not a valid ``key`` setting, or None when it is."""
    if key in _INT_MIN:
        if isinstance(value, bool) or not isinstance(value, int):
            return f"{key} must be a whole number, not {value!r}"
        if value < _INT_MIN[key]:
            return f"{key} must be at least {_INT_MIN[key]}, not {value!r}"
    elif key in _NUMBER_MIN:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return f"{key} must be a number, not {value!r}"
        minimum = _NUMBER_MIN[key]
        if minimum is not None and value < minimum:
            return f"{key} must be at least {minimum}, not {value!r}"
    elif key in _BOOLS:
        if not isinstance(value, bool):
            return f"{key} must be true or false, not {value!r}"
    elif key in _STR_LISTS:
        if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
            return f"{key} must be a string or a list of strings, not {value!r}"
    elif not isinstance(value, str):
        return f"{key} must be a string, not {value!r}"
    elif key in _CHOICES and value not in _CHOICES[key]:
        return f"{key} must be one of {', '.join(_CHOICES[key])}, not {value!r}"
    return None


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
    for key in _STR_LISTS:
        if isinstance(settings.get(key), str):
            settings[key] = [settings[key]]
    for key, value in settings.items():
        problem = _check_value(key, value)
        if problem:
            raise InputError(problem, str(path))
    return settings


def merge(flags: Mapping[str, Any], config: Mapping[str, Any]) -> dict[str, Any]:
    """Flags that were given win over the config file, which wins over the defaults."""
    given = {key: value for key, value in flags.items() if value is not None and value != []}
    return {**DEFAULTS, **config, **given}
