"""Shared fixtures: small transcripts written as examples of use."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import call

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "samples"
SHARED_TRANSCRIPTS = ROOT.parent / "shared" / "transcripts"


@pytest.fixture
def agent_messages() -> list[dict[str, Any]]:
    """A short agent session: a system prompt, a user request, two tool rounds, an answer."""
    return [
        {"role": "system", "content": "You are a coding agent."},
        {"role": "user", "content": "Fix the failing test in src/app.py. Do not change the public interface."},
        {"role": "assistant", "content": None, "tool_calls": [call("c1", "read_file", '{"path": "src/app.py"}')]},
        {"role": "tool", "tool_call_id": "c1", "content": "def add(a, b):\n    return a - b\n"},
        {
            "role": "assistant",
            "content": "Running the tests.",
            "tool_calls": [call("c2", "bash", '{"cmd": "pytest -q"}'), call("c3", "bash", '{"cmd": "git status"}')],
        },
        {"role": "tool", "tool_call_id": "c2", "content": "FAILED tests/test_app.py::test_add\n1 failed in 0.12s"},
        {"role": "tool", "tool_call_id": "c3", "content": "On branch main\nnothing to commit"},
        {"role": "assistant", "content": "add() subtracts; I will change it to a + b."},
        {"role": "user", "content": "Go ahead."},
        {"role": "assistant", "content": "Done: src/app.py now returns a + b; 1 passed."},
    ]


def unchanged(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return copy.deepcopy(messages)
