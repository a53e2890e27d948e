"""What the loopback fake served for a recorded fixture (``<fixture>.served.json``), and its price: the truth a
fixture's bill is held to."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
from genai_prices import Usage, calc_price

from tests.replay.test_bill import anthropic_counts

DATA = Path(__file__).parent / "data"


def served(fixture: str) -> list[dict[str, Any]]:
    """The responses the fake served while ``fixture`` was recorded, in order."""
    return list(orjson.loads((DATA / f"{fixture}.served.json").read_bytes()))


def anthropic_cost(responses: list[dict[str, Any]]) -> float:
    """What Anthropic bills for ``responses`` (each with its ``usage`` and ``model``) at list prices."""
    return sum(
        float(calc_price(Usage(**anthropic_counts(r["usage"])), r["model"], provider_id="anthropic").total_price)
        for r in responses
    )
