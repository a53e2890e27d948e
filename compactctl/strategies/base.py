"""What every strategy takes and returns.

A strategy is a pure function ``(messages, options, context) -> StepResult``: it
never mutates its input, and says where each output message came from
(``origins``) and what became of each input message it did not keep as it was
(``fates``), so steps compose and a manifest can say what a compaction did.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from compactctl.tokens import TokenCounter
from compactctl.transcript import Message
from compactctl.usage import SummarizerUsage

if TYPE_CHECKING:
    from compactctl.summarizers import Summarizer

Action = Literal["kept", "elided", "removed", "summarized", "restored"]


@dataclass(frozen=True)
class Fate:
    action: Action
    reason: str = ""


@dataclass(frozen=True)
class StepContext:
    counter: TokenCounter
    summarizer: Summarizer | None = None


@dataclass(frozen=True)
class StepResult:
    messages: list[Message]
    origins: list[int | None]  # per output message: the input index it came from; None if new
    fates: dict[int, Fate] = field(default_factory=dict)  # input index -> what became of it
    notes: tuple[str, ...] = ()
    usage: SummarizerUsage = SummarizerUsage()


@dataclass(frozen=True)
class Strategy:
    name: str
    run: Callable[[list[Message], Any, StepContext], StepResult]
    options: type
    summary: str  # one line for --help


def options_from(options_type: type, settings: Mapping[str, Any]) -> Any:
    """Build a strategy's frozen options from flat settings, taking only the fields it has."""
    names = {f.name for f in dataclasses.fields(options_type)}
    return options_type(**{key: value for key, value in settings.items() if key in names and value is not None})


def unchanged(messages: list[Message], notes: tuple[str, ...] = (), usage: SummarizerUsage | None = None) -> StepResult:
    """Every message kept as it was (with what the step has to say, and what it spent finding out)."""
    return StepResult(list(messages), list(range(len(messages))), notes=notes, usage=usage or SummarizerUsage())


def keep_indices(messages: list[Message], keep: list[int], fates: dict[int, Fate]) -> StepResult:
    """Keep the messages at ``keep`` (in order) as they are; the others take their ``fates``."""
    return StepResult([messages[i] for i in keep], list(keep), fates)
