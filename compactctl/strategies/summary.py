"""``summary``: over ``--threshold`` tokens, everything but the last ``--keep-recent`` messages
becomes one summary message, placed after the system messages."""

from __future__ import annotations

from dataclasses import dataclass

from compactctl.settings import Options
from compactctl.strategies.base import StepContext, StepResult, unchanged
from compactctl.strategies.settings import (
    DEFAULT_INPUT_MAX_TOKENS,
    KEEP_RECENT,
    SUMMARY_INPUT_MAX_TOKENS,
    SUMMARY_MAX_TOKENS,
    SUMMARY_ROLE,
    THRESHOLD,
)
from compactctl.strategies.summarizing import (
    noted_if_over,
    summarize_units,
    tail_start_for,
)
from compactctl.transcript import Message


@dataclass(frozen=True)
class SummaryOptions(Options):
    """summary's settings."""

    threshold: int = THRESHOLD(10000)
    keep_recent: int = KEEP_RECENT(6)
    summary_max_tokens: int = SUMMARY_MAX_TOKENS(500)
    summary_input_max_tokens: int = SUMMARY_INPUT_MAX_TOKENS(DEFAULT_INPUT_MAX_TOKENS)
    summary_role: str = SUMMARY_ROLE("system")
    open_on_user: bool = False  # set by the caller for Anthropic output (strategies.base.keep_opening_request)


def summary(messages: list[Message], options: SummaryOptions, context: StepContext) -> StepResult:
    if context.counter.messages(messages) <= options.threshold:
        return unchanged(messages)
    result, _ = summarize_units(
        messages,
        tail_start_for(messages, options.keep_recent),
        strategy="summary",
        max_tokens=options.summary_max_tokens,
        input_max_tokens=options.summary_input_max_tokens,
        role=options.summary_role,
        context=context,
        open_on_user=options.open_on_user,
    )
    return noted_if_over(result, "summary", options.threshold, context)
