"""Thresholds that fit the file: from the model's context window and the producer's own trigger.

With no ``-t``, a Claude Code or Codex session is replayed at the point its producer would
auto-compact, and at half and a quarter of it, so the rows answer "compact earlier than the
producer does?" instead of 8k/16k/32k, which every real agent session passes on its first call.

The producers' triggers, as their own code has them (checked, not remembered):

- Claude Code (2.1.332, shipped minified in the native binary; ``grep -a`` in
  ``.ci/cache/npm/node_modules/@anthropic-ai/claude-code/bin/claude.exe``):
  ``var $Ue=13000`` and ``function QG(e,n){let o=e-$Ue,...return o}`` (the threshold is the
  effective window less 13,000), ``function gse(e,n){let o=Math.min(e.maxOutputTokens,kfo),...
  return h-o}`` with ``kfo=20000`` (the effective window is the model's less its output room,
  at most 20,000), used as ``autoCompactThreshold:QG(gse(n,...))``: 200,000 - 20,000 - 13,000 =
  167,000 on a 200,000-token window (83.5 %). ``CLAUDE_AUTOCOMPACT_PCT_OVERRIDE`` and
  ``CLAUDE_CODE_AUTO_COMPACT_WINDOW`` move it; a file does not record them.
- Codex: ``ModelInfo::auto_compact_token_limit`` in ``codex-rs/protocol/src/openai_models.rs``
  (openai/codex @ 8db0700): the model's ``auto_compact_token_limit`` if set, else
  ``(context_window * 9) / 10``; ``model_auto_compact_token_limit`` in config.toml overrides it.
- Gemini CLI: ``DEFAULT_COMPRESSION_TOKEN_THRESHOLD = 0.5`` of ``tokenLimit(model)``
  (``packages/core/src/context/chatCompressionService.ts:41``, google-gemini/gemini-cli @
  5411f11; the ``model.compressionThreshold`` setting defaults to 0.5 too,
  ``packages/cli/src/config/settingsSchema.ts:1116``; the 0.61.0 bundle in .ci/cache ships 0.5).

Measured on the real clients against the loopback fake (``tests/replay/test_producer_triggers.py``
holds the Codex one): Codex 0.171 compacts past 90 % of the window it is given, exactly. Claude
Code 2.1.332 on ``claude-sonnet-4-6`` compacted before a call after one of 177,076 tokens and not
after 176,387 (so about 177k on its window there: the output room it keeps for that model is
less than 20,000), and on ``claude-opus-4-7`` not after 284,688 (a 1M window), nor on
``claude-sonnet-4-5`` after 177,110: the point moves with the model and version, so a file's own
evidence comes first:

- the **trigger**: where the file's producer auto-compacted (Claude Code's ``preTokens`` of an
  ``auto`` compaction), when it did;
- the **window**: the one the producer recorded (Codex writes ``model_context_window``: 258,400
  on gpt-5.x, where genai-prices lists 1M for gpt-5.5); else, for Claude Code, 200,000 unless a
  call of the file went past it (the 1M windows genai-prices lists need an opt-in for some
  models); else genai-prices' ``context_window`` for the model; else the producer's usual one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from compactctl.recorded import RecordedSession

CLAUDE_CODE_SUMMARY_RESERVE = 20_000  # kfo: min(maxOutputTokens, 20000) kept for the reply
CLAUDE_CODE_BUFFER = 13_000  # $Ue
CODEX_SHARE = 0.9  # (context_window * 9) / 10
GEMINI_SHARE = 0.5  # DEFAULT_COMPRESSION_TOKEN_THRESHOLD
USUAL_WINDOW = {"claude-code": 200_000, "codex": 272_000, "gemini": 1_000_000}


CLAUDE_CODE_DEFAULT_WINDOW = 200_000


@dataclass(frozen=True)
class FileEvidence:
    """What a recorded file says itself about its producer's window and trigger."""

    window: int | None = None  # the context window the producer recorded (Codex)
    trigger: int | None = None  # the context at which it auto-compacted (Claude Code's preTokens)
    peak: int = 0  # the largest input a call of the file sent


@dataclass(frozen=True)
class FittedThresholds:
    thresholds: list[int]
    model: str
    window: int
    trigger: int
    producer: str
    window_from: str = "genai-prices"
    trigger_from: str = "its own auto-compact point"

    def said(self) -> str:
        """One line for the reader: which thresholds, and where they come from."""
        quarter, half, _ = self.thresholds
        return (
            f"thresholds from {self.model}'s {self.window:,}-token window ({self.window_from}): {self.producer}'s "
            f"{self.trigger_from} {self.trigger:,}, and half ({half:,}) and a quarter ({quarter:,}) of it "
            "(-t to choose)"
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

        found = _find(model, {"claude-code": "anthropic", "codex": "openai", "gemini": "google"}.get(producer))
        if found is not None and isinstance(found[1].context_window, int) and found[1].context_window > 0:
            return int(found[1].context_window)
    return USUAL_WINDOW.get(producer, 200_000)


def fitted_thresholds(producer: str, model: str | None, evidence: FileEvidence = FileEvidence()) -> FittedThresholds:
    window, window_from = context_window(model, producer), "genai-prices"
    if evidence.window:
        window, window_from = evidence.window, "recorded in the file"
    elif producer == "claude-code" and evidence.peak <= CLAUDE_CODE_DEFAULT_WINDOW < window:
        window, window_from = CLAUDE_CODE_DEFAULT_WINDOW, "Claude Code's default; no call of the file passed it"
    trigger, trigger_from = producer_trigger(producer, window), "own auto-compact point"
    if evidence.trigger:
        trigger, trigger_from = evidence.trigger, "auto-compaction in this file, at"
    return FittedThresholds(
        [trigger // 4, trigger // 2, trigger],
        model or "the model",
        window,
        trigger,
        producer,
        window_from,
        trigger_from,
    )


def file_evidence(session: RecordedSession) -> FileEvidence:
    """The window and trigger a recorded session shows (see the module's notes)."""
    triggers = [c.pre_tokens for x in session.contexts for c in x.compactions if c.trigger == "auto" and c.pre_tokens]
    peak = max((c.usage.input_tokens for x in session.contexts for c in x.calls if c.usage), default=0)
    return FileEvidence(session.context_window, min(triggers, default=None), peak)
