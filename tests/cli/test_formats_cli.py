"""End to end on every format: compact, report (with API-reported usage), --to, and the real transcripts."""

from __future__ import annotations

import shutil

import orjson
import pytest
from typer.testing import CliRunner

from compactctl.cli.main import app
from compactctl.errors import EXIT_INPUT, EXIT_OK
from compactctl.formats import load
from compactctl.model_input import model_input
from compactctl.transcript import find_violation
from tests.conftest import SHARED_TRANSCRIPTS, needs_transcripts
from tests.formats.fixtures import FILES, codex_initial_context, lines

runner = CliRunner()

# Reported input tokens in the fixtures, summed by hand from their usage records.
REPORTED = {
    "claude-code": (4, (12 + 9000 + 3100) + (8 + 12100 + 800) + (6 + 12900 + 300) + (5 + 13200 + 150)),
    "codex": (3, 9100 + 9500 + 9800),
    # Gemini CLI's tokens.input; the first answer's usage was lost when the client resumed (its own rewrite).
    "gemini": (2, 11646 + 11744),
}


def run(*args: str):
    return runner.invoke(app, list(args))


@pytest.mark.parametrize("name", list(FILES))
def test_compact_writes_the_input_format_and_reports_it(name, tmp_path):
    out = tmp_path / f"out-{name}.jsonl"
    result = run(
        "compact", str(FILES[name]), "-s", "trim-tools", "-s", "window", "--keep-recent", "4", "-o", str(out), "--json"
    )
    assert result.exit_code == EXIT_OK, result.output
    report = orjson.loads(result.stdout)["files"][0]
    assert report["format"] == name
    assert report["tokens_after"] < report["tokens_before"]
    _, (transcript,) = load(out.read_bytes(), str(out), name)
    # A compacted Codex rollout with no world_state leaves out the initial context (AGENTS.md,
    # environment) that Codex writes again when it resumes from it: the report counts it
    # (model_input), as the model receives it.
    kept, tokens = report["messages_after"], report["tokens_after"]
    if name == "codex":
        assert transcript.native is not None and transcript.native.added_on_resume()
        assert all(codex_initial_context(m) for m in transcript.native.added_on_resume())
    assert len(model_input(transcript)) == kept
    again = orjson.loads(run("report", str(out), "--format", name, "--json").stdout)["files"][0]
    assert again["tokens_before"] == tokens


@pytest.mark.parametrize("name", list(FILES))
def test_report_compares_api_reported_usage_with_its_own_count(name):
    result = run("report", str(FILES[name]), "--json")
    assert result.exit_code == EXIT_OK, result.output
    usage = orjson.loads(result.stdout)["files"][0]["api_usage"]
    if name not in REPORTED:
        assert usage is None
        return
    calls, reported = REPORTED[name]
    assert usage["calls"] == calls and usage["reported_input_tokens"] == reported
    assert 0 < usage["counted_input_tokens"] < reported  # harness prompts and tools are not in the file
    difference = (usage["counted_input_tokens"] - reported) / reported * 100
    assert usage["difference_pct"] == round(difference, 1)
    table = run("report", str(FILES[name])).stdout
    assert "API-reported input" in table and f"{reported:,}" in table


def test_chat_usage_fields_are_compared_too(tmp_path):
    chat = tmp_path / "chat.jsonl"
    chat.write_bytes(
        b'{"role": "user", "content": "What is the capital of France?"}\n'
        b'{"role": "assistant", "content": "Paris.", "usage": {"prompt_tokens": 14, "completion_tokens": 2}}\n'
    )
    usage = orjson.loads(run("report", str(chat), "--json").stdout)["files"][0]["api_usage"]
    assert usage["calls"] == 1 and usage["reported_input_tokens"] == 14
    # One message: 3 of framing, "user" 1, its 7 tokens of content; plus 3 priming the reply.
    # That is the 14 the API reported.
    assert usage["counted_input_tokens"] == 3 + 1 + 7 + 3 == 14


def test_to_converts_claude_code_to_chat_without_internal_tags(tmp_path):
    out = tmp_path / "session.chat.jsonl"
    result = run(
        "compact",
        str(FILES["claude-code"]),
        "-s",
        "window",
        "--keep-recent",
        "100",
        "--to",
        "chat",
        "-o",
        str(out),
        "-q",
    )
    assert result.exit_code == EXIT_OK, result.output
    messages = lines(out.read_bytes())
    assert [m["role"] for m in messages][:4] == ["user", "user", "user", "assistant"]
    assert all("source" not in m.get("compactctl", {}) for m in messages)
    assert messages[0]["compactctl"] == {"kind": "harness"}  # the annotation is kept, the tag is not
    assert load(out.read_bytes())[0].name == "chat"


def test_to_an_unknown_format_is_bad_usage(tmp_path):
    result = run("compact", str(FILES["codex"]), "-s", "window", "--to", "yaml", "-o", str(tmp_path / "x.jsonl"))
    assert result.exit_code == EXIT_INPUT
    assert "unknown format 'yaml'" in result.output
    assert not (tmp_path / "x.jsonl").exists()


def test_truncated_native_line_names_file_and_line(tmp_path):
    bad = tmp_path / "rollout.jsonl"
    bad.write_bytes(FILES["codex"].read_bytes() + b'{"timestamp": "t", "type": "response_item", "payl\n')
    result = run("compact", str(bad), "-s", "window", "-o", str(tmp_path / "out.jsonl"))
    assert result.exit_code == EXIT_INPUT
    assert f"rollout.jsonl:{len(lines(FILES['codex'].read_bytes())) + 1}" in result.output
    assert not (tmp_path / "out.jsonl").exists()


