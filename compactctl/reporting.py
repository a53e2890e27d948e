"""Before/after figures for one file, and their totals.

``measure`` walks messages once (it takes any iterable, so a report on a huge
chat file streams it), counting tokens by role, checking API validity and
looking for the facts that must survive.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from compactctl.errors import InputError
from compactctl.facts import fold, unique_facts
from compactctl.formats import Transcript, carried_parts, native_violations, opens_on_user, unique_call_ids
from compactctl.formats.records import SkippedLine, listed, skipped_json
from compactctl.model_input import model_input
from compactctl.tokens import REPLY_PRIMING_TOKENS, TokenCounter
from compactctl.transcript import KEPT_VIOLATIONS, Message, Validator, Violation, facts_of, message_text
from compactctl.usage import SummarizerUsage

REPORT_VERSION = 1

# A transcript to measure: its label and messages, or a Transcript read from a file, which is
# also held to the rules of its own format's API (Responses, Anthropic) as its writer would send it.
Labelled = tuple[str, Iterable[Message]]
MessageSource = Labelled | Transcript


@dataclass(frozen=True)
class Measure:
    """What one pass over a transcript (or all transcripts of a file) found."""

    tokens: int = 0
    messages: int = 0
    tokens_by_role: dict[str, int] = field(default_factory=dict)
    transcripts: int = 0
    violation: str | None = None  # the first one, with the transcript it is in
    facts_declared: tuple[str, ...] = ()
    facts_found: frozenset[str] = frozenset()  # folded (casefold, whitespace folded)
    api_usage: ApiUsage | None = None
    violation_count: int = 0  # every violation, in every transcript
    violations: tuple[str, ...] = ()  # the first few (KEPT_VIOLATIONS), each with its transcript
    open_calls: tuple[str, ...] = ()  # transcripts that end on a call still running (not a fault)

    @property
    def valid(self) -> bool:
        return self.violation is None


@dataclass(frozen=True)
class ApiUsage:
    """Input tokens the API reported for model calls recorded in a transcript, against compactctl's count.

    A call is an assistant message carrying ``usage`` (OpenAI ``prompt_tokens``, Responses and
    Codex ``input_tokens``, Anthropic ``input_tokens`` plus cache reads and writes); its input
    is every message before it in its transcript plus the reply's priming
    (``REPLY_PRIMING_TOKENS``), as the API bills it. Tool definitions and system prompts a
    harness sends but does not save make the reported figure larger.
    """

    calls: int
    reported_input_tokens: int
    counted_input_tokens: int

    @property
    def difference_pct(self) -> float | None:
        """How far compactctl's count is from the reported one, in percent of the reported one."""
        if not self.reported_input_tokens:
            return None
        return round((self.counted_input_tokens - self.reported_input_tokens) / self.reported_input_tokens * 100, 1)

    def as_json(self) -> dict[str, Any]:
        return {**asdict(self), "difference_pct": self.difference_pct}


def reported_input_tokens(message: Message) -> int | None:
    """The input tokens an API reported for the call that produced this assistant message."""
    usage = message.get("usage") if message.get("role") == "assistant" else None
    if not isinstance(usage, dict):
        return None
    prompt_tokens, input_tokens = usage.get("prompt_tokens"), usage.get("input_tokens")
    if isinstance(prompt_tokens, int):
        return prompt_tokens
    if isinstance(input_tokens, int):
        cache = ("cache_creation_input_tokens", "cache_read_input_tokens")
        return input_tokens + sum(value for key in cache if isinstance(value := usage.get(key), int))
    return None


