"""How hard the Hypothesis tests try: a profile per kind of run, and example counts that scale with it.

- ``dev`` (the default locally): a tenth of the examples, so the inner loop stays near a minute;
- ``ci`` (under ``CI=true``): every count as written, which is Hypothesis's default strength, on
  Hypothesis's own ``ci`` profile (derandomized, no deadline, no example database, failures printed
  as a ``@reproduce_failure`` blob), which it loaded by itself under CI before there were profiles here;
- ``HYPOTHESIS_PROFILE=<name>`` (or ``pytest --hypothesis-profile=<name>``) picks one: ``thorough``
  tries ten times the written counts, for a long run after changing a strategy.

No profile fails a test for slow data generation (``too_slow``): on a busy shared machine that is
the load, not the test (Hypothesis's ``ci`` profile leaves it out for the same reason).

A test writes the count it gets at full strength, ``@settings(max_examples=examples(600))``;
``examples`` scales it by the loaded profile's ``max_examples`` against Hypothesis's default of
100, and a test that sets no count takes the profile's own.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

FULL_STRENGTH = 100  # Hypothesis's own default max_examples: the strength the written counts are for
PROFILES = {"dev": 10, "ci": FULL_STRENGTH, "thorough": 10 * FULL_STRENGTH}
FEWEST = 5  # a property tried fewer times than this says little

for name, max_examples in PROFILES.items():
    parent = settings.get_profile("ci" if name == "ci" else "default")
    # Slow generation is the machine's load, not the test's fault (2 shared cores; CI's own profile says so too).
    slow = tuple(dict.fromkeys((*parent.suppress_health_check, HealthCheck.too_slow)))
    settings.register_profile(name, parent, max_examples=max_examples, suppress_health_check=slow)


def profile_name() -> str:
    """HYPOTHESIS_PROFILE if set, else ``ci`` under CI=true, else ``dev``."""
    chosen = os.environ.get("HYPOTHESIS_PROFILE")
    if chosen:
        return chosen
    return "ci" if os.environ.get("CI", "").lower() == "true" else "dev"


def load_profile() -> None:
    settings.load_profile(profile_name())


def examples(full: int) -> int:
    """``full`` examples at full strength, scaled to the loaded profile (at least a few, or ``full`` if smaller)."""
    scaled = round(full * settings.default.max_examples / FULL_STRENGTH)
    return max(scaled, min(full, FEWEST))
