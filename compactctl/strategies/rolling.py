"""``rolling``: the cumulative summary a live agent would keep.

Walk the transcript unit by unit as the agent's context grows. Each time it crosses
``--threshold``, the messages leaving the last ``--window`` fold into the summary, with the
previous summary re-injected so nothing learned earlier is forgotten. The output is the
context the agent would hold at the end.
"""

from __future__ import annotations

from dataclasses import dataclass

from compactctl.report import SummarizerUsage
from compactctl.strategies.base import Fate, StepContext, StepResult, unchanged
from compactctl.strategies.summarizing import (
    ALWAYS_KEPT_ROLES,
    DEFAULT_INPUT_MAX_TOKENS,
    check_role,
    over_note,
    summarize_span,
    summary_message,
    unit_kept,
)
from compactctl.transcript import Message, tool_units, unit_start


@dataclass(frozen=True)
class RollingOptions:
    threshold: int = 8000
    window: int = 8
    summary_max_tokens: int = 400
    summary_input_max_tokens: int = DEFAULT_INPUT_MAX_TOKENS
    summary_role: str = "system"


def rolling(messages: list[Message], options: RollingOptions, context: StepContext) -> StepResult:
    check_role(options.summary_role)
    counter = context.counter
    sizes = [counter.message(message) for message in messages]
    if sum(sizes) <= options.threshold:
        return unchanged(messages)
    kept_units = {i for unit in tool_units(messages) if unit_kept(messages, unit) for i in unit}
    held: list[int] = []
    held_tokens = 0
    summary: str | None = None
    summary_tokens = 0
    folded = 0
    fates: dict[int, Fate] = {}
    usage = SummarizerUsage()
    for unit in tool_units(messages):
        held.extend(unit)
        held_tokens += sum(sizes[i] for i in unit)
        if held_tokens + summary_tokens <= options.threshold:
            continue
        window_start = (
            unit_start(messages, held[max(0, len(held) - options.window)]) if options.window else len(messages)
        )
        leaving = [i for i in held if i < window_start and i not in kept_units]
        if leaving:
            spoken = summarize_span(
                [messages[i] for i in leaving],
                "rolling",
                options.summary_max_tokens,
                options.summary_input_max_tokens,
                context,
                previous=summary,
            )
            usage = usage + spoken.usage
            summary = spoken.text
            folded += len(leaving)
            summary_tokens = counter.message(summary_message(summary, folded, options.summary_role))
            gone = set(leaving)
            held = [i for i in held if i not in gone]
            held_tokens -= sum(sizes[i] for i in leaving)
            fates.update({i: Fate("summarized", "rolling: left the window, folded into the summary") for i in leaving})
    out = [messages[i] for i in held]
    origins: list[int | None] = list(held)
    if summary is not None:
        at = next((n for n, i in enumerate(held) if messages[i].get("role") not in ALWAYS_KEPT_ROLES), len(held))
        out.insert(at, summary_message(summary, folded, options.summary_role))
        origins.insert(at, None)
    # Only the context held at the end is the output: say so if it is still over the threshold.
    final = held_tokens + summary_tokens
    notes = (over_note("rolling", final, options.threshold),) if final > options.threshold else ()
    return StepResult(out, origins, fates, notes, usage)
