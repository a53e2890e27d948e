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

from collections.abc import Callable, Iterable, Sequence
from typing import TypeVar

from compactctl.reporting import Measure, MeasureSum
from compactctl.strategies import STRATEGIES, StepContext, StrategyOptions
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
    strategies: StrategyOptions,
    counter: TokenCounter,
    facts: Sequence[str],
    write: Callable[[Message, Tag | None], object],
) -> tuple[Measure, Measure]:
    """Compact the messages ``walk`` gives (with a tag each, e.g. the line read), calling ``write``
    for each output message in order, with its input's tag when it is that message unchanged.

    ``facts`` are the ones declared in the messages (``facts.declared_facts``, with the run's
    required ones). Returns the input and the output measured as ``measure`` would measure
    them. The same messages, steps and options give what ``compaction.compact`` gives,
    message for message. The messages are walked twice (once more per extra prune round).
    """
    if not walkable(steps):
        raise ValueError(f"these steps are not run on a walked transcript: {', '.join(steps)}")
    context = StepContext(counter)
    plan = None
    if steps[0] == "prune":
        from compactctl.strategies.prune import prune_plan  # here: a run that prunes nothing never loads it

        plan = prune_plan(
            lambda: (message for message, _ in walk()), strategies.of("prune"), reasons=False, facts=facts
        )
    per_message = [(STRATEGIES[name], strategies.of(name)) for name in steps if name != "prune"]
    before, after = MeasureSum(counter, facts), MeasureSum(counter, facts)
    before.start_transcript()
    after.start_transcript()
    origins, at = (plan.origins if plan is not None else None), 0
    for index, (message, tag) in enumerate(walk()):
        before.feed(message)
        if plan is not None and origins is not None:
            if at == len(origins) or origins[at] != index:
                continue  # pruned away
            at += 1
        out = plan.edited(index, message) if plan is not None else message
        for strategy, step_options in per_message:
            out = strategy.run([out], step_options, context).messages[0]
        write(out, tag if out is message else None)
        after.feed(out)
    before.end_transcript()
    after.end_transcript()
    return before.result(), after.result()
