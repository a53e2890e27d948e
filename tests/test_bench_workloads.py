"""The benchmark workloads other benchmarks import: deterministic, API-valid, and they exercise restoration."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

import compactctl
from compactctl.transcript import facts_of, is_valid

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))

from workloads import WORKLOADS, generate


@pytest.mark.parametrize("workload", WORKLOADS)
def test_workload_is_deterministic_valid_labeled_and_needs_restoration(workload):
    messages = generate(workload, 50)
    assert messages == generate(workload, 50)
    assert messages != generate(workload, 50, seed=1)
    assert is_valid(messages)
    assert len([f for m in messages for f in facts_of(m)]) == 15
    fates = compactctl.prune(messages).fates
    assert any(f.action == "restored" for f in fates.values())
    assert any(f.action == "elided" for f in fates.values())


def test_unknown_workload_is_refused():
    with pytest.raises(ValueError, match="unknown workload"):
        generate("email", 10)