# -- the real transcripts in ../shared/transcripts ------------------------------------


@needs_transcripts
def test_real_swe_agent_folder_compacts_valid_and_round_trips(tmp_path):
    folder = SHARED_TRANSCRIPTS / "swe-agent"
    result = run("compact", str(folder), "-s", "trim-tools", "-s", "window", "-o", str(tmp_path), "--json", "-q")
    assert result.exit_code == EXIT_OK, result.output
    reports = orjson.loads(result.stdout)["files"]
    assert len(reports) == 17 and {r["format"] for r in reports} == {"swe-agent"}
    assert all(r["valid_before"] and r["valid_after"] for r in reports)
    for source in folder.rglob("*.traj"):
        data = source.read_bytes()
        fmt, transcripts = load(data, str(source))
        assert orjson.loads(fmt.write(transcripts)) == orjson.loads(data)


@pytest.mark.slow  # 200 real runs
@needs_transcripts
def test_real_tau_bench_runs_compact_each_run(tmp_path):
    source = SHARED_TRANSCRIPTS / "tau-bench" / "historical_trajectories" / "gpt-4o-airline.json"
    out = tmp_path / "airline.json"
    result = run("compact", str(source), "-s", "window", "--keep-recent", "8", "-o", str(out), "--json")
    assert result.exit_code == EXIT_OK, result.output
    report = orjson.loads(result.stdout)["files"][0]
    assert report["format"] == "tau-bench" and report["transcripts"] == 200
    fmt, runs = load(out.read_bytes())
    assert len(runs) == 200 and all(find_violation(run.messages) is None for run in runs)
    assert all(len(run.messages) <= 9 + 4 for run in runs)  # the system prompt, the last 8, a tool round
    assert fmt.write(load(source.read_bytes())[1]).rstrip() == source.read_bytes().rstrip()


@needs_transcripts
def test_real_mini_swe_agent_array_keeps_its_layout(tmp_path):
    source = SHARED_TRANSCRIPTS / "mini-swe-agent" / "tests" / "test_data" / "github_issue.traj.json"
    copy = tmp_path / "github_issue.json"
    shutil.copy(source, copy)
    result = run("compact", str(copy), "-s", "window", "--keep-recent", "6", "-q")
    assert result.exit_code == EXIT_OK, result.output
    written = (tmp_path / "github_issue.compacted.json").read_bytes()
    assert written.startswith(b"[\n  {\n") and len(orjson.loads(written)) == 7


# -- prune and replay on every format ---


@pytest.mark.parametrize("name", list(FILES))
def test_prune_on_every_format(name, tmp_path):
    out = tmp_path / f"pruned-{name}.jsonl"
    result = run("prune", str(FILES[name]), "-o", str(out), "--json", "--write-unchanged")
    assert result.exit_code == EXIT_OK, result.output
    assert load(out.read_bytes(), str(out), name)[0].name == name


@pytest.mark.parametrize("name", list(FILES))
def test_replay_on_every_format(name):
    result = run("replay", str(FILES[name]), "--threshold", "500", "--json")
    assert result.exit_code == EXIT_OK, result.output
    assert orjson.loads(result.stdout)["total"]["settings"][0]["calls"] >= 3


@pytest.mark.parametrize("to", ["chat", "responses", "anthropic", "claude-code", "codex", "swe-agent"])
def test_several_transcripts_are_not_run_together_into_a_one_conversation_format(tmp_path, to):
    source = tmp_path / "runs.jsonl"
    source.write_bytes(
        b'{"messages":[{"role":"user","content":"first"},{"role":"assistant","content":"a"}]}\n'
        b'{"messages":[{"role":"system","content":"second"},{"role":"user","content":"b"}]}\n'
    )
    out = tmp_path / "out.jsonl"
    result = runner.invoke(app, ["compact", "-s", "window", str(source), "--to", to, "-o", str(out), "-q"])
    assert result.exit_code == EXIT_INPUT, result.output
    assert f"runs.jsonl: holds 2 transcripts and a {to} file holds one" in result.stderr
    assert "Traceback" not in result.output
    assert not out.exists()


def test_several_transcripts_convert_between_many_per_file_formats(tmp_path):
    source = tmp_path / "runs.jsonl"
    source.write_bytes(
        b'{"messages":[{"role":"user","content":"first"}]}\n{"messages":[{"role":"user","content":"second"}]}\n'
    )
    out = tmp_path / "out.json"
    result = runner.invoke(app, ["compact", "-s", "window", str(source), "--to", "tau-bench", "-o", str(out), "-q"])
    assert result.exit_code == EXIT_OK, result.output
    assert [run["traj"][0]["content"] for run in orjson.loads(out.read_bytes())] == ["first", "second"]


@pytest.mark.parametrize(
    ("forced", "expected"),
    [
        ("swe-agent", "x.jsonl: expected a SWE-agent trajectory: one JSON object with a 'history' list"),
        ("tau-bench", "x.jsonl:1: run 0: expected an object with a 'traj' list of messages"),
    ],
)
def test_forcing_a_trajectory_format_on_another_file_is_a_clear_error(tmp_path, forced, expected):
    source = tmp_path / "x.jsonl"
    source.write_bytes(b'{"role":"user","content":"hi"}\n{"role":"assistant","content":"yo"}\n')
    result = runner.invoke(app, ["report", "-f", forced, str(source)])
    assert result.exit_code == EXIT_INPUT
    assert expected in result.stderr
    assert "Traceback" not in result.output
