"""A compaction's summaries as a reviewer reads them: the spans they replaced, their sections, and
the summarizer's own text apart from the blocks compactctl appended after it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from compactctl.compaction import Compaction
from compactctl.strategies.summarizing import LATEST_REQUEST_HEADING
from compactctl.summarizers import SECTIONS
from compactctl.summarizers.extractive import VERBATIM_HEADINGS
from compactctl.summarizers.request import shipped_prompt
from compactctl.transcript import Message, annotations_of, message_text


@dataclass(frozen=True)
class Span:
    """A run of consecutive input messages that a compaction summarized, and the summary beside it."""

    indices: range
    summary: str | None  # the summary message's text; None when it sits beside another span


def summaries_of(compaction: Compaction) -> list[str]:
    """The texts of the messages a compaction wrote (no input origin): its summaries."""
    return [
        message_text(message)
        for message, origin in zip(compaction.messages, compaction.origins, strict=True)
        if is_summary(message, origin)
    ]


def spans_of(compaction: Compaction) -> list[Span]:
    """Maximal runs of summarized input messages, each beside the summary written for it.

    The n-th summary goes with the n-th run; when their counts differ (a rolling summary
    folds several runs into one), every summary sits beside the first run.
    """
    runs: list[range] = []
    start = None
    actions = [entry.action for entry in compaction.manifest]
    for index, action in enumerate([*actions, "kept"]):
        if action == "summarized" and start is None:
            start = index
        elif action != "summarized" and start is not None:
            runs.append(range(start, index))
            start = None
    written = summaries_of(compaction)
    if len(written) == len(runs):
        return [Span(run, text) for run, text in zip(runs, written, strict=True)]
    if not runs:
        return []
    together = "\n\n".join(written) if written else None
    return [Span(runs[0], together), *(Span(run, None) for run in runs[1:])]


def prompt_headings(prompt: str) -> tuple[str, ...]:
    """The Markdown headings a prompt asks for (``## Goal`` lines at the start of a line), in order."""
    return tuple(line.lstrip("#").strip() for line in prompt.splitlines() if _is_heading(line))


def _is_heading(line: str) -> bool:
    return line.startswith("#") and line.lstrip("#").startswith(" ") and bool(line.lstrip("#").strip())


def _shipped_headings() -> tuple[str, ...]:
    found: list[str] = list(SECTIONS)
    for strategy in ("structured", "summary", "rolling", "selective"):
        found.extend(prompt_headings(shipped_prompt(strategy)))
    found.extend(h.lstrip("#").strip() for h in (*VERBATIM_HEADINGS, LATEST_REQUEST_HEADING))
    return tuple(dict.fromkeys(found))


# The headings compactctl's summarizers write: the extractive sections, the shipped prompts' and the
# blocks appended after a model's text. A summary is cut into sections at these only.
OWN_HEADINGS = _shipped_headings()
APPENDED_HEADINGS = tuple(h.lstrip("#").strip() for h in (*VERBATIM_HEADINGS, LATEST_REQUEST_HEADING))


def sections(summary: str, headings: Sequence[str] = ()) -> list[tuple[str, str]]:
    """A summary's sections as ``(heading, body)``; text before the first heading has heading "".

    Only the summarizer's own headings start a section (``OWN_HEADINGS``, and ``headings``: those
    of a prompt given with --prompt-file), and only at the start of a line: a heading the user
    pasted, quoted in a request, stays in the body of the section that quotes it. Everything after
    the latest request appended verbatim is that request's, whatever it holds.
    """
    known = {*OWN_HEADINGS, *headings}
    latest = LATEST_REQUEST_HEADING.lstrip("#").strip()
    found: list[tuple[str, list[str]]] = [("", [])]
    for line in summary.splitlines():
        title = line.lstrip("#").strip()
        if found[-1][0] != latest and _is_heading(line) and title in known:
            found.append((title, []))
        else:
            found[-1][1].append(line)
    return [(heading, "\n".join(body).strip()) for heading, body in found if heading or "\n".join(body).strip()]


def own_text(summary: str) -> str:
    """What the summarizer itself wrote: the summary less the blocks compactctl appended after it.

    The openai summarizer appends the verbatim ledger and the user's messages after the model's
    text, and every summarizing strategy appends the latest request when a summary lost it; those
    carry identifiers and probes whatever the model wrote, so a prompt is judged without them.
    They come last: the cut is at the first of the trailing run of appended headings (a model that
    copied one out earlier keeps the text it wrote after it; the copy is not credited to it).
    """
    lines = summary.splitlines()
    appended = {f"## {h}" for h in APPENDED_HEADINGS}
    own = {f"## {h}" for h in OWN_HEADINGS} - appended
    cut = len(lines)
    for number in range(len(lines) - 1, -1, -1):
        line = lines[number].rstrip()
        if line in appended:
            cut = number
        elif line in own:
            break  # the summarizer's own section: nothing above it was appended
    return "\n".join(lines[:cut]).rstrip() if cut < len(lines) else summary


def is_summary(message: Message, origin: int | None) -> bool:
    """A message a compaction wrote: no input origin, or marked as a summary."""
    return origin is None or annotations_of(message).get("kind") == "summary"


def own_messages(compaction: Compaction) -> list[Message]:
    """The compacted transcript with each summary cut to the summarizer's own text."""
    out = []
    for message, origin in zip(compaction.messages, compaction.origins, strict=True):
        if is_summary(message, origin) and isinstance(message.get("content"), str):
            message = {**message, "content": own_text(str(message["content"]))}
        out.append(message)
    return out
