"""replay's default thresholds: the file's own evidence of its producer's window and trigger first."""

from __future__ import annotations

from tests.conftest import SHARED_TRANSCRIPTS, needs_transcripts


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
    assert plain is not None and (plain.window, plain.trigger) == (200_000, 177_000)
    assert "Claude Code's default" in plain.said()
    wide = fitted_thresholds(claude_code, "claude-sonnet-4-6", file_evidence(session(400_000, None)))
    assert wide is not None and wide.window > 400_000
    own = fitted_thresholds(claude_code, "claude-sonnet-4-6", file_evidence(session(150_000, 177_076)))
    assert own is not None and own.trigger == 177_076 and own.thresholds == [44_269, 88_538, 177_076]
    assert "auto-compaction in this file" in own.said()
    recorded = fitted_thresholds(codex, "gpt-5.5", FileEvidence(window=258_400))
    assert recorded is not None and (recorded.window, recorded.trigger) == (258_400, 232_560)
    assert "recorded in the file" in recorded.said()


def test_a_model_claude_code_runs_on_1m_natively_is_fitted_on_1m_and_an_older_one_at_the_window():
    from compactctl.formats import get_format
    from compactctl.replay.fitted_thresholds import FileEvidence, fitted_thresholds

    claude_code = get_format("claude-code")
    # Claude Code's catalog says 1M native for claude-opus-4-7 (any spelling of it): no call need pass 200k for it.
    for spelling in ("claude-opus-4-7", "us.anthropic.claude-opus-4-7-v1:0", "claude-mythos-5-1"):
        native = fitted_thresholds(claude_code, spelling, FileEvidence(peak=90_000))
        assert native is not None and (native.window, native.trigger) == (1_000_000, 977_000), spelling
        assert "Claude Code 2.1.337's model catalog: native" in native.said()
    asked = fitted_thresholds(claude_code, "claude-sonnet-4-6[1m]", FileEvidence(peak=90_000))
    assert asked is not None and asked.window == 1_000_000 and "[1m]" in asked.said()
    # The client does not compact its older models before the API refuses a call over the window (measured).
    older = fitted_thresholds(claude_code, "claude-sonnet-4-5-20250929", FileEvidence(peak=90_000))
    assert older is not None and (older.window, older.trigger) == (200_000, 200_000)
    assert older.thresholds == [50_000, 100_000, 200_000] and "when the API refuses" in older.said()


def test_a_file_from_an_earlier_claude_code_release_is_fitted_by_that_release_s_rule():
    from compactctl.formats import get_format
    from compactctl.formats.claude_code import AUTO_COMPACT
    from compactctl.replay.fitted_thresholds import FileEvidence, fitted_thresholds

    assert AUTO_COMPACT.earlier is not None
    first_current = AUTO_COMPACT.earlier[0]
    last_earlier = (first_current[0], first_current[1], first_current[2] - 1)
    claude_code = get_format("claude-code")
    for release in ((1, 0, 69), (2, 0, 0), last_earlier):
        old = fitted_thresholds(claude_code, "claude-opus-4-1-20250805", FileEvidence(peak=90_000, release=release))
        assert old is not None and (old.window, old.trigger) == (200_000, 155_000), release
        assert f"in release {'.'.join(map(str, release))}" in old.said()
    # From the first release that moved it: no compaction before the refusal, and 23k off the window for the others.
    new = fitted_thresholds(claude_code, "claude-opus-4-1-20250805", FileEvidence(peak=90_000, release=first_current))
    assert new is not None and new.trigger == 200_000
    unnamed = fitted_thresholds(claude_code, "claude-sonnet-4-6", FileEvidence(peak=90_000))
    assert unnamed is not None and unnamed.trigger == 177_000  # a file that names no release: the pinned client's


def test_replay_reads_the_release_that_wrote_a_claude_code_session():
    from pathlib import Path

    from compactctl.formats import get_format, records_of
    from compactctl.recorded import read_recorded
    from compactctl.replay.fitted_thresholds import file_evidence, fitted_thresholds

    path = Path(__file__).parents[1] / "formats" / "data" / "real-clients" / "claude-code-2.1.332-compacted.jsonl"
    evidence = file_evidence(read_recorded("claude-code", records_of(path.read_bytes(), str(path)), str(path)))
    assert evidence.release == (2, 1, 332)
    fitted = fitted_thresholds(get_format("claude-code"), "claude-opus-5-5", evidence)
    assert fitted is not None and fitted.window == 1_000_000


def test_the_sessions_window_of_a_claude_code_session_is_its_model_s_in_the_client_s_catalog():
    from compactctl.sessions.claude_code import window_of

    assert window_of("claude-opus-4-7", []) == window_of("claude-haiku-5-5", []) == 1_000_000
    assert window_of("claude-sonnet-4-6", []) == window_of(None, []) == window_of("claude-sonnet-4-5", []) == 200_000
    assert window_of("claude-sonnet-4-6[1m]", []) == window_of("some-new-model[1m]", []) == 1_000_000


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


@needs_transcripts
def test_a_real_1_0_69_session_compacted_after_the_first_call_past_its_release_s_point():
    # kesslerio's session (Claude Code 1.0.69, claude-opus-4-1): no compaction after a call of 154,395 tokens, one
    # right after the next call, of 163,792: 155,000 lies between, and the 2.1.337 rule (never on this model) does not.
    from compactctl.formats import get_format, records_of
    from compactctl.recorded import read_recorded
    from compactctl.replay.fitted_thresholds import file_evidence, fitted_thresholds

    path = SHARED_TRANSCRIPTS / "claude-code" / "kesslerio__attio-mcp-server" / "chat.json"
    session = read_recorded("claude-code", records_of(path.read_bytes(), str(path)), str(path))
    main = next(x for x in session.contexts if x.compactions)
    (compaction,) = main.compactions
    before = [c for c in main.calls if c.usage and c.position < compaction.position]
    contexts = [c.usage.input_tokens + c.usage.output_tokens for c in before if c.usage]
    fitted = fitted_thresholds(get_format("claude-code"), before[-1].model, file_evidence(session))
    assert fitted is not None and file_evidence(session).release == (1, 0, 69)
    assert max(contexts[:-1]) < fitted.trigger < contexts[-1]
