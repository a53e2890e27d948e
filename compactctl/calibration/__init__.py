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
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from compactctl.calibration.features import (
    PRIOR_CLAUDE_RATIO_CL100K,
    CallFeatures,
    MessageCost,
    call_features,
    is_attachment,
    message_costs,
    segment_key,
    segment_of,
)
from compactctl.calibration.fit import (
    HELD_OUT_WARNING,
    ErrorSummary,
    Fit,
    errors_of,
    fit,
    halves,
)
from compactctl.calibration.steps import STEP_PASSES, unlogged_steps
from compactctl.errors import InputError
from compactctl.recorded import RecordedSession
from compactctl.tokens import (
    DEFAULT_ENCODING,
    REPLY_PRIMING_TOKENS,
    TokenCounter,
    claude_tokens_available,
    counter_for,
    encoding_for_model,
    provider_of,
)

__all__ = [
    "HELD_OUT_WARNING",
    "Calibration",
    "CallFeatures",
    "ErrorSummary",
    "Fit",
    "GapSplit",
    "MessageCost",
    "calibrate",
    "calibration_json",
    "call_features",
    "candidate_encodings",
    "fit",
    "gap_split",
    "is_attachment",
    "message_costs",
    "read_thinking",
    "segment_key",
    "segment_of",
    "session_report",
]

# Stated priors for a file with no usage (medians measured on the real sessions in
# shared/transcripts, see docs/calibration.md): Claude's tokens per cl100k token when ctok is
# not installed; the hidden prefix is each producer's own (``recorded.Producer.prior_prefix``).
UNEXPLAINED_WARNING = 0.03  # warn when more than this share of the reported input stays unexplained
FAMILY_SAMPLE_CALLS = 200  # per context, the calls the tokenizer family is chosen on


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
    unlogged: int = 0  # what the harness sent that no record holds, measured as steps in the usage

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
    # Per context label, per message index: tokens the usage shows the harness sent after that
    # message and no record holds (``calibration.steps``).
    unlogged: dict[str, dict[int, int]] = field(default_factory=dict)
    held_out_errors: tuple[float, ...] = ()  # each held-out call's relative error (pooled over files in bench/)
    # The same calls predicted by the held-out fit knowing the steps the recorded usage shows before
    # each (``_anchored``): what replay knows of a simulated context, which carries every step.
    anchored_errors: tuple[float, ...] = ()

    def unlogged_of(self, label: str) -> dict[int, int]:
        return self.unlogged.get(label, {})

    def prefix_of(self, context: str) -> int:
        return self.prefix.get(context, self.default_prefix)


