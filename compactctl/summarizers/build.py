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
    name: str
    module: str  # imported on first use; it defines ``build``
    summary: str  # one line for --help

    def build(self) -> Build:
        built: Build = importlib.import_module(self.module).build
        return built


SUMMARIZERS: dict[str, Registered] = {
    s.name: s
    for s in (
        Registered("extractive", "compactctl.summarizers.extractive", "offline: sections filled from the text itself"),
        Registered("openai", "compactctl.summarizers.openai", "a model behind an OpenAI-compatible API"),
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
    return SUMMARIZERS[options.summarizer].build()(options, counter, out, dry_run)