class MeasureSum:
    """Accumulates a Measure over the transcripts of a file, one message at a time."""

    def __init__(self, counter: TokenCounter, facts: Iterable[str] = ()) -> None:
        self.counter = counter
        self.tokens = 0
        self.messages = 0
        self.by_role: dict[str, int] = {}
        self.transcripts = 0
        self.violation: str | None = None
        self.violation_count = 0
        self.violations: list[str] = []
        self.open_calls: list[str] = []
        self.declared: dict[str, str] = {}  # folded -> as first written
        self.unfound: set[str] = {folded for folded in map(fold, facts) if folded}  # folded
        self.found: set[str] = set()
        self.api_calls = self.api_reported = self.api_counted = 0
        self._validator = Validator()
        self._context = 0

    def add(self, item: MessageSource) -> None:
        if isinstance(item, Transcript):
            # What the model receives when the producer's client resumes it (model_input): one measure everywhere.
            continued = item.native is not None and item.native.continues_another()
            self.add_transcript(model_input(item), item.label, native_violations(item), item.read_as, continued)
        else:
            self.add_transcript(item[1], item[0])

    def add_transcript(
        self,
        messages: Iterable[Message],
        label: str = "",
        native: Violation | list[Violation] | None = None,
        read_as: str | None = None,
        continued: bool = False,
    ) -> None:
        """Measure one transcript; ``native`` are the rules of its own API it breaks, found apart;
        ``read_as`` (its format) says which of its producer's blocks its messages may carry; ``continued``: the
        client sends another file's context before it (``Native.continues_another``)."""
        self.start_transcript(read_as, continued)
        for message in messages:
            self.feed(message)
        self.end_transcript(label, native)

    # The same, a message at a time, for a caller walking two transcripts at once (before and after).
    def start_transcript(self, read_as: str | None = None, continued: bool = False) -> None:
        self.transcripts += 1
        self._validator = Validator(
            carried_parts(read_as), opens_on_user(read_as) and not continued, unique_call_ids(read_as)
        )
        self._context = 0  # tokens of the messages so far: the input of a call made now

    def feed(self, message: Message) -> None:
        self._validator.feed(message)
        reported = reported_input_tokens(message)
        if reported is not None:
            self.api_calls += 1
            self.api_reported += reported
            self.api_counted += self._context + REPLY_PRIMING_TOKENS
        self._context += self.add_message(message)

    def end_transcript(self, label: str = "", native: Violation | list[Violation] | None = None) -> None:
        own = [native] if isinstance(native, Violation) else list(native or ())
        self._validator.finish()
        # The file's own API's rules, where it has them, are the judge; else the Chat Completions rules.
        found = own or self._validator.violations
        count = len(own) if own else self._validator.count
        self.violation_count += count
        for violation in found:
            if len(self.violations) < KEPT_VIOLATIONS:
                self.violations.append(f"{label}: {violation}" if label else str(violation))
        if self.violations and self.violation is None:
            self.violation = self.violations[0]
        if self._validator.open_call is not None:
            self.open_calls.append(f"{label}: {self._validator.open_call}" if label else self._validator.open_call)

    def add_message(self, message: Message) -> int:
        tokens = self.counter.message(message)
        self.tokens += tokens
        self.messages += 1
        role = str(message.get("role"))
        self.by_role[role] = self.by_role.get(role, 0) + tokens
        for fact in facts_of(message):
            folded = fold(fact)
            if folded and folded not in self.declared:
                self.declared[folded] = fact
                if folded not in self.found:
                    self.unfound.add(folded)
        if self.unfound:
            text = fold(message_text(message))
            hits = {fact for fact in self.unfound if fact in text}
            self.found |= hits
            self.unfound -= hits
        return tokens

    def result(self) -> Measure:
        return Measure(
            self.tokens,
            self.messages,
            dict(sorted(self.by_role.items())),
            self.transcripts,
            self.violation,
            tuple(self.declared.values()),
            frozenset(self.found),
            ApiUsage(self.api_calls, self.api_reported, self.api_counted) if self.api_calls else None,
            self.violation_count,
            tuple(self.violations),
            tuple(self.open_calls),
        )


def measure(transcripts: Iterable[MessageSource], counter: TokenCounter, facts: Iterable[str] = ()) -> Measure:
    """Measure transcripts, looking for ``facts`` (and those they declare) in their text."""
    total = MeasureSum(counter, facts)
    for transcript in transcripts:
        total.add(transcript)
    return total.result()


