"""``window``: keep system/developer messages, pinned messages and the last N messages.

The cut is made between tool units, so it never separates a tool result from its call.
A fact (declared, or ``--require``) that no kept message holds keeps the unit of its
latest copy: one copy suffices.
"""

from __future__ import annotations

from compactctl.facts import keep_fact_units
from compactctl.strategies.base import Fate, StepContext, StepResult, keep_indices, keep_opening_request
from compactctl.strategies.settings import WindowOptions
from compactctl.transcript import Message, is_pinned, tool_units, unit_start

ALWAYS_KEPT_ROLES = frozenset({"system", "developer"})


def window(messages: list[Message], options: WindowOptions, context: StepContext) -> StepResult:
    tail_start = (
        unit_start(messages, max(0, len(messages) - options.keep_recent)) if options.keep_recent else len(messages)
    )
    units = tool_units(messages)
    kept = [
        unit.start >= tail_start
        or any(messages[i].get("role") in ALWAYS_KEPT_ROLES or is_pinned(messages[i]) for i in unit)
        for unit in units
    ]
    keep_fact_units(messages, units, kept, options.require)
    if options.open_on_user:
        keep_opening_request(messages, units, kept)
    keep: list[int] = []
    fates: dict[int, Fate] = {}
    for unit, stays in zip(units, kept, strict=True):
        if stays:
            keep.extend(unit)
        else:
            fates.update({i: Fate("removed", f"outside the last {options.keep_recent} messages") for i in unit})
    return keep_indices(messages, keep, fates)
