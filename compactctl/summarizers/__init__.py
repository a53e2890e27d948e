"""Summarizers sit behind one small Protocol; strategies take one, they never build one.

``build.SUMMARIZERS`` is the registry and ``build.make_summarizer(settings)`` builds the
one the settings name; ``extractive`` is the offline default and ``openai`` is imported
only when it is asked for.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from compactctl.errors import SummarizerError
from compactctl.transcript import Message
from compactctl.usage import SummarizerUsage

SECTIONS = ("Goal", "Progress", "Current state", "Facts", "Decisions", "Next steps", "Constraints")


@dataclass(frozen=True)
class SummaryRequest:
    """One span (or one chunk of it) to summarize, and how."""

    messages: list[Message]  # the span to summarize, in order (one chunk of it, when it is cut)
    strategy: str  # which prompt: "summary", "rolling", "selective", "structured"
    max_tokens: int
    previous_summary: str | None = None  # re-injected so nothing learned earlier is forgotten
    part: tuple[int, int] = (1, 1)  # this chunk's number and how many there are, in order
    whole_span: list[Message] | None = None  # every chunk's messages: what verbatim extracts are taken from

    @property
    def is_last(self) -> bool:
        return self.part[0] == self.part[1]


@dataclass(frozen=True)
class Summary:
    """A summarizer's text, what it cost, and whether it was cut off."""

    text: str
    usage: SummarizerUsage = field(default_factory=SummarizerUsage)
    truncated: bool = False  # cut off by the token limit


class Summarizer(Protocol):
    def summarize(self, request: SummaryRequest) -> Summary: ...


class ContextExceeded(SummarizerError):
    """The server refused a request as larger than its context window (and said how large that is).

    ``summarize_span`` catches it, cuts the span to fit the window and asks again; a summarizer
    raising it has learned the window, so its ``input_limit`` says so from then on.
    """

    def __init__(self, window: int, message: str) -> None:
        super().__init__(message)
        self.window = window


@runtime_checkable
class PromptedSummarizer(Summarizer, Protocol):
    """A summarizer whose requests carry a prompt: strategies keep room for it in each request."""

    def prompt_text(self, strategy: str, max_tokens: int) -> str: ...
