"""A coding session long enough to be summarized: a constraint, paths, commands, errors, a long tool output."""

from __future__ import annotations

from typing import Any

import pytest

from tests.cli.conftest import cli  # noqa: F401 (the CLI fixture, for the browser tests)
from tests.helpers import call

SECRET = "sk-proj-" + "A1b2C3d4E5f6G7h8I9j0K1l2"


def session(rounds: int = 6, secret: bool = False) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": "You are a coding agent."},
        {
            "role": "user",
            "content": "Fix the CSV export in src/export/csv_writer.py. "
            "Never change the public signature of export_rows."
            + (f" The staging token is {SECRET}." if secret else ""),
        },
    ]
    for n in range(rounds):
        listing = "\n".join(f"{line:4d}: row_{n}_{line} = compute({line})" for line in range(120))
        messages += [
            {
                "role": "assistant",
                "content": f"Reading module {n}.",
                "tool_calls": [call(f"r{n}", "read_file", f'{{"path": "src/export/part_{n}.py"}}')],
            },
            {"role": "tool", "tool_call_id": f"r{n}", "content": listing},
            {
                "role": "assistant",
                "content": "Running the tests.",
                "tool_calls": [call(f"t{n}", "bash", f'{{"cmd": "pytest tests/test_part_{n}.py -q"}}')],
            },
            {
                "role": "tool",
                "tool_call_id": f"t{n}",
                "content": f"FAILED tests/test_part_{n}.py::test_rows - KeyError: 'region_{n}'\n1 failed in 0.{n}2s",
            },
        ]
    messages += [
        {"role": "user", "content": "Now make the header row optional."},
        {"role": "assistant", "content": "Done: header=False skips it; 14 passed."},
    ]
    return messages


@pytest.fixture
def long_session() -> list[dict[str, Any]]:
    return session()
