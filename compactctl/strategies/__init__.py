"""The strategy registry: ``compact -s NAME`` looks names up here.

Adding a strategy is one new module with a pure function and its options
dataclass, and one line below.
"""

from __future__ import annotations

from compactctl.strategies import (
    clear_thinking,
    mask_observations,
    prune,
    rolling,
    selective,
    structured,
    summary,
    trim_tools,
    window,
)
from compactctl.strategies.base import Fate, StepContext, StepResult, Strategy, options_from

__all__ = ["STRATEGIES", "Fate", "StepContext", "StepResult", "Strategy", "options_from"]

# The modules are imported, not their functions, so that ``compactctl.strategies.prune`` stays the module.
STRATEGIES: dict[str, Strategy] = {
    s.name: s
    for s in (
        Strategy(
            "window", window.window, window.WindowOptions, "keep system messages and the last --keep-recent messages"
        ),
        Strategy(
            "trim-tools",
            trim_tools.trim_tools,
            trim_tools.TrimOptions,
            "trim tool outputs over --tool-max-tokens to head and tail",
        ),
        Strategy(
            "prune",
            prune.prune,
            prune.PruneOptions,
            "deterministic: supersede, deduplicate, restore what is referenced",
        ),
        Strategy(
            "mask-observations",
            mask_observations.mask_observations,
            mask_observations.MaskOptions,
            "tool results older than the last --keep-tool-uses become a one-line placeholder",
        ),
        Strategy(
            "clear-thinking",
            clear_thinking.clear_thinking,
            clear_thinking.ClearThinkingOptions,
            "thinking / reasoning blocks kept in the last --keep-thinking-turns assistant turns only",
        ),
        Strategy(
            "summary",
            summary.summary,
            summary.SummaryOptions,
            "over --threshold, older messages become one summary message",
        ),
        Strategy(
            "rolling",
            rolling.rolling,
            rolling.RollingOptions,
            "a cumulative summary kept as a live agent would, --window kept",
        ),
        Strategy(
            "selective",
            selective.selective,
            selective.SelectiveOptions,
            "like summary, but code, JSON and --keep-pattern stay verbatim",
        ),
        Strategy(
            "structured",
            structured.structured,
            structured.StructuredOptions,
            "the agent strategy: last turns kept, the rest in 5 sections",
        ),
    )
}
