"""replay's default thresholds: the file's own evidence of its producer's window and trigger first."""

from __future__ import annotations


def test_the_file_s_own_window_and_auto_compaction_come_before_the_price_list():
    from compactctl.formats import get_format
    from compactctl.recorded import ApiUsage, RecordedCall, RecordedCompaction, RecordedContext, RecordedSession
    from compactctl.replay.fitted_thresholds import FileEvidence, file_evidence, fitted_thresholds

    claude_code, codex = get_format("claude-code"), get_format("codex")

    def session(peak: int, pre_tokens: int | None, window: int | None = None) -> RecordedSession:
        calls = [RecordedCall(1, "claude-sonnet-4-6", None, ApiUsage(peak, output_tokens=10))]
        compactions = [RecordedCompaction(2, 1, [], "auto", pre_tokens)] if pre_tokens else []
        return RecordedSession("claude-code", [RecordedContext("main", [], calls, compactions)], context_window=window)

    # genai-prices lists 1M for claude-sonnet-4-6; Claude Code ran it on 200k (measured, see the module).
    plain = fitted_thresholds(claude_code, "claude-sonnet-4-6", file_evidence(session(150_000, None)))
    assert plain is not None and (plain.window, plain.trigger) == (200_000, 167_000)
    assert "Claude Code's default" in plain.said()
    wide = fitted_thresholds(claude_code, "claude-sonnet-4-6", file_evidence(session(400_000, None)))
    assert wide is not None and wide.window > 400_000
    own = fitted_thresholds(claude_code, "claude-sonnet-4-6", file_evidence(session(150_000, 177_076)))
    assert own is not None and own.trigger == 177_076 and own.thresholds == [44_269, 88_538, 177_076]
    assert "auto-compaction in this file" in own.said()
    recorded = fitted_thresholds(codex, "gpt-5.5", FileEvidence(window=258_400))
    assert recorded is not None and (recorded.window, recorded.trigger) == (258_400, 232_560)
    assert "recorded in the file" in recorded.said()


def test_thresholds_are_fitted_by_the_format_s_auto_compact_field_not_its_name():
    import dataclasses

    from compactctl.formats import AutoCompact, get_format
    from compactctl.replay.fitted_thresholds import fitted_thresholds

    assert fitted_thresholds(get_format("chat"), "gpt-5.1") is None  # a format whose producer compacts not on its own
    auto = AutoCompact("New Agent", share=0.8)
    made_up = dataclasses.replace(get_format("chat"), name="new-agent", auto_compact=auto)
    fitted = fitted_thresholds(made_up, None)
    assert fitted is not None and (fitted.window, fitted.trigger) == (200_000, 160_000)
    assert fitted.producer == "new-agent"


def test_a_run_s_thresholds_fit_the_first_file_that_reads_and_the_note_says_which_or_why_the_defaults(tmp_path):
    from pathlib import Path

    import orjson
    from typer.testing import CliRunner

    from compactctl.cli.main import app

    codex = Path(__file__).parents[1] / "formats" / "data" / "real-clients" / "codex-0.171.0-compacted.jsonl"
    stray = tmp_path / "LICENSE"
    stray.write_text("MIT License\n")
    # A stray file first on the line is passed over (its error still named, exit 2), not the reason for 8k/16k/32k.
    result = CliRunner().invoke(app, ["replay", str(stray), str(codex)])
    assert result.exit_code == 2 and "LICENSE:1:1" in result.stderr
    note = result.stdout[: result.stdout.index("┏")]
    assert "codex's own auto-compact point" in note and f"{codex.name}, the first file that reads" in note
    assert "threshold 8,000" not in result.stdout
    alone = orjson.loads(CliRunner().invoke(app, ["replay", str(codex), "--json"]).stdout)["total"]["thresholds_from"]
    assert "the first file" not in alone  # one file: nothing to tell it from
    # A file that gives nothing to fit: the defaults, and the note says so and why.
    chat = Path(__file__).parents[2] / "samples" / "coding-agent.jsonl"
    shown = CliRunner().invoke(app, ["replay", str(chat)])
    assert "note: thresholds 8,000, 16,000, 32,000, the defaults: coding-agent.jsonl is chat" in shown.stdout
    assert shown.stdout.index("the defaults") < shown.stdout.index("┏")
