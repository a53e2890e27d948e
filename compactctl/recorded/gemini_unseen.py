"""Gemini CLI's compressions the one-document chat (0.4-0.38) shows nothing of, read from the recorded usage.

Up to 0.38 the client writes its chat as one document, rewritten whole, and its compression
(``ChatCompressionService.compress``: ``packages/core/src/services/chatCompressionService.ts`` at v0.20.2,
``context/chatCompressionService.ts`` at v0.38.2 in google-gemini/gemini-cli) changes only the history it sends:
the file keeps every record, no record says it compressed (0.39's JSON Lines write the new list as a ``$set``). The
client compresses when the last call's prompt (``getLastPromptTokenCount``) reaches ``model.compressionThreshold``
of the model's limit (0.5 by default; the setting is in no file) and sends, in place of the history before the split
``findCompressSplitPoint`` gives (the first user turn after 70 % of the history's characters), a user turn of the
summary and a model turn "Got it. Thanks for the additional context!", then the rest as it was.

What the file shows is the usage: between two calls of one run the prompt only grows (by the response re-sent, the
tool results, the next prompt); a compression makes it fall by the history folded less the summary. So a fall of at
least ``MIN_DROP_SHARE`` of the prompt (and ``MIN_DROP_TOKENS``) that the client's own split explains (the summary
it leaves, the next prompt less what the split keeps, is not negative) is read as a compression before that call:
its summary's size is that remainder, its calls estimated as the requests they were (``gemini.compression_estimate``:
0.26 added a second call checking the summary; a header's ``kind``, written from 0.31, says the release had it, and
a chat without one is read as one call: 0.26-0.30 are under-counted by the check). A resumed client loads the whole
file, the folded history with it: where a later prompt is back nearer the whole history than the summary's context,
the client was started again and sent it all (a ``load``: no call). Measured with the real 0.20.2 and 0.38.2 against
the loopback fake (tests/fakes/record_gemini_older.py): a fall of 14,717 to 6,740 (0.20.2: one summary call of 8,904
input served) and 16,490 to 8,508 (0.38.2: a summary and its check, 17,924), then a resume back at 14,873 and 16,632.
0.38's tool-output masking also cuts old tool results unrecorded (only past 80k tokens of them), with no call: a fall
the split does not explain is left as it is.
"""

from __future__ import annotations

import itertools
import json
from dataclasses import dataclass

from compactctl.recorded import RecordedCall, RecordedCompaction
from compactctl.transcript import Message

# A compression folds most of the history (70 % of its characters, past a threshold of half the model's window by
# default); a prompt that falls by less is something else (a resumed client's smaller start-up context: 531 tokens
# fewer for 0.61's ``-p``).
MIN_DROP_SHARE = 0.1
MIN_DROP_TOKENS = 1_000
# The model turn the client adds after the summary (``compress``: the same text from 0.4 to 0.38).
ACKNOWLEDGED = "Got it. Thanks for the additional context!"
PRESERVED_SHARE = 0.3  # ``COMPRESSION_PRESERVE_THRESHOLD``: the share of the history's characters kept as it was
RATIO_MIN_TEXT = 1_000  # the counted text the calls before must grow by to tell the tokenizer ratio, else 1


@dataclass(frozen=True)
class Unseen:
    """A compression the file holds nothing of: the compaction replay applies, and its summary's size."""

    compaction: RecordedCompaction
    folded: list[Message]
    summary_tokens: int


def split_point(history: list[Message]) -> int:
    """``findCompressSplitPoint(history, 0.7)``: the first user turn (no tool result) at or after 70 % of the
    history's characters; all of it where it ends on a model turn with no call; else the last user turn."""
    sizes = [len(json.dumps(m, default=str)) for m in history]
    target = sum(sizes) * (1 - PRESERVED_SHARE)
    last, total = 0, 0
    for n, message in enumerate(history):
        if message.get("role") == "user":
            if total >= target:
                return n
            last = n
        total += sizes[n]
    if history and history[-1].get("role") == "assistant" and not history[-1].get("tool_calls"):
        return len(history)
    return last


