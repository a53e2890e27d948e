"""``replay`` of a Claude Code project folder copied as it is: session files, forks, and each
session's ``<session>/subagents/`` (``agent-*.jsonl`` beside its ``agent-*.meta.json``), all made
by the real client (tests/fakes/record_fixtures.py)."""

from __future__ import annotations

import shutil
from pathlib import Path

import orjson
from genai_prices import Usage, calc_price
from typer.testing import CliRunner

from compactctl.cli.main import app

BRANCHES = Path(__file__).parents[1] / "formats" / "data" / "real-clients" / "claude-code-2.1.332-branches"


def _bill(folder: Path) -> tuple[int, float]:
    """The calls and list-price bill of every response in the folder, each ``message.id`` once
    (a fork's file repeats its parent's responses; a subagent's are in its own file only)."""
    responses = {}
    for file in folder.rglob("*.jsonl"):
        for line in file.read_bytes().splitlines():
            record = orjson.loads(line)
            message = record.get("message")
            if record.get("type") == "assistant" and isinstance(message, dict) and message.get("usage"):
                responses[message["id"]] = message
    cost = 0.0
    for message in responses.values():
        usage = message["usage"]
        read, write = usage.get("cache_read_input_tokens", 0), usage.get("cache_creation_input_tokens", 0)
        tokens = Usage(
            input_tokens=usage["input_tokens"] + read + write,
            cache_read_tokens=read,
            cache_write_tokens=write,
            output_tokens=usage["output_tokens"],
        )
        cost += float(calc_price(tokens, model_ref=message["model"], provider_id="anthropic").total_price)
    return len(responses), cost


def test_a_copied_project_folder_bills_each_subagent_call_once_and_reads_no_sidecar(tmp_path):
    folder = tmp_path / "project"
    shutil.copytree(BRANCHES, folder)
    assert list(folder.rglob("subagents/*.meta.json")), "the fixture keeps the client's sidecar"
    calls, bill = _bill(folder)
    result = CliRunner().invoke(app, ["replay", str(folder), "-t", "5000", "--json", "-q"])
    report = orjson.loads(result.stdout)
    assert result.exit_code == 0, (report["failed"], result.stderr)
    baseline = report["total"]["settings"][0]
    assert baseline["trigger"] == "none"
    assert baseline["calls"] == calls
    assert abs(baseline["cost"] - bill) <= 0.03 * bill, (baseline["cost"], bill)
