"""The strategy registry: ``compact -s NAME`` looks names up here.

Adding a strategy is one new module with a pure function and its options
dataclass, and one line below.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

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
from compactctl.strategies.base import ClientView, Fate, StepContext, StepResult, Strategy, options_from

__all__ = [
    "STRATEGIES",
    "ClientView",
    "Fate",
    "StepContext",
    "StepResult",
    "Strategy",
    "StrategyOptions",
    "options_from",
]

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


@dataclass(frozen=True)
class StrategyOptions:
    """Each strategy's options, built and checked, by strategy name; one not given runs with its defaults.

    The CLI builds them once from the flat values of flags and config (``from_values``); below it,
    steps read their options from here, never from a dict of settings.
    """

    given: Mapping[str, Any] = field(default_factory=dict)

    def of(self, name: str) -> Any:
        """The options ``name``'s step runs with."""
        found = self.given.get(name)
        return found if found is not None else STRATEGIES[name].options()

    def replaced(self, **changes: Any) -> StrategyOptions:
        """Every strategy whose options have one of these fields, with it changed (the run's facts, a
        replay's threshold, an output that must open on the user's turn)."""
        return self.replaced_unless(None, changes)

    def replaced_unless(self, unless: str | None, changes: Mapping[str, Any]) -> StrategyOptions:
        """:meth:`replaced`, leaving alone every strategy whose options have the field ``unless``."""
        rebuilt = {}
        for name, strategy in STRATEGIES.items():
            names = {f.name for f in dataclasses.fields(strategy.options)}
            mine = {key: value for key, value in changes.items() if key in names and unless not in names}
            rebuilt[name] = dataclasses.replace(self.of(name), **mine) if mine else self.of(name)
        return StrategyOptions(rebuilt)

    def keeping(self, facts: Iterable[str]) -> StrategyOptions:
        """Every strategy that keeps the run's facts (a ``require`` field) keeps these too."""
        facts = list(facts)
        return StrategyOptions(
            {
                name: dataclasses.replace(self.of(name), require=[*self.of(name).require, *facts])
                if "require" in {f.name for f in dataclasses.fields(strategy.options)}
                else self.of(name)
                for name, strategy in STRATEGIES.items()
            }
        )

    @classmethod
    def from_values(cls, values: Mapping[str, Any] | None) -> StrategyOptions:
        """Every strategy's options from flat values (``{"keep_recent": 8}``): each takes the fields it has."""
        return cls({name: options_from(strategy.options, values or {}) for name, strategy in STRATEGIES.items()})
