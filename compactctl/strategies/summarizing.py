"""What the summarizing strategies share: which messages may be summarized, the summary
message, and chunking so that no summarizer request is larger than its limit.

Rules every summarizing strategy keeps:

- cuts are made between tool units, so the kept tail never starts inside a tool-call pair
  and a summarized call never leaves its result behind (or the reverse);
- system/developer messages, pinned and fact-bearing messages stay verbatim, with their unit;
- the summary is one new message (origin None) placed after the leading system messages;
- a compaction that is still over its threshold says so in ``notes`` and stops there;
- the latest request the user wrote survives verbatim, in the summary or the kept tail: a
  summary that dropped it gets it appended (``with_latest_request``), whatever wrote the summary.

How large a summary may be scales with what it replaces (``summary_budget``): the producers
keep 3-13 % of a span (Claude Code's and Codex's own summaries); a fixed bound starves the
sections on a long span and wastes room on a short one.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from compactctl import lazyre
from compactctl.errors import InputError
from compactctl.facts import fold, keep_fact_units
from compactctl.strategies.base import Fate, StepContext, StepResult, keep_opening_request, unchanged
from compactctl.strategies.settings import SUMMARY_ROLES
from compactctl.summarizers import ContextExceeded, PromptedSummarizer, Summarizer, SummaryRequest
from compactctl.summarizers.redact import redacted_text
from compactctl.summarizers.render import render_message
from compactctl.summarizers.writings import constraints_written, latest_request, writings
from compactctl.tokens import TokenCounter
from compactctl.transcript import Message, is_pinned, is_protected, tool_units, unit_start
from compactctl.usage import SummarizerUsage

ALWAYS_KEPT_ROLES = frozenset({"system", "developer"})
SUMMARY_HEADER = "[compactctl summary of {count} earlier messages]"
_SUMMARY_HEADER = lazyre.compile(r"\[compactctl summary of (\d+) earlier messages\]\n\n")
# Below this a summary cannot hold its sections; --summary-max-tokens lower than it wins.
MIN_SUMMARY_TOKENS = 600
LATEST_REQUEST_HEADING = "## Latest user request (verbatim)"
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


_SUMMARY_READ_ROLES = (*SUMMARY_ROLES, "developer")  # a tuple: a role that is not a string is compared, not hashed


def earlier_summary(message: Message) -> tuple[str, int] | None:
    """The text and message count of a summary an earlier compaction wrote, else None.

    Compacting again folds it into the new summary: kept as a system message, summaries
    would pile up, one per compaction, and the context would never shrink.
    """
    content = message.get("content")
    # A system summary comes back as a developer message from formats that have no system role (Codex).
    if message.get("role") in _SUMMARY_READ_ROLES and isinstance(content, str) and not is_protected(message):
        match = _SUMMARY_HEADER.match(content)
        if match:
            return content[match.end() :], int(match.group(1))
    return None


def unit_kept(messages: list[Message], unit: range, owned: Callable[[Message], bool]) -> bool:
    """A unit is never summarized when it holds a system or pinned message, or one of the client's
    own context (``ClientView.owned``: Codex writes its initial context again on resume)."""
    return any(
        (messages[i].get("role") in ALWAYS_KEPT_ROLES and earlier_summary(messages[i]) is None)
        or is_pinned(messages[i])
        or owned(messages[i])
        for i in unit
    )


def summary_at(messages: list[Message], kept: list[int], owned: Callable[[Message], bool]) -> int:
    """Where among the ``kept`` messages the summary goes: after the leading system messages and the
    client's own context, where the client puts that context back on resume."""
    return next(
        (n for n, i in enumerate(kept) if messages[i].get("role") not in ALWAYS_KEPT_ROLES and not owned(messages[i])),
        len(kept),
    )


def not_smaller(strategy: str, summary: Message, replaced: int, context: StepContext) -> str | None:
    """Why ``summary`` saves nothing over the ``replaced`` tokens it would fold, or None if it does.

    Counted as the output's writer writes it (Codex and Claude Code put their summary preamble
    first): what the resuming client is sent, as ``report`` counts the written file.
    """
    size = context.counter.message(context.client.summary(summary))
    if size < replaced:
        return None
    return f"{strategy}: a summary ({size:,} tokens) would not be smaller than the {replaced:,} it replaces"


def summary_budget(span_tokens: int, max_tokens: int, ratio: float, quoted: int = 0) -> int:
    """The summary's bound for a span: ``ratio`` of it, at least ``MIN_SUMMARY_TOKENS``, plus the
    ``quoted`` tokens of the latest request it must carry whole, at most ``max_tokens``.

    A ratio of 0 keeps the fixed bound ``max_tokens``.
    """
    if ratio <= 0:
        return max_tokens
    return min(max_tokens, max(MIN_SUMMARY_TOKENS, round(ratio * span_tokens)) + quoted)


