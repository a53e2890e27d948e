"""Make the summarizer the settings name: used by ``compact`` (and by ``replay``)."""

from __future__ import annotations

import sys
from collections.abc import Mapping
from pathlib import Path
from typing import IO, Any

from compactctl.errors import InputError
from compactctl.summarizers import Summarizer
from compactctl.summarizers.extractive import ExtractiveSummarizer
from compactctl.tokens import TokenCounter

SUMMARIZERS = ("extractive", "openai")

# Setting names (config keys and flags) of the summarizers, with their defaults.
SUMMARIZER_DEFAULTS: dict[str, Any] = {
    "summarizer": "extractive",
    "model": "gpt-4o-mini",
    "base_url": None,
    "api": "chat",
    "summary_timeout": 60.0,
    "summary_retries": 4,
    "summary_backoff": 1.0,
    "summary_deadline": None,
    "summary_fail_after": 3,
    "redact": True,
    "cache": True,
    "cache_dir": None,
    "prompt_file": [],
    "dry_run": False,
}


def make_summarizer(
    settings: Mapping[str, Any], counter: TokenCounter | None = None, out: IO[str] | None = None
) -> Summarizer:
    """The summarizer ``settings["summarizer"]`` names; ``openai`` is imported only here, only when named."""
    merged: dict[str, Any] = {**SUMMARIZER_DEFAULTS, **{k: v for k, v in settings.items() if v is not None}}

    def get(key: str) -> Any:
        return merged[key]

    name = get("summarizer")
    if name == "extractive":
        return ExtractiveSummarizer(counter)
    if name != "openai":
        raise InputError(f"unknown summarizer {name!r} (known: {', '.join(SUMMARIZERS)})")
    from compactctl.summarizers.cache import default_cache_dir
    from compactctl.summarizers.openai import OpenAIConfig, OpenAISummarizer
    from compactctl.summarizers.request import APIS, prompt_overrides

    if get("api") not in APIS:
        raise InputError(f"unknown --api {get('api')!r} (known: {', '.join(APIS)})")
    cache_dir = (Path(get("cache_dir")) if get("cache_dir") else default_cache_dir()) if get("cache") else None
    config = OpenAIConfig(
        model=get("model"),
        base_url=get("base_url"),
        api=get("api"),
        timeout=float(get("summary_timeout")),
        retries=int(get("summary_retries")),
        backoff=float(get("summary_backoff")),
        deadline=float(get("summary_deadline")) if get("summary_deadline") is not None else None,
        fail_after=int(get("summary_fail_after")),
        redact=bool(get("redact")),
        cache_dir=cache_dir,
        prompts=prompt_overrides(get("prompt_file")),
        dry_run=bool(get("dry_run")),
    )
    return OpenAISummarizer(config, out or sys.stdout)