def candidate_encodings(model: str | None, claude_tokens: str = "fitted") -> list[str]:
    """The encodings a file's text is fitted in: the model's own, or for Claude cl100k (``fitted``)
    and, with ``claude_tokens="ctok"``, ctok's families beside it (the best fit is kept)."""
    if provider_of(model) == "anthropic":
        if claude_tokens == "ctok":
            if not claude_tokens_available():
                raise InputError(
                    "`claude_tokens` ctok needs ctok: pip install 'compactctl[claude]' "
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
        prior = _prior_prefix(producer)
        return Calibration("prior", encoding, provider, ratio, {}, prior, warnings=("no usage: stated priors",))
    candidates: dict[str, float] = {}
    for encoding in encodings:
        # The family is chosen on the first calls of the fitting half only (ctok is slow: a few
        # hundred calls tell the families apart), so the held-out error stays honest.
        errors = _sample_errors(session, counter_for(encoding, provider), raw_counter, provider, producer)
        candidates[encoding] = statistics.median(errors) if errors else 0.0
    encoding = min(candidates, key=lambda name: candidates[name])
    held, second, held_steps, whole, features, steps, anchored = _fits(
        session, counter_for(encoding, provider), raw_counter, _prior_ratio(provider, encoding), producer
    )
    default = _default_prefix(whole.prefixes, producer)
    raw_errors = [abs(f.raw - f.reported) / f.reported for f in features if f.reported]
    calibrated_errors = errors_of(features, whole, default)
    held_errors = errors_of(second, held, _default_prefix(held.prefixes, producer))
    gap = gap_split(features, whole, default)
    warnings: list[str] = []
    if gap.reported and abs(gap.unexplained) > UNEXPLAINED_WARNING * gap.reported:
        share = gap.unexplained / gap.reported
        warnings.append(f"{share:+.1%} of the reported input is not explained by the calibration")
    held_summary = ErrorSummary.of(held_errors)
    over = held_out_over(held_summary)
    if over:
        unknown = sum(found - held_steps.get(label, {}).get(at, 0) for label, at, found in _positions(steps))
        why = (
            f"; {unknown:,} tokens the harness sent after the fitting half are in no record"
            " (reminders it did not log), which no fit on the log can foresee"
            if unknown > 0
            else ""
        )
        warnings.append(
            f"held-out per-call error {over} is over {HELD_OUT_WARNING:.0%}: "
            f"the calibrated estimates of this file are rough{why}"
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
        steps,
        tuple(held_errors),
        tuple(anchored),
    )


# The usage must fit the calls sent back their earlier turns' thinking clearly better than the calls sent without
# it (mean per-call error of the fitting half, with neither reading's steps known) before it is read as sent:
# a file with no thinking fits both alike and keeps the reading the release's default gives.
KEPT_THINKING_FITS_BETTER = 0.5


def read_thinking(session: RecordedSession, producer: str) -> RecordedSession:
    """``session`` with the calls whose client may have asked the API to keep earlier turns' thinking
    (``RecordedCall.thinking_flag_unknown``) read as the usage says: kept where the fitting half of the calls
    fits that reading far better (the input grows by the thinking at each prompt, where the API would drop it).

    Measured on the real Claude Code 2.1.84's session against the loopback fake (``keep: "all"`` sent),
    labelled 2.1.83 (the release before, whose request the file cannot tell): read as not sent, its held-out
    error was 10.7 % / 14.3 % (five unlogged steps of 8,656 tokens in all); read from the usage, 0.02 %."""
    if not any(c.thinking_flag_unknown and not c.thinking_kept for x in session.contexts for c in x.calls):
        return session
    kept = dataclasses.replace(
        session,
        contexts=[
            dataclasses.replace(
                context,
                calls=[
                    dataclasses.replace(c, thinking_kept=True) if c.thinking_flag_unknown else c for c in context.calls
                ],
            )
            for context in session.contexts
        ],
    )
    provider = provider_of(_median_model(session))
    counter, raw_counter = counter_for(DEFAULT_ENCODING, provider), counter_for(DEFAULT_ENCODING)
    errors = []
    for reading in (session, kept):
        found = _sample_errors(reading, counter, raw_counter, provider, producer)
        errors.append(statistics.fmean(found) if found else 0.0)
    return kept if errors[1] < KEPT_THINKING_FITS_BETTER * errors[0] else session


def _sample_errors(
    session: RecordedSession, counter: TokenCounter, raw_counter: TokenCounter, provider: str, producer: str
) -> list[float]:
    """Per-call errors of a plain fit (no steps) on the first calls of each context's fitting half: what the
    tokenizer family and the thinking reading are chosen on, so the held-out error stays honest."""
    sample = [
        f
        for c in session.contexts
        for f in call_features(c, counter, raw_counter, min((len(c.calls) + 1) // 2, FAMILY_SAMPLE_CALLS))
    ]
    model = fit(sample, _prior_ratio(provider, counter.encoding))
    return errors_of(sample, model, _default_prefix(model.prefixes, producer))


def held_out_over(summary: ErrorSummary) -> str:
    """Which of the held-out error's median and p90 are over ``HELD_OUT_WARNING``, with their figures
    (``"4.1% (p90)"``); "" where neither is: a few calls far off are as much a warning as all a bit off."""
    over = [f"{value:.1%} ({name})" for name, value in (("median", summary.median), ("p90", summary.p90))]
    flags = [summary.median > HELD_OUT_WARNING, summary.p90 > HELD_OUT_WARNING]
    return ", ".join(text for text, flag in zip(over, flags, strict=True) if flag)


Steps = dict[str, dict[int, int]]  # per context label, per message index: unlogged tokens


def _fits(
    session: RecordedSession, counter: TokenCounter, raw_counter: TokenCounter, prior: float, producer: str
) -> tuple[Fit, list[CallFeatures], Steps, Fit, list[CallFeatures], Steps, list[float]]:
    """The held-out fit and the calls it predicts, and the whole file's fit and its calls, each
    with the unlogged steps it may know (``calibration.steps``), and those steps; and the held-out
    calls' errors where the fit knows the steps before each (``_anchored``)."""

    def featured(steps: Steps) -> list[list[CallFeatures]]:
        return [call_features(c, counter, raw_counter, unlogged=steps.get(c.label)) for c in session.contexts]

    def found(model: Fit, among: list[set[int]] | None = None, signed: bool = False) -> Steps:
        default = _default_prefix(model.prefixes, producer)
        measured = {
            c.label: unlogged_steps(c, features, model, default, among[n] if among is not None else None, signed)
            for n, (c, features) in enumerate(zip(session.contexts, plain, strict=True))
        }
        return {label: steps for label, steps in measured.items() if steps}

    def refined(among: list[set[int]] | None) -> tuple[Steps, Fit, list[CallFeatures]]:
        # The first fit is bent by the steps it does not know; measured again with the fit made
        # knowing them, they settle in a pass or two (a step is a residual's jump, not its level).
        steps: Steps = {}
        for signed in (False, True):  # rises first; falls only against a fit the rises no longer bend
            for _ in range(STEP_PASSES):
                measured = found(fitted(_flat(featured(steps)), among), among, signed)
                if measured == steps:
                    break
                steps = measured
        features = _flat(featured(steps))
        return steps, fitted(features, among), features

    def fitted(features: list[CallFeatures], among: list[set[int]] | None) -> Fit:
        return fit(features if among is None else halves(features)[0], prior)

    plain = featured({})
    first, _ = halves(_flat(plain))
    fitting = {id(f) for f in first}
    among = [{n for n, f in enumerate(features) if id(f) in fitting} for features in plain]
    # Held out: the steps are measured between calls of the fitting half only, and the fit made
    # with them; the second half is predicted from that.
    held_steps, held, held_features = refined(among)
    steps, whole, features = refined(None)
    # Every rise and fall the usage shows, measured against the held-out fit.
    anchored = _anchored(session, plain, found(held, signed=True), held, fitting, producer, featured)
    return held, halves(held_features)[1], held_steps, whole, features, steps, anchored


def _anchored(
    session: RecordedSession,
    plain: list[list[CallFeatures]],
    steps: Steps,
    held: Fit,
    fitting: set[int],
    producer: str,
    featured: Callable[[Steps], list[list[CallFeatures]]],
) -> list[float]:
    """Each held-out call's error when the held-out fit knows every step the recorded usage shows
    before that call, but not the one into it: replay carries the steps the usage shows as costs
    of their messages in every simulated context, so only the fit's parameters are held out here."""
    default = _default_prefix(held.prefixes, producer)
    errors = []
    for context, ours, known in zip(session.contexts, plain, featured(steps), strict=True):
        for n, (f, g) in enumerate(zip(ours, known, strict=True)):
            if id(f) in fitting or not g.reported:
                continue
            into = steps.get(context.label, {}).get(context.calls[n].position - 1, 0) if n else 0
            errors.append(abs(held.predict(g, default) - into - g.reported) / g.reported)
    return errors


def _flat(per_context: list[list[CallFeatures]]) -> list[CallFeatures]:
    return [f for features in per_context for f in features]


def _positions(steps: Steps) -> list[tuple[str, int, int]]:
    return [(label, at, tokens) for label, found in steps.items() for at, tokens in found.items()]


def _prior_ratio(provider: str, encoding: str) -> float:
    return PRIOR_CLAUDE_RATIO_CL100K if provider == "anthropic" and encoding == DEFAULT_ENCODING else 1.0


def _default_prefix(prefixes: dict[str, float], producer: str) -> float:
    return statistics.median(prefixes.values()) if prefixes else float(_prior_prefix(producer))


def _prior_prefix(name: str) -> int:
    from compactctl.recorded import producer

    found = producer(name)
    return found.prior_prefix if found is not None else 0


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
    unlogged = sum(f.unlogged for f in used)
    explained = counted + prefix + resent + tokenizer + attachments + images + per_message + unlogged
    return GapSplit(
        reported, counted, prefix, resent, tokenizer, attachments, images, reported - explained, per_message, unlogged
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
        "unlogged": {
            "steps": sum(len(found) for found in calibration.unlogged.values()),
            "tokens": sum(sum(found.values()) for found in calibration.unlogged.values()),
        },
        "encoding_fit": calibration.candidates,
        "error": errors,
        "gap": dataclasses.asdict(calibration.gap) if calibration.gap else None,
        "warnings": list(calibration.warnings),
    }


def session_report(session: RecordedSession, producer: str, claude_tokens: str = "fitted") -> dict[str, Any]:
    """What ``report`` says of a recorded session: reported vs counted vs calibrated input, the gap
    split, the calibration and its held-out error, and what the producer's compactions replaced."""
    session = read_thinking(session, producer)
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
