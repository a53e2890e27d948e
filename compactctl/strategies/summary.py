"""``summary``: over ``--threshold`` tokens, everything but the last ``--keep-recent`` messages
becomes one summary message, placed after the system messages."""

from __future__ import annotations

from compactctl.strategies.base import StepContext, StepResult, unchanged
from compactctl.strategies.settings import (
    SummaryOptions,
)
from compactctl.strategies.summarizing import (
    noted_if_over,
    summarize_units,
    tail_start_for,
)
from compactctl.transcript import Message


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
