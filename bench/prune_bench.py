"""Benchmark the prune step on the three workloads of ``workloads.py``.

    python bench/prune_bench.py [--runs 7] [--sizes 50 200 500 1000 2000] [--no-process]

Per workload and size: tokens before/after (stub mode, the default), reduction in stub and
in drop mode, restorations (stub), facts preserved, idempotent and API-valid (both modes), and
the prune step's time in process, stub and drop (median of --runs; token counting excluded
and timed on its own, with a cold memo). Then one
positional baseline row per workload at the largest size: keep the system prompt and the
last messages that fit in the same token budget the pruned transcript uses, and count the
facts that loses. Last, the whole ``compactctl prune`` process on the largest tool-agent
file (median of --runs), and 500 against 2000 turns to show the step is linear.

Published figures for the deterministic pruner this design comes from: reductions 1.9-4.1%
(chat), 27.0-32.5% (RAG), 33.1-33.7% (tool agent); 15/15 facts; idempotent; under 50 ms at
2000 turns / 131k tokens.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent))

from workloads import WORKLOADS, generate

import compactctl
from compactctl.tokens import TokenCounter
from compactctl.transcript import facts_of, is_valid, message_text, unit_start


def median_ms(work, runs: int) -> float:
    gc.collect()  # start each series from the same heap, so earlier series' garbage is not billed here
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        work()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def facts_kept(original: list[dict], kept: list[dict]) -> tuple[int, int]:
    facts = [fact for message in original for fact in facts_of(message)]
    text = "\n".join(message_text(m) for m in kept)
    return sum(fact in text for fact in facts), len(facts)


def positional(messages: list[dict], budget: int, counter: TokenCounter) -> list[dict]:
    """System prompt plus the last messages that fit in ``budget`` tokens, never starting on a tool result."""
    head = [m for m in messages[:1] if m.get("role") == "system"]
    room = budget - counter.messages(head)
    start = len(messages)
    while start > len(head) and counter.message(messages[start - 1]) <= room:
        room -= counter.message(messages[start - 1])
        start -= 1
    # Never start on a tool result: move forward past its unit (within budget, an API-valid cut).
    while start < len(messages) and unit_start(messages, start) != start:
        start += 1
    return head + messages[start:]


def process_time(path: Path, runs: int) -> float:
    script = Path(sys.executable).with_name("compactctl")
    command = [str(script), "prune", str(path), "-o", str(path.with_suffix(".out.jsonl")), "-q"]
    subprocess.run(command, check=True)  # warm the file cache
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(command, check=True)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--sizes", type=int, nargs="+", default=[50, 200, 500, 1000, 2000])
    parser.add_argument("--no-process", action="store_true", help="skip timing the whole CLI process")
    args = parser.parse_args()
    counter = TokenCounter()

    header = (
        f"{'workload':<9}{'turns':>6}{'msgs':>7}{'tokens':>9}{'after':>9}{'reduct.':>9}{'drop':>8}"
        f"{'restored':>9}{'facts':>7}{'idem':>6}{'valid':>6}{'prune ms':>10}{'drop ms':>9}{'count ms':>10}"
    )
    print(header)
    print("-" * len(header))
    timings: dict[tuple[str, int], float] = {}
    baselines = []
    for workload in WORKLOADS:
        for turns in args.sizes:
            messages = generate(workload, turns)
            result = compactctl.prune(messages)
            dropped = compactctl.prune(messages, mode="drop")
            prune_ms = median_ms(lambda m=messages: compactctl.prune(m), args.runs)
            drop_ms = median_ms(lambda m=messages: compactctl.prune(m, mode="drop"), args.runs)
            timings[(workload, turns)] = prune_ms
            # Token counting, timed apart: a fresh counter each run, so its memo starts empty.
            fresh = [TokenCounter() for _ in range(max(3, args.runs // 2))]
            count_ms = median_ms(lambda m=messages, f=fresh: f.pop().messages(m), len(fresh))
            before, after = counter.messages(messages), counter.messages(result.messages)
            after_drop = counter.messages(dropped.messages)
            kept, total = facts_kept(messages, result.messages)
            restored = sum(fate.action == "restored" for fate in result.fates.values())
            idempotent = (
                compactctl.prune(result.messages).messages == result.messages
                and compactctl.prune(dropped.messages, mode="drop").messages == dropped.messages
            )
            valid = is_valid(result.messages) and is_valid(dropped.messages)
            print(
                f"{workload:<9}{turns:>6}{len(messages):>7}{before:>9,}{after:>9,}{1 - after / before:>9.1%}"
                f"{1 - after_drop / before:>8.1%}{restored:>9}{f'{kept}/{total}':>7}{'yes' if idempotent else 'NO':>6}"
                f"{'yes' if valid else 'NO':>6}{prune_ms:>10.1f}{drop_ms:>9.1f}{count_ms:>10.1f}"
            )
            if turns == max(args.sizes):
                baseline = positional(messages, after, counter)
                b_kept, b_total = facts_kept(messages, baseline)
                baselines.append(
                    f"{workload + ' (last messages)':<26}{turns:>6}{before:>9,}{counter.messages(baseline):>9,}"
                    f"{1 - counter.messages(baseline) / before:>9.1%}{f'{b_kept}/{b_total}':>7}{b_total - b_kept:>12}"
                )
    print()
    print("Positional baseline: system prompt + the last messages within the pruned (stub) token budget")
    print(f"{'baseline':<26}{'turns':>6}{'tokens':>9}{'after':>9}{'reduct.':>9}{'facts':>7}{'facts lost':>12}")
    for row in baselines:
        print(row)

    if 500 in args.sizes and 2000 in args.sizes:
        print()
        for workload in WORKLOADS:
            a, b = timings[(workload, 500)], timings[(workload, 2000)]
            print(
                f"linearity {workload:<5}: 500 turns {a:.1f} ms, 2000 turns {b:.1f} ms, "
                f"ratio {b / a:.2f} (4.00 = linear)"
            )

    if not args.no_process:
        turns = max(args.sizes)
        with tempfile.TemporaryDirectory() as folder:
            for workload in WORKLOADS:
                path = Path(folder) / f"{workload}-{turns}.jsonl"
                path.write_bytes(b"".join(orjson.dumps(m) + b"\n" for m in generate(workload, turns)))
                seconds = process_time(path, args.runs)
                print(f"whole `compactctl prune` process, {workload} {turns} turns: median {seconds:.3f} s")


if __name__ == "__main__":
    main()
