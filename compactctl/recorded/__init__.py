"""The API calls a producer recorded: each response paired with its usage, across the producer's compactions.

A format reader gives the live conversation, what a client would resume from. Calibration
and replay need something else: every model call the producer made, in order, with the
usage the API reported for it, and the whole history the model saw along the way, also
before the producer compacted it. A ``RecordedSession`` is that, one ``RecordedContext``
per separate context (a Claude Code sidechain is its own context: its own system prompt,
often its own model).

One module per producer (``claude_code``, ``codex``, ``gemini``), each with ``read(records, path)``, for a
format that says it carries usage (``Format.carries_usage``); ``read_recorded`` finds it by name.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from compactctl import jsonbytes
from compactctl.digests import blake2b
from compactctl.formats.records import Record
from compactctl.transcript import Message, is_compactctl_summary


@dataclass(frozen=True)
class ApiUsage:
    """What the API reported for one call, in one shape for both providers.

    ``input_tokens`` is the whole input billed (uncached + cache reads + cache writes), the
    figure a producer's auto-compaction compares with its limit.
    """

    input_tokens: int
    cached_tokens: int = 0  # read from the prompt cache
    cache_write_tokens: int = 0  # written to it (Anthropic bills these above input)
    cache_write_1h_tokens: int = 0  # the part of the writes kept one hour (billed 2x input, not 1.25x)
    output_tokens: int = 0  # thinking/reasoning included
    reasoning_tokens: int = 0
    web_searches: int = 0  # the server tool's searches, billed per search beside the tokens

    def __add__(self, other: ApiUsage) -> ApiUsage:
        return ApiUsage(
            self.input_tokens + other.input_tokens,
            self.cached_tokens + other.cached_tokens,
            self.cache_write_tokens + other.cache_write_tokens,
            self.cache_write_1h_tokens + other.cache_write_1h_tokens,
            self.output_tokens + other.output_tokens,
            self.reasoning_tokens + other.reasoning_tokens,
            self.web_searches + other.web_searches,
        )

    def less(self, earlier: ApiUsage | None) -> ApiUsage:
        """A running total less an ``earlier`` one (none: all of it), no figure below zero."""
        if earlier is None:
            return self
        return ApiUsage(*(max(0, getattr(self, f.name) - getattr(earlier, f.name)) for f in dataclasses.fields(self)))

    @property
    def is_empty(self) -> bool:
        """Zeroed usage (a backend that reports none) is no usage at all."""
        return self.input_tokens == 0 and self.output_tokens == 0


Pricing = tuple[tuple[str, str], ...]
STANDARD_TIERS = frozenset({"default", "auto", "standard"})  # billed at the list price


def service_tier_pricing(tier: Any) -> Pricing:
    """A request's service tier as a price condition (OpenAI's "priority", "flex"); the standard one is none."""
    if not isinstance(tier, str) or not tier or tier.lower() in STANDARD_TIERS:
        return ()
    return (("service_tier", tier.lower()),)


def usage_pricing(usage: Any) -> Pricing:
    """The price conditions an Anthropic usage reports: ``speed`` "fast" (fast mode, its own prices) and
    ``inference_geo`` "us" (US-only inference, 1.1x the token prices); "standard", "global" or none: none."""
    if not isinstance(usage, dict):
        return ()
    found: list[tuple[str, str]] = []
    if usage.get("speed") == "fast":
        found.append(("speed", "fast"))
    if usage.get("inference_geo") == "us":
        found.append(("inference_geo", "us"))
    return tuple(found)


@dataclass(frozen=True)
class RecordedCall:
    """One API response: its output is ``messages[position]`` of its context."""

    position: int
    model: str | None
    timestamp: float | None  # seconds since the epoch, when the producer wrote it
    usage: ApiUsage | None
    # Tokens the API saw in the output that the log's text does not hold, estimated without
    # usage: thinking from its signature, reasoning from its encrypted length.
    hidden_output_estimate: int = 0
    # Made and billed by another session: a fork's copy of its parent's call (see claude_code).
    copied: bool = False
    # What tells this response in another file where the producer marks no copy (Claude Code 1.x's ``--resume``
    # copies the session it resumes into a new file): its id with a digest of what it said and its usage.
    copy_key: str | None = None
    # What the request was billed under beyond its model, as the log records it: Codex's service tier
    # (``("service_tier", "priority")``, "flex"), Claude Code's usage ``speed`` "fast" and ``inference_geo``
    # "us". The price look-up takes them (``price_source``); empty: the standard list price.
    pricing: Pricing = ()
    # The request asked the API to keep every earlier turn's thinking (Claude Code's ``clear_thinking_20251015``
    # ``keep: "all"``: ``claude_code_thinking``), so none leaves the input at a new prompt on any model.
    thinking_kept: bool = False
    # The client's release sent that request only behind a flag its server set per user, which the file does not
    # record (Claude Code 2.0.36-2.1.83): the calibration reads the usage to tell (``calibration.read_thinking``).
    thinking_flag_unknown: bool = False
    # Output tokens counted from what the response said, over the count its log holds: a release that logs the
    # usage as the stream starts (Claude Code 2.1.9-2.1.50: ``claude_code_output``).
    output_counted: int = 0


@dataclass(frozen=True)
class RecordedCompaction:
    """The producer compacted here: ``messages[:position]`` was the history, ``replacement`` the new context."""

    position: int
    before_call: int  # index (in ``calls``) of the first call made after it
    replacement: list[Message]
    # "auto" | "manual" | "load" (a saved chat loaded: no call) | "compactctl" (compactctl wrote it: no call of the
    # producer's, and responses copied after it carry the usage of the history it replaced) | "" (not recorded)
    trigger: str = ""
    pre_tokens: int | None = None  # the context size the producer recorded at the compaction
    partial: bool = False  # some messages were kept verbatim after the boundary


COMPACTCTL = "compactctl"  # the trigger of a compaction compactctl wrote (``RecordedCompaction.trigger``)


def compaction_trigger(summary: list[Message], recorded: str) -> str:
    """A compaction's trigger: compactctl's where its summary (the messages that may hold it) is compactctl's, else
    what the producer recorded."""
    return COMPACTCTL if any(is_compactctl_summary(m) for m in summary) else recorded


@dataclass(frozen=True)
class RecordedContext:
    """One context's whole history (compaction summaries excluded), its calls and the producer's compactions."""

    label: str
    messages: list[Message]
    calls: list[RecordedCall]
    compactions: list[RecordedCompaction] = field(default_factory=list)
    # Calls (indices) before which the producer was restarted on the session (a resume): its
    # hidden prefix (system prompt with the date and git status, tool list) may change there.
    resumes: list[int] = field(default_factory=list)
    # Per call (index), the messages of the history (by index) it sent otherwise than the log holds them: old tool
    # results as a short stand-in, cut by the client or cleared by the API (``claude_code_cleared``).
    stand_ins: dict[int, dict[int, Message]] = field(default_factory=dict)

    def segment_starts(self) -> list[int]:
        """Calls that start a stretch with one hidden prefix: the first, each resume, each compaction and
        each switch of model (``/model``, a fallback): the system prompt names the model, and a model
        of another tokenizer counts the same prefix in other tokens (Opus 4.7's in up to 1.35x)."""
        switches, model = [], None
        for n, call in enumerate(self.calls):
            if call.model and model and call.model != model:
                switches.append(n)
            model = call.model or model
        return sorted({0, *self.resumes, *(c.before_call for c in self.compactions), *switches})

    @property
    def has_usage(self) -> bool:
        return any(call.usage is not None for call in self.calls)


@dataclass(frozen=True)
class RecordedSession:
    format: str
    contexts: list[RecordedContext]
    reported_total: ApiUsage | None = None  # the session total the producer wrote itself, where it does
    unpaired: ApiUsage | None = None  # usage counted for responses the log does not hold (a cut-off session)
    # How many of those are responses beyond the producer's compactions (``compaction_calls``): a
    # response counted and cut off before it was written, a response the client kept nothing of.
    unheld_calls: int = 0
    # A client's side requests that write no message (Claude Code's WebSearch and WebFetch requests), billed in
    # ``unpaired``: counted with the bill's calls.
    side_calls: int = 0
    # Where no cost-state bills them (Claude Code before it wrote one), the side requests' web searches as the tool
    # results count them (``searchCount``), in ``unpaired``: the fee stands in, their tokens are unknown.
    searches_stood_in: int = 0
    # Billed calls off the live thread: on branches a rewind or an edited prompt abandoned (Claude
    # Code keeps their records, with the usage that was billed), never part of a context replayed.
    off_thread: tuple[RecordedCall, ...] = ()
    off_thread_why: str = "branches a rewind or an edited prompt left"  # what left them, as replay's note says
    # The other billed sampling passes of responses that took several (``usage.iterations``: an advisor's on its own
    # model, a server-side compaction's, the executor's after either): no request of their own, each priced at its
    # model, carried as billed by every row (``recorded.iterations``).
    passes_apart: tuple[RecordedCall, ...] = ()
    # The producer's own compaction calls (its summarizing request): how many are billed, those
    # with recorded usage inside ``unpaired``; the usage of those the log records none for,
    # estimated from the request they were (see codex), kept apart from what the log reports.
    compaction_calls: int = 0
    compaction_estimate: ApiUsage | None = None
    compaction_calls_estimated: int = 0
    # The context window the producer recorded for the session (Codex's ``model_context_window``).
    context_window: int | None = None
    # The client release that wrote the file, where its records name one (Claude Code's ``version``: "2.1.337").
    producer_release: tuple[int, int, int] | None = None
    # The session this one was forked from where the file names it and copies none of its calls
    # (Codex's ``forked_from_id``: the history before the fork stays in the parent's file).
    forked_from: str | None = None
    # The history the file's lines are of (Codex's rollout id), and where it goes on from an earlier rollout of the
    # same thread after a revert (``history_base``): that rollout and the thread's 0-based line it is kept up to
    # (``replay.copies``).
    thread: str | None = None
    continues: tuple[str, int] | None = None
    # The sessions that made (and billed) the calls marked ``copied``: a fork's parent.
    copied_from: tuple[str, ...] = ()
    # Calls inside ``unpaired`` whose model the log names (Codex's compactions): priced at that model under those
    # price conditions (the thread's service tier), the rest of those at the session's first model's standard
    # prices; ``estimated_apart`` the same for ``compaction_estimate``.
    priced_apart: tuple[tuple[str | None, ApiUsage, Pricing], ...] = ()
    estimated_apart: tuple[tuple[str | None, ApiUsage, Pricing], ...] = ()
    # Billed calls the file holds nothing of to count (a client's side calls), said in replay's notes.
    not_in_bill: tuple[str, ...] = ()
    # What some of the billed calls are where the thread's turns did not make them (Codex's approvals reviewer, in a
    # rollout of its own), said in replay's notes.
    in_bill: tuple[str, ...] = ()
    # Of the calls marked ``copied``, those another file of the run made (``read_recorded``'s ``billed_elsewhere``):
    # how many, and those files.
    shared_calls: int = 0
    shared_with: tuple[str, ...] = ()

    @property
    def copied_calls(self) -> int:
        return sum(call.copied for context in self.contexts for call in context.calls)

    @property
    def calls(self) -> int:
        return sum(len(context.calls) for context in self.contexts)

    def copy_keys(self) -> dict[str, float | None]:
        """The ``copy_key`` of each call billed here (copied ones not), with when it was first written."""
        keys: dict[str, float | None] = {}
        for call in [*(c for context in self.contexts for c in context.calls), *self.off_thread]:
            if call.copy_key is not None and not call.copied:
                keys.setdefault(call.copy_key, call.timestamp)
        return keys

    @property
    def has_usage(self) -> bool:
        """Any billed call (one a revert or a rewind left off the live thread too: the file's bill is its own)."""
        return any(context.has_usage for context in self.contexts) or any(c.usage is not None for c in self.off_thread)

    def usage_total(self) -> ApiUsage:
        """The sum of the paired per-call usage, off-thread calls and passes apart included, copied ones not (billed
        elsewhere)."""
        total = ApiUsage(0)
        for call in [*(c for context in self.contexts for c in context.calls), *self.off_thread, *self.passes_apart]:
            if call.usage is not None and not call.copied:
                total = total + call.usage
        return total


SUBAGENT = "subagent"  # what a subagent's own context is labelled by (``with_subagents``), and found by


def with_subagents(session: RecordedSession, children: list[tuple[str, RecordedSession]]) -> RecordedSession:
    """``session`` with the calls of its subagents' own files (each ``(name, session)``: Codex's rollouts, Gemini
    CLI's chats) billed in it, each one's own context labelled ``subagent <name>`` (its subagents' keep theirs), a
    label one already has numbered on: calibration fits a context's hidden prefix by its label."""
    if not children:
        return session
    contexts, merged = list(session.contexts), session
    labels = {c.label for c in contexts}
    for name, child in children:
        for context in child.contexts:
            if not context.calls:
                continue
            label = _unused(f"{SUBAGENT} {name}" if context.label == "main" else context.label, labels)
            labels.add(label)
            contexts.append(dataclasses.replace(context, label=label))
        merged = dataclasses.replace(
            merged,
            # The threads' own totals: the session's is their sum (the check of the calls paired), where each has one.
            reported_total=_sum(merged.reported_total, child.reported_total, both=True),
            unpaired=_sum(merged.unpaired, child.unpaired),
            unheld_calls=merged.unheld_calls + child.unheld_calls,
            compaction_calls=merged.compaction_calls + child.compaction_calls,
            compaction_estimate=_sum(merged.compaction_estimate, child.compaction_estimate),
            compaction_calls_estimated=merged.compaction_calls_estimated + child.compaction_calls_estimated,
            priced_apart=merged.priced_apart + child.priced_apart,
            estimated_apart=merged.estimated_apart + child.estimated_apart,
            off_thread=merged.off_thread + child.off_thread,
            passes_apart=merged.passes_apart + child.passes_apart,
            copied_from=tuple(sorted({*merged.copied_from, *child.copied_from})),
        )
    return dataclasses.replace(merged, contexts=contexts)


def _unused(label: str, taken: set[str]) -> str:
    """``label``, or ``label 2``, ``label 3``, ... where it is taken."""
    found, n = label, 2
    while found in taken:
        found, n = f"{label} {n}", n + 1
    return found


def _sum(one: ApiUsage | None, other: ApiUsage | None, both: bool = False) -> ApiUsage | None:
    if one is None or other is None:
        return None if both else one or other
    return one + other


def timestamp_of(value: Any) -> float | None:
    """ISO-8601 (``2025-08-06T16:45:18.724Z``) to epoch seconds; None where absent or unreadable."""
    if not isinstance(value, str) or not value:
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


# A pause this long before a call means the session was resumed, not just left idle (Claude Code
# writes no record of a resume; measured: the hidden prefix changed across the 8-hour pause of a
# real session, and not across 26-minute ones).
RESUME_GAP_SECONDS = 3600


def resumes_by_gap(calls: list[RecordedCall]) -> list[int]:
    return [
        i
        for i in range(1, len(calls))
        if calls[i].timestamp is not None
        and calls[i - 1].timestamp is not None
        and calls[i].timestamp - calls[i - 1].timestamp > RESUME_GAP_SECONDS  # type: ignore[operator]
    ]


def digest_key(label: str, said: object) -> str:
    """A ``RecordedCall.copy_key``: what names the call (its thread, record or message id) and a digest of what it
    said and its usage, which a copy of the file (a user's backup, plain ``compact``'s output) repeats."""
    return f"{label} {blake2b(jsonbytes.dumps(said), digest_size=10).hexdigest()}"


def marked_shared(
    calls: list[RecordedCall], billed_elsewhere: Mapping[str, str]
) -> tuple[list[RecordedCall], dict[str, str]]:
    """The calls another file of the run bills (their ``copy_key`` among ``billed_elsewhere``, ``replay.copies``)
    marked copied, billed there; and those not copied already (a fork's are its parent's), key -> that file."""
    keys = (c.copy_key for c in calls if c.copy_key is not None and not c.copied)
    shared = {key: billed_elsewhere[key] for key in keys if key in billed_elsewhere}
    if not shared:
        return calls, {}
    return [dataclasses.replace(c, copied=True) if c.copy_key in shared else c for c in calls], shared


def integer(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


@dataclass(frozen=True)
class InRun:
    """What the other files of one run tell a producer's reader (``replay.copies``); a file read alone: ``ALONE``.

    ``billed_elsewhere``: the ``copy_key``s of calls another file of the run made, each with that file's name: where
    a file opens a context with them they are copies, marked ``copied`` (only Claude Code 1.x copies unmarked).
    ``reverted_at``: the line another file of the run goes on from this one's thread after (a Codex revert): the
    calls from there are off the live thread."""

    billed_elsewhere: Mapping[str, str] = field(default_factory=dict)
    reverted_at: int | None = None


ALONE = InRun()

Reader = Callable[[list[Record], str, InRun], RecordedSession]


@dataclass(frozen=True)
class Producer:
    """A producer whose files record each API call's usage (its format's ``carries_usage``): its
    reader, and what calibration and replay take of it beside the files."""

    name: str  # its format's name
    read: Reader
    provider: str  # whose API it calls: how its usage is priced (Anthropic bills cache writes apart)
    # The hidden prefix its requests carry (system prompt, tools), for a file with no usage to fit it
    # on: the median measured on the real sessions in shared/transcripts (docs/calibration.md).
    prior_prefix: int = 0


def producers() -> dict[str, Producer]:
    """The producers by name; one module each, imported when first asked for."""
    from compactctl.recorded import claude_code, codex, gemini

    return {
        claude_code.NAME: Producer(claude_code.NAME, claude_code.read, "anthropic", prior_prefix=14_000),
        codex.NAME: Producer(codex.NAME, codex.read, "openai", prior_prefix=5_500),
        # No real Gemini CLI session with usage is in shared/: what the real 0.61 client sends before
        # the conversation (system instruction, tools, its <session_context>), in cl100k: the 8,628
        # tokens cached across its compression in tests/formats/data/real-clients/gemini-cli-0.61.0-usage.jsonl.
        gemini.NAME: Producer(gemini.NAME, gemini.read, "google", prior_prefix=8_600),
    }


def producer(name: str) -> Producer | None:
    """The producer whose format is ``name``; None for a format that records no calls."""
    return producers().get(name)


def read_recorded(
    format_name: str,
    records: list[Record],
    path: str,
    billed_elsewhere: Mapping[str, str] | None = None,
    reverted_at: int | None = None,
) -> RecordedSession | None:
    """The recorded calls of a file in a producer's format; None for formats that record no calls
    (``billed_elsewhere``, ``reverted_at``: what the run's other files tell it, ``InRun``)."""
    found = producer(format_name)
    return found.read(records, path, InRun(billed_elsewhere or {}, reverted_at)) if found is not None else None
