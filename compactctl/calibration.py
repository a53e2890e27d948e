"""Calibration: fit, from a file's own usage, what its log does not hold, and say how well it fits.

For every recorded call the API reported its input. What compactctl can count from the log
is the text of the context the call was sent (the messages since the producer's last
compaction, or its replacement history). The rest, measured on real sessions:

- a **hidden prefix** per context: the harness's system prompt, tool schemas and
  environment, never written to the log (20-35k tokens for Claude Code, 5-7k for Codex);
- **re-sent thinking/reasoning**: every earlier response is sent again, and billed as its
  full ``output_tokens``, thinking included, of which the log shows a quarter to a third;
- the **tokenizer**: Claude does not count in cl100k; ctok's families reconstruct it, and
  the family that fits is chosen per file (two sessions naming one model used different
  ones), else cl100k times a fitted ratio;
- **attachments** (Claude Code's system reminders) and **images** (by the provider's rule).

The model of a call's input: ``prefix[context] + ratio * text + resent + images``, where
``text`` is the log's text (attachments included) in the chosen encoding and ``resent`` the
earlier responses' output tokens (or their estimate from signature or encrypted length
where a call has no usage). ``ratio`` and the prefixes are fitted by least squares on
relative error; the fit is judged on held-out calls: fit on the first half of each
context's calls, predict the second half.
"""

from __future__ import annotations

import dataclasses
import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from compactctl.errors import InputError
from compactctl.recorded import RecordedContext, RecordedSession
from compactctl.tokens import (
    DEFAULT_ENCODING,
    REPLY_PRIMING_TOKENS,
    TokenCounter,
    claude_tokens_available,
    counter_for,
    encoding_for_model,
    provider_of,
)
from compactctl.transcript import Message

# Stated priors for a file with no usage (medians measured on the real sessions in
# shared/transcripts, see docs/calibration.md): hidden prefix per producer, and Claude's
# tokens per cl100k token when ctok is not installed.
PRIOR_PREFIX = {"claude-code": 14_000, "codex": 5_500}
PRIOR_CLAUDE_RATIO_CL100K = 1.2
UNEXPLAINED_WARNING = 0.03  # warn when more than this share of the reported input stays unexplained
FAMILY_SAMPLE_CALLS = 200  # per context, the calls the tokenizer family is chosen on


@dataclass(frozen=True)
class CallFeatures:
    """One call's input, as reported and as the parts the log lets us count."""

    context: str
    reported: int | None  # usage.input_tokens; None where the call has no usage
    text: int  # the log's text in the chosen encoding (attachments included)
    attachments: int  # of which attachments
    resent: int  # earlier responses' output tokens (thinking included), or their estimate
    images: int  # images by the provider's rule
    raw: int  # what compactctl counted before calibration: cl100k, no attachments, + priming
    raw_visible_resent: int  # the cl100k count of the earlier responses' visible text (in raw)
    raw_images: int  # the raw count's figure for the images (in raw)
    raw_attachments: int  # the cl100k count of the attachments (not in raw)
    messages: int = 0  # messages in the context sent


@dataclass(frozen=True)
class ErrorSummary:
    """Per-call relative error of the predicted input against the reported one."""

    calls: int
    median: float
    p90: float

    @staticmethod
    def of(errors: Sequence[float]) -> ErrorSummary:
        if not errors:
            return ErrorSummary(0, 0.0, 0.0)
        ordered = sorted(errors)
        return ErrorSummary(len(ordered), statistics.median(ordered), _quantile(ordered, 0.9))


@dataclass(frozen=True)
class GapSplit:
    """Reported input, summed over the calls, split into what explains it."""

    reported: int
    counted: int  # the raw count
    prefix: int
    resent_thinking: int
    tokenizer: int
    attachments: int
    images: int
    unexplained: int
    harness_per_message: int = 0  # what the harness adds to each message (reminders after tool results...)

    @property
    def calibrated(self) -> int:
        return self.reported - self.unexplained


