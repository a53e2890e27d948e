"""The summarizer registry, and making the summarizer the settings name (``compact``, ``replay``).

Adding a summarizer is one new module with a ``build(settings, counter, out)`` function and
one line in ``SUMMARIZERS``. Modules are imported only when their summarizer is asked for,
so ``openai`` is never imported by a command that does not use it.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import IO, Any, Protocol

from compactctl.errors import InputError
from compactctl.settings import defaults_of
from compactctl.summarizers import Summarizer
from compactctl.summarizers.options import SummarizerOptions
from compactctl.tokens import TokenCounter


class Build(Protocol):
    def __call__(
        self, settings: Mapping[str, Any], counter: TokenCounter | None, out: IO[str] | None
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

# Setting names (config keys and flags) of the summarizers, with their defaults.
SUMMARIZER_DEFAULTS: dict[str, Any] = defaults_of(SummarizerOptions)


def make_summarizer(
    settings: Mapping[str, Any], counter: TokenCounter | None = None, out: IO[str] | None = None
) -> Summarizer:
    """The summarizer ``settings["summarizer"]`` names, built from the settings (defaults filled in)."""
    merged: dict[str, Any] = {**SUMMARIZER_DEFAULTS, **{k: v for k, v in settings.items() if v is not None}}
    name = merged["summarizer"]
    if name not in SUMMARIZERS:
        raise InputError(f"unknown summarizer {name!r} (known: {', '.join(SUMMARIZERS)})")
    return SUMMARIZERS[name].build()(merged, counter, out)
