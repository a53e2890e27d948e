"""The readers, the validity checker and report on real public transcripts nobody here wrote."""

import json

import orjson
import pytest

from compactctl.cli.main import app
from compactctl.formats import load
from compactctl.tokens import counter_for
from compactctl.transcript import find_violation
from tests.conftest import SHARED_TRANSCRIPTS, needs_transcripts

pytestmark = needs_transcripts

TAU_BENCH = SHARED_TRANSCRIPTS / "tau-bench" / "historical_trajectories" / "gpt-4o-airline.json"


def swe_agent_files():
    return sorted(SHARED_TRANSCRIPTS.joinpath("swe-agent").rglob("*.traj"))


def test_tau_bench_reads_every_run_as_one_valid_transcript():
    runs = json.loads(TAU_BENCH.read_text())  # read independently of compactctl's reader
    fmt, transcripts = load(TAU_BENCH.read_bytes(), str(TAU_BENCH))
    assert fmt.name == "tau-bench"
    assert [len(t.messages) for t in transcripts] == [len(run["traj"]) for run in runs]
    assert all(find_violation(t.messages) is None for t in transcripts)


def test_report_on_tau_bench_counts_what_a_direct_count_gives():
    from typer.testing import CliRunner

    result = CliRunner().invoke(app, ["report", str(TAU_BENCH), "--json"])
    assert result.exit_code == 0, result.stderr
    file = orjson.loads(result.stdout)["files"][0]
    counter = counter_for()
    runs = json.loads(TAU_BENCH.read_text())
    assert file["transcripts"] == 200
    assert file["messages_before"] == sum(len(run["traj"]) for run in runs) == 5308
    assert file["tokens_before"] == sum(counter.messages(run["traj"]) for run in runs)
    assert file["valid_before"] is True


@pytest.mark.parametrize("path", swe_agent_files(), ids=lambda p: p.parent.name[:40] + "/" + p.name)
def test_swe_agent_history_maps_tool_call_ids_and_is_valid(path):
    history = json.loads(path.read_text())["history"]
    fmt, (transcript,) = load(path.read_bytes(), str(path))
    assert fmt.name == "swe-agent"
    assert len(transcript.messages) == len(history)
    for item, message in zip(history, transcript.messages, strict=True):
        if item.get("tool_call_ids"):
            assert message["tool_call_id"] == item["tool_call_ids"][0]
    assert find_violation(transcript.messages) is None
