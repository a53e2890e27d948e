"""The strategy registry: ``compact -s NAME`` looks names up here.

Adding a strategy is one new module with a pure function and its options
dataclass, and one line below.
"""

from __future__ import annotations

from compactctl.strategies.base import Fate, StepContext, StepResult, Strategy, options_from
from compactctl.strategies.clear_thinking import ClearThinkingOptions, clear_thinking
from compactctl.strategies.mask_observations import MaskOptions, mask_observations
from compactctl.strategies.prune import PruneOptions, prune
from compactctl.strategies.rolling import RollingOptions, rolling
from compactctl.strategies.selective import SelectiveOptions, selective
from compactctl.strategies.structured import StructuredOptions, structured
from compactctl.strategies.summary import SummaryOptions, summary
from compactctl.strategies.trim_tools import TrimOptions, trim_tools
from compactctl.strategies.window import WindowOptions, window

__all__ = ["STRATEGIES", "Fate", "StepContext", "StepResult", "Strategy", "options_from"]

STRATEGIES: dict[str, Strategy] = {
    s.name: s
    for s in (
        Strategy("window", window, WindowOptions, "keep system messages and the last --keep-recent messages"),
        Strategy("trim-tools", trim_tools, TrimOptions, "trim tool outputs over --tool-max-tokens to head and tail"),
        Strategy("prune", prune, PruneOptions, "deterministic: supersede, deduplicate, restore what is referenced"),
        Strategy(
            "mask-observations",
            mask_observations,
            MaskOptions,
            "tool results older than the last --keep-tool-uses become a one-line placeholder",
        ),
        Strategy(
            "clear-thinking",
            clear_thinking,
            ClearThinkingOptions,
            "thinking / reasoning blocks kept in the last --keep-thinking-turns assistant turns only",
        ),
        Strategy("summary", summary, SummaryOptions, "over --threshold, older messages become one summary message"),
        Strategy("rolling", rolling, RollingOptions, "a cumulative summary kept as a live agent would, --window kept"),
        Strategy(
            "selective", selective, SelectiveOptions, "like summary, but code, JSON and --keep-pattern stay verbatim"
        ),
        Strategy(
            "structured", structured, StructuredOptions, "the agent strategy: last turns kept, the rest in 5 sections"
        ),
    )
}