@dataclass(frozen=True)
class Calibration:
    """The fitted parameters of one file, and how well they predict its calls."""

    source: str  # "usage" (fitted) or "prior" (no usage in the file)
    encoding: str
    provider: str
    ratio: float  # API tokens per counted token of the log's text
    prefix: dict[str, int]  # hidden prefix per context label
    default_prefix: int  # for a context with no fitted prefix (a summary's new context...)
    raw: ErrorSummary = ErrorSummary(0, 0.0, 0.0)
    calibrated: ErrorSummary = ErrorSummary(0, 0.0, 0.0)
    held_out: ErrorSummary = ErrorSummary(0, 0.0, 0.0)
    gap: GapSplit | None = None
    candidates: dict[str, float] = field(default_factory=dict)  # encoding -> median error of its fit
    warnings: tuple[str, ...] = ()
    per_message: float = 0.0  # tokens the harness adds to every message it sends

    def prefix_of(self, context: str) -> int:
        return self.prefix.get(context, self.default_prefix)


# --- features -----------------------------------------------------------------------------


def _images_of(message: Message, counter: TokenCounter) -> int:
    content = message.get("content")
    if not isinstance(content, list):
        return 0
    return sum(counter.part(p) for p in content if isinstance(p, dict) and p.get("type") == "image_url")


def is_attachment(message: Message) -> bool:
    return message.get("role") == "user" and str(message.get("content") or "").startswith("<system-reminder>\n")


@dataclass(frozen=True)
class MessageCost:
    """What one message of a recorded context costs the API when sent, and its raw count."""

    text: int
    images: int
    resent: int  # for a response: its output tokens (or estimate); 0 otherwise
    reasoning: int  # of which reasoning that OpenAI drops once a later user message is sent
    attachment: bool
    raw: int
    raw_images: int
    raw_attachment: int


def message_costs(
    context: RecordedContext, counter: TokenCounter, raw_counter: TokenCounter, until: int | None = None
) -> dict[int, MessageCost]:
    """Per message index of the history (and per id of replacement messages), its cost.

    A response is re-sent as its output tokens. OpenAI keeps a response's reasoning in the
    context only until the next user message (measured: the reported input of a Codex call
    drops by the previous turn's reasoning tokens when a prompt is sent); Claude keeps the
    thinking of earlier turns (measured: coefficient 1.00 on consecutive calls).
    """
    drops_reasoning = counter.provider != "anthropic"
    output_at = {call.position: call for call in context.calls}
    costs: dict[int, MessageCost] = {}
    end = len(context.messages) if until is None else until
    messages = [*context.messages, *(m for c in context.compactions for m in c.replacement if c.position < end)]
    for index, message in enumerate(messages):
        if end <= index < len(context.messages):
            continue
        key = index if index < len(context.messages) else -id(message)
        call = output_at.get(index) if index < len(context.messages) else None
        images = _images_of(message, counter)
        raw_images = _images_of(message, raw_counter)
        attachment = is_attachment(message)
        raw = raw_counter.message(message)
        if call is not None:
            if call.usage is not None:
                resent, reasoning = call.usage.output_tokens, call.usage.reasoning_tokens
            else:
                resent, reasoning = call.hidden_output_estimate + counter.message(message), call.hidden_output_estimate
            costs[key] = MessageCost(0, 0, resent, reasoning if drops_reasoning else 0, False, raw, raw_images, 0)
            continue
        text = counter.message(message) - images
        encrypted = int(message.get("encrypted_chars") or 0)  # an opaque compaction item's estimate
        costs[key] = MessageCost(
            text, images, encrypted, 0, attachment, 0 if attachment else raw, raw_images, raw if attachment else 0
        )
    return costs


