"""``rolling``: the cumulative summary a live agent would keep.

Walk the transcript unit by unit as the agent's context grows. Each time it crosses
``--threshold``, the messages leaving the last ``--window`` fold into the summary, with the
previous summary re-injected so nothing learned earlier is forgotten. The output is the
context the agent would hold at the end.
"""

from __future__ import annotations

from compactctl.strategies.base import Fate, StepContext, StepResult, unchanged
from compactctl.strategies.settings import (
    RollingOptions,
)
from compactctl.strategies.summarizing import (
    earlier_summary,
    not_smaller,
    over_note,
    summarize_span,
    summary_at,
    summary_message,
    unit_kept,
    units_kept,
    with_latest_request,
)
from compactctl.transcript import Message, tool_units, unit_start
from compactctl.usage import SummarizerUsage


def rolling(messages: list[Message], options: RollingOptions, context: StepContext) -> StepResult:
    """Fold at each threshold crossing; a threshold of 0 (a stage end in replay) folds once, at the end."""
    counter = context.counter
    sizes = [counter.message(message) for message in messages]
    if options.threshold > 0 and sum(sizes) <= options.threshold:
        return unchanged(messages)
    units = tool_units(messages)
    # The window is not known before the walk: a fact's latest copy stays wherever it is.
    stays = units_kept(messages, units, [unit_kept(messages, unit, context.client.owned) for unit in units])
    kept_units = {i for unit, verbatim in zip(units, stays, strict=True) if verbatim for i in unit}
    # A summary from an earlier compaction is where this one starts, not a message to keep.
    earlier = {i: found for i, message in enumerate(messages) if (found := earlier_summary(message))}
    summary: str | None = "\n\n".join(text for text, _ in earlier.values()) or None
    folded = sum(count for _, count in earlier.values())
    summary_tokens = counter.message(summary_message(summary, folded, options.summary_role)) if summary else 0
    held: list[int] = []
    held_tokens = 0
    fates: dict[int, Fate] = {}
    usage = SummarizerUsage()

    def fold() -> None:
        nonlocal summary, folded, summary_tokens, held, held_tokens, usage
        if not held:  # only earlier summaries so far: nothing new to fold
            return
        window_start = (
            unit_start(messages, held[max(0, len(held) - options.window)]) if options.window else len(messages)
        )
        leaving = [i for i in held if i < window_start and i not in kept_units]
        if not leaving:
            return
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

    for unit in units:
        added = [i for i in unit if i not in earlier]
        held.extend(added)
        held_tokens += sum(sizes[i] for i in added)
        if options.threshold > 0 and held_tokens + summary_tokens > options.threshold:
            fold()
    if options.threshold <= 0:
        fold()
    final = held_tokens + summary_tokens
    over = options.threshold > 0 and final > options.threshold
    notes = (over_note("rolling", final, options.threshold),) if over else ()
    if not fates:
        return unchanged(messages, notes)
    fates.update({i: Fate("summarized", "rolling: earlier summary carried into the new one") for i in earlier})
    summary = with_latest_request(summary or "", messages, {i for i, fate in fates.items() if i not in earlier})
    out = [messages[i] for i in held]
    origins: list[int | None] = list(held)
    at = summary_at(messages, held, context.client.owned)
    role = options.summary_role
    if options.open_on_user and (at == len(held) or messages[held[at]].get("role") == "assistant"):
        # The held window opens on the model's turn, which the Messages API rejects: the summary,
        # which quotes the latest request, opens the conversation as the user's turn instead.
        role = "user"
    message = summary_message(summary or "", folded, role)
    # A fold that saves nothing for the client that resumes the file is not made.
    if note := not_smaller("rolling", message, sum(sizes[i] for i in fates), context):
        total = sum(sizes)
        still = (over_note("rolling", total, options.threshold),) if 0 < options.threshold < total else ()
        return unchanged(messages, (*still, note), usage)
    out.insert(at, message)
    origins.insert(at, None)
    # Only the context held at the end is the output: the note says if it is still over the threshold.
    return StepResult(out, origins, fates, notes, usage)
