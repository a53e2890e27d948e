"""The live context of a session: what the client sends the model when it resumes, in the model's tokens.

The messages are the format reader's (the live conversation after the client's last
compaction: what a resume sends). The clients record what the API counted for each call
(Claude Code's ``usage``, Codex's ``token_count``, Gemini CLI's ``tokens``), so the figure is
anchored there: the last call's input and output, which hold the harness's hidden system prompt
and tools, plus the messages added or removed since, counted in cl100k at the ratio the session's
own calls show (the growth of the reported input against the growth of the counted messages
between its first and last call; the provider's prior where they grew too little to tell).
A copy compactctl wrote of an old call (after its compact boundary) is no anchor: its usage
describes a context that is gone. With no usage at all, the figure is the plain count.

(``report``'s calibration fits the same parts on every call; on Claude Code 2.1.332 sessions
its recorded context held about 13k tokens the client did not send, which pulled its ratio to
0.6: the anchor needs no model of what the history held.)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from compactctl.formats import FORMATS
from compactctl.formats.records import Record, parse_records
from compactctl.tokens import DEFAULT_ENCODING, counter_for
from compactctl.transcript import Message

MIN_GROWTH = 2000  # counted tokens between the first and last call for their ratio to be read
RATIO_BOUNDS = (0.5, 3.0)


@dataclass(frozen=True)
class LiveContext:
    tokens: int  # what the next request holds before the new prompt, in the model's tokens
    basis: str  # "reported": anchored on the API's count of the last call; "counted": no usage recorded
    messages: int  # live messages (what a resume sends of the file)
    ratio: float = 1.0  # model tokens per counted token used for what changed since the anchor


@dataclass(frozen=True)
class Anchor:
    position: int  # the record after which the call's response is complete
    tokens: int  # the call's input plus output, as the API counted them


Anchors = Callable[[list[Record]], list[Anchor]]
SentView = Callable[[list[Message], list[Record]], list[Message]]


def live_messages(format_name: str, records: list[Record], path: str) -> list[Message]:
    transcripts = FORMATS[format_name].read(records, path)
    return transcripts[0].messages if transcripts else []


def live_context(
    format_name: str,
    data: bytes,
    path: str,
    anchors: Anchors | None = None,
    as_sent: SentView | None = None,
    prior_ratio: float = 1.0,
) -> LiveContext:
    """``as_sent``: what the client does to the messages when it sends them on resume (Gemini CLI masks
    older tool outputs); the anchors already hold what it did when it made those calls. ``prior_ratio``:
    the provider's tokens per cl100k token where the session cannot tell (the client's ``PRIOR_RATIO``)."""
    records, _ = parse_records(data, path)
    messages = live_messages(format_name, records, path)
    counter = counter_for(DEFAULT_ENCODING)
    now = counter.messages(as_sent(messages, records) if as_sent is not None else messages)
    calls = anchors(records) if anchors is not None else []
    if not calls:
        return LiveContext(now, "counted", len(messages))

    def counted_at(anchor: Anchor) -> int:
        return counter.messages(live_messages(format_name, records[: anchor.position + 1], path))

    last = calls[-1]
    at_last = counted_at(last)
    ratio = prior_ratio
    if len(calls) > 1:
        first = calls[0]
        at_first = counted_at(first)
        if at_last - at_first >= MIN_GROWTH:
            ratio = min(max((last.tokens - first.tokens) / (at_last - at_first), RATIO_BOUNDS[0]), RATIO_BOUNDS[1])
    tokens = last.tokens + ratio * (now - at_last)
    return LiveContext(max(0, round(tokens)), "reported", len(messages), round(ratio, 3))