@dataclass(frozen=True)
class FileReport:
    """The figures of one file; the field names are the JSON report's keys."""

    file: str
    format: str
    transcripts: int
    tokens_before: int
    tokens_after: int | None
    reduction: float | None
    messages_before: int
    messages_after: int | None
    tokens_by_role_before: dict[str, int]
    tokens_by_role_after: dict[str, int] | None
    tool_output_share_before: float
    tool_output_share_after: float | None
    facts_required: int
    facts_preserved: int
    facts_missing: list[str]  # in the input, not in the output: a failed gate
    facts_absent_before: list[str]  # not in the input at all: a warning (an error with --strict-facts)
    valid_before: bool
    valid_after: bool | None
    violation_before: str | None
    violation_after: str | None
    summarizer_calls: int
    summarizer_prompt_tokens: int
    summarizer_completion_tokens: int
    summary_truncated: int
    notes: list[str]
    # Where the transcript records API-reported usage: {calls, reported_input_tokens,
    # counted_input_tokens, difference_pct} for the input (before) transcript.
    api_usage: dict[str, Any] | None = None
    skipped_lines: list[int] = field(default_factory=list)  # left out by --on-error skip
    skipped: list[dict[str, Any]] = field(default_factory=list)  # the same, each {line, problem}
    # Where a Claude Code or Codex file records its usage: the recorded calls, reported vs counted
    # vs calibrated input, the gap split, the calibration and its held-out error, and what the
    # producer's own compactions replaced (calibration.session_report).
    api_calibration: dict[str, Any] | None = None
    # Every violation counted, the first few listed (violation_before/after is the first of them).
    violation_count_before: int = 0
    violation_count_after: int | None = None
    violations_before: list[str] = field(default_factory=list)
    violations_after: list[str] | None = None
    # A transcript that ends on a call still running (a session saved while a tool ran): not a
    # fault, the next request carries the result; the call's id, per transcript.
    open_calls_before: list[str] = field(default_factory=list)
    open_calls_after: list[str] | None = None
    # Why nothing changed, when no step changed anything (then no copy is written unless
    # --write-unchanged): the producer's own summary is all the live context, or nothing folds.
    unchanged_reason: str | None = None

    @property
    def gate_failed(self) -> bool:
        """A lost fact or an output the API would reject (when the input was valid)."""
        lost_validity = self.valid_after is False and self.valid_before
        return bool(self.facts_missing) or bool(lost_validity)


def _share(by_role: dict[str, int], total: int) -> float:
    return round(by_role.get("tool", 0) / total, 4) if total else 0.0


def file_report(
    file: str,
    format: str,
    before: Measure,
    after: Measure | None,
    required: Iterable[str] = (),
    usage: SummarizerUsage = SummarizerUsage(),
    notes: Iterable[str] = (),
    skipped_lines: Iterable[SkippedLine] = (),
) -> FileReport:
    """Compare a file before and after; with no ``after``, facts are looked for in ``before``.

    Facts match case- and whitespace-folded. A fact the input does not hold is absent, not
    lost: only a fact the input holds and the output does not is missing.
    """
    facts = unique_facts([*required, *before.facts_declared])
    absent = [fact for fact in facts if fold(fact) not in before.facts_found]
    missing = [
        fact
        for fact in facts
        if after is not None and fold(fact) in before.facts_found and fold(fact) not in after.facts_found
    ]
    skipped = skipped_json(skipped_lines)
    reduction = None
    if after is not None:
        reduction = round(1 - after.tokens / before.tokens, 4) if before.tokens else 0.0
    return FileReport(
        file=file,
        format=format,
        transcripts=before.transcripts,
        tokens_before=before.tokens,
        tokens_after=after.tokens if after else None,
        reduction=reduction,
        messages_before=before.messages,
        messages_after=after.messages if after else None,
        tokens_by_role_before=before.tokens_by_role,
        tokens_by_role_after=after.tokens_by_role if after else None,
        tool_output_share_before=_share(before.tokens_by_role, before.tokens),
        tool_output_share_after=_share(after.tokens_by_role, after.tokens) if after else None,
        facts_required=len(facts),
        facts_preserved=len(facts) - len(missing) - len(absent),
        facts_missing=missing,
        facts_absent_before=absent,
        valid_before=before.valid,
        valid_after=after.valid if after else None,
        violation_before=before.violation,
        violation_after=after.violation if after else None,
        summarizer_calls=usage.calls,
        summarizer_prompt_tokens=usage.prompt_tokens,
        summarizer_completion_tokens=usage.completion_tokens,
        summary_truncated=usage.truncated,
        notes=list(notes),  # the skipped lines are the entry's reason, and said one a line (cli.render.say_skipped)
        api_usage=before.api_usage.as_json() if before.api_usage else None,
        skipped_lines=skipped["skipped_lines"],
        skipped=skipped["skipped"],
        violation_count_before=before.violation_count,
        violation_count_after=after.violation_count if after else None,
        violations_before=list(before.violations),
        violations_after=list(after.violations) if after else None,
        open_calls_before=list(before.open_calls),
        open_calls_after=list(after.open_calls) if after else None,
    )


