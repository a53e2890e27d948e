"""The report tables at 80 columns: a table where it fits, else stacked; never a column dropped or cut.

The batch table (``compact`` of several files), replay's settings and ``report`` of one file and
of a pair, each run at ``COLUMNS=80``: no line of what they print is wider (the notes, printed
unwrapped for logs, aside), no cell ends in ``…``, and every column's name and every figure is
there, once per file or setting.
"""

from __future__ import annotations

import re

from rich.cells import cell_len
from typer.testing import CliRunner

from compactctl.cli.main import app
from tests.conftest import ROOT
from tests.helpers import bundled_samples

SAMPLES = [str(p) for p in bundled_samples()]
CODING = str(ROOT / "samples" / "coding-agent.jsonl")
runner = CliRunner()
REPLAY_METRICS = ["strategy", "calls", "compactions", "over after", "calls over", "peak ctx", "mean ctx", "input",
                  "cached", "cache write", "output", "summarizer", "cost", "facts lost"]  # fmt: skip


def at(columns: int, *args: str) -> str:
    result = runner.invoke(app, list(args), env={"COLUMNS": str(columns)})
    assert result.exit_code in (0, 1), result.output  # 1: a gate failed (a pair that loses facts), still reported
    return result.stdout


def table_lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if not line.startswith(("note:", "wrote "))]


def running(text: str) -> str:
    """What the table says, as one line: wrapped lines joined, spaces collapsed."""
    return re.sub(r"\s+", " ", " ".join(table_lines(text)))


def assert_fits_80(text: str) -> None:
    assert max(cell_len(line) for line in table_lines(text)) <= 80, text
    assert "…" not in text


def test_the_batch_table_stacks_at_80_columns_with_every_figure_of_every_file(tmp_path):
    text = at(80, "compact", *SAMPLES, "-o", str(tmp_path / "out"))
    assert_fits_80(text)
    for sample in SAMPLES:
        assert sample in text
    for column in ("tokens before", "tokens after", "reduction", "messages", "tool share", "facts", "API-valid"):
        assert len(re.findall(rf"\b{column}\b", running(text))) >= len(SAMPLES), column
    assert "┏" not in text  # stacked, not a table cut at the border


def test_the_batch_table_is_a_table_where_it_fits(tmp_path):
    text = at(200, "compact", *SAMPLES, "-o", str(tmp_path / "out"))
    header = next(line for line in text.splitlines() if "tokens before" in line)
    assert "API-valid" in header and "┃" in header


def test_replay_with_many_settings_stacks_at_80_columns_with_every_metric_of_every_setting():
    text = at(80, "replay", CODING, "-t", "2000,4000,8000,16000,32000,64000")
    assert_fits_80(text)
    joined = running(text)
    for metric in REPLAY_METRICS:
        assert len(re.findall(rf"\b{metric} ", joined)) >= 7, metric  # the baseline and six thresholds
    assert "threshold 64,000" in text


def test_replay_with_few_settings_keeps_its_side_by_side_table_at_80_columns():
    text = at(80, "replay", CODING, "-t", "8000")
    assert_fits_80(text)
    assert "┃" in text and "threshold 8,000" in text


def test_report_of_a_file_and_of_a_pair_fit_80_columns():
    for args in (["report", CODING], ["report", CODING, str(ROOT / "samples" / "support-fr.jsonl")]):
        text = at(80, *args)
        assert_fits_80(text)
        assert "API-valid" in text and "tool output share" in text