def call_features(
    context: RecordedContext, counter: TokenCounter, raw_counter: TokenCounter, calls: int | None = None
) -> list[CallFeatures]:
    """Each call's features over the context the API actually saw (the producer's compactions applied).

    With ``calls``, only the first that many calls (and the messages before them) are counted.
    """
    until = None if calls is None or calls >= len(context.calls) else context.calls[calls].position
    costs = message_costs(context, counter, raw_counter, until)
    compaction_at = {c.position: c for c in context.compactions}
    sums = _Sums()
    features: list[CallFeatures] = []
    at_position = {call.position: (n, call) for n, call in enumerate(context.calls)}
    segment = segment_of(context)
    for index, message in enumerate(context.messages[:until]):
        if index in compaction_at:
            sums = _Sums()
            for kept in compaction_at[index].replacement:
                cost = costs.get(-id(kept))
                if cost is None:  # a preserved message of the history itself
                    position = next(i for i, m in enumerate(context.messages) if m is kept)
                    cost = costs[position]
                sums.add(cost, kept)
        if index in at_position:
            n, call = at_position[index]
            features.append(sums.features(segment[n], call.usage.input_tokens if call.usage else None))
        sums.add(costs[index], message)
    return features


def segment_key(label: str, start: int) -> str:
    """The hidden prefix's key for the stretch of a context's calls starting at call ``start``."""
    return label if start == 0 else f"{label}@{start}"


def segment_of(context: RecordedContext) -> list[str]:
    """Per call, the key of its hidden prefix (it changes at resumes and compactions)."""
    starts = context.segment_starts()
    keys: list[str] = []
    current = segment_key(context.label, 0)
    for n in range(len(context.calls)):
        if n in starts:
            current = segment_key(context.label, n)
        keys.append(current)
    return keys


class _Sums:
    def __init__(self) -> None:
        self.text = self.attachments = self.resent = self.images = self.turn_reasoning = self.messages = 0
        self.raw = self.raw_visible = self.raw_images = self.raw_attachments = 0

    def add(self, cost: MessageCost, message: Message) -> None:
        if message.get("role") == "user" and self.turn_reasoning:
            self.resent -= self.turn_reasoning  # the earlier turns' reasoning leaves the context
            self.turn_reasoning = 0
        self.turn_reasoning += cost.reasoning
        self.messages += 1
        self.text += cost.text
        self.attachments += cost.text if cost.attachment else 0
        self.resent += cost.resent
        self.images += cost.images
        self.raw += cost.raw
        self.raw_visible += cost.raw if cost.resent and not cost.text else 0
        self.raw_images += cost.raw_images
        self.raw_attachments += cost.raw_attachment

    def features(self, label: str, reported: int | None) -> CallFeatures:
        return CallFeatures(
            label,
            reported,
            self.text,
            self.attachments,
            self.resent,
            self.images,
            self.raw + REPLY_PRIMING_TOKENS,
            self.raw_visible,
            self.raw_images,
            self.raw_attachments,
            self.messages,
        )


# --- fitting --------------------------------------------------------------------------------


