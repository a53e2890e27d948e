"""What summarizer calls cost: a value that strategies, summarizers, reports and replays all add up."""

from __future__ import annotations

from dataclasses import astuple, dataclass


@dataclass(frozen=True)
class SummarizerUsage:
    """What summarizer calls cost: how many, their tokens, how many were cut off."""

    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    truncated: int = 0  # summaries cut off by the token limit

    def __add__(self, other: SummarizerUsage) -> SummarizerUsage:
        return SummarizerUsage(*(a + b for a, b in zip(astuple(self), astuple(other), strict=True)))
