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
    """What became of one input message (kept, elided, removed, restored...) and why."""

    action: Action
    reason: str = ""


def _not_owned(message: Message) -> bool:
    return False


def _as_is(message: Message) -> Message:
    return message


@dataclass(frozen=True)
class ClientView:
    """What the producer's client makes of a compaction when it resumes the written file, so that a
    step's own "did it shrink" check judges by the measure ``report`` uses (``model_input`` on what
    the writer writes), not by the messages in memory.

    ``owned``: the client's own context (Codex's initial context: permissions, AGENTS.md,
    environment), which it writes again on resume or needs as it wrote it; a summary never folds
    it, or the saving would be counted once and the text sent again anyway. ``summary``: a new
    summary message as the output's writer writes it (Codex's and Claude Code's put their own
    summary preamble before the text).
    """

    owned: Callable[[Message], bool] = _not_owned
    summary: Callable[[Message], Message] = _as_is

    @property
    def owns_any(self) -> bool:
        """Whether the client may own some message at all (most clients own none)."""
        return self.owned is not _not_owned


@dataclass(frozen=True)
class StepContext:
    """What a step is given besides its messages and options: the token counter, the summarizer."""

    counter: TokenCounter
    summarizer: Summarizer | None = None
    client: ClientView = ClientView()


@dataclass(frozen=True)
class StepResult:
    """A step's output messages, where each came from, and what became of each input message."""

    messages: list[Message]
    origins: list[int | None]  # per output message: the input index it came from; None if new
    fates: dict[int, Fate] = field(default_factory=dict)  # input index -> what became of it
    notes: tuple[str, ...] = ()
    usage: SummarizerUsage = SummarizerUsage()


@dataclass(frozen=True)
class Strategy:
    """A registered strategy: its name, its function, its options dataclass, its line in --help."""

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


def keep_opening_request(messages: list[Message], units: list[range], kept: list[bool]) -> None:
    """Where the kept units would open on the model's turn (or hold no turn), keep the latest user message before them.

    The Anthropic Messages API rejects a conversation whose first message is not the user's
    ("first message must use the user role") or that has none; that message is the request
    the kept turns answer.
    """
    opening = ("system", "developer")
    first = next(
        (n for n, unit in enumerate(units) if kept[n] and messages[unit.start].get("role") not in opening), None
    )
    if first is not None and messages[units[first].start].get("role") != "assistant":
        return
    before = len(units) if first is None else first  # nothing kept but system: the conversation needs a turn
    request = next((n for n in range(before - 1, -1, -1) if messages[units[n].start].get("role") == "user"), None)
    if request is not None:
        kept[request] = True
