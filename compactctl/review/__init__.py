"""What a person reviewing a compaction looks at, as values: messages in, a review out.

Per transcript and per side (A, and B when two compactions are compared): what became of
every input message (the manifest), the summaries written and the span each replaced,
the identifiers of that span (the summarizers' own ledger: paths, commands, errors,
numbers, ids, names, and the user's constraints) and whether each survived in the
compacted transcript, the ``eval`` probes, the figures, and what the summarizer was sent.
``compactctl.review.page`` turns these values into one self-contained HTML page.

Everything shown is redacted as the summarizer's request is (``redact``), so a page can
be shared as safely as the request could be sent.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass, field

from compactctl.compaction import Compaction
from compactctl.evaluate import Scored, context_text, evaluate, normalized
from compactctl.settings import Options, setting
from compactctl.summarizers import PromptedSummarizer, Summarizer, Summary, SummaryRequest
from compactctl.summarizers.ledger import constraints, facts
from compactctl.summarizers.redact import redact, redact_messages
from compactctl.summarizers.request import data_text
from compactctl.tokens import TokenCounter
from compactctl.transcript import Message, annotations_of, is_valid, message_text

REVIEW_PANEL = "Review: side B (compared with the settings above)"
GONE = ("elided", "removed", "summarized")  # the fates that take a message's text out of the output


@dataclass(frozen=True)
class ReviewOptions(Options):
    """Side B of ``review``: a second compaction of the same inputs, shown beside side A."""

    vs_strategy: tuple[str, ...] = setting(
        (), help="Side B's strategy steps (repeatable), instead of A's --strategy.", panel=REVIEW_PANEL
    )
    vs_prompt_file: tuple[str, ...] = setting(
        (),
        help="Side B's prompt: PATH or STRATEGY=PATH (repeatable), instead of A's --prompt-file.",
        panel=REVIEW_PANEL,
    )
    vs_summarizer: str | None = setting(None, help="Side B's summarizer, instead of A's.", panel=REVIEW_PANEL)
    vs_config: str | None = setting(
        None, help="Side B's settings file (TOML, the keys of compactctl.toml), over A's settings.", panel=REVIEW_PANEL
    )


def side_b_asked(settings: dict[str, object]) -> bool:
    return any(settings.get(name) for name in ("vs_strategy", "vs_prompt_file", "vs_summarizer", "vs_config"))


# --- what the summarizer was sent ------------------------------------------------------------


@dataclass(frozen=True)
class Sent:
    """One request to the summarizer, as the page shows it (redacted), and what came back."""

    strategy: str
    prompt: str  # the instructions, when the summarizer sends a prompt
    data: str  # the span as rendered for the request
    summary: str
    redactions: int


class Recorder:
    """A summarizer that notes every request and reply of the one it wraps."""

    def __init__(self, inner: Summarizer) -> None:
        self.inner = inner
        self.calls: list[tuple[SummaryRequest, Summary]] = []

    def summarize(self, request: SummaryRequest) -> Summary:
        summary = self.inner.summarize(request)
        self.calls.append((request, summary))
        return summary

    def __getattr__(self, name: str) -> object:
        # What strategies ask a summarizer for (redact_span, input_limited, redacts) is the inner one's:
        # a recorded run redacts and chunks exactly as an unrecorded one.
        if name.startswith("__") or name in ("inner", "calls"):
            raise AttributeError(name)
        return getattr(self.inner, name)

    def sent(self, redact_secrets: bool) -> list[Sent]:
        found = []
        for request, summary in self.calls:
            prompt = self.prompt(request)
            data, count = shown(data_text(request), redact_secrets)
            found.append(Sent(request.strategy, prompt, data, shown(summary.text, redact_secrets)[0], count))
        return found

    def prompt(self, request: SummaryRequest) -> str:
        return ""


class PromptedRecorder(Recorder):
    """A recorder of a summarizer whose requests carry a prompt: strategies still see the prompt's size."""

    inner: PromptedSummarizer

    def prompt_text(self, strategy: str, max_tokens: int) -> str:
        return self.inner.prompt_text(strategy, max_tokens)

    def prompt(self, request: SummaryRequest) -> str:
        return self.inner.prompt_text(request.strategy, request.max_tokens)


def recording(summarizer: Summarizer) -> Recorder:
    return PromptedRecorder(summarizer) if isinstance(summarizer, PromptedSummarizer) else Recorder(summarizer)


def shown(text: str, redact_secrets: bool) -> tuple[str, int]:
    """The text as the page shows it: redacted as the summarizer's request is."""
    return redact(text) if redact_secrets else (text, 0)


# --- identifiers and their survival -----------------------------------------------------------


@dataclass(frozen=True)
class Identifier:
    kind: str  # a ledger kind (path, command, id, error, number, name) or "constraint"
    text: str
    first: int  # the input index it was first seen at
    survived: bool  # present in the compacted transcript, verbatim or case/space/quote folded
    seen: tuple[int, ...] = ()  # every replaced message it was found in


