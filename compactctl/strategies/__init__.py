"""The strategy registry: ``compact -s NAME`` looks names up here.

Adding a strategy is one new module with its pure function, its options dataclass
in ``strategies.settings`` (read by the flags, ``--help`` and the config without the
strategy's code), and one line below.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from importlib import import_module
from typing import Any

from compactctl.strategies.base import ClientView, Fate, StepContext, StepResult, Strategy, options_from
from compactctl.strategies.settings import (
    ClearThinkingOptions,
    MaskOptions,
    PruneOptions,
    RollingOptions,
    SelectiveOptions,
    SummaryOptions,
    WindowOptions,
)
from compactctl.strategies.structured import StructuredOptions
from compactctl.strategies.trim_tools import TrimOptions
from compactctl.transcript import Message

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


def _run_of(module: str) -> Callable[[list[Message], Any, StepContext], StepResult]:
    """The function ``compactctl.strategies.<module>.<module>``, its module imported at its first step.

    A run imports the code of the strategies it runs only: the options of all of them are declared
    apart (``strategies.settings``), so the flags, ``--help`` and the config read every strategy's
    without its code (the seven a plain ``compact`` does not run: 14M instructions, 1.7 %, of compacting
    kcosr's real session, callgrind). structured's and trim-tools' options stay with their code, which
    that default step loads anyway.
    """

    def run(messages: list[Message], options: Any, context: StepContext) -> StepResult:
        function: Callable[[list[Message], Any, StepContext], StepResult] = getattr(
            import_module(f"compactctl.strategies.{module}"), module
        )
        return function(messages, options, context)

    run.__qualname__ = run.__name__ = module
    return run


STRATEGIES: dict[str, Strategy] = {
    s.name: s
    for s in (
        Strategy(
            "window", _run_of("window"), WindowOptions, "keep system messages and the last --keep-recent messages"
        ),
        Strategy(
            "trim-tools",
            _run_of("trim_tools"),
            TrimOptions,
            "trim tool outputs over --tool-max-tokens to head and tail",
        ),
        Strategy(
            "prune", _run_of("prune"), PruneOptions, "deterministic: supersede, deduplicate, restore what is referenced"
        ),
        Strategy(
            "mask-observations",
            _run_of("mask_observations"),
            MaskOptions,
            "tool results older than the last --keep-tool-uses become a one-line placeholder",
        ),
        Strategy(
            "clear-thinking",
            _run_of("clear_thinking"),
            ClearThinkingOptions,
            "thinking / reasoning blocks kept in the last --keep-thinking-turns assistant turns only",
        ),
        Strategy(
            "summary", _run_of("summary"), SummaryOptions, "over --threshold, older messages become one summary message"
        ),
        Strategy(
            "rolling",
            _run_of("rolling"),
            RollingOptions,
            "a cumulative summary kept as a live agent would, --window kept",
        ),
        Strategy(
            "selective",
            _run_of("selective"),
            SelectiveOptions,
            "like summary, but code, JSON and --keep-pattern stay verbatim",
        ),
        Strategy(
            "structured",
            _run_of("structured"),
            StructuredOptions,
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
