"""The summarizer settings (config keys and flags of ``compact``, ``replay`` and ``review``), declared once.

A setting only the openai summarizer reads says so (``needs=OPENAI``): given with another
summarizer it is a usage error, not a flag accepted and ignored.
"""

from __future__ import annotations

from dataclasses import dataclass

from compactctl.settings import Needs, Options, setting

SUMMARY_PANEL = "Summaries"
APIS = ("chat", "responses")
# Which body field bounds the reply: OpenAI wants max_completion_tokens (reasoning models refuse
# max_tokens); vLLM before 0.6, llama.cpp's server and Ollama read max_tokens.
MAX_TOKENS_FIELDS = ("auto", "max_completion_tokens", "max_tokens")
OPENAI = Needs("summarizer", ("openai",))
# The summarizer itself is read only by a step that summarizes: with window, prune... alone it would write nothing.
SUMMARIZING = Needs("strategy", ("summary", "rolling", "selective", "structured"))


def _summarizers() -> list[str]:
    from compactctl.summarizers.build import SUMMARIZERS  # the registry, which imports these options

    return [f"{name} ({registered.summary})" for name, registered in SUMMARIZERS.items()]


@dataclass(frozen=True)
class SummarizerOptions(Options):
    """Who writes the summaries and how it is reached: the summarizer's settings."""

    summarizer: str = setting(
        "extractive",
        help="Who writes the summaries.",
        metavar="NAME",
        listed=lambda: _summarizers(),
        panel=SUMMARY_PANEL,
        needs=SUMMARIZING,
    )
    model: str = setting("gpt-4o-mini", help="openai: model.", metavar="MODEL", panel=SUMMARY_PANEL, needs=OPENAI)
    base_url: str | None = setting(
        None,
        help="openai: any compatible server, e.g. http://127.0.0.1:8000/v1.",
        metavar="URL",
        panel=SUMMARY_PANEL,
        needs=OPENAI,
    )
    api: str = setting("chat", help="openai: chat or responses.", choices=APIS, panel=SUMMARY_PANEL, needs=OPENAI)
    summary_timeout: float = setting(
        60.0,
        help="openai: seconds per request, all of it (slow bytes included).",
        metavar="SECONDS",
        min=0.001,
        panel=SUMMARY_PANEL,
        needs=OPENAI,
    )
    summary_retries: int = setting(
        4, help="openai: retries on 429/5xx/timeouts.", min=0, panel=SUMMARY_PANEL, needs=OPENAI
    )
    summary_backoff: float = setting(
        1.0,
        help="openai: seconds before the first retry, doubled each time.",
        metavar="SECONDS",
        min=0.0,
        panel=SUMMARY_PANEL,
        needs=OPENAI,
    )
    summary_deadline: float | None = setting(
        None,
        help="openai: seconds for all of a run's requests together, retries included (none by default).",
        metavar="SECONDS",
        min=0.001,
        panel=SUMMARY_PANEL,
        needs=OPENAI,
    )
    summary_request_deadline: float = setting(
        60.0,
        help="openai: seconds one summary may take, its retries included: a hanging server costs a file no more.",
        metavar="SECONDS",
        min=0.001,
        panel=SUMMARY_PANEL,
        needs=OPENAI,
    )
    summary_fail_after: int = setting(
        3,
        help="openai: stop calling a server after this many failed summaries in a row.",
        min=1,
        panel=SUMMARY_PANEL,
        needs=OPENAI,
    )
    # Both summarizers read it: the offline one builds its summaries from redacted text too.
    redact: bool = setting(
        True, help="openai: redact secrets before sending.", flags=("--redact/--no-redact",), panel=SUMMARY_PANEL
    )
    cache: bool = setting(
        True,
        help="openai: reuse summaries cached on disk.",
        flags=("--cache/--no-cache",),
        panel=SUMMARY_PANEL,
        needs=OPENAI,
    )
    cache_dir: str | None = setting(
        None,
        help="openai: cache folder.",
        metavar="DIR",
        shown_default="$COMPACTCTL_CACHE_DIR or the user cache dir",
        panel=SUMMARY_PANEL,
        needs=OPENAI,
    )
    # Given to a summarizer that reads no prompt it is refused by ``build.check_prompt_read``, from a
    # config file too, with what to add.
    prompt_file: tuple[str, ...] = setting(
        (),
        help="Replace the summary prompt: PATH, or STRATEGY=PATH (repeatable).",
        metavar="PATH",
        panel=SUMMARY_PANEL,
    )
    summary_temperature: float | None = setting(
        None,
        help="openai: the sampling temperature sent with each request (none sent by default: the server's own); "
        "0 makes a local model's prompt A/B repeatable.",
        min=0.0,
        panel=SUMMARY_PANEL,
        needs=OPENAI,
    )
    max_tokens_field: str = setting(
        "auto",
        help="openai chat: the field bounding the reply; auto: max_completion_tokens for api.openai.com, "
        "max_tokens elsewhere (vLLM, llama.cpp, Ollama).",
        choices=MAX_TOKENS_FIELDS,
        panel=SUMMARY_PANEL,
        needs=OPENAI,
    )


@dataclass(frozen=True)
class DryRunOptions(Options):
    """``compact --dry-run``: the summarizer's requests printed, nothing sent, nothing written."""

    dry_run: bool = setting(
        False,
        help="openai: print each request that would be sent; send and write nothing.",
        flags=("--dry-run",),
        panel=SUMMARY_PANEL,
    )
