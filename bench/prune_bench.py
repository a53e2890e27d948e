"""Benchmark the deterministic steps (prune, mask-observations, clear-thinking) on ``workloads.py``.

    python bench/prune_bench.py [--runs 7] [--sizes 50 200 500 1000 2000] [--no-process]

Per workload and size: tokens before/after (stub mode, the default), reduction in stub and
in drop mode, restorations (stub), facts preserved, idempotent and API-valid (both modes), and
the prune step's time in process, stub (wall and CPU) and drop (median of --runs; token
counting excluded and timed on its own, with a cold memo). CPU time is what a shared,
loaded machine still measures faithfully; wall time is what a user waits. Then one
positional baseline row per workload at the largest size: keep the system prompt and the
last messages that fit in the same token budget the pruned transcript uses, and count the
facts that loses.

Facts by copy: per workload whose facts sit in tool outputs and chunks (``facts_in="tools"``:
a file read many times, each read holding the fact) and per mode, the tokens prune removes
against what ``reference_prune`` (a plain pruner keeping one copy of each fact) removes,
the ratio (targets: >= 0.95 in both modes), facts kept, and what the old rule (every
message holding a fact kept) removed; ``rag/c`` and ``chat/c`` fetch through tool calls
(``retrieval="calls"``: many calls, one text). Then mask-observations and clear-thinking (thinking
blocks added to the tool workload's assistant turns) per workload at each size: reduction,
facts, valid, idempotent, time. The prune step's CPU time against the seed pruner's
reimplementation (``reference_prune``: the three passes written plainly) in both modes at the
largest size (``--seed-only``: that table alone). Last, the whole ``compactctl prune`` process on the
largest tool-agent file and ``compactctl --help``, medians of --runs against
``python -c pass`` in the same run, and 500 against 2000 turns to show the step is linear.

Published figures for the deterministic pruner this design comes from: reductions 1.9-4.1%
(chat), 27.0-32.5% (RAG), 33.1-33.7% (tool agent); 15/15 facts; idempotent; under 50 ms at
2000 turns / 131k tokens.
"""

from __future__ import annotations

import argparse
import gc
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent))

from reference_prune import reference_prune
from workloads import WORKLOADS, generate

import compactctl
from compactctl.facts import declared_facts, fold
from compactctl.tokens import TokenCounter
from compactctl.transcript import annotations_of, is_valid, message_text, unit_start


def median_ms(work, runs: int, clock=time.perf_counter) -> float:
    gc.collect()  # start each series from the same heap, so earlier series' garbage is not billed here
    times = []
    for _ in range(runs):
        start = clock()
        work()
        times.append((clock() - start) * 1000)
    return statistics.median(times)


def cpu_ms(work, runs: int) -> float:
    """Median CPU time of ``work``: on a shared machine, what the step costs whatever else runs."""
    return median_ms(work, runs, time.process_time)


def facts_kept(original: list[dict], kept: list[dict]) -> tuple[int, int]:
    """Facts the input holds that the output still holds (case and whitespace folded), and how many."""
    before = fold("\n".join(message_text(m) for m in original))
    after = fold("\n".join(message_text(m) for m in kept))
    present = [fact for fact in map(fold, declared_facts(original)) if fact in before]
    return sum(fact in after for fact in present), len(present)


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


def process_time(command: list[str], runs: int) -> tuple[float, float]:
    """Median wall and CPU seconds (user + system, from the OS's accounting of the child) of a whole process."""
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)  # warm the file cache
    walls, cpus = [], []
    for _ in range(runs):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
        walls.append(time.perf_counter() - start)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return statistics.median(walls), statistics.median(cpus)


def every_copy_pinned(messages: list[dict]) -> list[dict]:
    """The old rule: every message holding a fact's text is never pruned (pinned, for the comparison)."""
    facts = [fold(f) for f in declared_facts(messages)]
    out = []
    for message in messages:
        if any(fact in fold(message_text(message)) for fact in facts):
            message = {**message, "compactctl": {**annotations_of(message), "pin": True}}
        out.append(message)
    return out


