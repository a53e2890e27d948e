"""Thresholds that fit the file: from the model's context window and the producer's own trigger.

With no ``-t``, a Claude Code or Codex session is replayed at the point its producer would
auto-compact, and at half and a quarter of it, so the rows answer "compact earlier than the
producer does?" instead of 8k/16k/32k, which every real agent session passes on its first call.

The producers' triggers, as their source has them:

- Claude Code: the context window less the room kept for the summary (20,000 tokens) and a
  13,000-token buffer: 167,000 on a 200,000-token window (83.5 %);
- Codex: ``auto_compact_token_limit``, 90 % of the model's context window
  (``codex-rs/core/src/openai_model_info.rs``);
- Gemini CLI: half the window (its compression threshold, 0.5).

The context window is genai-prices' (``ModelInfo.context_window``) for the model the session
names, else the producer's usual one (200,000 for Claude, 272,000 for Codex's gpt-5 models).
"""

from __future__ import annotations

from dataclasses import dataclass

CLAUDE_CODE_SUMMARY_RESERVE = 20_000
CLAUDE_CODE_BUFFER = 13_000
CODEX_SHARE = 0.9
GEMINI_SHARE = 0.5
USUAL_WINDOW = {"claude-code": 200_000, "codex": 272_000, "gemini": 1_000_000}


@dataclass(frozen=True)
class FittedThresholds:
    thresholds: list[int]
    model: str
    window: int
    trigger: int
    producer: str

    def said(self) -> str:
        """One line for the reader: which thresholds, and where they come from."""
        quarter, half, _ = self.thresholds
        return (
            f"thresholds from {self.model}'s {self.window:,}-token window: {self.producer}'s own auto-compact "
            f"point {self.trigger:,}, and half ({half:,}) and a quarter ({quarter:,}) of it (-t to choose)"
        )


def producer_trigger(producer: str, window: int) -> int:
    """Where the producer compacts on its own, on a model of ``window`` tokens."""
    if producer == "claude-code":
        return window - CLAUDE_CODE_SUMMARY_RESERVE - CLAUDE_CODE_BUFFER
    if producer == "codex":
        return round(window * CODEX_SHARE)
    return round(window * GEMINI_SHARE)


def context_window(model: str | None, producer: str) -> int:
    """The model's context window (genai-prices), else the producer's usual one."""
    if model:
        from compactctl.replay.price_source import _find

        found = _find(model, {"claude-code": "anthropic", "codex": "openai"}.get(producer))
        if found is not None and isinstance(found[1].context_window, int) and found[1].context_window > 0:
            return int(found[1].context_window)
    return USUAL_WINDOW.get(producer, 200_000)


def fitted_thresholds(producer: str, model: str | None) -> FittedThresholds:
    window = context_window(model, producer)
    trigger = producer_trigger(producer, window)
    return FittedThresholds([trigger // 4, trigger // 2, trigger], model or "the model", window, trigger, producer)
