"""The openai summarizer's settings as one frozen value, read from the summarizer options.

Apart from ``openai.py``, which sends the requests these settings describe.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from compactctl.summarizers.cache import default_cache_dir
from compactctl.summarizers.options import SummarizerOptions
from compactctl.summarizers.request import prompt_overrides

DEFAULT_MODEL = "gpt-4o-mini"


@dataclass(frozen=True)
class OpenAIConfig:
    model: str = DEFAULT_MODEL
    base_url: str | None = None
    api: str = "chat"
    api_key: str | None = None
    timeout: float = 60.0
    retries: int = 4
    backoff: float = 1.0  # seconds before the first retry, doubled each time
    redact: bool = True
    cache_dir: Path | None = None  # None: no cache
    prompts: Mapping[str, str] = field(default_factory=dict)  # strategy (or "*") -> prompt template
    dry_run: bool = False
    max_tokens_field: str = "auto"  # auto | max_completion_tokens | max_tokens (see request.MAX_TOKENS_FIELDS)
    deadline: float | None = None  # seconds for all of the run's requests; None: no bound
    request_deadline: float = 60.0  # seconds for one summary's requests, its retries included
    fail_after: int = 3  # failed summaries in a row after which the server is not called again
    temperature: float | None = None  # sent with each request when set; else the server's default
    role: str = "summarizer"  # what its errors call it: the summarizer, or the eval judge it carries


def config_of(options: SummarizerOptions, dry_run: bool = False) -> OpenAIConfig:
    cache_dir = None
    if options.cache:
        cache_dir = Path(options.cache_dir) if options.cache_dir else default_cache_dir()
    return OpenAIConfig(
        model=options.model,
        base_url=options.base_url,
        api=options.api,
        timeout=float(options.summary_timeout),
        retries=options.summary_retries,
        backoff=float(options.summary_backoff),
        redact=options.redact,
        cache_dir=cache_dir,
        prompts=prompt_overrides(options.prompt_file),
        dry_run=dry_run,
        max_tokens_field=options.max_tokens_field,
        deadline=float(options.summary_deadline) if options.summary_deadline is not None else None,
        request_deadline=float(options.summary_request_deadline),
        fail_after=options.summary_fail_after,
        temperature=None if options.summary_temperature is None else float(options.summary_temperature),
    )
