"""Codex's tool search (0.171 defers MCP tools behind it): the ``tool_search_output`` item holds the schemas of
the tools it loaded, which the model is sent on every later call, so every count of the model's input counts
them. The rollout is the real Codex 0.171.0's, against the loopback fake
(``tests.fakes.record_server_tools.codex_tool_search_fixture``)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from compactctl.formats.base import Transcript
from compactctl.formats.codex import read, write
from compactctl.formats.records import parse_records
from compactctl.model_input import model_input, model_input_tokens
from compactctl.recorded import read_recorded
from compactctl.strategies import STRATEGIES
from compactctl.tokens import TokenCounter
from tests.fakes.resume import run_compactctl

FIXTURE = Path(__file__).parent / "data" / "real-clients" / "codex-0.171.0-tool-search.jsonl"
SCHEMA = "Read the team note."  # the loaded tool's description: only the tool_search_output holds it
# Each strategy with what makes it change the tool search's messages where it can.
STRATEGY_ARGS = {
    "mask-observations": ["--keep-tool-uses", "0", "--mask-keep-turns", "0", "--mask-min-tokens", "0"],
    "trim-tools": ["--tool-max-tokens", "5"],
    "window": ["--keep-recent", "2"],
}


def _read(data: bytes) -> list[Transcript]:
    return read(parse_records(data, str(FIXTURE))[0], str(FIXTURE))


def _searches(data: bytes) -> list[dict[str, Any]]:
    """The tool search items a rollout's model input holds: its last ``compacted`` line's, else its own."""
    lines = [json.loads(line) for line in data.splitlines()]
    compacted = [line["payload"]["replacement_history"] for line in lines if line["type"] == "compacted"]
    items = compacted[-1] if compacted else [line["payload"] for line in lines if line["type"] == "response_item"]
    return [item for item in items if str(item.get("type")).startswith("tool_search")]


def test_the_schemas_a_tool_search_loaded_are_model_input() -> None:
    (transcript,) = _read(FIXTURE.read_bytes())
    sent = model_input(transcript)
    (output,) = [m for m in sent if m.get("role") == "tool" and SCHEMA in str(m.get("content"))]
    call = next(m for m in sent if output["tool_call_id"] in [c["id"] for c in m.get("tool_calls") or ()])
    assert call["tool_calls"][0]["function"]["name"] == "tool_search"
    counter = TokenCounter()
    # Counted in the one measure (before: the items were carried opaque, 5,774 of its 5,867 tokens).
    measured = model_input_tokens([transcript], counter)
    assert measured.tokens == counter.messages(sent) and measured.tokens > counter.messages(
        [m for m in sent if m is not output and m is not call]
    )
    # The response that only searched is a call of its own, with its usage (before: 3 of the 4 calls).
    assert call.get("usage", {}).get("input_tokens") == 9896


def test_the_recorded_calls_are_sent_the_schemas_from_the_search_on() -> None:
    records = parse_records(FIXTURE.read_bytes(), str(FIXTURE))[0]
    session = read_recorded("codex", records, str(FIXTURE))
    (context,) = session.contexts
    held = [i for i, m in enumerate(context.messages) if SCHEMA in str(m.get("content"))]
    assert held and [c.position > held[0] for c in context.calls] == [False, True, True, True]


def test_an_unchanged_rollout_with_a_tool_search_is_written_back_byte_for_byte() -> None:
    data = FIXTURE.read_bytes()
    assert write(_read(data)) == data


@pytest.mark.slow
@pytest.mark.parametrize("strategy", sorted(STRATEGIES))
def test_a_compacted_tool_search_is_written_as_codex_wrote_it_and_counted_as_report_counts_it(
    strategy: str, tmp_path: Path
) -> None:
    args = ["compact", "-s", strategy, *STRATEGY_ARGS.get(strategy, []), "--write-unchanged"]
    compacted = run_compactctl(FIXTURE, tmp_path / "out.jsonl", args)
    original = {item["type"]: item for item in _searches(FIXTURE.read_bytes())}
    for item in _searches(compacted.data):
        assert item == original[item["type"]]  # the object arguments and the tools list, as they were
    (transcript,) = _read(compacted.data)
    counted = model_input_tokens([transcript], TokenCounter())
    assert SCHEMA not in json.dumps(_searches(compacted.data)) or any(
        SCHEMA in str(m.get("content")) for m in model_input(transcript)
    )
    done = subprocess.run(
        [sys.executable, "-m", "compactctl", "report", str(FIXTURE), str(tmp_path / "out.jsonl"), "--json"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    (reported,) = json.loads(done.stdout)["files"]
    assert compacted.report["tokens_after"] == reported["tokens_after"] == counted.tokens


@pytest.mark.clients
@pytest.mark.parametrize("strategy", ["mask-observations", "window"])
def test_the_real_codex_resumes_a_compacted_tool_search(strategy: str, tmp_path: Path) -> None:
    from tests.fakes.clients import Codex, require_client
    from tests.fakes.responses import FakeResponses
    from tests.fakes.scenarios import project

    args = ["compact", "-s", strategy, *STRATEGY_ARGS[strategy]]
    compacted = run_compactctl(FIXTURE, tmp_path / "out.jsonl", args)
    thread = json.loads(FIXTURE.read_bytes().splitlines()[0])["payload"]["id"]
    root = tmp_path / "run"
    with FakeResponses() as fake:
        codex = Codex(require_client("codex"), root, project(root), fake, model="gpt-5.5")
        folder = codex.codex_home / "sessions" / "2026" / "12" / "03"
        folder.mkdir(parents=True)
        rollout = folder / f"rollout-2026-12-03T05-33-45-{thread}.jsonl"
        rollout.write_bytes(compacted.data.replace(b"/home/user", str(root).encode()))
        fake.enqueue("Done.")
        codex.run("Carry on.", resume=thread)
        (sent, *_) = fake.model_calls()
        assert not fake.errors
    searches = [item for item in sent["input"] if str(item.get("type")).startswith("tool_search")]
    kept = _searches(compacted.data)
    assert [item["type"] for item in searches] == [item["type"] for item in kept]
    assert all(SCHEMA in json.dumps(item) for item in searches if item["type"] == "tool_search_output")