def with_thinking(messages: list[dict], turns: int) -> list[dict]:
    """Each assistant turn opens with a thinking block (text and an opaque signature), as Claude writes them."""
    out = []
    for n, message in enumerate(messages):
        if message.get("role") == "assistant":
            text = f"Step {n}: which file holds the failing code, and what does the last run say? " * 6
            parts = [{"type": "thinking", "thinking": text, "signature": "EqQBCkYIBxgCKkA" + "x" * 300}]
            if message.get("content"):
                parts.append({"type": "text", "text": message["content"]})
            message = {**message, "content": parts}
        out.append(message)
    return out


def by_copy_rows(sizes: list[int], counter: TokenCounter, runs: int) -> list[str]:
    rows = []
    # Facts in the chunks and files; then fetched through tool calls (rag, chat: one text, many calls).
    cases = (
        ("rag", "tools", "messages"),
        ("tool", "tools", "messages"),
        ("rag", "tools", "calls"),
        ("chat", "user", "calls"),
    )
    for workload, facts_in, retrieval in cases:
        for turns in sizes:
            messages = generate(workload, turns, facts_in=facts_in, retrieval=retrieval)
            label = workload if retrieval == "messages" else f"{workload}/c"
            before = counter.messages(messages)
            for mode in ("stub", "drop"):
                ours = compactctl.prune(messages, mode=mode).messages
                reference = reference_prune(messages, mode)
                greedy = before - counter.messages(reference_prune(messages, mode, short_answers=True))
                old = counter.messages(compactctl.prune(every_copy_pinned(messages), mode=mode).messages)
                removed, ref_removed = before - counter.messages(ours), before - counter.messages(reference)
                kept, total = facts_kept(messages, ours)
                ref_kept, _ = facts_kept(messages, reference)
                idempotent = compactctl.prune(ours, mode=mode).messages == ours
                ms = median_ms(lambda m=messages, mo=mode: compactctl.prune(m, mode=mo), runs)
                rows.append(
                    f"{label:<6}{turns:>6}{mode:>6}{before:>9,}{1 - old / before:>9.1%}{removed / before:>9.1%}"
                    f"{ref_removed / before:>9.1%}{removed / ref_removed if ref_removed else 1:>7.3f}"
                    f"{greedy / before:>9.1%}{removed / greedy if greedy else 1:>7.3f}"
                    f"{f'{kept}/{total}':>7}{f'{ref_kept}/{total}':>8}{'yes' if idempotent else 'NO':>6}"
                    f"{'yes' if is_valid(ours) and is_valid(reference) else 'NO':>6}{ms:>8.1f}"
                )
    return rows


def seed_time_rows(turns: int, runs: int) -> list[str]:
    """The prune step against the seed pruner reimplementation (``reference_prune``), CPU in process."""
    rows = []
    for workload in WORKLOADS:
        messages = generate(workload, turns)
        for mode in ("stub", "drop"):
            ours = cpu_ms(lambda m=messages, mo=mode: compactctl.prune(m, mode=mo), runs)
            seed = cpu_ms(lambda m=messages, mo=mode: reference_prune(m, mo), runs)
            rows.append(f"{workload:<9}{turns:>6}{mode:>6}{ours:>10.1f}{seed:>10.1f}{ours / seed:>8.2f}")
    return rows


def print_seed_times(turns: int, runs: int) -> None:
    print(f"Prune step against the seed's three passes (reference_prune.py), {turns} turns, CPU ms, medians of {runs}")
    print(f"{'workload':<9}{'turns':>6}{'mode':>6}{'prune':>10}{'seed':>10}{'ratio':>8}")
    for row in seed_time_rows(turns, runs):
        print(row)


