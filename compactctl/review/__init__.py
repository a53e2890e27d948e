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
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field

from compactctl.compaction import Compaction
from compactctl.evaluate import Judge, Scored, context_text, evaluate, normalized
from compactctl.formats.records import SkippedLine, skipped_json
from compactctl.review.sections import (
    Span,
    own_messages,
    prompt_headings,
    spans_of,
)
from compactctl.settings import Options, setting
from compactctl.summarizers import PromptedSummarizer, Summarizer, Summary, SummaryRequest
from compactctl.summarizers.ledger import facts
from compactctl.summarizers.redact import redact, redact_messages
from compactctl.summarizers.request import data_text
from compactctl.summarizers.writings import constraints
from compactctl.tokens import TokenCounter
from compactctl.transcript import Message, is_valid, message_text

REVIEW_PANEL = "Review: side B (compared with the settings above)"
GONE = ("elided", "removed", "summarized")  # the fates that take a message's text out of the output


@dataclass(frozen=True)
class ReviewOptions(Options):
    """Side B of ``review``: a second compaction of the same inputs, shown beside side A."""

    vs_strategy: tuple[str, ...] = setting(
        (),
        help="Side B's strategy steps (repeatable), instead of A's --strategy.",
        metavar="STRATEGY",
        panel=REVIEW_PANEL,
    )
    vs_prompt_file: tuple[str, ...] = setting(
        (),
        help="Side B's prompt: PATH or STRATEGY=PATH (repeatable), instead of A's --prompt-file.",
        metavar="PATH",
        panel=REVIEW_PANEL,
    )
    vs_summarizer: str | None = setting(
        None, help="Side B's summarizer, instead of A's.", metavar="NAME", panel=REVIEW_PANEL
    )
    vs_config: str | None = setting(
        None,
        help="Side B's settings file (TOML, the keys of compactctl.toml), over A's settings.",
        metavar="PATH",
        panel=REVIEW_PANEL,
    )


def side_b_asked(options: ReviewOptions) -> bool:
    return bool(options.vs_strategy or options.vs_prompt_file or options.vs_summarizer or options.vs_config)


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
    """A summarizer that notes every request and reply of the one it wraps, and is otherwise that one.

    Every other attribute (``input_limited``, ``overhead_tokens``, ``redact_span``, ``input_limit``,
    ``prompt_text``) is the wrapped summarizer's, so a strategy chunks and budgets exactly as it
    does for ``compact``: the review shows the compaction ``compact`` writes, not a look-alike.
    """

    def __init__(self, inner: Summarizer) -> None:
        self.inner = inner
        self.calls: list[tuple[SummaryRequest, Summary]] = []
        self._lock = threading.Lock()

    def summarize(self, request: SummaryRequest) -> Summary:
        summary = self.inner.summarize(request)
        with self._lock:
            self.calls.append((request, summary))
        return summary

    def __getattr__(self, name: str) -> object:
        # What strategies ask a summarizer for (redact_span, input_limited, redacts) is the inner one's:
        # a recorded run redacts and chunks exactly as an unrecorded one.
        if name.startswith("__") or name in ("inner", "calls", "_lock"):
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
        if isinstance(self.inner, PromptedSummarizer):
            return self.inner.prompt_text(request.strategy, request.max_tokens)
        return ""


def recording(summarizer: Summarizer) -> Recorder:
    return Recorder(summarizer)


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


# --- one side, one transcript ------------------------------------------------------------------


