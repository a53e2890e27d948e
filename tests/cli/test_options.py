"""Every command's options come from the settings declared on the options dataclasses."""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass

import pytest
from typer.testing import CliRunner

from compactctl.cli.main import build_app
from compactctl.errors import EXIT_INPUT, EXIT_OK
from compactctl.settings import setting
from compactctl.strategies import STRATEGIES
from compactctl.strategies.window import WindowOptions, window
from compactctl.transcript import Message
from tests.cli.conftest import write_jsonl

WIDE = {"COLUMNS": "400"}  # rich wraps help at the terminal's width; one line per option reads better in a test


def one_line(text: str) -> str:
    """Help text with the box drawing and the wrapping taken out."""
    return re.sub(r"\s+", " ", re.sub(r"[│╭╮╰╯─]", " ", text))


@pytest.fixture
def keep_first(monkeypatch):
    """A ``keep_first`` setting added to window's options in the test, and nowhere else."""

    @dataclass(frozen=True)
    class WindowWithKeepFirst(WindowOptions):
        keep_first: int = setting(0, help="window: messages kept at the start, whatever their age.", min=0)

    seen: list[int] = []

    def recording_window(messages: list[Message], options: WindowWithKeepFirst, context):  # type: ignore[no-untyped-def]
        seen.append(options.keep_first)
        return window(messages, options, context)

    strategy = dataclasses.replace(STRATEGIES["window"], run=recording_window, options=WindowWithKeepFirst)
    monkeypatch.setitem(STRATEGIES, "window", strategy)
    return seen


def test_a_setting_added_to_a_dataclass_is_a_flag_a_config_key_and_in_help(keep_first, tmp_path, agent_messages):
    app = build_app()
    runner = CliRunner()
    source = write_jsonl(tmp_path / "s.jsonl", agent_messages)
    out = tmp_path / "out.jsonl"

    flagged = runner.invoke(app, ["compact", str(source), "-s", "window", "--keep-first", "3", "-o", str(out), "-q"])
    assert flagged.exit_code == EXIT_OK, flagged.output
    assert keep_first == [3]

    config = tmp_path / "c.toml"
    config.write_text("keep-first = 2\n")
    from_config = runner.invoke(app, ["compact", str(source), "-s", "window", "--config", str(config), "-o", str(out)])
    assert from_config.exit_code == EXIT_OK, from_config.output
    assert keep_first == [3, 2]

    config.write_text("keep-first = -1\n")
    refused = runner.invoke(app, ["compact", str(source), "--config", str(config), "-o", str(out)])
    assert refused.exit_code == EXIT_INPUT
    assert "c.toml: keep_first must be at least 0, not -1" in refused.stderr
    config.write_text('keep-first = "two"\n')
    assert (
        "keep_first must be a whole number"
        in runner.invoke(app, ["compact", str(source), "--config", str(config)]).stderr
    )
    config.write_text("keep-firts = 2\n")
    misspelt = runner.invoke(app, ["compact", str(source), "--config", str(config)])
    assert "unknown setting 'keep_firts' (did you mean 'keep_first'?)" in misspelt.stderr

    shown = one_line(runner.invoke(app, ["compact", "--help"], env=WIDE).stdout)
    assert "--keep-first" in shown and "window: messages kept at the start, whatever their age. [default: 0]" in shown
    assert "--keep-first" in one_line(runner.invoke(app, ["replay", "--help"], env=WIDE).stdout)
    assert "--keep-first" not in one_line(runner.invoke(app, ["report", "--help"], env=WIDE).stdout)


def test_help_shows_the_default_each_strategy_really_has():
    shown = one_line(CliRunner().invoke(build_app(), ["compact", "--help"], env=WIDE).stdout)
    defaults = {
        name: strategy.options().threshold
        for name, strategy in STRATEGIES.items()
        if name != "window" and hasattr(strategy.options(), "threshold")
    }
    assert defaults == {"summary": 10000, "rolling": 8000, "selective": 10000, "structured": 0}
    assert "[default: summary and selective 10000, rolling 8000, structured 0]" in shown
    assert "[default: window, summary and selective 6, structured 10]" in shown  # --keep-recent


def test_each_command_takes_only_its_settings():
    runner, app = CliRunner(), build_app()
    report = one_line(runner.invoke(app, ["report", "--help"], env=WIDE).stdout)
    assert "--format" in report and "--fail-under" in report and "--strategy" not in report
    prune = one_line(runner.invoke(app, ["prune", "--help"], env=WIDE).stdout)
    assert "--mode" in prune and "--keep-recent" not in prune and "--strategy" not in prune
    replay = one_line(runner.invoke(app, ["replay", "--help"], env=WIDE).stdout)
    assert "--price-in" in replay and "--dry-run" not in replay and "--fail-under" not in replay
    # The default as replay picks it: fitted to a file that records its usage (a Claude Code session), else fixed.
    assert "[default: where the first file records its usage, its producer's auto-compact point on the model's " in (
        replay
    )
    assert "else 8000,16000,32000; none with a stage trigger alone]" in replay


def test_a_bad_flag_value_names_the_setting_and_the_flag(cli, chat_file):
    result = cli("compact", chat_file, "--summary-role", "tool")
    assert result.exit_code == EXIT_INPUT
    assert (
        result.stderr.strip() == "error: summary_role must be one of system, user, not 'tool' (given as --summary-role)"
    )


def test_a_switch_given_either_way_wins_over_the_config(cli, tmp_path, chat_file, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "compactctl.toml").write_text("redact = false\n")
    from compactctl.cli.options import settings_for
    from compactctl.summarizers.options import SummarizerOptions

    assert settings_for(None, {"redact": None}).of(SummarizerOptions).redact is False
    assert settings_for(None, {"redact": True}).of(SummarizerOptions).redact is True
    assert settings_for(None, {}).of(SummarizerOptions).cache is True
