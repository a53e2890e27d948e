"""Steps in the usage that the log does not explain: what a harness sent and never logged.

Between two calls of one segment the reported input grows by what was appended: the
response re-sent, the tool results, the next prompt. Where it grows by far more than that,
the harness sent something no record holds. Measured on the real sessions in
shared/transcripts: Claude Code 1.0.x's reminder that a file it watched changed on disk
(kesslerio/attio-mcp-server: +13k in its sidechain after ``npm run format``, the files prettier
lists, and +0.6k after each of its prompts, its hooks' prompt log; both are now rebuilt,
``recorded.claude_code_files`` and ``recorded.claude_code_hooks``). What stays a step there:
five rises of +0.9k to +2.3k in its main thread after test runs, builds, Reads and a Grep, which no
record of the file explains (docs/calibration.md says what cli.js 1.0.69 and the project's own
history rule out: IDE diagnostics for two of them, typed-ahead prompts, other sessions' hook logs). (The
+2.7k in d-kimuson 5c0375b4 at call 8 was a MultiEdit whose record holds the stream's start
usage, 26 output tokens for 1.3k of blocks: ``features.stale_output``.)
Such content stays in the context until a compaction
folds it, so a step is carried from there on as a cost of the message just before the call:
the fit is not bent by it, and replay keeps it with that message and drops it where a
compaction folds the message. A fall is measured the same way once the rises have settled
(yoavf's pomodoro session: the input falls by 0.6k tokens at a new prompt with no text taken
out, as where the API drops earlier turns' thinking). A step after the fitting half cannot be
known by the fit; it is what the held-out error of such a file is made of.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from compactctl.calibration.features import CallFeatures, segment_of
from compactctl.calibration.fit import Fit
from compactctl.recorded import RecordedContext

# A step is at least this many tokens, and at least this share of what the appended messages
# explain (a tokenizer ratio a little off makes steps in proportion to the text appended):
# on the real sessions the steps found are 0.6k-16k tokens, the noise of the others under 200
# (Claude Code 1.0.x's todo reminder adds 150-180 to a TodoWrite result, below the bar).
STEP_MIN_TOKENS = 250
STEP_GROWTH_SHARE = 0.5
STEP_PASSES = 4  # fits made to measure the steps: each with the steps the one before found


def unlogged_steps(
    context: RecordedContext,
    features: Sequence[CallFeatures],
    model: Fit,
    default: float,
    among: Collection[int] | None = None,
    signed: bool = False,
) -> dict[int, int]:
    """Per message index of ``context``, the tokens the usage shows were sent after it and no record holds.

    ``features`` are the context's calls' (one per call, in order). With ``among``, only steps
    between two of those calls (indices) are measured: the fitting half's, for the held-out fit.
    ``signed`` measures falls too (what the harness or the API took out of the context unlogged);
    only with a fit the rises have settled: against a fit that is still bent, falls would prop it up.
    """
    keys = segment_of(context)
    found: dict[int, int] = {}
    for n in range(1, len(features)):
        before, after = features[n - 1], features[n]
        if keys[n] != keys[n - 1] or not before.reported or not after.reported:
            continue
        if among is not None and (n not in among or n - 1 not in among):
            continue
        step = (after.reported - model.predict(after, default)) - (before.reported - model.predict(before, default))
        grown = model.ratio * (after.text - before.text) + after.resent - before.resent
        if (abs(step) if signed else step) > max(STEP_MIN_TOKENS, STEP_GROWTH_SHARE * max(grown, 0.0)):
            position = context.calls[n].position - 1
            found[position] = found.get(position, 0) + round(step)
    return found