def span_identifiers(messages: Sequence[Message], gone: Sequence[int], after: Sequence[Message]) -> list[Identifier]:
    """The identifiers of the messages at ``gone`` (what the compaction took out) and whether each survived."""
    context = context_text(list(after))
    folded = normalized(context)
    found: dict[str, Identifier] = {}
    seen: dict[str, list[int]] = {}

    def add(kind: str, text: str, at: int) -> None:
        if not text:
            return
        if text not in found:
            survived = text in context or normalized(text) in folded
            found[text] = Identifier(kind, text, at, survived)
        seen.setdefault(text, []).append(at)

    span = [messages[i] for i in gone]
    for at in gone:
        for fact in facts([messages[at]]):
            add(fact.kind, fact.text, at)
    for sentence in constraints(span):
        for at in (i for i in gone if sentence in message_text(messages[i])):
            add("constraint", sentence, at)
    return [dataclasses.replace(i, seen=tuple(dict.fromkeys(seen[i.text]))) for i in found.values()]


# --- spans and summaries ----------------------------------------------------------------------


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
        if origin is None or annotations_of(message).get("kind") == "summary"
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


def sections(summary: str) -> list[tuple[str, str]]:
    """A summary's Markdown sections as ``(heading, body)``; text before the first heading has heading ""."""
    found: list[tuple[str, list[str]]] = [("", [])]
    for line in summary.splitlines():
        stripped = line.strip()
        if stripped.startswith("#") and stripped.lstrip("#").startswith(" "):
            found.append((stripped.lstrip("#").strip(), []))
        else:
            found[-1][1].append(line)
    return [(heading, "\n".join(body).strip()) for heading, body in found if heading or "\n".join(body).strip()]


# --- one side, one transcript ------------------------------------------------------------------


@dataclass(frozen=True)
class Figures:
    tokens_before: int
    tokens_after: int
    messages_before: int
    messages_after: int
    valid_after: bool
    identifiers: int
    identifiers_kept: int
    probes: int
    probes_passed: int
    summarizer_calls: int

    @property
    def reduction(self) -> float:
        return 1 - self.tokens_after / self.tokens_before if self.tokens_before else 0.0

    @property
    def identifiers_share(self) -> float | None:
        return self.identifiers_kept / self.identifiers if self.identifiers else None

    @property
    def probes_share(self) -> float | None:
        return self.probes_passed / self.probes if self.probes else None

    def __add__(self, other: Figures) -> Figures:
        summed = {
            f.name: getattr(self, f.name) + getattr(other, f.name) for f in dataclasses.fields(self) if f.type == "int"
        }
        return Figures(valid_after=self.valid_after and other.valid_after, **summed)


NO_FIGURES = Figures(0, 0, 0, 0, True, 0, 0, 0, 0, 0)


@dataclass(frozen=True)
class SideReview:
    name: str  # "A" or "B"
    settings: str  # what this side ran, in one line
    compaction: Compaction
    figures: Figures
    identifiers: list[Identifier]
    probes: list[Scored]
    spans: list[Span]
    sent: list[Sent] = field(default_factory=list)


@dataclass(frozen=True)
class TranscriptReview:
    label: str
    messages: list[Message]  # the input, as read
    sides: list[SideReview]


def review_side(
    name: str,
    settings: str,
    messages: list[Message],
    compaction: Compaction,
    counter: TokenCounter,
    sent: list[Sent] | None = None,
    redact_secrets: bool = False,
) -> SideReview:
    """One compaction of one transcript, measured the way the page shows it.

    With ``redact_secrets`` the identifiers and probes are taken from the redacted messages,
    not redacted one by one afterwards: a bare value (a hex key, a key body line) is only
    recognisable in the line that labels it.
    """
    gone = [entry.index for entry in compaction.manifest if entry.action in GONE]
    seen, after = messages, compaction.messages
    if redact_secrets:
        seen, after = redact_messages(messages)[0], redact_messages(compaction.messages)[0]
    identifiers = span_identifiers(seen, gone, after)
    probes = evaluate(seen, after).scored
    figures = Figures(
        tokens_before=counter.messages(messages),
        tokens_after=counter.messages(compaction.messages),
        messages_before=len(messages),
        messages_after=len(compaction.messages),
        valid_after=is_valid(compaction.messages),
        identifiers=len(identifiers),
        identifiers_kept=sum(i.survived for i in identifiers),
        probes=len(probes),
        probes_passed=sum(s.present for s in probes),
        summarizer_calls=compaction.usage.calls,
    )
    return SideReview(name, settings, compaction, figures, identifiers, probes, spans_of(compaction), sent or [])


def file_figures(reviews: Sequence[TranscriptReview], side: int) -> Figures:
    total = NO_FIGURES
    for review in reviews:
        if side < len(review.sides):
            total = total + review.sides[side].figures
    return total


def difference(a: Figures, b: Figures) -> float:
    """How far apart two sides are, in percentage points.

    The largest gap of the three: reduction, identifiers kept, probes passed.
    """
    gaps = [abs(a.reduction - b.reduction)]
    for x, y in ((a.identifiers_share, b.identifiers_share), (a.probes_share, b.probes_share)):
        if x is not None and y is not None:
            gaps.append(abs(x - y))
    return 100 * max(gaps)


@dataclass(frozen=True)
class FileReview:
    file: str
    format: str
    transcripts: list[TranscriptReview]
    redact: bool

    @property
    def sides(self) -> int:
        return max((len(t.sides) for t in self.transcripts), default=1)

    def figures(self, side: int) -> Figures:
        return file_figures(self.transcripts, side)