@dataclass(frozen=True)
class Figures:
    tokens_before: int
    tokens_after: int
    messages_before: int
    messages_after: int
    valid_after: bool
    identifiers: int
    identifiers_kept: int  # in the compacted transcript as written
    probes: int
    probes_passed: int
    summarizer_calls: int
    identifiers_kept_own: int = 0  # with each summary cut to the summarizer's own text (``own_text``)
    probes_passed_own: int = 0
    probes_judged: int = 0  # --judge: probes a model answered right from the compacted transcript
    judged: int = 0  # how many probes the judge was asked (0 without a judge)

    @property
    def reduction(self) -> float:
        return 1 - self.tokens_after / self.tokens_before if self.tokens_before else 0.0

    @property
    def identifiers_share(self) -> float | None:
        return self.identifiers_kept / self.identifiers if self.identifiers else None

    @property
    def probes_share(self) -> float | None:
        return self.probes_passed / self.probes if self.probes else None

    @property
    def identifiers_own_share(self) -> float | None:
        return self.identifiers_kept_own / self.identifiers if self.identifiers else None

    @property
    def probes_own_share(self) -> float | None:
        return self.probes_passed_own / self.probes if self.probes else None

    @property
    def judged_share(self) -> float | None:
        return self.probes_judged / self.judged if self.judged else None

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
    own_probes: list[Scored] = field(default_factory=list)  # the probes scored on the summarizer's own text
    headings: tuple[str, ...] = ()  # the headings of the prompt this side's summarizer was given
    fates_from: str = "manifest"  # "manifest": as the compaction recorded them; "matching": read off the output
    output_sha256: str = ""  # of the compacted file this side shows (the same for every transcript of it)


@dataclass(frozen=True)
class TranscriptReview:
    label: str
    messages: list[Message]  # the input, as read
    sides: list[SideReview]


def review_side(
    name: str,
    description: str,  # what this side ran, in one line
    messages: list[Message],
    compaction: Compaction,
    counter: TokenCounter,
    sent: list[Sent] | None = None,
    judge: Judge | None = None,
    tokens_after: int | None = None,
    fates_from: str = "manifest",
    *,
    tokens_before: int | None = None,
    output_sha256: str = "",
    redact_secrets: bool = False,
) -> SideReview:
    """One compaction of one transcript, measured the way the page shows it.

    Scored twice: on the compacted transcript as written, and with each summary cut to the
    summarizer's own text (what compactctl appended after it taken off), so two prompts are told
    apart by what the model wrote, not by the ledger both sides carry. ``tokens_after``: the
    figure ``compact`` reported for this transcript, when it did (else counted here); ``tokens_before``
    likewise, where the caller counts what the model receives on resume (``model_input``).

    With ``redact_secrets`` the identifiers and probes are taken from the redacted messages,
    not redacted one by one afterwards: a bare value (a hex key, a key body line) is only
    recognisable in the line that labels it.
    """
    gone = [entry.index for entry in compaction.manifest if entry.action in GONE]
    seen, after, own = messages, compaction.messages, own_messages(compaction)
    if redact_secrets:
        seen, after, own = (redact_messages(m)[0] for m in (messages, compaction.messages, own))
    identifiers = span_identifiers(seen, gone, after)
    own_context = context_text(own)
    own_folded = normalized(own_context)
    kept_own = sum(i.text in own_context or normalized(i.text) in own_folded for i in identifiers)
    probes = evaluate(seen, after, judge).scored
    own_probes = evaluate(seen, own).scored
    headings = tuple(h for one in sent or () for h in prompt_headings(one.prompt))
    figures = Figures(
        tokens_before=counter.messages(messages) if tokens_before is None else tokens_before,
        tokens_after=counter.messages(compaction.messages) if tokens_after is None else tokens_after,
        messages_before=len(messages),
        messages_after=len(compaction.messages),
        valid_after=is_valid(compaction.messages),
        identifiers=len(identifiers),
        identifiers_kept=sum(i.survived for i in identifiers),
        probes=len(probes),
        probes_passed=sum(s.present for s in probes),
        summarizer_calls=compaction.usage.calls,
        identifiers_kept_own=kept_own,
        probes_passed_own=sum(s.present for s in own_probes),
        probes_judged=sum(bool(s.judged) for s in probes),
        judged=len(probes) if judge is not None else 0,
    )
    return SideReview(
        name,
        description,
        compaction,
        figures,
        identifiers,
        probes,
        spans_of(compaction),
        sent or [],
        own_probes,
        tuple(dict.fromkeys(headings)),
        fates_from,
        output_sha256,
    )


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


