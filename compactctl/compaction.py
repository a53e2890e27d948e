"""Run strategy steps in order and keep track of what became of every input message."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from compactctl import jsonbytes
from compactctl.digests import sha256
from compactctl.errors import InputError
from compactctl.strategies import STRATEGIES, ClientView, Fate, StepContext, StrategyOptions
from compactctl.summarizers import Summarizer
from compactctl.tokens import TokenCounter, counter_for
from compactctl.transcript import Message
from compactctl.usage import SummarizerUsage


@dataclass(frozen=True)
class ManifestEntry:
    """What became of one input message, for the manifest."""

    index: int
    role: str
    action: str
    reason: str
    sha256: str


@dataclass(frozen=True)
class Compaction:
    """The compacted messages, where each came from, the manifest, notes and summarizer usage."""

    messages: list[Message]
    origins: list[int | None]  # per output message: the input index it came from; None if new
    manifest: list[ManifestEntry]
    notes: tuple[str, ...]
    usage: SummarizerUsage


def message_hash(message: Message) -> str:
    return sha256(jsonbytes.dumps(message, sort_keys=True)).hexdigest()


def check_steps(steps: Sequence[str]) -> None:
    for name in steps:
        if name not in STRATEGIES:
            raise InputError(f"unknown strategy {name!r} (known: {', '.join(STRATEGIES)})")


def compact(
    messages: list[Message],
    steps: Sequence[str],
    options: StrategyOptions | Mapping[str, Any] | None = None,
    *,
    counter: TokenCounter | None = None,
    summarizer: Summarizer | None = None,
    client: ClientView | None = None,
    hashed: bool = True,
) -> Compaction:
    """Apply ``steps`` (strategy names) in order, each with its options from ``options``: built ones, or
    flat values (``{"keep_recent": 8}``) each strategy takes the fields it has from. ``client`` is how
    the output's client sees the result on resume, for the steps' own checks (``ClientView``). Without
    ``hashed`` the manifest's ``sha256`` is left empty: a caller that writes no manifest spares hashing
    every message (the whole input serialized with sorted keys)."""
    check_steps(steps)
    strategies = options if isinstance(options, StrategyOptions) else StrategyOptions.from_values(options)
    context = StepContext(counter or counter_for(), summarizer, client or ClientView())
    current = list(messages)
    origin: list[int | None] = list(range(len(messages)))
    fates: dict[int, Fate] = {}
    notes: list[str] = []
    usage = SummarizerUsage()
    for name in steps:
        strategy = STRATEGIES[name]
        result = strategy.run(current, strategies.of(name), context)
        for index, fate in result.fates.items():
            original = origin[index]
            if original is not None:
                fates[original] = fate
        origin = [origin[i] if i is not None else None for i in result.origins]
        current = result.messages
        notes.extend(result.notes)
        usage = usage + result.usage
    present = {i for i in origin if i is not None}
    manifest = [
        ManifestEntry(
            index,
            str(message.get("role")),
            *_final_fate(fates.get(index), index in present),
            message_hash(message) if hashed else "",
        )
        for index, message in enumerate(messages)
    ]
    return Compaction(current, origin, manifest, tuple(dict.fromkeys(notes)), usage)


def _final_fate(fate: Fate | None, present: bool) -> tuple[str, str]:
    if fate is not None:
        return fate.action, fate.reason
    return ("kept", "") if present else ("removed", "")
