"""``window``: keep system/developer messages, protected messages and the last N messages.

The cut is made between tool units, so it never separates a tool result from its call.
"""

from __future__ import annotations

from dataclasses import dataclass

from compactctl.settings import Options
from compactctl.strategies.base import Fate, StepContext, StepResult, keep_indices
from compactctl.strategies.settings import KEEP_RECENT
from compactctl.transcript import Message, is_protected, tool_units, unit_start

ALWAYS_KEPT_ROLES = frozenset({"system", "developer"})


@dataclass(frozen=True)
class WindowOptions(Options):
    keep_recent: int = KEEP_RECENT(6)


def window(messages: list[Message], options: WindowOptions, context: StepContext) -> StepResult:
    tail_start = (
        unit_start(messages, max(0, len(messages) - options.keep_recent)) if options.keep_recent else len(messages)
    )
    keep: list[int] = []
    fates: dict[int, Fate] = {}
    for unit in tool_units(messages):
        if unit.start >= tail_start or any(
            messages[i].get("role") in ALWAYS_KEPT_ROLES or is_protected(messages[i]) for i in unit
        ):
            keep.extend(unit)
        else:
            fates.update({i: Fate("removed", f"outside the last {options.keep_recent} messages") for i in unit})
    return keep_indices(messages, keep, fates)
