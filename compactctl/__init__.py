"""compactctl: compact saved LLM conversation and agent transcripts.

The library API is plain functions on lists of message dicts::

    import compactctl
    fmt, transcripts, _ = compactctl.load(open("chat.jsonl", "rb").read())
    result = compactctl.compact(transcripts[0].messages, ["trim-tools", "window"], {"keep_recent": 8})
    result.messages  # a new list; the input is not mutated
    pruned = compactctl.prune(transcripts[0].messages, mode="drop")
    pruned.messages, pruned.fates  # what was elided, removed or restored, and why
"""

from __future__ import annotations

from compactctl.compact import Compaction, compact
from compactctl.formats import dump, load
from compactctl.report import FileReport, Measure, measure
from compactctl.strategies.base import Fate, StepContext, StepResult
from compactctl.strategies.prune import PruneOptions
from compactctl.strategies.prune import prune as _prune
from compactctl.tokens import TokenCounter
from compactctl.transcript import Message, Violation, find_violation, is_valid

__all__ = [
    "Compaction",
    "Fate",
    "FileReport",
    "Measure",
    "Message",
    "StepResult",
    "TokenCounter",
    "Violation",
    "compact",
    "dump",
    "find_violation",
    "is_valid",
    "load",
    "measure",
    "prune",
]
__version__ = "0.1.0"


def prune(messages: list[Message], mode: str = "stub", require: tuple[str, ...] = ()) -> StepResult:
    """The deterministic prune step on a list of message dicts (the input is not mutated).

    Returns a StepResult: ``messages`` (the new list), ``origins`` (the input index of each
    output message) and ``fates`` (input index -> what became of it and why).
    """
    # The prune step counts no tokens, so the cheap estimate spares loading an encoding.
    return _prune(messages, PruneOptions(mode, tuple(require)), StepContext(TokenCounter("approx")))