def with_latest_request(text: str, messages: list[Message], summarized: set[int]) -> str:
    """The summary, with the user's latest request appended verbatim if it was summarized and the summary lost it."""
    return _with_request(text, latest_request(messages), summarized)


def _with_request(text: str, latest: tuple[int, str] | None, summarized: set[int]) -> str:
    """``with_latest_request`` of the messages whose ``latest_request`` is ``latest``."""
    if latest is None or latest[0] not in summarized or fold(latest[1]) in fold(text):
        return text
    return f"{text}\n\n{LATEST_REQUEST_HEADING}\n{latest[1]}"


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
    """Summarize ``span`` in requests of at most ``input_max_tokens`` tokens each.

    One request when the span fits. Otherwise the span is cut into chunks, in order, and each
    chunk is summarized together with the running summary of the chunks before it (as Claude
    Code and Codex fold a long history), so the last chunk, the current state, is summarized
    knowing everything earlier. The limit is for the whole request: the summarizer's prompt and
    framing (``overhead_tokens``, else ``prompt_text``) and the running summary come off it first.
    """
    summarizer = summarizer_of(context)
    if not getattr(summarizer, "input_limited", True):
        # No model window to fit (the extractive summarizer): the whole span in one request.
        summary = summarizer.summarize(SummaryRequest(span, strategy, max_tokens, previous))
        return Spoken(summary.text, summary.usage)
    # Secrets go before the span is cut: a chunk starting inside a key has no BEGIN line left to match.
    redact_span = getattr(summarizer, "redact_span", None)
    if redact_span is not None:
        span, previous = redact_span(span, previous)
    for attempt in range(WINDOW_RETRIES + 1):
        limit = _fitted(summarizer, input_max_tokens, max_tokens)
        try:
            return _in_chunks(span, strategy, max_tokens, limit, input_max_tokens, context, previous)
        except ContextExceeded:
            if attempt == WINDOW_RETRIES:
                raise
            # The summarizer learned the server's window from its refusal: cut to that and ask again.
    raise AssertionError("unreachable")


# How often a span is cut again after a server refused a request as larger than its window.
WINDOW_RETRIES = 2


def _fitted(summarizer: Summarizer, input_max_tokens: int, max_tokens: int) -> int:
    """``--summary-input-max-tokens``, or less when the summarizer knows the server's window is smaller."""
    input_limit = getattr(summarizer, "input_limit", None)
    limit = input_limit(max_tokens) if input_limit is not None else None
    return input_max_tokens if limit is None else min(input_max_tokens, limit)


def _in_chunks(
    span: list[Message],
    strategy: str,
    max_tokens: int,
    input_max_tokens: int,
    asked: int,
    context: StepContext,
    previous: str | None,
) -> Spoken:
    summarizer = summarizer_of(context)
    overhead = _overhead(summarizer, strategy, max_tokens, context.counter)
    room = input_max_tokens - overhead
    if room < 3 * (max_tokens + 64):
        # Each chunk must hold the running summary and still leave room for new messages.
        prompt = f" + the prompt and framing ({overhead})" if overhead else ""
        needed = f"at least 3 x (`summary_max_tokens` + 64){prompt} = {3 * (max_tokens + 64) + overhead}"
        if input_max_tokens < asked:
            raise InputError(
                f"the server's context window leaves {input_max_tokens} tokens for a request and a summary needs "
                f"{needed}; lower `summary_max_tokens` or give the server a larger context"
            )
        raise InputError(f"`summary_input_max_tokens` ({input_max_tokens}) must be {needed}")
    reserved = max(context.counter(previous or ""), max_tokens)  # a later chunk carries the running summary
    chunks = chunk(span, room, context.counter, reserved) if context.counter(render_span(span)) > room else [span]
    usage = SummarizerUsage()
    running = previous
    for number, piece in enumerate(chunks, 1):
        request = SummaryRequest(piece, strategy, max_tokens, running, (number, len(chunks)), span)
        summary = summarizer.summarize(request)
        usage = usage + summary.usage
        running = summary.text
    return Spoken(running or "", usage)


def _overhead(summarizer: Summarizer, strategy: str, max_tokens: int, counter: TokenCounter) -> int:
    """What a request holds besides the messages and the running summary."""
    overhead_tokens = getattr(summarizer, "overhead_tokens", None)
    if overhead_tokens is not None:
        return int(overhead_tokens(strategy, max_tokens, counter)) + REQUEST_FRAMING
    if isinstance(summarizer, PromptedSummarizer):
        return counter(summarizer.prompt_text(strategy, max_tokens)) + REQUEST_FRAMING
    return 0


def render_span(messages: list[Message]) -> str:
    return "\n\n".join(render_message(message, number) for number, message in enumerate(messages, 1))


