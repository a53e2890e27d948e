"""Compaction of one transcript that is walked, not held: what ``compact`` does, in bounded memory.

A chat file is one transcript, so "one transcript at a time" is the whole file: a 300 MB
file held as message dicts costs ten times that. ``prune`` needs only a little of each
message (``strategies.prune.PrunePlan``), and the steps that may follow it here change
each message on its own (``trim-tools``), so the messages are read again as often as
needed, the output comes one message at a time, and memory is bounded by what is kept
per message and by the largest message, not by the file.

Steps that need a span's text or the whole history at once (the summarizers, ``window``,
``mask-observations``, ...) are not walked: ``walkable`` says no and the caller holds the
transcript as before.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any, TypeVar

from compactctl.reporting import Measure, measure
from compactctl.strategies import STRATEGIES, StepContext, options_from
from compactctl.strategies.prune import PruneOptions, PrunePlan, prune_plan
from compactctl.tokens import TokenCounter
from compactctl.transcript import Message

Tag = TypeVar("Tag")

# Steps whose output message depends on its input message alone (run on each message by itself).
PER_MESSAGE = frozenset({"trim-tools"})


def walkable(steps: Sequence[str]) -> bool:
    """``prune`` (first, if at all) then only per-message steps: what ``compact_walked`` runs."""
    rest = steps[1:] if steps and steps[0] == "prune" else steps
    return bool(steps) and all(step in PER_MESSAGE for step in rest)


def compact_walked(
    walk: Callable[[], Iterable[tuple[Message, Tag]]],
    steps: Sequence[str],
    settings: Mapping[str, Any],
    counter: TokenCounter,
    facts: Sequence[str],
    write: Callable[[Message, Tag | None], object],
) -> Measure:
    """Compact the messages ``walk`` gives (with a tag each, e.g. the line read), calling ``write``
    for each output message in order, with its input's tag when it is that message unchanged.

    Returns the output measured as ``measure`` would measure it, looking for ``facts``. The same
    messages, steps and settings give what ``compaction.compact`` gives, message for message.
    """
    if not walkable(steps):
        raise ValueError(f"these steps are not run on a walked transcript: {', '.join(steps)}")
    context = StepContext(counter)
    plan = None
    if steps[0] == "prune":
        options = options_from(PruneOptions, settings)
        plan = prune_plan(lambda: (message for message, _ in walk()), options, reasons=False)
    per_message = [
        (STRATEGIES[name], options_from(STRATEGIES[name].options, settings)) for name in steps if name != "prune"
    ]

    def output() -> Iterator[Message]:
        items = walk()
        for _, message, tag in _kept(plan, items):
            out = message
            for strategy, options in per_message:
                out = strategy.run([out], options, context).messages[0]
            write(out, tag if out is message else None)
            yield out

    return measure([("", output())], counter, facts)


def _kept(plan: PrunePlan | None, items: Iterable[tuple[Message, Tag]]) -> Iterator[tuple[int, Message, Tag | None]]:
    """(index, message as the plan leaves it, the tag when unchanged) for the items the plan keeps."""
    if plan is None:
        for index, (message, tag) in enumerate(items):
            yield index, message, tag
        return
    for index, out, (original, tag) in plan.walked((message, (message, tag)) for message, tag in items):
        yield index, out, tag if out is original else None
