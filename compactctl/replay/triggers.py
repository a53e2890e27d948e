"""When to compact during a replay (a ``Trigger``), and the rows of settings a replay compares.

*When* is kept apart from *how* (the strategy steps), as openai-agents-python keeps
``should_trigger_compaction`` beside the compaction itself:

- threshold: compact before the next call when the last call's context exceeded N tokens;
- stage: compact before the next call when a stage ended (a ``compactctl.stage_end``
  annotation, or a message matching ``--stage-marker``);
- both: a stage end first, the threshold as a safety net.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from compactctl.errors import InputError


@dataclass(frozen=True)
class Trigger:
    """When to compact: after a call over ``threshold`` tokens, at a stage end, both, or never."""

    threshold: int | None = None
    stage: bool = False

    @property
    def name(self) -> str:
        if self.threshold is None:
            return "stage" if self.stage else "none"
        return "stage+threshold" if self.stage else "threshold"

    def should_compact(self, last_context: int | None, stage_ended: bool) -> bool:
        """Decide before a call, from the previous call's context and whether a stage ended since."""
        if self.stage and stage_ended:
            return True
        return self.threshold is not None and last_context is not None and last_context > self.threshold


@dataclass(frozen=True)
class Scenario:
    """One row of a replay: a trigger and the strategy steps it runs."""

    trigger: Trigger
    steps: tuple[str, ...] = ()

    @property
    def strategy(self) -> str:
        return "+".join(self.steps) if self.steps and self.trigger.name != "none" else "none"


BASELINE = Scenario(Trigger())


def settings_grid(thresholds: Iterable[int], stage: bool, steps: Sequence[str]) -> list[Scenario]:
    """The baseline, then one row per threshold, a stage row, and stage+threshold rows when both are asked for."""
    thresholds = list(dict.fromkeys(thresholds))
    rows = [BASELINE]
    rows += [Scenario(Trigger(threshold), tuple(steps)) for threshold in thresholds]
    if stage:
        rows.append(Scenario(Trigger(None, True), tuple(steps)))
        rows += [Scenario(Trigger(threshold, True), tuple(steps)) for threshold in thresholds]
    return rows


def parse_thresholds(values: Iterable[str]) -> list[int]:
    """``["8000,16000", "32k"]`` -> ``[8000, 16000, 32000]``; a bad value is a usage error."""
    found: list[int] = []
    for value in values:
        for piece in value.split(","):
            piece = piece.strip().lower().replace("_", "")
            if not piece:
                continue
            scale = 1000 if piece.endswith("k") else 1
            try:
                number = int(float(piece.removesuffix("k")) * scale)
            except (ValueError, OverflowError):  # "lots", "nan", "inf"
                raise InputError(f"`thresholds`: {piece!r} is not a number of tokens") from None
            if number <= 0:
                raise InputError(f"`thresholds`: {piece!r} must be a positive number of tokens")
            found.append(number)
    return found


def stage_pattern(marker: str | None) -> re.Pattern[str] | None:
    if marker is None:
        return None
    try:
        return re.compile(marker)
    except re.error as error:
        raise InputError(f"`stage_marker`: bad regular expression {marker!r}: {error}") from None
