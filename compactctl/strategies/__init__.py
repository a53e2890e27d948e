"""The strategy registry: ``compact -s NAME`` looks names up here.

Adding a strategy is one new module with a pure function and its options
dataclass, and one line below.
"""

from __future__ import annotations

from compactctl.strategies.base import Fate, StepContext, StepResult, Strategy, options_from
from compactctl.strategies.prune import PruneOptions, prune
from compactctl.strategies.trim_tools import TrimOptions, trim_tools
from compactctl.strategies.window import WindowOptions, window

__all__ = ["STRATEGIES", "Fate", "StepContext", "StepResult", "Strategy", "options_from"]

STRATEGIES: dict[str, Strategy] = {
    s.name: s
    for s in (
        Strategy("window", window, WindowOptions, "keep system messages and the last --keep-recent messages"),
        Strategy("trim-tools", trim_tools, TrimOptions, "trim tool outputs over --tool-max-tokens to head and tail"),
        Strategy("prune", prune, PruneOptions, "deterministic: supersede, deduplicate, restore what is referenced"),
    )
}
