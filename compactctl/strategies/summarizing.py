"""What the summarizing strategies share: which messages may be summarized, the summary
message, and chunking so that no summarizer request is larger than its limit.

Rules every summarizing strategy keeps:

- cuts are made between tool units, so the kept tail never starts inside a tool-call pair
  and a summarized call never leaves its result behind (or the reverse);
- system/developer messages, pinned and fact-bearing messages stay verbatim, with their unit;
- the summary is one new message (origin None) placed after the leading system messages;
- a compaction that is still over its threshold says so in ``notes`` and stops there.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from compactctl.errors import InputError
from compactctl.facts import keep_fact_units
from compactctl.strategies.base import Fate, StepContext, StepResult, unchanged
from compactctl.strategies.settings import SUMMARY_ROLES
from compactctl.summarizers import PromptedSummarizer, Summarizer, SummaryRequest
from compactctl.summarizers.render import render_message
from compactctl.tokens import TokenCounter
from compactctl.transcript import Message, is_pinned, is_protected, tool_units, unit_start
from compactctl.usage import SummarizerUsage

ALWAYS_KEPT_ROLES = frozenset({"system", "developer"})
SUMMARY_HEADER = "[compactctl summary of {count} earlier messages]"
_SUMMARY_HEADER = re.compile(r"\[compactctl summary of (\d+) earlier messages\]\n\n")
# A model request's own framing beside the prompt and the data: two messages' overhead and
# the <transcript> / <previous_summary> fences.
REQUEST_FRAMING = 32


def summarizer_of(context: StepContext) -> Summarizer:
    """The summarizer the caller gave, or the offline extractive one."""
    if context.summarizer is not None:
        return context.summarizer
    from compactctl.summarizers.extractive import ExtractiveSummarizer

    return ExtractiveSummarizer(context.counter)


def summary_message(text: str, count: int, role: str) -> Message:
    return {"role": role, "content": SUMMARY_HEADER.format(count=count) + "\n\n" + text}


def earlier_summary(message: Message) -> tuple[str, int] | None:
    """The text and message count of a summary an earlier compaction wrote, else None.

    Compacting again folds it into the new summary: kept as a system message, summaries
    would pile up, one per compaction, and the context would never shrink.
    """
    content = message.get("content")
    # A system summary comes back as a developer message from formats that have no system role (Codex).
    if message.get("role") in (*SUMMARY_ROLES, "developer") and isinstance(content, str) and not is_protected(message):
        match = _SUMMARY_HEADER.match(content)
        if match:
            return content[match.end() :], int(match.group(1))
    return None


def unit_kept(messages: list[Message], unit: range) -> bool:
    """A unit is never summarized when it holds a system or pinned message."""
    return any(
        (messages[i].get("role") in ALWAYS_KEPT_ROLES and earlier_summary(messages[i]) is None)
        or is_pinned(messages[i])
        for i in unit
    )


def units_kept(messages: list[Message], units: list[range], kept: list[bool]) -> list[bool]:
    """Per unit, whether it stays verbatim: ``kept`` ones, and the one copy of each fact they lack.

    A fact-bearing message is not summarized when it is the fact's last copy; when a kept
    message (the tail, a system prompt) already holds the fact, it may be.
    """
    kept = list(kept)
    keep_fact_units(messages, units, kept)
    return kept


def tail_start_for(messages: list[Message], keep_recent: int) -> int:
    """Where the last ``keep_recent`` messages start, moved back to the start of a tool unit."""
    if keep_recent <= 0:
        return len(messages)
    return unit_start(messages, max(0, len(messages) - keep_recent))


@dataclass(frozen=True)
class Spoken:
    """The result of summarizing a span: the text and what the calls cost."""

    text: str
    usage: SummarizerUsage


def summarize_span(
    span: list[Message],
    strategy: str,
    max_tokens: int,
    input_max_tokens: int,
    context: StepContext,
    previous: str | None = None,
) -> Spoken:
    """Summarize ``span`` in requests of at most ``input_max_tokens`` tokens of text to summarize.

    A span too large for one request is cut into chunks, each summarized, and the chunk
    summaries are then merged the same way, until one summary is left. The limit is for the
    whole request: a model summarizer's prompt and the request's framing are taken off it
    first, and the rest holds the rendered transcript and any previous summary.
    """
    summarizer = summarizer_of(context)
    overhead = 0
    if isinstance(summarizer, PromptedSummarizer):
        overhead = context.counter(summarizer.prompt_text(strategy, max_tokens)) + REQUEST_FRAMING
    if input_max_tokens - overhead < 3 * (max_tokens + 64):
        # Merging must make progress: a request has to hold at least two chunk summaries.
        prompt = f" + the prompt and framing ({overhead})" if overhead else ""
        raise InputError(
            f"--summary-input-max-tokens ({input_max_tokens}) must be at least 3 x (--summary-max-tokens + 64)"
            f"{prompt} = {3 * (max_tokens + 64) + overhead}"
        )
    input_max_tokens -= overhead
    usage = SummarizerUsage()
    level: list[Message] = span
    first_previous = previous
    while True:
        chunks = chunk(level, input_max_tokens, context.counter, context.counter(first_previous or ""))
        texts: list[str] = []
        for number, piece in enumerate(chunks):
            summary = summarizer.summarize(
                SummaryRequest(piece, strategy, max_tokens, first_previous if number == 0 else None)
            )
            usage = usage + summary.usage
            texts.append(summary.text)
        if len(texts) == 1:
            return Spoken(texts[0], usage)
        # The previous summary went into the first chunk's summary, which is merged now.
        first_previous = None
        level = [
            {"role": "system", "content": f"Summary of part {i} of {len(texts)}:\n{text}"}
            for i, text in enumerate(texts, 1)
        ]


def chunk(messages: list[Message], limit: int, counter: TokenCounter, reserved: int = 0) -> list[list[Message]]:
    """Consecutive chunks whose rendered text fits in ``limit`` tokens (the first also holds ``reserved``).

    A message larger than a chunk is cut into pieces by lines, or by characters for long lines.
    """
    chunks: list[list[Message]] = [[]]
    used = reserved
    for message in messages:
        for piece in _pieces(message, limit - 16, counter):
            cost = counter(render_message(piece, 9999)) + 2
            if chunks[-1] and used + cost > limit:
                chunks.append([])
                used = 0
            chunks[-1].append(piece)
            used += cost
    return [c for c in chunks if c] or [[]]


def _pieces(message: Message, limit: int, counter: TokenCounter) -> list[Message]:
    if counter(render_message(message, 9999)) <= limit:
        return [message]
    role = message.get("role")
    pieces = split_text(render_message(message), limit - 16, counter)
    total = len(pieces)
    return [
        {"role": role if role != "tool" else "user", "content": f"(part {i} of {total} of one message)\n{piece}"}
        for i, piece in enumerate(pieces, 1)
    ]


def split_text(text: str, limit: int, counter: TokenCounter) -> list[str]:
    """Cut text into pieces of at most ``limit`` tokens, at line ends where lines allow."""
    pieces: list[str] = []
    current = ""
    for line in text.splitlines(keepends=True):
        while counter(line) > limit:
            # One line larger than a piece: cut it by characters, shrinking until the head fits.
            cut = max(1, len(line) * limit // counter(line))
            while cut > 1 and counter(line[:cut]) > limit:
                cut = cut * 9 // 10
            if current:
                pieces.append(current)
                current = ""
            pieces.append(line[:cut])
            line = line[cut:]
        if current and counter(current + line) > limit:
            pieces.append(current)
            current = ""
        current += line
    if current:
        pieces.append(current)
    return pieces


def summarize_units(
    messages: list[Message],
    tail_start: int,
    *,
    strategy: str,
    max_tokens: int,
    input_max_tokens: int,
    role: str,
    context: StepContext,
    keep_in_place: Callable[[list[Message], range], bool] = lambda messages, unit: False,
    shown: Callable[[int, Message], Message] | None = None,
) -> tuple[StepResult, int]:
    """Summarize every unit before ``tail_start`` that is not kept, into one message after the system ones.

    Kept units (system, protected, or ``keep_in_place``) stay verbatim in their place. ``shown``
    lets a strategy give the summarizer another view of a message (a trimmed tool output).
    Returns the result and how many messages were summarized (0: nothing changed).
    """
    summarized: list[int] = []
    kept: list[int] = []
    units = tool_units(messages)
    stays = units_kept(
        messages,
        units,
        [unit.start >= tail_start or unit_kept(messages, unit) or keep_in_place(messages, unit) for unit in units],
    )
    for unit, verbatim in zip(units, stays, strict=True):
        (kept if verbatim else summarized).extend(unit)
    earlier = {i: found for i in summarized if (found := earlier_summary(messages[i]))}
    new = [i for i in summarized if i not in earlier]
    if not new:
        return unchanged(messages), 0
    span = [shown(i, messages[i]) if shown else messages[i] for i in new]
    previous = "\n\n".join(text for text, _ in earlier.values()) or None
    spoken = summarize_span(span, strategy, max_tokens, input_max_tokens, context, previous)
    count = len(new) + sum(count for _, count in earlier.values())
    summary = summary_message(spoken.text, count, role)
    replaced = sum(context.counter.message(messages[i]) for i in summarized)
    size = context.counter.message(summary)
    if size >= replaced:
        # A summary no smaller than what it replaces saves nothing: keep the messages.
        note = f"{strategy}: a summary ({size:,} tokens) would not be smaller than the {replaced:,} it replaces"
        return unchanged(messages, (note,), spoken.usage), 0
    at = next((n for n, i in enumerate(kept) if messages[i].get("role") not in ALWAYS_KEPT_ROLES), len(kept))
    out = [messages[i] for i in kept]
    origins: list[int | None] = list(kept)
    out.insert(at, summary)
    origins.insert(at, None)
    fates = {i: Fate("summarized", f"{strategy}: folded into the summary") for i in new}
    fates.update({i: Fate("summarized", f"{strategy}: earlier summary folded into the new one") for i in earlier})
    return StepResult(out, origins, fates, usage=spoken.usage), len(summarized)


def over_note(strategy: str, tokens: int, threshold: int) -> str:
    return (
        f"{strategy}: still {tokens:,} tokens after compaction, over the threshold of {threshold:,}"
        " (kept messages are too large: lower --keep-recent / --keep-turns, or trim tools first)"
    )


def noted_if_over(result: StepResult, strategy: str, threshold: int, context: StepContext) -> StepResult:
    """The result, with a note when it is still over the threshold: said once, never looped on."""
    after = context.counter.messages(result.messages)
    if after <= threshold:
        return result
    note = over_note(strategy, after, threshold)
    return StepResult(result.messages, result.origins, result.fates, (*result.notes, note), result.usage)
