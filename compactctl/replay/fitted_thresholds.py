"""Thresholds that fit the file: from the model's context window and the producer's own trigger.

With no ``-t``, a Claude Code or Codex session is replayed at the point its producer would
auto-compact, and at half and a quarter of it, so the rows answer "compact earlier than the
producer does?" instead of 8k/16k/32k, which every real agent session passes on its first call.

Each producer's trigger is its format's ``AUTO_COMPACT`` (``formats/claude_code.py``, ``codex.py``,
``gemini.py``), with where its client's code has it (checked, not remembered): Claude Code compacts
at the window less its output room (at most 20,000) and a 13,000 buffer, Codex at 90 % of the
window, Gemini CLI at half of it.

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
    from compactctl.formats import AutoCompact, Format
    from compactctl.recorded import RecordedSession


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

    def said(self, of: str | None = None) -> str:
        """One line for the reader: which thresholds, and where they come from (the file ``of``, in a run of
        several)."""
        quarter, half, _ = self.thresholds
        window_from = self.window_from if of is None else f"{self.window_from}; {of}, the first file that reads"
        return (
            f"thresholds from {self.model}'s {self.window:,}-token window ({window_from}): {self.producer}'s "
            f"{self.trigger_from} {self.trigger:,}, and half ({half:,}) and a quarter ({quarter:,}) of it "
            "(-t to choose)"
        )


def context_window(model: str | None, auto: AutoCompact) -> int:
    """The model's context window (genai-prices, its producer's provider's models), else the producer's usual one."""
    if model:
        from compactctl.replay.price_source import _find

        found = _find(model, auto.provider)
        if found is not None and isinstance(found[1].context_window, int) and found[1].context_window > 0:
            return int(found[1].context_window)
    return auto.usual_window


def fitted_thresholds(
    fmt: Format, model: str | None, evidence: FileEvidence = FileEvidence()
) -> FittedThresholds | None:
    """A quarter, half and all of where ``fmt``'s producer compacts on its own (its ``auto_compact``),
    on the window and at the trigger the file shows first; None for a format whose producer has none."""
    auto = fmt.auto_compact
    if auto is None:
        return None
    window, window_from = context_window(model, auto), "genai-prices"
    if evidence.window:
        window, window_from = evidence.window, "recorded in the file"
    elif auto.runs_at_most is not None and evidence.peak <= auto.runs_at_most < window:
        window, window_from = auto.runs_at_most, f"{auto.client}'s default; no call of the file passed it"
    trigger, trigger_from = auto.trigger(window), "own auto-compact point"
    if evidence.trigger:
        trigger, trigger_from = evidence.trigger, "auto-compaction in this file, at"
    return FittedThresholds(
        [trigger // 4, trigger // 2, trigger],
        model or "the model",
        window,
        trigger,
        fmt.name,
        window_from,
        trigger_from,
    )


def file_evidence(session: RecordedSession) -> FileEvidence:
    """The window and trigger a recorded session shows (see the module's notes)."""
    triggers = [c.pre_tokens for x in session.contexts for c in x.compactions if c.trigger == "auto" and c.pre_tokens]
    peak = max((c.usage.input_tokens for x in session.contexts for c in x.calls if c.usage), default=0)
    return FileEvidence(session.context_window, min(triggers, default=None), peak)