def own_difference(a: Figures, b: Figures) -> float:
    """B minus A on the summarizer's own text, in percentage points: identifiers and probes together.

    What tells two prompts apart; the A/B index is sorted by its size, the sign says which side won.
    """
    a_total, b_total = a.identifiers + a.probes, b.identifiers + b.probes
    if not a_total or not b_total:
        return 0.0
    a_share = (a.identifiers_kept_own + a.probes_passed_own) / a_total
    b_share = (b.identifiers_kept_own + b.probes_passed_own) / b_total
    return 100 * (b_share - a_share)


@dataclass(frozen=True)
class FileReview:
    file: str
    format: str
    transcripts: list[TranscriptReview]
    redact: bool
    # Per side, the file's figures as ``compact`` reported them (tokens, messages, validity, calls),
    # which the page shows over its own count of what it read back; None for a written compaction.
    reported: tuple[Figures | None, ...] = ()
    skipped: tuple[SkippedLine, ...] = ()  # lines --on-error skip left out of the input (or of a compaction read back)

    @property
    def sides(self) -> int:
        return max((len(t.sides) for t in self.transcripts), default=1)

    def figures(self, side: int) -> Figures:
        counted = file_figures(self.transcripts, side)
        reported = self.reported[side] if side < len(self.reported) else None
        if reported is None:
            return counted
        return dataclasses.replace(
            counted,
            tokens_before=reported.tokens_before,
            tokens_after=reported.tokens_after,
            messages_before=reported.messages_before,
            messages_after=reported.messages_after,
            valid_after=reported.valid_after,
            summarizer_calls=reported.summarizer_calls,
        )


def figures_json(figures: Figures) -> dict[str, object]:
    """One side's figures for ``review --json``: the whole summary and the summarizer's own text, side by side."""

    def share(passed: int, total: int) -> dict[str, object]:
        return {"passed": passed, "total": total, "score": round(passed / total, 4) if total else None}

    body: dict[str, object] = {
        "tokens_before": figures.tokens_before,
        "tokens_after": figures.tokens_after,
        "reduction": round(figures.reduction, 4),
        "messages_before": figures.messages_before,
        "messages_after": figures.messages_after,
        "valid_after": figures.valid_after,
        "summarizer_calls": figures.summarizer_calls,
        "whole_summary": {
            "identifiers": share(figures.identifiers_kept, figures.identifiers),
            "probes": share(figures.probes_passed, figures.probes),
        },
        "own_text": {
            "identifiers": share(figures.identifiers_kept_own, figures.identifiers),
            "probes": share(figures.probes_passed_own, figures.probes),
        },
    }
    if figures.judged:
        body["judged_probes"] = share(figures.probes_judged, figures.judged)
    return body


def review_json(reviews: Sequence[FileReview]) -> dict[str, object]:
    """``review --json``: per file and side the figures, and with two sides B minus A on the summarizers' own text."""
    files = []
    for review in reviews:
        sides = {
            side.name: {
                "settings": side.settings,
                "fates_from": side.fates_from,
                "output_sha256": side.output_sha256,
                **figures_json(review.figures(number)),
            }
            for number, side in enumerate(review.transcripts[0].sides if review.transcripts else [])
        }
        entry: dict[str, object] = {"file": review.file, "format": review.format, "sides": sides}
        entry.update(skipped_json(review.skipped))
        if review.sides == 2:
            entry["own_text_difference_pp"] = round(own_difference(review.figures(0), review.figures(1)), 2)
            entry["difference_pp"] = round(difference(review.figures(0), review.figures(1)), 2)
        files.append(entry)
    count = max((r.sides for r in reviews), default=1)
    total = {}
    for number, name in enumerate(("A", "B")[:count]):
        summed = NO_FIGURES
        for review in reviews:
            summed = summed + review.figures(number)
        total[name] = figures_json(summed)
    return {"files": files, "total": total}
