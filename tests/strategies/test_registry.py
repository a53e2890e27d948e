"""The registry, and the check every test runs on it: no strategy mutates its input."""

from dataclasses import dataclass

from compactctl.compaction import compact
from compactctl.strategies import STRATEGIES, Strategy
from compactctl.strategies.base import unchanged
from tests.conftest import mutation_checked


@dataclass(frozen=True)
class NoOptions:
    pass


def test_every_registered_strategy_is_checked_for_mutation_in_every_test():
    # The autouse fixture has wrapped them: the registered run is the checking one.
    assert all(strategy.run.__qualname__.startswith("mutation_checked") for strategy in STRATEGIES.values())


def test_a_strategy_that_mutates_its_input_is_caught(monkeypatch):
    def shouting(messages, options, context):
        messages[0]["content"] = messages[0]["content"].upper()  # the bug the check is for
        return unchanged(messages)

    mutated: list[str] = []
    monkeypatch.setitem(STRATEGIES, "shout", mutation_checked(Strategy("shout", shouting, NoOptions, "test"), mutated))
    compact([{"role": "user", "content": "hi"}], ["shout"])
    assert mutated == ["shout"]
