"""compactctl: compact saved LLM conversation and agent transcripts.

The library API is plain functions on lists of message dicts::

    import compactctl
    fmt, transcripts, _ = compactctl.load(open("chat.jsonl", "rb").read())
    result = compactctl.compact(transcripts[0].messages, ["trim-tools", "window"], {"keep_recent": 8})
    result.messages  # a new list; the input is not mutated
    rows = compactctl.replay(transcripts[0].messages, compactctl.settings_grid([8000, 16000], False, ["window"]))
    rows[0].cost, rows[1].cost  # no compaction, then each setting
"""

from __future__ import annotations

from compactctl.compact import Compaction, compact
from compactctl.formats import dump, load
from compactctl.replay import Setting, Trigger, replay, settings_grid
from compactctl.report import FileReport, Measure, measure
from compactctl.tokens import TokenCounter
from compactctl.transcript import Message, Violation, find_violation, is_valid

__all__ = [
    "Compaction",
    "FileReport",
    "Measure",
    "Message",
    "Setting",
    "TokenCounter",
    "Trigger",
    "Violation",
    "compact",
    "dump",
    "find_violation",
    "is_valid",
    "load",
    "measure",
    "replay",
    "settings_grid",
]
__version__ = "0.1.0"
