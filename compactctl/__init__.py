"""compactctl: compact saved LLM conversation and agent transcripts.

The library API is plain functions on lists of message dicts; after the input (the messages,
the steps and their settings), every option is a keyword::

    import compactctl
    fmt, transcripts = compactctl.load(open("chat.jsonl", "rb").read())
    result = compactctl.compact(transcripts[0].messages, ["trim-tools", "window"], {"keep_recent": 8})
    result.messages  # a new list; the input is not mutated
    rows = compactctl.replay.replay(transcripts[0].messages, compactctl.settings_grid([8000, 16000], False, ["window"]))
    rows[0].cost, rows[1].cost  # no compaction, then each setting
    pruned = compactctl.prune(transcripts[0].messages, mode="drop")
    pruned.messages, pruned.fates  # what was elided, removed or restored, and why
    figures = compactctl.report(transcripts[0].messages, result.messages, facts=["CMD-48213"])
    figures.reduction, figures.facts_missing, figures.valid_after

Bad input is ``compactctl.InputError`` (a ``ValueError`` too) whatever its shape, with
``.path``, ``.line`` and the message naming the field (``odd.jsonl:6: message.model is a
list, expected a string``); a summarizer that failed after its retries is
``compactctl.SummarizerError``; both are ``compactctl.CompactctlError``. Nothing else is
raised for an input: anything else is a bug.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from compactctl import replay
    from compactctl.compaction import Compaction, compact
    from compactctl.errors import CompactctlError, InputError, SummarizerError
    from compactctl.formats import dump, load
    from compactctl.replay import Scenario, Trigger, settings_grid
    from compactctl.reporting import FileReport, Measure, measure
    from compactctl.strategies.base import Fate, StepResult
    from compactctl.tokens import TokenCounter
    from compactctl.transcript import Message, Violation, find_violation, is_valid

# Nothing is imported until it is used: ``import compactctl`` (and every command, which imports
# it first) costs what the package's own names cost, not the strategies, formats and replay.
_LAZY = {
    "CompactctlError": "compactctl.errors",
    "InputError": "compactctl.errors",
    "SummarizerError": "compactctl.errors",
    "Compaction": "compactctl.compaction",
    "compact": "compactctl.compaction",
    "dump": "compactctl.formats",
    "load": "compactctl.formats",
    "Scenario": "compactctl.replay",
    "Trigger": "compactctl.replay",
    "settings_grid": "compactctl.replay",
    "FileReport": "compactctl.reporting",
    "Measure": "compactctl.reporting",
    "measure": "compactctl.reporting",
    "file_report": "compactctl.reporting",
    "PruneOptions": "compactctl.strategies.settings",
    "counter_for": "compactctl.tokens",
    "Fate": "compactctl.strategies.base",
    "StepContext": "compactctl.strategies.base",
    "StepResult": "compactctl.strategies.base",
    "TokenCounter": "compactctl.tokens",
    "Message": "compactctl.transcript",
    "Violation": "compactctl.transcript",
    "find_violation": "compactctl.transcript",
    "is_valid": "compactctl.transcript",
}


def __getattr__(name: str) -> Any:
    if name == "replay":
        return import_module("compactctl.replay")
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'compactctl' has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value  # looked up once
    return value


__all__ = [
    "CompactctlError",
    "Compaction",
    "Fate",
    "FileReport",
    "InputError",
    "Measure",
    "Message",
    "Scenario",
    "StepResult",
    "SummarizerError",
    "TokenCounter",
    "Trigger",
    "Violation",
    "compact",
    "dump",
    "find_violation",
    "is_valid",
    "load",
    "measure",
    "prune",
    "replay",
    "report",
    "settings_grid",
]
__version__ = "0.1.0"


def prune(messages: list[Message], *, mode: str = "stub", require: tuple[str, ...] = ()) -> StepResult:
    """The deterministic prune step on a list of message dicts (the input is not mutated).

    Returns a StepResult: ``messages`` (the new list), ``origins`` (the input index of each
    output message) and ``fates`` (input index -> what became of it and why).
    """
    from compactctl.strategies.base import StepContext
    from compactctl.strategies.prune import prune as _prune
    from compactctl.strategies.settings import PruneOptions
    from compactctl.tokens import TokenCounter

    # The prune step counts no tokens, so the cheap estimate spares loading an encoding.
    return _prune(messages, PruneOptions(mode, tuple(require)), StepContext(TokenCounter("approx")))


def report(
    before: list[Message],
    after: list[Message] | None = None,
    *,
    facts: list[str] | tuple[str, ...] = (),
    encoding: str = "cl100k_base",
) -> FileReport:
    """The report's figures for a list of message dicts, or a before/after pair of lists.

    ``facts`` must still be present in ``after`` (the messages' own ``compactctl.facts``
    annotations are checked too), matched case- and whitespace-folded; a fact ``before``
    does not hold is listed in ``facts_absent_before``, not as missing.
    """
    from compactctl.facts import declared_facts
    from compactctl.reporting import file_report, measure
    from compactctl.tokens import counter_for

    counter = counter_for(encoding)
    wanted = declared_facts(before, facts)
    measured = measure([("", before)], counter, wanted)
    compared = measure([("", after)], counter, wanted) if after is not None else None
    return file_report("<messages>", "chat", measured, compared, facts)
