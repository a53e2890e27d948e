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


@pytest.mark.parametrize("workload", ["rag", "chat"])
def test_fetched_through_calls_one_text_comes_back_from_different_calls(workload):
    from collections import Counter

    messages = generate(workload, 200, retrieval="calls")
    assert messages == generate(workload, 200, retrieval="calls") != generate(workload, 200)
    assert is_valid(messages)
    results = [m for m in messages if m.get("role") == "tool"]
    assert results and all(m.get("compactctl", {}).get("kind") != "retrieval" for m in messages)
    calls = {c["id"]: c["function"]["arguments"] for m in messages for c in m.get("tool_calls", [])}
    by_text: dict[str, set[str]] = {}
    for result in results:
        by_text.setdefault(result["content"], set()).add(calls[result["tool_call_id"]])
    # Some text is the answer of several different calls, and some call is asked again.
    assert max(len(arguments) for arguments in by_text.values()) > 1
    if workload == "rag":
        assert Counter(calls.values()).most_common(1)[0][1] > 1