def unseen_compressions(
    messages: list[Message], calls: list[RecordedCall], recorded: list[RecordedCompaction]
) -> list[RecordedCompaction | Unseen]:
    """The compressions (``Unseen``) and the loads of the whole file after them (``RecordedCompaction``, trigger
    ``load``) the usage of ``calls`` shows, in order; none across a compaction the file records (``recorded``)."""
    from compactctl.tokens import counter_for

    counter = counter_for()
    at_call = {c.position: c for c in calls}

    def cost(message: Message, index: int | None = None) -> int:
        call = at_call.get(index) if index is not None else None
        if call is not None and call.usage is not None:  # a response goes back as its output, no thoughts
            return call.usage.output_tokens - call.usage.reasoning_tokens
        if "encrypted_chars" in message:
            return int(message["encrypted_chars"])
        return counter.message(message)

    costs = [cost(m, n) for n, m in enumerate(messages)]
    index_of = {id(m): n for n, m in enumerate(messages)}
    billed = [(n, c) for n, c in enumerate(calls) if c.usage is not None and not c.copied]
    ratio = _ratio(billed, costs)
    starts = {c.before_call for c in recorded}
    acknowledged: Message = {"role": "assistant", "content": ACKNOWLEDGED}
    found: list[RecordedCompaction | Unseen] = []
    # The context the client sent since a compression, up to the last call's response; None: the whole history.
    sent: list[Message] | None = None
    gap = 0.0  # how much smaller that context is than the whole history, in API tokens
    for (k, before), (n, after) in itertools.pairwise(billed):
        if n in starts or n != k + 1:
            sent, gap = None, 0.0  # a compaction the file records, or a call between with no usage: start over
            continue
        assert before.usage is not None and after.usage is not None
        was, now = before.usage.input_tokens, after.usage.input_tokens
        position = before.position + 1  # the response is in the history; what follows it is the new request
        grown = now - was - ratio * sum(costs[before.position : after.position])
        if sent is not None and grown > gap / 2:  # back at the whole history: the client started again on the file
            found.append(RecordedCompaction(position, n, list(messages[:position]), trigger="load"))
            sent, gap = None, 0.0
            continue
        history = list(messages[:position]) if sent is None else [*sent, messages[before.position]]
        if was - now >= max(MIN_DROP_TOKENS, MIN_DROP_SHARE * was):
            split = split_point(history)
            folded, kept = history[:split], history[split:]
            text = ratio * sum(costs[index_of[id(m)]] if id(m) in index_of else cost(m) for m in folded)
            summary = round(grown + text - ratio * counter.message(acknowledged))
            if folded and summary >= 0:  # else a fall the split does not explain (0.38's masking): no call
                replacement = [{"role": "user", "content": "", "encrypted_chars": summary}, acknowledged, *kept]
                found.append(Unseen(RecordedCompaction(position, n, replacement), folded, summary))
                sent = [*replacement, *messages[position : after.position]]
                gap += text - summary - ratio * counter.message(acknowledged)
                continue
        if sent is not None:
            sent = [*history, *messages[position : after.position]]
    return found


def _ratio(billed: list[tuple[int, RecordedCall]], costs: list[int]) -> float:
    """API tokens per counted token, from the calls before the first fall (the prompt's growth over the counted
    text's); 1 where the text barely grew or the ratio is out of bounds."""
    before: list[tuple[int, int]] = []
    for _, call in billed:
        assert call.usage is not None
        if before and call.usage.input_tokens < before[-1][1]:
            break
        before.append((sum(costs[: call.position]), call.usage.input_tokens))
    if len(before) < 2 or before[-1][0] - before[0][0] < RATIO_MIN_TEXT:
        return 1.0
    ratio = (before[-1][1] - before[0][1]) / (before[-1][0] - before[0][0])
    return ratio if 0.5 <= ratio <= 3.0 else 1.0


def unseen_note(found: Unseen, calls: list[RecordedCall], checked: bool) -> str:
    """What replay says of a compression read from the usage: where, its summary, its calls (``checked``: the
    release's header says it sent the check too)."""
    n = found.compaction.before_call
    before, after = calls[n - 1].usage, calls[n].usage
    fell = f" ({before.input_tokens:,} to {after.input_tokens:,} tokens)" if before and after else ""
    sent = "a summary and its check" if checked else "one summary (a release of 0.26 to 0.30 also sent a check)"
    return (
        f"Gemini CLI's chat (one document, to 0.38) records no compression; the prompt's fall before call {n + 1}"
        f"{fell} shows one: {sent}, estimated in compaction_estimate, its summary about {found.summary_tokens:,} "
        "tokens; the calls after it are calibrated on the summary's context"
    )
