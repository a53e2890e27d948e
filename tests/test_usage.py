"""``SummarizerUsage``: added field by field, every field of both."""

from __future__ import annotations

import dataclasses

from compactctl.usage import SummarizerUsage


def test_a_sum_of_usages_adds_every_field():
    names = [field.name for field in dataclasses.fields(SummarizerUsage)]
    one = SummarizerUsage(**{name: n + 1 for n, name in enumerate(names)})
    other = SummarizerUsage(**{name: 10 * (n + 1) for n, name in enumerate(names)})
    total = one + other
    assert [getattr(total, name) for name in names] == [11 * (n + 1) for n in range(len(names))]
    assert SummarizerUsage() + SummarizerUsage() == SummarizerUsage()