def chunk(messages: list[Message], limit: int, counter: TokenCounter, reserved: int = 0) -> list[list[Message]]:
    """Consecutive chunks whose rendered text fits in ``limit`` tokens beside ``reserved`` (the running summary).

    A message larger than a chunk is cut into pieces by lines, or by characters for long lines.
    """
    chunks: list[list[Message]] = [[]]
    used = reserved
    for message in messages:
        for piece in _pieces(message, limit - reserved - 16, counter):
            cost = counter(render_message(piece, 9999)) + 2
            if chunks[-1] and used + cost > limit:
                chunks.append([])
                used = reserved
            chunks[-1].append(piece)
            used += cost
    return [c for c in chunks if c] or [[]]


def _pieces(message: Message, limit: int, counter: TokenCounter) -> list[Message]:
    if counter(render_message(message, 9999)) <= limit:
        return [message]
    pieces = split_text(render_message(message), limit - 16, counter)
    total = len(pieces)
    # Each piece keeps the message's role and tags: a tool output cut in pieces is never shown as the user.
    kept = {k: v for k, v in message.items() if k not in ("content", "tool_calls")}
    return [{**kept, "content": f"(part {i} of {total} of one message)\n{piece}"} for i, piece in enumerate(pieces, 1)]


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
    ratio: float = 0.0,
    open_on_user: bool = False,
) -> tuple[StepResult, int]:
    """Summarize every unit before ``tail_start`` that is not kept, into one message after the system ones.

    Kept units (system, protected, or ``keep_in_place``) stay verbatim in their place. ``shown``
    lets a strategy give the summarizer another view of a message (a trimmed tool output).
    The summary's bound is ``summary_budget`` of the span (``ratio`` 0: ``max_tokens`` itself).
    With ``open_on_user`` (an output format whose API wants the user first), a summary that is
    not the user's keeps the latest user request verbatim where the tail would open on the model's turn.
    Returns the result and how many messages were summarized (0: nothing changed).
    """
    summarized: list[int] = []
    kept: list[int] = []
    # A latest request too large to quote in the summary (a pasted log) stays in place instead.
    latest_of_all = latest = latest_request(messages)
    in_place = latest[0] if latest is not None and context.counter(latest[1]) > max_tokens // 2 else -1
    units = tool_units(messages)
    stays = units_kept(
        messages,
        units,
        [
            unit.start >= tail_start
            or unit_kept(messages, unit, context.client.owned)
            or keep_in_place(messages, unit)
            or in_place in unit
            for unit in units
        ],
    )
    if open_on_user and role != "user":  # a user summary opens the conversation itself
        keep_opening_request(messages, units, stays)
    for unit, verbatim in zip(units, stays, strict=True):
        (kept if verbatim else summarized).extend(unit)
    earlier = {i: found for i in summarized if (found := earlier_summary(messages[i]))}
    new = [i for i in summarized if i not in earlier]
    if not new:
        return unchanged(messages), 0
    span = [shown(i, messages[i]) if shown else messages[i] for i in new]
    previous = "\n\n".join(text for text, _ in earlier.values()) or None
    # The user's own words are carried on top of the share of the span: the latest request whole
    # and every constraint sentence; what they weigh is bounded by what the user typed.
    written = writings(span)  # the span's latest request and constraints, read once
    latest = written[-1] if written else None
    quoted = context.counter(latest[1]) + 8 if latest is not None and ratio > 0 else 0
    quoted += sum(context.counter(sentence) + 3 for sentence in constraints_written(written)) if ratio > 0 else 0
    bound = summary_budget(context.counter.messages(span), max_tokens, ratio, quoted)
    spoken = summarize_span(span, strategy, bound, input_max_tokens, context, previous)
    count = len(new) + sum(count for _, count in earlier.values())
    text = _with_request(spoken.text, latest_of_all, set(new))  # ``messages`` are as they were
    if getattr(summarizer_of(context), "redacts", False):
        # The latest request is quoted from the input: it is redacted as the summary was.
        text = redacted_text(text)
    summary = summary_message(text, count, role)
    replaced = sum(context.counter.message(messages[i]) for i in summarized)
    if note := not_smaller(strategy, summary, replaced, context):  # it saves nothing: keep the messages
        return unchanged(messages, (note,), spoken.usage), 0
    at = summary_at(messages, kept, context.client.owned)
    out = [messages[i] for i in kept]
    origins: list[int | None] = list(kept)
    out.insert(at, summary)
    origins.insert(at, None)
    # One fate shared by every message it befell (frozen): a replay folds thousands of messages.
    fates = dict.fromkeys(new, Fate("summarized", f"{strategy}: folded into the summary"))
    fates.update(dict.fromkeys(earlier, Fate("summarized", f"{strategy}: earlier summary folded into the new one")))
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