def is_producer_summary(message: Message) -> bool:
    """A summary the producer's own compaction wrote (Claude Code's compact summary, Codex's summary turn)."""
    from compactctl.formats.codex import SUMMARY_PREFIX
    from compactctl.transcript import annotations_of, content_text

    if annotations_of(message).get("kind") == "summary":
        return True
    return message.get("role") == "user" and content_text(message).startswith(SUMMARY_PREFIX[:60])


def unchanged_reason(messages: list[Message], counter: TokenCounter, thresholds: Mapping[str, int]) -> str:
    """One line saying why no step changed a transcript.

    ``thresholds``: the token threshold of each step that has one, by step name. A file under
    every one was never compacted; one over a threshold was, and kept every message (the
    steps' keep-recent, a turn kept whole), which is a different thing to change.
    """
    live = [m for m in messages if m.get("role") not in ("system", "developer")]
    tokens = counter.messages(messages)
    last_summary = max((i for i, m in enumerate(live) if is_producer_summary(m)), default=None)
    if last_summary is not None:
        since = len(live) - last_summary - 1
        return (
            f"unchanged: the live context is the producer's own summary and {since} message(s) since "
            f"({tokens:,} tokens); what was older is already folded"
        )
    size = f"{len(messages)} messages, {tokens:,} tokens"
    over = {step: limit for step, limit in thresholds.items() if tokens > limit}
    if thresholds and not over:
        named = ", ".join(f"{step} {limit:,}" for step, limit in thresholds.items())
        return f"unchanged: under the threshold ({size}; {named})"
    if over:
        named = ", ".join(f"{step} {limit:,}" for step, limit in over.items())
        return (
            f"unchanged: over the threshold ({size}; {named}), but every message is within what the "
            "steps keep (--keep-recent, a turn kept whole)"
        )
    return f"unchanged: nothing the steps could fold ({size}: all within what the steps keep)"


def skipped_note(lines: list[SkippedLine]) -> str:
    """What --on-error skip left out: how many lines, their numbers, and what was wrong with the first ones."""
    shown = "; ".join(f"line {s.line}: {s.problem}" for s in lines[:3]) + ("; ..." if len(lines) > 3 else "")
    return f"skipped {len(lines)} unreadable line(s): {listed([s.line for s in lines])} ({shown})"


def totals(reports: list[FileReport]) -> dict[str, Any]:
    """Sums over the files that were read; reduction is recomputed from the sums."""
    before = sum(r.tokens_before for r in reports)
    compared = [r for r in reports if r.tokens_after is not None]
    after = sum(r.tokens_after or 0 for r in compared) if compared else None
    base = sum(r.tokens_before for r in compared)
    return {
        "files": len(reports),
        "tokens_before": before,
        "tokens_after": after,
        "reduction": round(1 - after / base, 4) if after is not None and base else None,
        "messages_before": sum(r.messages_before for r in reports),
        "messages_after": sum(r.messages_after or 0 for r in compared) if compared else None,
        "facts_required": sum(r.facts_required for r in reports),
        "facts_preserved": sum(r.facts_preserved for r in reports),
        "facts_missing": sum(len(r.facts_missing) for r in reports),
        "facts_absent_before": sum(len(r.facts_absent_before) for r in reports),
        "skipped_lines": sum(len(r.skipped_lines) for r in reports),
        "valid_before": all(r.valid_before for r in reports) if reports else None,
        "valid_after": all(r.valid_after for r in compared) if compared else None,
        "summarizer_calls": sum(r.summarizer_calls for r in reports),
        "summarizer_prompt_tokens": sum(r.summarizer_prompt_tokens for r in reports),
        "summarizer_completion_tokens": sum(r.summarizer_completion_tokens for r in reports),
    }


def report_json(reports: list[FileReport], errors: list[dict[str, Any]]) -> dict[str, Any]:
    """The ``--json`` object: version, one entry per file, failed files, totals."""
    return {
        "version": REPORT_VERSION,
        "files": [asdict(r) for r in reports],
        "failed": errors,
        "total": {**totals(reports), "failed": len(errors)},
    }


def check_facts_present(report: FileReport, path: str) -> None:
    """``strict_facts``: a declared or required fact the input does not hold is bad input."""
    if report.facts_absent_before:
        absent = ", ".join(map(repr, report.facts_absent_before))
        raise InputError(f"fact(s) not in the input (`strict_facts`): {absent}", path)
