"""Replay: walk a saved transcript as if it were live, and price each way of compacting it.

``triggers`` says when to compact, ``prices`` what calls cost, ``simulate`` runs the
calls (messages in, figures out; no files). Reading files to replay is ``compactctl.files.replay``;
``results`` is a replay's results and their JSON.
"""

from __future__ import annotations

from compactctl.replay.prices import Prices, PriceTable, load_prices, prices_for, shipped_prices
from compactctl.replay.simulate import ScenarioResult, aggregate, replay
from compactctl.replay.triggers import BASELINE, Scenario, Trigger, parse_thresholds, settings_grid, stage_pattern

__all__ = [
    "BASELINE",
    "PriceTable",
    "Prices",
    "Scenario",
    "ScenarioResult",
    "Trigger",
    "aggregate",
    "load_prices",
    "parse_thresholds",
    "prices_for",
    "replay",
    "settings_grid",
    "shipped_prices",
    "stage_pattern",
]
