"""Calibration on the real sessions with usage: per-call error, baseline replay cost vs the bill, and time.

    .venv/bin/python bench/calibration.py [FOLDER] [--ctok] [--speed]   # default: ../shared/transcripts

Per file: the per-call input error (median / p90) of the raw count (cl100k, what compactctl
counted before), of the calibrated count (fitted on all calls) and held out (fitted on the
first half of each context's calls, predicting the rest; "anchored": the same, the fit knowing
the steps the usage shows before each call, as replay does); the baseline replay's calibrated
cost against the bill from the usage; and the time to read, calibrate and replay it with
five thresholds. Targets (issue 9): cost within 3 % of the bill, held-out median <= 2 %,
p90 <= 5 %.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from compactctl.calibration import ErrorSummary
from compactctl.formats import detect
from compactctl.formats.records import parse_records
from compactctl.recorded import read_recorded
from compactctl.replay import prices_for, settings_grid, shipped_prices
from compactctl.replay.recorded import replay_recorded
from compactctl.strategies import StrategyOptions
from compactctl.tokens import claude_tokens_available

ROOT = Path(__file__).resolve().parent.parent
THRESHOLDS = [25_000, 50_000, 75_000, 100_000, 150_000]


def tokenizer_speed(files: list[Path]) -> None:
    """ctok against tiktoken on the same texts (every message text of the Claude Code files), cold and memoized."""
    from compactctl.recorded import claude_code
    from compactctl.tokens import TokenCounter
    from compactctl.transcript import message_text

    texts = []
    for path in files:
        if "claude-code" in path.parts:
            session = claude_code.read(parse_records(path.read_bytes(), str(path))[0], str(path))
            texts += [message_text(m) for context in session.contexts for m in context.messages]
    chars = sum(map(len, texts))
    timings = {}
    for encoding in ("cl100k_base", "claude-v3"):
        counter = TokenCounter(encoding)
        counter("warm up")
        started = time.perf_counter()
        tokens = sum(counter(text) for text in texts)
        cold = time.perf_counter() - started
        started = time.perf_counter()
        sum(counter(text) for text in texts)
        timings[encoding] = (tokens, cold, time.perf_counter() - started)
    for encoding, (tokens, cold, warm) in timings.items():
        print(
            f"{encoding}: {tokens:,} tokens of {chars:,} chars in {cold:.2f} s ({chars / cold / 1e6:.2f} M chars/s), "
            f"memoized again {warm * 1000:.0f} ms"
        )
    print(f"ctok / tiktoken: {timings['claude-v3'][1] / timings['cl100k_base'][1]:.0f}x slower cold")


def replay_speed(claude_tokens: str, calls: int = 2000) -> None:
    """A Claude Code session of ``calls`` calls, five thresholds: today's replay (the reader's live
    messages, cl100k) against the calibrated replay in API units (read, calibrate, replay)."""
    sys.path.insert(0, str(ROOT))
    from compactctl.formats import load
    from compactctl.replay import replay
    from compactctl.tokens import TokenCounter
    from tests.recorded.sessions import ClaudeSession, Truth, prose  # the builder the tests use

    session = ClaudeSession(Truth(prefix=20_000, ratio=1.3))
    session.user("Work through the backlog; keep the public interface.")
    for n in range(calls):
        if n % 25 == 0:
            session.user(f"Next item: {prose(30, n)}")
        session.response(text=f"Step {n}.", tools=[("Bash", {"command": f"make t{n}"}, prose(120 + n % 7 * 40, n))])
    data = b"".join(__import__("orjson").dumps(r) + b"\n" for r in session.records)
    grid = settings_grid([t * 10 for t in THRESHOLDS], False, ["window"])
    table = shipped_prices()

    def plain() -> None:
        _, transcripts = load(data, "s.jsonl", "claude-code")
        replay(transcripts[0].messages, grid, {"keep_recent": 10}, counter=TokenCounter())

    def calibrated() -> None:
        from compactctl.recorded import claude_code

        recorded = claude_code.read(parse_records(data, "s.jsonl")[0], "s.jsonl")
        window = StrategyOptions.from_values({"keep_recent": 10})
        replay_recorded(recorded, "claude-code", grid, window, table, None, claude_tokens=claude_tokens)

    import compactctl.tokens

    for name, run in (("today's replay", plain), ("calibrated replay", calibrated)):
        times = []
        for _ in range(3):
            compactctl.tokens._COUNTERS.clear()  # tokenization included: fresh counters, as today's replay
            started = time.perf_counter()
            run()
            times.append(time.perf_counter() - started)
        print(f"{name}: {calls} calls, 5 thresholds: median {sorted(times)[1]:.2f} s")


def main() -> None:
    arguments = [a for a in sys.argv[1:] if not a.startswith("--")]
    claude_tokens = "ctok" if "--ctok" in sys.argv else "fitted"
    folder = Path(arguments[0]) if arguments else ROOT.parent / "shared" / "transcripts"
    files = sorted([*folder.glob("claude-code/*/*.json*"), *folder.glob("codex/*/*.jsonl")])
    table = shipped_prices()
    grid = settings_grid(THRESHOLDS, False, ["window"])
    print(f"Claude tokens: {claude_tokens}")
    header = (
        "| file | calls | encoding | raw med/p90 | calibrated med/p90 | held-out med/p90 | anchored med/p90 "
        "| bill | estimate | vs bill | s |"
    )
    print(header)
    print("|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    pooled: list[float] = []  # every held-out call of every file
    anchored: list[float] = []  # the same calls, the fit knowing the steps the usage shows before each
    within = 0  # files whose held-out median <= 2 % and p90 <= 5 %
    fitted = 0
    for path in files:
        started = time.perf_counter()
        records, _ = parse_records(path.read_bytes(), str(path))
        fmt = detect(records, str(path))
        session = read_recorded(fmt.name, records, str(path))
        if session is None or not session.has_usage:
            print(
                f"| {path.parent.name}/{path.name[:24]} | {session.calls if session else 0} | no usage "
                "| | | | | | | | |"
            )
            continue
        # A model no price source knows is priced as gpt-5.1 here: the check is the ratio to the bill.
        window = StrategyOptions.from_values({"keep_recent": 10})
        result = replay_recorded(
            session, fmt.name, grid, window, table, prices_for(table, "gpt-5.1"), claude_tokens=claude_tokens
        )
        elapsed = time.perf_counter() - started
        c = result.calibration
        pooled += c.held_out_errors
        anchored += c.anchored_errors
        known = ErrorSummary.of(c.anchored_errors)
        fitted += 1
        within += c.held_out.median <= 0.02 and c.held_out.p90 <= 0.05
        # The estimate of what the producer did (its own compactions replayed, none where it made
        # none) against what it was billed.
        # Calls the log holds no message for (a cut-off response, a producer's summarizing call)
        # are in the bill but cannot be estimated: they are left out of both sides here. So are the
        # calls off the live thread (a rewound branch): the bill holds them, the estimate simulates
        # the live thread only (the rows add them back as billed).
        bill = result.live_thread_bill_cost or 0.0
        estimate = result.recorded_estimate.cost or 0.0
        versus = f"{(estimate / bill - 1):+.1%}" if bill else "unpriced"
        print(
            f"| {path.parent.name}/{path.name[:24]} | {session.calls} | {c.encoding} x{c.ratio:g} "
            f"| {c.raw.median:.1%} / {c.raw.p90:.1%} | {c.calibrated.median:.2%} / {c.calibrated.p90:.2%} "
            f"| {c.held_out.median:.2%} / {c.held_out.p90:.2%} | {known.median:.2%} / {known.p90:.2%} "
            f"| ${bill:.4f} | ${estimate:.4f} | {versus} "
            f"| {elapsed:.1f} |"
        )

    summary = ErrorSummary.of(pooled)
    print(
        f"pooled held-out per-call error, {summary.calls} calls of {fitted} files: median {summary.median:.2%}, "
        f"p90 {summary.p90:.2%}; {within} of {fitted} files within median <= 2 % and p90 <= 5 %"
    )
    # Replay knows every step a file's usage shows (the harness's unlogged reminders) and carries it
    # with its message into each simulated context: only the fit's parameters are unknown there.
    known = ErrorSummary.of(anchored)
    print(
        f"anchored (steps the usage shows before each call known, as replay knows them): "
        f"median {known.median:.2%}, p90 {known.p90:.2%}"
    )
    if claude_tokens_available() and claude_tokens == "ctok":
        tokenizer_speed(files)
    if "--speed" in sys.argv:
        replay_speed(claude_tokens)


if __name__ == "__main__":
    main()
