from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from typer.testing import CliRunner

from compactctl.cli.main import app


class Cli:
    """Runs ``compactctl`` in-process; stdout and stderr stay apart."""

    def __init__(self) -> None:
        self.runner = CliRunner()

    def __call__(self, *args: str, input: bytes | str | None = None):
        return self.runner.invoke(app, [str(a) for a in args], input=input)


@pytest.fixture
def cli() -> Cli:
    return Cli()


def write_jsonl(path: Path, records: list) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in records))
    return path


@pytest.fixture
def chat_file(tmp_path, agent_messages) -> Path:
    return write_jsonl(tmp_path / "in" / "session.jsonl", agent_messages)