def _quantile(ordered: Sequence[float], q: float) -> float:
    if not ordered:
        return 0.0
    position = q * (len(ordered) - 1)
    low = int(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


HELD_OUT_WARNING = 0.05  # a file whose fit predicts its held-out calls worse than this is warned about
# How strongly the ratio is pulled toward its prior (1.0: the encoding is the provider's own or
# ctok's reconstruction of it), in the units of the fit's weighted spread of the text: a file
# whose text barely changes between calls cannot tell its ratio, and keeps the prior. The
# per-message term is pulled toward 0 the same way. Both were chosen on the held-out error of
# the real sessions in shared/transcripts (docs/calibration.md has the sweep).
RATIO_PRIOR_WEIGHT = 0.002
MESSAGE_PRIOR_WEIGHT = 0.005


@dataclass(frozen=True)
class Fit:
    """A call's input as ``prefix[segment] + ratio * text + per_message * messages + resent + images``."""

    ratio: float
    per_message: float  # tokens the harness adds to each message it sends (a reminder after each tool result...)
    prefixes: dict[str, float]

    def predict(self, f: CallFeatures, default: float) -> float:
        prefix = self.prefixes.get(f.context, default)
        return prefix + self.ratio * f.text + self.per_message * f.messages + f.resent + f.images


# The per-message term is fitted in units of this many tokens, so one prior weight suits both terms.
MESSAGE_SCALE = 100.0


def fit(features: Sequence[CallFeatures], prior_ratio: float = 1.0) -> Fit:
    """Ratio, per-message tokens and per-segment prefixes minimising squared relative error.

    With an intercept per segment the least-squares solution is closed form on the
    within-segment deviations: a 2x2 system for the ratio and the per-message term, each shrunk
    toward its prior (``prior_ratio``; 0 tokens per message), then each prefix from its
    segment's means.
    """
    usable = [f for f in features if f.reported]
    if not usable:
        return Fit(prior_ratio, 0.0, {})
    groups: dict[str, list[CallFeatures]] = {}
    for f in usable:
        groups.setdefault(f.context, []).append(f)
    means: dict[str, tuple[float, float, float]] = {}
    sxx = sxn = snn = sxy = sny = 0.0
    for label, group in groups.items():
        weights = [1.0 / (f.reported or 1) ** 2 for f in group]
        total = sum(weights)
        x_mean = sum(w * f.text for w, f in zip(weights, group, strict=True)) / total
        n_mean = sum(w * f.messages * MESSAGE_SCALE for w, f in zip(weights, group, strict=True)) / total
        y_mean = sum(w * _target(f) for w, f in zip(weights, group, strict=True)) / total
        means[label] = (x_mean, n_mean, y_mean)
        for w, f in zip(weights, group, strict=True):
            dx, dn, dy = f.text - x_mean, f.messages * MESSAGE_SCALE - n_mean, _target(f) - y_mean
            sxx += w * dx * dx
            sxn += w * dx * dn
            snn += w * dn * dn
            sxy += w * dx * dy
            sny += w * dn * dy
    a, b, d = sxx + RATIO_PRIOR_WEIGHT, sxn, snn + MESSAGE_PRIOR_WEIGHT
    determinant = a * d - b * b
    ratio = ((sxy + RATIO_PRIOR_WEIGHT * prior_ratio) * d - b * sny) / determinant
    scaled = (a * sny - b * (sxy + RATIO_PRIOR_WEIGHT * prior_ratio)) / determinant
    if scaled < 0:  # a harness removes nothing from a message: fit the ratio alone
        ratio, scaled = (sxy + RATIO_PRIOR_WEIGHT * prior_ratio) / (sxx + RATIO_PRIOR_WEIGHT), 0.0
    if not 0.5 <= ratio <= 3.0:  # not identified by these calls: keep the priors
        ratio, scaled = prior_ratio, 0.0
    prefixes = {label: y - ratio * x - scaled * n for label, (x, n, y) in means.items()}
    return Fit(ratio, scaled * MESSAGE_SCALE, prefixes)


def _target(f: CallFeatures) -> float:
    """What the fit must explain: the reported input less what is counted exactly."""
    return float((f.reported or 0) - f.resent - f.images)


def _errors(features: Iterable[CallFeatures], model: Fit, default: float) -> list[float]:
    return [abs(model.predict(f, default) - f.reported) / f.reported for f in features if f.reported]


def _halves(features: Sequence[CallFeatures]) -> tuple[list[CallFeatures], list[CallFeatures]]:
    """The first half of each context's calls with usage, and the rest."""
    first: list[CallFeatures] = []
    second: list[CallFeatures] = []
    by_context: dict[str, list[CallFeatures]] = {}
    for f in features:
        if f.reported:
            by_context.setdefault(f.context, []).append(f)
    for group in by_context.values():
        cut = (len(group) + 1) // 2
        first += group[:cut]
        second += group[cut:]
    return first, second


def candidate_encodings(model: str | None, claude_tokens: str = "fitted") -> list[str]:
    """The encodings a file's text is fitted in: the model's own, or for Claude cl100k (``fitted``)
    and, with ``claude_tokens="ctok"``, ctok's families beside it (the best fit is kept)."""
    if provider_of(model) == "anthropic":
        if claude_tokens == "ctok":
            if not claude_tokens_available():
                raise InputError(
                    "--claude-tokens ctok needs ctok: pip install 'compactctl[claude]' "
                    "(on Python 3.11: pip install --ignore-requires-python ctok regex)"
                )
            return ["claude-v3", "claude-v4.7", DEFAULT_ENCODING]
        return [DEFAULT_ENCODING]
    return [encoding_for_model(model)]


def _median_model(session: RecordedSession) -> str | None:
    models = [call.model for context in session.contexts for call in context.calls if call.model]
    return max(set(models), key=models.count) if models else None


def calibrate(session: RecordedSession, producer: str, claude_tokens: str = "fitted") -> Calibration:
    """Fit the file's calibration from its usage, or fall back to the stated priors."""
    model = _median_model(session)
    provider = provider_of(model)
    raw_counter = counter_for(DEFAULT_ENCODING)  # what compactctl counts uncalibrated (OpenAI image rule)
    encodings = candidate_encodings(model, claude_tokens)
    if not session.has_usage:
        encoding = encodings[0]
        ratio = PRIOR_CLAUDE_RATIO_CL100K if provider == "anthropic" and encoding == DEFAULT_ENCODING else 1.0
        prior = PRIOR_PREFIX.get(producer, 0)
        return Calibration("prior", encoding, provider, ratio, {}, prior, warnings=("no usage: stated priors",))
    candidates: dict[str, float] = {}
    for encoding in encodings:
        # The family is chosen on the first calls of the fitting half only (ctok is slow: a few
        # hundred calls tell the families apart), so the held-out error stays honest.
        counter = counter_for(encoding, provider)
        sample = [
            f
            for c in session.contexts
            for f in call_features(c, counter, raw_counter, min((len(c.calls) + 1) // 2, FAMILY_SAMPLE_CALLS))
        ]
        trial = fit(sample, _prior_ratio(provider, encoding))
        errors = _errors(sample, trial, _default_prefix(trial.prefixes, producer))
        candidates[encoding] = statistics.median(errors) if errors else 0.0
    encoding = min(candidates, key=lambda name: candidates[name])
    counter = counter_for(encoding, provider)
    features = [f for c in session.contexts for f in call_features(c, counter, raw_counter)]
    first, second = _halves(features)
    held = fit(first, _prior_ratio(provider, encoding))
    whole = fit(features, _prior_ratio(provider, encoding))
    default = _default_prefix(whole.prefixes, producer)
    raw_errors = [abs(f.raw - f.reported) / f.reported for f in features if f.reported]
    calibrated_errors = _errors(features, whole, default)
    held_errors = _errors(second, held, _default_prefix(held.prefixes, producer))
    gap = gap_split(features, whole, default)
    warnings: list[str] = []
    if gap.reported and abs(gap.unexplained) > UNEXPLAINED_WARNING * gap.reported:
        share = gap.unexplained / gap.reported
        warnings.append(f"{share:+.1%} of the reported input is not explained by the calibration")
    held_summary = ErrorSummary.of(held_errors)
    if held_summary.median > HELD_OUT_WARNING:
        warnings.append(
            f"held-out per-call error {held_summary.median:.1%} (median) is over {HELD_OUT_WARNING:.0%}: "
            "the calibrated estimates of this file are rough"
        )
    return Calibration(
        "usage",
        encoding,
        provider,
        round(whole.ratio, 4),
        {label: round(value) for label, value in whole.prefixes.items()},
        round(default),
        ErrorSummary.of(raw_errors),
        ErrorSummary.of(calibrated_errors),
        held_summary,
        gap,
        {name: round(value, 4) for name, value in candidates.items()},
        tuple(warnings),
        round(whole.per_message, 2),
    )


def _prior_ratio(provider: str, encoding: str) -> float:
    return PRIOR_CLAUDE_RATIO_CL100K if provider == "anthropic" and encoding == DEFAULT_ENCODING else 1.0


def _default_prefix(prefixes: dict[str, float], producer: str) -> float:
    return statistics.median(prefixes.values()) if prefixes else float(PRIOR_PREFIX.get(producer, 0))


def gap_split(features: Sequence[CallFeatures], model: Fit, default: float) -> GapSplit:
    """The reported input over the calls with usage, split so the parts add up to it exactly."""
    used = [f for f in features if f.reported]
    reported = sum(f.reported or 0 for f in used)
    counted = sum(f.raw for f in used)
    prefix = round(sum(model.prefixes.get(f.context, default) for f in used)) - REPLY_PRIMING_TOKENS * len(used)
    resent = sum(f.resent - f.raw_visible_resent for f in used)
    attachments = round(sum(model.ratio * f.attachments for f in used))
    tokenizer = round(sum(model.ratio * (f.text - f.attachments) for f in used)) - sum(
        f.raw - REPLY_PRIMING_TOKENS - f.raw_visible_resent - f.raw_images for f in used
    )
    per_message = round(sum(model.per_message * f.messages for f in used))
    images = sum(f.images - f.raw_images for f in used)
    explained = counted + prefix + resent + tokenizer + attachments + images + per_message
    return GapSplit(
        reported, counted, prefix, resent, tokenizer, attachments, images, reported - explained, per_message
    )


def calibration_json(calibration: Calibration) -> dict[str, Any]:
    """The parameters, their held-out error and the gap split, as JSON."""
    errors = {
        name: {"calls": summary.calls, "median": round(summary.median, 5), "p90": round(summary.p90, 5)}
        for name, summary in (
            ("raw", calibration.raw),
            ("calibrated", calibration.calibrated),
            ("held_out", calibration.held_out),
        )
    }
    return {
        "source": calibration.source,
        "encoding": calibration.encoding,
        "provider": calibration.provider,
        "ratio": calibration.ratio,
        "prefix": calibration.prefix,
        "default_prefix": calibration.default_prefix,
        "per_message": calibration.per_message,
        "encoding_fit": calibration.candidates,
        "error": errors,
        "gap": dataclasses.asdict(calibration.gap) if calibration.gap else None,
        "warnings": list(calibration.warnings),
    }


def session_report(session: RecordedSession, producer: str, claude_tokens: str = "fitted") -> dict[str, Any]:
    """What ``report`` says of a recorded session: reported vs counted vs calibrated input, the gap
    split, the calibration and its held-out error, and what the producer's compactions replaced."""
    calibration = calibrate(session, producer, claude_tokens)
    counter = counter_for(DEFAULT_ENCODING)
    gap = calibration.gap
    last = [(c, context) for context in session.contexts for c in context.compactions[-1:]]
    before_last = [m for compaction, context in last for m in context.messages[: compaction.position]]
    return {
        "calls": session.calls,
        "reported_input_tokens": gap.reported if gap else None,
        "counted_input_tokens": gap.counted if gap else None,
        "calibrated_input_tokens": gap.calibrated if gap else None,
        "gap": {key: value for key, value in dataclasses.asdict(gap).items() if key not in ("reported", "counted")}
        if gap
        else None,
        "calibration": calibration_json(calibration),
        "producer_compactions": sum(len(context.compactions) for context in session.contexts),
        "history_before_last_compaction": {"messages": len(before_last), "tokens": counter.messages(before_last)},
    }
