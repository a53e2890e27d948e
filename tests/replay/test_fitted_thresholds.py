"""replay's default thresholds: the file's own evidence of its producer's window and trigger first."""

from __future__ import annotations


def test_the_file_s_own_window_and_auto_compaction_come_before_the_price_list():
    from compactctl.recorded import ApiUsage, RecordedCall, RecordedCompaction, RecordedContext, RecordedSession
    from compactctl.replay.fitted_thresholds import FileEvidence, file_evidence, fitted_thresholds

    def session(peak: int, pre_tokens: int | None, window: int | None = None) -> RecordedSession:
        calls = [RecordedCall(1, "claude-sonnet-4-6", None, ApiUsage(peak, output_tokens=10))]
        compactions = [RecordedCompaction(2, 1, [], "auto", pre_tokens)] if pre_tokens else []
        return RecordedSession("claude-code", [RecordedContext("main", [], calls, compactions)], context_window=window)

    # genai-prices lists 1M for claude-sonnet-4-6; Claude Code ran it on 200k (measured, see the module).
    plain = fitted_thresholds("claude-code", "claude-sonnet-4-6", file_evidence(session(150_000, None)))
    assert (plain.window, plain.trigger) == (200_000, 167_000)
    assert fitted_thresholds("claude-code", "claude-sonnet-4-6", file_evidence(session(400_000, None))).window > 400_000
    own = fitted_thresholds("claude-code", "claude-sonnet-4-6", file_evidence(session(150_000, 177_076)))
    assert own.trigger == 177_076 and own.thresholds == [44_269, 88_538, 177_076]
    assert "auto-compaction in this file" in own.said()
    recorded = fitted_thresholds("codex", "gpt-5.5", FileEvidence(window=258_400))
    assert (recorded.window, recorded.trigger) == (258_400, 232_560) and "recorded in the file" in recorded.said()
