"""The calibration's fit: ratio, per-message tokens and per-segment prefixes, and its per-call error."""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from compactctl.calibration.features import CallFeatures


@dataclass(frozen=True)
class ErrorSummary:
    """Per-call relative error of the predicted input against the reported one."""

    calls: int
    median: float
    p90: float

    @staticmethod
    def of(errors: Sequence[float]) -> ErrorSummary:
        if not errors:
            return ErrorSummary(0, 0.0, 0.0)
        ordered = sorted(errors)
        return ErrorSummary(len(ordered), statistics.median(ordered), _quantile(ordered, 0.9))


def _quantile(ordered: Sequence[float], q: float) -> float:
    if not ordered:
        return 0.0
    position = q * (len(ordered) - 1)
    low = int(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


HELD_OUT_WARNING = 0.05  # a file whose fit predicts its held-out calls worse than this is warned about
# How strongly the ratio is pulled toward its prior (1.0: the encoding is the provider's own or
# ctok's reconstruction of it), in the units of the fit's weighted spread of the text: a file
# whose text barely changes between calls cannot tell its ratio, and keeps the prior. The
# per-message term is pulled toward 0 the same way. Both were chosen on the held-out error of
# the real sessions in shared/transcripts (docs/calibration.md has the sweep).
RATIO_PRIOR_WEIGHT = 0.002
MESSAGE_PRIOR_WEIGHT = 0.005


@dataclass(frozen=True)
class Fit:
    """A call's input as ``prefix[segment] + ratio * text + per_message * messages + resent + images + unlogged``."""

    ratio: float
    per_message: float  # tokens the harness adds to each message it sends (a reminder after each tool result...)
    prefixes: dict[str, float]

    def predict(self, f: CallFeatures, default: float) -> float:
        prefix = self.prefixes.get(f.context, default)
        return prefix + self.ratio * f.text + self.per_message * f.messages + f.resent + f.images + f.unlogged


# The per-message term is fitted in units of this many tokens, so one prior weight suits both terms.
MESSAGE_SCALE = 100.0


def fit(features: Sequence[CallFeatures], prior_ratio: float = 1.0) -> Fit:
    """Ratio, per-message tokens and per-segment prefixes minimising squared relative error.

    With an intercept per segment the least-squares solution is closed form on the
    within-segment deviations: a 2x2 system for the ratio and the per-message term, each shrunk
    toward its prior (``prior_ratio``; 0 tokens per message), then each prefix from its
    segment's means.
    """
    usable = [f for f in features if f.reported]
    if not usable:
        return Fit(prior_ratio, 0.0, {})
    groups: dict[str, list[CallFeatures]] = {}
    for f in usable:
        groups.setdefault(f.context, []).append(f)
    means: dict[str, tuple[float, float, float]] = {}
    sxx = sxn = snn = sxy = sny = 0.0
    for label, group in groups.items():
        weights = [1.0 / (f.reported or 1) ** 2 for f in group]
        total = sum(weights)
        x_mean = sum(w * f.text for w, f in zip(weights, group, strict=True)) / total
        n_mean = sum(w * f.messages * MESSAGE_SCALE for w, f in zip(weights, group, strict=True)) / total
        y_mean = sum(w * _target(f) for w, f in zip(weights, group, strict=True)) / total
        means[label] = (x_mean, n_mean, y_mean)
        for w, f in zip(weights, group, strict=True):
            dx, dn, dy = f.text - x_mean, f.messages * MESSAGE_SCALE - n_mean, _target(f) - y_mean
            sxx += w * dx * dx
            sxn += w * dx * dn
            snn += w * dn * dn
            sxy += w * dx * dy
            sny += w * dn * dy
    a, b, d = sxx + RATIO_PRIOR_WEIGHT, sxn, snn + MESSAGE_PRIOR_WEIGHT
    determinant = a * d - b * b
    ratio = ((sxy + RATIO_PRIOR_WEIGHT * prior_ratio) * d - b * sny) / determinant
    scaled = (a * sny - b * (sxy + RATIO_PRIOR_WEIGHT * prior_ratio)) / determinant
    if scaled < 0:  # a harness removes nothing from a message: fit the ratio alone
        ratio, scaled = (sxy + RATIO_PRIOR_WEIGHT * prior_ratio) / (sxx + RATIO_PRIOR_WEIGHT), 0.0
    if not 0.5 <= ratio <= 3.0:  # not identified by these calls: keep the priors
        ratio, scaled = prior_ratio, 0.0
    prefixes = {label: y - ratio * x - scaled * n for label, (x, n, y) in means.items()}
    return Fit(ratio, scaled * MESSAGE_SCALE, prefixes)


def _target(f: CallFeatures) -> float:
    """What the fit must explain: the reported input less what is counted exactly."""
    return float((f.reported or 0) - f.resent - f.images - f.unlogged)


def errors_of(features: Iterable[CallFeatures], model: Fit, default: float) -> list[float]:
    return [abs(model.predict(f, default) - f.reported) / f.reported for f in features if f.reported]


def halves(features: Sequence[CallFeatures]) -> tuple[list[CallFeatures], list[CallFeatures]]:
    """The first half of each context's calls with usage, and the rest."""
    first: list[CallFeatures] = []
    second: list[CallFeatures] = []
    by_context: dict[str, list[CallFeatures]] = {}
    for f in features:
        if f.reported:
            by_context.setdefault(f.context, []).append(f)
    for group in by_context.values():
        cut = (len(group) + 1) // 2
        first += group[:cut]
        second += group[cut:]
    return first, second