def step_rows(sizes: list[int], counter: TokenCounter, runs: int) -> list[str]:
    rows = []
    for workload in WORKLOADS:
        for turns in sizes:
            plain = generate(workload, turns, facts_in="tools" if workload != "chat" else "user")
            for step, messages in (("mask-observations", plain), ("clear-thinking", with_thinking(plain, turns))):
                result = compactctl.compact(messages, [step], {}, counter=counter)
                before, after = counter.messages(messages), counter.messages(result.messages)
                kept, total = facts_kept(messages, result.messages)
                again = compactctl.compact(result.messages, [step], {}, counter=counter).messages == result.messages
                ms = median_ms(lambda m=messages, s=step: compactctl.compact(m, [s], {}, counter=counter), runs)
                rows.append(
                    f"{step:<18}{workload:<6}{turns:>6}{before:>9,}{after:>9,}{1 - after / before:>9.1%}"
                    f"{f'{kept}/{total}':>7}{'yes' if again else 'NO':>6}"
                    f"{'yes' if is_valid(result.messages) else 'NO':>6}{ms:>9.1f}"
                )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--sizes", type=int, nargs="+", default=[50, 200, 500, 1000, 2000])
    parser.add_argument("--no-process", action="store_true", help="skip timing the whole CLI process")
    parser.add_argument("--seed-only", action="store_true", help="only the step's time against the seed's")
    args = parser.parse_args()
    if args.seed_only:
        print_seed_times(max(args.sizes), args.runs)
        return
    counter = TokenCounter()

    header = (
        f"{'workload':<9}{'turns':>6}{'msgs':>7}{'tokens':>9}{'after':>9}{'reduct.':>9}{'drop':>8}"
        f"{'restored':>9}{'facts':>7}{'idem':>6}{'valid':>6}{'prune ms':>10}{'cpu ms':>8}{'drop ms':>9}{'count ms':>10}"
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
            prune_cpu = cpu_ms(lambda m=messages: compactctl.prune(m), args.runs)
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
                f"{'yes' if valid else 'NO':>6}{prune_ms:>10.1f}{prune_cpu:>8.1f}{drop_ms:>9.1f}{count_ms:>10.1f}"
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

    print()
    print_seed_times(max(args.sizes), args.runs)

    print()
    print("Facts by copy (facts in tool outputs and chunks): share of tokens removed by the old rule (every copy")
    print("kept), by prune, by a reference keeping one copy of each fact (ref.) and by the same removing short")
    print("duplicate answers with their calls too (ref.*); ratio = prune / reference")
    print(
        f"{'wkld':<6}{'turns':>6}{'mode':>6}{'tokens':>9}{'old':>9}{'prune':>9}{'ref.':>9}{'ratio':>7}"
        f"{'ref.*':>9}{'ratio*':>7}"
        f"{'facts':>7}{'ref f.':>8}{'idem':>6}{'valid':>6}{'ms':>8}"
    )
    for row in by_copy_rows(args.sizes, counter, args.runs):
        print(row)

    print()
    print("mask-observations (defaults: last 3 tool uses kept) and clear-thinking (last 1 turn kept)")
    print(
        f"{'step':<18}{'wkld':<6}{'turns':>6}{'tokens':>9}{'after':>9}{'reduct.':>9}{'facts':>7}"
        f"{'idem':>6}{'valid':>6}{'step ms':>9}"
    )
    for row in step_rows(args.sizes, counter, args.runs):
        print(row)

    if not args.no_process:
        print()
        turns = max(args.sizes)
        script = str(Path(sys.executable).with_name("compactctl"))
        baseline, baseline_cpu = process_time([sys.executable, "-c", "pass"], args.runs)
        print(f"`python -c pass`: median {baseline:.3f} s wall, {baseline_cpu:.3f} s cpu")
        help_time, help_cpu = process_time([script, "--help"], args.runs)
        print(
            f"`compactctl --help`: median {help_time:.3f} s wall ({help_time - baseline:+.3f} s over python -c pass),"
            f" {help_cpu:.3f} s cpu ({help_cpu - baseline_cpu:+.3f} s)"
        )
        with tempfile.TemporaryDirectory() as folder:
            for workload in WORKLOADS:
                path = Path(folder) / f"{workload}-{turns}.jsonl"
                path.write_bytes(b"".join(orjson.dumps(m) + b"\n" for m in generate(workload, turns)))
                command = [script, "prune", str(path), "-o", str(path.with_suffix(".out.jsonl")), "-q"]
                seconds, cpu = process_time(command, args.runs)
                print(
                    f"whole `compactctl prune` process, {workload} {turns} turns: median {seconds:.3f} s wall"
                    f" ({seconds - baseline:+.3f} s over python -c pass), {cpu:.3f} s cpu ({cpu - baseline_cpu:+.3f} s)"
                )


if __name__ == "__main__":
    main()
