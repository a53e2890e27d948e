"""What summarizer calls cost: a value that strategies, summarizers, reports and replays all add up."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class SummarizerUsage:
    """What summarizer calls cost: how many, their tokens, how many were cut off."""

    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    truncated: int = 0  # summaries cut off by the token limit

    def __add__(self, other: SummarizerUsage) -> SummarizerUsage:
        # Field by field, not through ``astuple`` (which copies each field recursively): a replay adds
        # a usage at every compaction's every step.
        return SummarizerUsage(
            self.calls + other.calls,
            self.prompt_tokens + other.prompt_tokens,
            self.completion_tokens + other.completion_tokens,
            self.truncated + other.truncated,
        )
