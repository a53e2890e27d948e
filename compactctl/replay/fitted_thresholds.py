"""Thresholds that fit the file: from the model's context window and the producer's own trigger.

With no ``-t``, a Claude Code or Codex session is replayed at the point its producer would
auto-compact, and at half and a quarter of it, so the rows answer "compact earlier than the
producer does?" instead of 8k/16k/32k, which every real agent session passes on its first call.

Each producer's trigger is its format's ``AUTO_COMPACT`` (``formats/claude_code.py``, ``codex.py``,
``gemini.py``), measured on the real clients against the loopback fake
(``tests/replay/test_producer_triggers.py``): Codex 0.171 compacts past 90 % of the window it is
given, exactly; Gemini CLI at half of it (its code); Claude Code 2.1.337 at the window less 23,000
(177,000 on 200k, 977,000 on 1M: 10,000 later than its code reads), and its older models
(``AutoCompact.when_refused``) only when the API refuses a call over the window. The point moves
with the model and the version, so a file's own evidence comes first:

- the **trigger**: where the file's producer auto-compacted (Claude Code's ``preTokens`` of an
  ``auto`` compaction), when it did;
- the **window**: the one the producer recorded (Codex writes ``model_context_window``: 258,400
  on gpt-5.x, where genai-prices lists 1M for gpt-5.5); else, for Claude Code, 1M where its own
  model catalog says the model runs on 1M natively (claude-opus-4-7 on, measured) or the id asks
  for it (``[1m]``), and otherwise 200,000 unless a call of the file went past it (the 1M windows
  genai-prices lists need an opt-in for those); else genai-prices' ``context_window`` for the
  model; else the producer's usual one.
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
    release: tuple[int, int, int] | None = None  # the producer's release that wrote it


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


def context_window(model: str | None, auto: AutoCompact) -> tuple[int, str, bool]:
    """The model's context window, where it comes from, and whether its client runs it there with no opt-in:
    Claude Code's catalog for a model it runs on 1M natively, else genai-prices (its producer's provider's models),
    else the producer's usual one."""
    if model and auto.provider == "anthropic":
        from compactctl.replay.price_source import catalog_label, catalog_window

        native = catalog_window(model)
        if native is not None:
            asked = "[1m]" in model.lower()
            return native, "the model id's [1m]" if asked else f"{catalog_label()}: native", True
    if model:
        from compactctl.replay.price_source import _find

        found = _find(model, auto.provider)
        if found is not None and isinstance(found[1].context_window, int) and found[1].context_window > 0:
            return int(found[1].context_window), "genai-prices", False
    return auto.usual_window, f"{auto.client}'s usual window", False


def _model_id(model: str, auto: AutoCompact) -> str:
    """``model`` by the id its client's catalog lists it under (a dated or cloud spelling of it), else as named."""
    if auto.provider == "anthropic":
        from compactctl.replay.price_source import catalog_entry

        found = catalog_entry(model)
        if found is not None:
            return found[0]
    return model


def fitted_thresholds(
    fmt: Format, model: str | None, evidence: FileEvidence = FileEvidence()
) -> FittedThresholds | None:
    """A quarter, half and all of where ``fmt``'s producer compacts on its own (its ``auto_compact``),
    on the window and at the trigger the file shows first; None for a format whose producer has none."""
    auto = fmt.auto_compact.of_release(evidence.release) if fmt.auto_compact else None
    if auto is None:
        return None
    window, window_from, native = context_window(model, auto)
    if evidence.window:
        window, window_from = evidence.window, "recorded in the file"
    elif not native and auto.runs_at_most is not None and evidence.peak <= auto.runs_at_most < window:
        window, window_from = auto.runs_at_most, f"{auto.client}'s default; no call of the file passed it"
    trigger, trigger_from = auto.trigger(window), "own auto-compact point"
    if auto is not fmt.auto_compact and evidence.release is not None:
        trigger_from = f"own auto-compact point in release {'.'.join(map(str, evidence.release))}:"
    if model and _model_id(model, auto) in auto.when_refused:
        trigger, trigger_from = window, "compaction when the API refuses a call over the window (none before it), at"
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
    return FileEvidence(session.context_window, min(triggers, default=None), peak, session.producer_release)
