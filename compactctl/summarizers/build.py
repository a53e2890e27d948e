"""The summarizer registry, and making the summarizer the settings name (``compact``, ``replay``).

Adding a summarizer is one new module with a ``build(options, counter, out, dry_run)`` function and
one line in ``SUMMARIZERS``. Modules are imported only when their summarizer is asked for,
so ``openai`` is never imported by a command that does not use it.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import IO, Protocol

from compactctl.errors import InputError
from compactctl.summarizers import Summarizer
from compactctl.summarizers.options import SummarizerOptions
from compactctl.tokens import TokenCounter


class Build(Protocol):
    def __call__(
        self, options: SummarizerOptions, counter: TokenCounter | None, out: IO[str] | None, dry_run: bool
    ) -> Summarizer: ...


@dataclass(frozen=True)
class Registered:
    """A summarizer by name: the module that builds it, its line in --help."""

    name: str
    module: str  # imported on first use; it defines ``build``
    summary: str  # one line for --help
    # Whether it sends requests with a prompt: --prompt-file and --dry-run mean something only then.
    reads_prompt: bool = False

    def build(self) -> Build:
        built: Build = importlib.import_module(self.module).build
        return built


SUMMARIZERS: dict[str, Registered] = {
    s.name: s
    for s in (
        Registered("extractive", "compactctl.summarizers.extractive", "offline: sections filled from the text itself"),
        Registered(
            "openai", "compactctl.summarizers.openai", "a model behind an OpenAI-compatible API", reads_prompt=True
        ),
    )
}


def make_summarizer(
    options: SummarizerOptions | None = None,
    counter: TokenCounter | None = None,
    out: IO[str] | None = None,
    *,
    dry_run: bool = False,
) -> Summarizer:
    """The summarizer ``options.summarizer`` names, built from its options (``dry_run``: print, send nothing)."""
    options = options or SummarizerOptions()
    if options.summarizer not in SUMMARIZERS:
        raise InputError(f"unknown summarizer {options.summarizer!r} (known: {', '.join(SUMMARIZERS)})")
    check_prompt_read(options.summarizer, options.prompt_file)
    return SUMMARIZERS[options.summarizer].build()(options, counter, out, dry_run)


def reads_prompt(name: str) -> bool:
    """Whether summarizer ``name`` sends a prompt (and so has requests to print with --dry-run)."""
    return name in SUMMARIZERS and SUMMARIZERS[name].reads_prompt


def check_prompt_read(name: str, prompt_files: object, setting: str = "prompt_file") -> None:
    """A prompt given to a summarizer that reads none is a usage error (exit 2), not a silent no-op.

    The extractive summarizer fills its sections from the text itself: no template could say
    what it does, so none is offered, and a prompt A/B over it would compare two identical runs.
    """
    if prompt_files and not reads_prompt(name):
        readers = ", ".join(n for n, s in SUMMARIZERS.items() if s.reads_prompt)
        raise InputError(
            f"`{setting}`: the {name} summarizer reads no prompt (it fills its sections from the text itself); "
            f"add `summarizer` {readers} to send the prompt to a model, or drop `{setting}`"
        )


NOTHING_TO_SEND = "dry run: the {name} summarizer runs offline and sends no request; there was nothing to send"
