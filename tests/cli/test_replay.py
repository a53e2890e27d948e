"""``compactctl replay`` end to end: flags, JSON, tables, charts, prices and errors."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from compactctl.cli.main import app
from compactctl.errors import EXIT_INPUT, EXIT_OK, EXIT_SUMMARIZER
from tests.conftest import SHARED_TRANSCRIPTS, needs_transcripts

PRICE_FLAGS = [
    "--price-in",
    "2",
    "--price-cached",
    "0.5",
    "--price-write",
    "2.5",
    "--price-out",
    "8",
    "--cache-min-tokens",
    "0",
]
BASE = ["--encoding", "approx", "-s", "window", "--keep-recent", "2", *PRICE_FLAGS]


def talk() -> list[dict[str, Any]]:
    """The transcript of tests/test_replay.py: messages of 105, 14, 11, 24, 16, 14, 11, 14, 11 tokens (approx)."""
    texts = [("system", "S" * 400), ("user", "u" * 40), ("assistant", "a" * 20), ("user", "v" * 80)]
    texts += [("assistant", "b" * 40), ("user", "w" * 40), ("assistant", "c" * 20), ("user", "x" * 40)]
    texts += [("assistant", "d" * 20)]
    return [{"role": role, "content": text} for role, text in texts]


def write_chat(path: Path, messages: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(m) + "\n" for m in messages))
    return path


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()


@pytest.fixture
def chat_file(tmp_path: Path) -> Path:
    return write_chat(tmp_path / "talk.jsonl", talk())


def test_json_has_the_baseline_first_and_hand_checked_figures(runner, chat_file):
    result = runner.invoke(app, ["replay", str(chat_file), "--threshold", "170,100", *BASE, "--json"])
    assert result.exit_code == EXIT_OK, result.output
    data = json.loads(result.stdout)
    assert list(data) == ["version", "command", "exit_code", "error", "files", "failed", "gates", "total"]
    assert data["command"] == "replay" and data["total"]["files"] == 1
    base, at170, at100 = data["total"]["settings"]
    # Contexts 119, 154, 184, 209 (666), billed with 3 tokens of reply priming a call: 678.
    assert (base["trigger"], base["input_tokens"], base["cached_tokens"]) == ("none", 678, 457)
    # Call 3's 184 exceeds 170: before call 4 the window keeps system, a6, u7 = 105+11+14 = 130.
    assert (at170["threshold"], at170["context_per_call"]) == (170, [119, 154, 184, 130])
    # Cached 0+119+154+105 = 378; written 122+38+33+28 = 221; output 11+16+11+11 = 49.
    assert at170["cost"] == pytest.approx((378 * 0.5 + 221 * 2.5 + 49 * 8.0) / 1e6)
    assert (at100["compactions"], at100["over_threshold_after_compaction"]) == (3, 3)


def test_stdin_is_replayed_like_a_file(runner, chat_file):
    result = runner.invoke(app, ["replay", "-", "-t", "170", *BASE, "--json"], input=chat_file.read_text())
    assert result.exit_code == EXIT_OK, result.output
    data = json.loads(result.stdout)
    assert (data["files"][0]["file"], data["files"][0]["name"]) == ("-", "<stdin>")
    assert data["total"]["settings"][1]["context_per_call"] == [119, 154, 184, 130]


def test_the_caption_is_wrapped_at_the_console_s_width_not_the_table_s(runner, chat_file):
    """A table of two settings is some 60 columns wide: its pricing line is one line on a wide console."""
    result = runner.invoke(app, ["replay", str(chat_file), "-t", "170"], env={"COLUMNS": "250"})
    assert result.exit_code == EXIT_OK, result.output
    width = max(len(line) for line in result.stdout.splitlines() if line.startswith("└"))
    (caption,) = [line for line in result.stdout.splitlines() if line.startswith("priced as gpt-4o:")]
    assert width < 80 < len(caption) and "$10/M out (genai-prices" in caption


def test_table_and_chart_name_each_setting(runner, chat_file):
    result = runner.invoke(app, ["replay", str(chat_file), "-t", "170", *BASE], env={"COLUMNS": "120"})
    assert result.exit_code == EXIT_OK, result.output
    out = result.stdout
    assert "threshold 170" in out and "none" in out
    assert "priced as test" not in out and "priced as gpt-4o (overridden)" in out
    assert "compactions" in out and "cache write" in out and "facts lost" in out
    chart_lines = [line for line in out.splitlines() if line.startswith(("none ", "threshold 170 window"))]
    assert len(chart_lines) == 2
    assert all(any(spark in line for spark in "▁▂▃▄▅▆▇█") for line in chart_lines)


def test_stage_marker_adds_stage_rows(runner, tmp_path):
    messages = talk()
    messages[3]["content"] = "DONE" + "v" * 76
    path = write_chat(tmp_path / "staged.jsonl", messages)
    result = runner.invoke(app, ["replay", str(path), "-t", "170", "--stage-marker", "^DONE", *BASE, "--json"])
    assert result.exit_code == EXIT_OK, result.output
    rows = json.loads(result.stdout)["total"]["settings"]
    assert [(r["trigger"], r["threshold"]) for r in rows] == [
        ("none", None),
        ("threshold", 170),
        ("stage", None),
        ("stage+threshold", 170),
    ]
    assert rows[2]["context_per_call"] == [119, 140, 170, 195]


def test_stage_flag_alone_uses_stage_end_annotations_and_no_default_thresholds(runner, tmp_path):
    messages = talk()
    messages[3]["compactctl"] = {"stage_end": True}
    path = write_chat(tmp_path / "annotated.jsonl", messages)
    result = runner.invoke(app, ["replay", str(path), "--stage", *BASE, "--json"])
    assert result.exit_code == EXIT_OK, result.output
    rows = json.loads(result.stdout)["total"]["settings"]
    assert [r["trigger"] for r in rows] == ["none", "stage"]
    assert rows[1]["context_per_call"] == [119, 140, 170, 195]


def test_no_trigger_flag_compares_the_default_thresholds(runner, chat_file):
    result = runner.invoke(app, ["replay", str(chat_file), *BASE, "--json"])
    assert [r["threshold"] for r in json.loads(result.stdout)["total"]["settings"]] == [None, 8000, 16000, 32000]


def test_a_folder_aggregates_files_with_per_file_rows(runner, tmp_path):
    folder = tmp_path / "logs"
    folder.mkdir()
    write_chat(folder / "a.jsonl", talk())
    write_chat(folder / "b.jsonl", talk()[:5])
    result = runner.invoke(app, ["replay", str(folder), "-t", "170", *BASE, "--json"])
    assert result.exit_code == EXIT_OK, result.output
    data = json.loads(result.stdout)
    assert [f["name"] for f in data["files"]] == ["a.jsonl", "b.jsonl"]
    assert [f["file"] for f in data["files"]] == [str(folder / "a.jsonl"), str(folder / "b.jsonl")]
    assert data["total"]["settings"][0]["input_tokens"] == 678 + 122 + 157  # contexts plus 3 tokens of priming a call
    assert data["total"]["settings"][0]["calls"] == sum(f["settings"][0]["calls"] for f in data["files"]) == 6
    assert data["failed"] == []


def test_a_folder_of_one_file_still_has_per_file_rows(runner, tmp_path):
    folder = tmp_path / "logs"
    folder.mkdir()
    write_chat(folder / "a.jsonl", talk())
    result = runner.invoke(app, ["replay", str(folder), "-t", "170", *BASE, "--json"])
    data = json.loads(result.stdout)
    assert list(data) == ["version", "command", "exit_code", "error", "files", "failed", "gates", "total"]
    assert data["files"][0]["settings"] == data["total"]["settings"]


def test_a_bad_file_in_a_folder_is_named_and_exits_2(runner, tmp_path):
    folder = tmp_path / "logs"
    folder.mkdir()
    write_chat(folder / "a.jsonl", talk())
    (folder / "bad.jsonl").write_text('{"role": "user", "content": "hi"}\n{oops\n')
    result = runner.invoke(app, ["replay", str(folder), "-t", "170", *BASE, "--json"])
    assert result.exit_code == EXIT_INPUT
    data = json.loads(result.stdout)
    assert [(f["name"], f["status"]) for f in data["files"]] == [("a.jsonl", "ok"), ("bad.jsonl", "failed")]
    assert "bad.jsonl:2" in data["failed"][0]["error"] and data["failed"][0]["file"] == str(folder / "bad.jsonl")
    skipped = runner.invoke(app, ["replay", str(folder), "-t", "170", *BASE, "--on-error", "skip", "--json"])
    assert skipped.exit_code == EXIT_OK  # a bad line, skipped: the file is read
    assert json.loads(skipped.stdout)["files"][1]["status"] == "skipped-lines"


def test_a_failing_summarizer_exits_3_even_with_skip(runner, chat_file, monkeypatch):
    from compactctl.errors import SummarizerError
    from compactctl.strategies import STRATEGIES, StepResult, Strategy

    def failing(messages, options, context) -> StepResult:
        raise SummarizerError("the summarizer gave up after 4 retries")

    monkeypatch.setitem(
        STRATEGIES, "failing", Strategy("failing", failing, dataclass(frozen=True)(type("No", (), {})), "t")
    )
    result = runner.invoke(
        app, ["replay", str(chat_file), "-t", "170", *BASE[:2], "-s", "failing", "--on-error", "skip"]
    )
    assert result.exit_code == EXIT_SUMMARIZER
    assert "gave up after 4 retries" in result.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["-t", "many"], "'many' is not a number"),
        (["--stage-marker", "("], "bad regular expression"),
        (["-s", "nope"], "unknown strategy 'nope'"),
        (["--model-pricing", "gpt-9"], "unknown model 'gpt-9'"),
        (["--plot", "chart.gif"], "must end in .png or .svg"),
    ],
)
def test_usage_errors_exit_2_with_one_line(runner, chat_file, args, message):
    result = runner.invoke(app, ["replay", str(chat_file), *args])
    assert result.exit_code == EXIT_INPUT
    assert message in result.stderr
    assert result.stdout == ""


def test_a_bad_price_file_exits_2_naming_it(runner, chat_file, tmp_path):
    prices = tmp_path / "prices.json"
    prices.write_text('{"models": {"ours": {"input": 1}}}')
    result = runner.invoke(app, ["replay", str(chat_file), "--prices", str(prices)])
    assert result.exit_code == EXIT_INPUT
    assert f"{prices}: bad price file: model 'ours': output must be a number" in result.stderr


def test_team_price_file_and_model_are_used(runner, chat_file, tmp_path):
    prices = tmp_path / "prices.toml"
    prices.write_text('default = "ours"\n[models.ours]\ninput = 2\ncached_input = 0.5\ncache_write = 2.5\noutput = 8\n')
    result = runner.invoke(
        app, ["replay", str(chat_file), "-t", "170", "--encoding", "approx", "--prices", str(prices), "--json"]
    )
    assert result.exit_code == EXIT_OK, result.output
    assert json.loads(result.stdout)["total"]["settings"][0]["cost"] == pytest.approx(
        (457 * 0.5 + 221 * 2.5 + 49 * 8.0) / 1e6
    )


@pytest.mark.slow  # imports matplotlib
def test_plot_writes_an_svg(runner, chat_file, tmp_path):
    target = tmp_path / "context.svg"
    result = runner.invoke(app, ["replay", str(chat_file), "-t", "170", *BASE, "--plot", str(target), "-q"])
    assert result.exit_code == EXIT_OK, result.output
    assert target.read_text().lstrip().startswith("<?xml") and "<svg" in target.read_text()


def test_plot_without_matplotlib_says_how_to_get_it(runner, chat_file, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # makes `import matplotlib` raise ImportError
    result = runner.invoke(app, ["replay", str(chat_file), "--plot", str(tmp_path / "c.png")])
    assert result.exit_code == EXIT_INPUT
    assert "pip install 'compactctl[plot]'" in result.stderr
    assert not (tmp_path / "c.png").exists()


def test_sparkline_keeps_each_bucket_peak_and_marks_cells_over_the_threshold():
    from compactctl.cli.replay import sparkline

    line = sparkline([1, 8, 2, 2, 8, 1], width=3, top=8, threshold=5)
    assert line.plain == "█▂█"  # each cell shows the peak of its two calls
    assert [span.style for span in line.spans] == ["red", "cyan", "red"]
    low = sparkline([0, 4, 8], width=10, top=8)
    assert low.plain == "▁▄█" and {span.style for span in low.spans} == {"cyan"}


@needs_transcripts
def test_real_tau_bench_runs_replay_each_run_on_its_own(runner):
    path = next((SHARED_TRANSCRIPTS / "tau-bench").rglob("*.json"))
    result = runner.invoke(app, ["replay", str(path), "-t", "3000", "-s", "window", "--json"])
    assert result.exit_code == EXIT_OK, result.output
    base, row = json.loads(result.stdout)["total"]["settings"]
    assert base["calls"] == row["calls"] > 200
    assert row["peak_context"] < base["peak_context"] and row["input_tokens"] < base["input_tokens"]


@pytest.mark.slow  # the console script, a fresh interpreter: 0.8 s of CPU
def test_console_script_replays_without_importing_openai(chat_file):
    code = (
        "import sys; from compactctl.cli.main import main; sys.argv = ['compactctl', 'replay', sys.argv[1], "
        "'-t', '170', '--encoding', 'approx', '--json']\n"
        "try:\n    main()\nexcept SystemExit as e:\n    assert 'openai' not in sys.modules; raise"
    )
    done = subprocess.run([sys.executable, "-c", code, str(chat_file)], capture_output=True, text=True, timeout=60)
    assert done.returncode == EXIT_OK, done.stderr
    assert json.loads(done.stdout)["total"]["settings"][1]["threshold"] == 170


def test_openai_summarizer_through_the_loopback_server_is_counted_and_priced(
    runner, tmp_path, monkeypatch, openai_server
):
    from tests.summarizers.openai_server import DEFAULT_SUMMARY

    monkeypatch.setenv("OPENAI_API_KEY", "sk-loopback-only")
    path = write_chat(tmp_path / "talk.jsonl", talk())
    summarizer = ["--summarizer", "openai", "--base-url", openai_server.url, "--model", "gpt-4o-mini"]
    args = ["replay", str(path), "-t", "170", "-s", "summary", "--keep-recent", "2", "--encoding", "approx"]
    result = runner.invoke(app, [*args, *PRICE_FLAGS, *summarizer, "--json"])
    assert result.exit_code == EXIT_OK, result.output
    base, row = json.loads(result.stdout)["total"]["settings"]
    # One compaction (before call 4), one request, whose usage the server reports from what it received.
    (sent,) = openai_server.requests
    prompt = sum(len(str(m.get("content", ""))) // 4 for m in sent.body["messages"])
    completion = max(1, len(DEFAULT_SUMMARY) // 4)
    assert (row["compactions"], row["summarizer_calls"], row["summarizer_tokens"]) == (1, 1, prompt + completion)
    assert base["summarizer_calls"] == 0
    # The summary carries the user's messages verbatim after the model's prose: smaller than no compaction.
    assert row["context_per_call"][:3] == [119, 154, 184] and row["context_per_call"][3] < base["context_per_call"][3]
    written = row["input_tokens"] - row["cached_tokens"]
    calls_cost = (row["cached_tokens"] * 0.5 + written * 2.5 + row["output_tokens"] * 8.0) / 1e6
    # The summarizer's tokens are billed at gpt-4o-mini's table prices ($0.15 in, $0.60 out), not the flags'.
    assert row["cost"] == pytest.approx(calls_cost + (prompt * 0.15 + completion * 0.60) / 1e6)
