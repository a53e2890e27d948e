"""Replay speed: the 2000-turn tool-agent workload with five thresholds, and linear growth.

    python bench/replay_bench.py [--repeat 5] [--strategy NAME ...]
    python bench/replay_bench.py --baseline DIR [--runs 5]   # against another checkout, in one run

With ``--baseline`` (a checkout of the previous main, e.g. ``git worktree add /tmp/base 65fa8d8``)
it times instead, in fresh processes taken in turn (A B A B ...), one replay of the 2000-turn
agent workload with three thresholds under ``structured`` and the extractive summarizer, by
this checkout with its default jobs (one per core, as ``replay`` gives a single file), by this
checkout with ``--jobs 1`` and by the baseline (which has no parallel replay): the replay's own
CPU time (the memos start empty in a new process; forked workers' CPU included) and the whole
process's, the replay call's wall time, their ratios run by run, whether all gave the same
figures (every field of every row), and the load average before and after. ``--strategy`` and
``--turns`` change the workload (e.g. ``-s prune --turns 500``, where the settings are walked apart).

Prints the median wall time of one replay (all five thresholds plus the baseline,
tokenization included: a fresh counter each run) at 500 and 2000 turns, and their
ratio: about 4 means time grows linearly with length; 16 would be quadratic. It runs
``window`` (replay's own cost: no summarizer), ``prune`` (run at nearly every call over a
threshold, on the whole context: the history after a compaction is its output plus new turns)
and, when registered, ``structured`` with the extractive summarizer, saying how much of the time
the summarizer took.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from compactctl.replay import replay, settings_grid  # noqa: E402
from compactctl.strategies import STRATEGIES  # noqa: E402
from compactctl.tokens import TokenCounter  # noqa: E402

THRESHOLDS = [4000, 8000, 16000, 32000, 64000]
FILES = [f"src/pkg/module_{i}.py" for i in range(40)]
WORDS = [
    "the",
    "value",
    "of",
    "config",
    "path",
    "error",
    "retry",
    "cache",
    "token",
    "request",
    "handler",
    "result",
    "index",
    "build",
    "test",
]


def fallback_tool_workload(turns: int, seed: int = 0) -> list[dict[str, Any]]:
    """A tool-agent transcript of ``turns`` tool rounds, used while bench/workloads.py is not on this branch.

    A long system prompt, one task, then rounds of (assistant tool call, tool result): file reads
    (often of a file read before), test runs with long logs, greps; now and then a line of reasoning
    and a user nudge.
    """
    rng = random.Random(seed)
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": "You are a coding agent. " + " ".join(rng.choice(WORDS) for _ in range(1200))},
        {"role": "user", "content": "Fix the failing tests in src/pkg. Do not change the public interface."},
    ]
    for turn in range(turns):
        call_id = f"call_{turn}"
        kind = rng.random()
        if kind < 0.5:
            name, path = "read_file", rng.choice(FILES)
            arguments = f'{{"path": "{path}"}}'
            lines = [
                f"def f_{i}(x):  # {' '.join(rng.choice(WORDS) for _ in range(6))}" for i in range(rng.randint(10, 120))
            ]
        elif kind < 0.8:
            name, arguments = "bash", '{"cmd": "pytest -q"}'
            lines = [f"tests/test_{rng.randint(0, 99)}.py::test_{i} PASSED" for i in range(rng.randint(20, 200))]
            lines.append(f"{rng.randint(1, 5)} failed, {rng.randint(50, 300)} passed in {rng.random() * 9:.2f}s")
        else:
            name, arguments = "grep", f'{{"pattern": "{rng.choice(WORDS)}"}}'
            lines = [
                f"{rng.choice(FILES)}:{rng.randint(1, 400)}: {rng.choice(WORDS)}" for _ in range(rng.randint(1, 40))
            ]
        content = "Checking." if rng.random() < 0.2 else None
        messages.append(
            {
                "role": "assistant",
                "content": content,
                "tool_calls": [{"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}],
            }
        )
        messages.append({"role": "tool", "tool_call_id": call_id, "content": "\n".join(lines)})
        if rng.random() < 0.05:
            messages.append(
                {"role": "assistant", "content": "Progress: " + " ".join(rng.choice(WORDS) for _ in range(30))}
            )
            messages.append({"role": "user", "content": "Keep going; " + rng.choice(WORDS) + " first."})
    messages.append({"role": "assistant", "content": "Done: all tests pass."})
    return messages


def tool_workload(turns: int) -> tuple[list[dict[str, Any]], str]:
    try:
        from bench.workloads import generate
    except ImportError:
        return fallback_tool_workload(turns), "fallback_tool_workload"
    return generate("tool", turns), "bench.workloads.generate('tool')"


class TimedSummarizer:
    """Wraps a summarizer and adds up the time spent in it, to tell replay's own cost from the summarizer's."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.seconds = 0.0

    def summarize(self, request: Any) -> Any:
        start = time.perf_counter()
        try:
            return self.inner.summarize(request)
        finally:
            self.seconds += time.perf_counter() - start


def setups(asked: list[str] | None) -> list[tuple[list[str], dict[str, Any], bool]]:
    """(steps, options, with the extractive summarizer): window and prune always; structured when registered."""
    if asked:
        return [(asked, {"keep_recent": 10}, "structured" in asked or "summary" in asked)]
    runs: list[tuple[list[str], dict[str, Any], bool]] = [(["window"], {"keep_recent": 10}, False)]
    # prune runs at nearly every call over a threshold (it cannot get under one), on the whole context.
    runs.append((["prune"], {"keep_recent": 10}, False))
    if "structured" in STRATEGIES:
        runs.append((["structured"], {"keep_recent": 10}, True))
    return runs


def time_replay(
    messages: list[dict[str, Any]], steps: list[str], options: dict[str, Any], summarize: bool, repeat: int
) -> tuple[float, float, list[Any], int]:
    grid = settings_grid(THRESHOLDS, False, steps)
    times, in_summarizer, rows = [], [], []
    # At least ``repeat`` runs, and enough of them to fill a second: a median of a few
    # 20-millisecond runs is mostly noise.
    while len(times) < repeat or sum(times) < 1.0:
        counter = TokenCounter()  # fresh: every message is tokenized inside the timed run
        summarizer = None
        if summarize:
            from compactctl.summarizers.extractive import ExtractiveSummarizer

            summarizer = TimedSummarizer(ExtractiveSummarizer(counter))
        start = time.perf_counter()
        rows = replay(messages, grid, options, counter=counter, prices=None, summarizer=summarizer)
        times.append(time.perf_counter() - start)
        in_summarizer.append(summarizer.seconds if summarizer else 0.0)
    return statistics.median(times), statistics.median(in_summarizer), rows, len(times)


# One replay in a fresh process: its CPU seconds (its forked workers' too), the whole process's, its
# wall time and a digest of every row. ``jobs`` "-": the baseline's own call (it has no parallel
# replay); else the jobs replay is given, as the CLI gives a single file's (0: one per core there is).
AGAINST = """
import dataclasses, hashlib, resource, sys, time
sys.path.insert(0, {bench!r})  # the workload generator only: compactctl comes from PYTHONPATH
from workloads import generate
from compactctl.replay import replay, settings_grid
from compactctl.summarizers.extractive import ExtractiveSummarizer
from compactctl.tokens import TokenCounter
import compactctl
assert compactctl.__file__.startswith({root!r}), compactctl.__file__
jobs = {jobs!r}
walked = {{}}
if jobs != "-":
    from compactctl.files.jobs import cores
    from compactctl.files.replay_apart import walker_for
    walked = {{"walker": walker_for(int(jobs) or cores())}}
messages = generate("tool", {turns})
counter = TokenCounter()
counter("warm")  # the tokenizer table is loaded before the clock starts: start-up, not replay
def children():
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime
start, wall, forked = time.process_time(), time.perf_counter(), children()
rows = replay(messages, settings_grid([4000, 16000, 64000], False, {steps!r}), {{"keep_recent": 10}},
              counter=counter, prices=None, summarizer=ExtractiveSummarizer(counter), **walked)
wall = time.perf_counter() - wall
seconds = time.process_time() - start + children() - forked
usage = resource.getrusage(resource.RUSAGE_SELF)
figures = repr([dataclasses.asdict(row) for row in rows])  # fields, not the class's name (renamed since)
print(seconds, usage.ru_utime + usage.ru_stime + children(), wall, hashlib.sha256(figures.encode()).hexdigest())
"""


def against(baseline: Path, runs: int, steps: list[str], turns: int) -> None:
    import os
    import subprocess

    from compactctl.files.jobs import cores

    bench = str(Path(__file__).resolve().parent)
    default = f"this checkout (default jobs: {cores()})"
    roots = {default: ROOT, "this checkout, --jobs 1": ROOT, f"baseline {baseline}": baseline.resolve()}
    jobs = {default: "0", "this checkout, --jobs 1": "1", f"baseline {baseline}": "-"}
    envs = {name: {**os.environ, "PYTHONPATH": str(root)} for name, root in roots.items()}

    def once(name: str) -> tuple[float, float, float, str]:
        code = AGAINST.format(bench=bench, root=str(roots[name]), jobs=jobs[name], steps=steps, turns=turns)
        run = [sys.executable, "-c", code]  # run where the checkout is: "-c" puts the working folder first
        done = subprocess.run(run, env=envs[name], cwd=roots[name], capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise SystemExit(f"{name}: the replay failed:\n{done.stderr[-3000:]}")
        replay_cpu, process_cpu, wall, digest = done.stdout.split()
        return float(replay_cpu), float(process_cpu), float(wall), digest

    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())} ({os.cpu_count()} cores)")
    measured: dict[str, list[tuple[float, float, float, str]]] = {name: [] for name in envs}
    for _ in range(runs):
        for name in envs:
            measured[name].append(once(name))
    ours, one, theirs = measured.values()
    summarizer = " + extractive" if {"structured", "summary", "rolling", "selective"} & set(steps) else ""
    print(f"replay of the {turns}-turn agent workload, 3 thresholds, {'+'.join(steps)}{summarizer}; medians of {runs}")
    print("(replay cpu: the replay call's CPU, its forked workers' included; wall: the replay call's)")
    width = max(map(len, envs)) + 2
    print(f"{'':<{width}}{'replay cpu s':>13}{'process cpu s':>15}{'replay wall s':>15}")
    for name, rows in measured.items():
        print(
            f"{name:<{width}}{statistics.median(r[0] for r in rows):>13.3f}"
            f"{statistics.median(r[1] for r in rows):>15.3f}{statistics.median(r[2] for r in rows):>15.3f}"
        )

    Runs = list[tuple[float, float, float, str]]

    def ratio(slow: Runs, fast: Runs, i: int) -> float:
        return statistics.median(b[i] / a[i] for a, b in zip(fast, slow, strict=True))

    for label, mine in (("this checkout", ours), ("this checkout --jobs 1", one)):
        print(
            f"baseline / {label}: replay x{ratio(theirs, mine, 0):.2f}, whole process x{ratio(theirs, mine, 1):.2f}, "
            f"replay wall x{ratio(theirs, mine, 2):.2f}"
        )
    print(f"--jobs 1 / default jobs: replay cpu x{ratio(one, ours, 0):.2f}, replay wall x{ratio(one, ours, 2):.2f}")
    digests = {r[3] for rows in measured.values() for r in rows}
    print(f"identical figures: {'yes' if len(digests) == 1 else 'NO'}")
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--strategy", "-s", action="append")
    parser.add_argument("--baseline", type=Path, help="another checkout to time the same replay against")
    parser.add_argument("--runs", type=int, default=5, help="with --baseline: processes of each")
    parser.add_argument("--turns", type=int, default=2000, help="with --baseline: the workload's length")
    args = parser.parse_args()
    if args.baseline:
        against(args.baseline, args.runs, args.strategy or ["structured"], args.turns)
        return
    workloads = {turns: tool_workload(turns) for turns in (500, 2000)}
    for steps, options, summarize in setups(args.strategy):
        medians = {}
        for turns, (messages, source) in workloads.items():
            median, summarizing, rows, runs = time_replay(messages, steps, options, summarize, args.repeat)
            medians[turns] = median
            with_summarizer = ", extractive summarizer" if summarize else ""
            print(f"{turns} turns ({source}, {len(messages)} messages), {'+'.join(steps)}{with_summarizer} {options}:")
            print(
                f"  median of {runs}: {median:.3f} s for {len(rows)} settings "
                f"(baseline + {len(THRESHOLDS)} thresholds), of which in the summarizer {summarizing:.3f} s"
            )
            for row in rows:
                print(
                    f"  {row.trigger:9} {row.threshold or '':>6} calls {row.calls:5} compactions {row.compactions:4} "
                    f"peak {row.peak_context:9,} mean {row.mean_context:11,.0f} cost ${row.cost:8.2f} "
                    f"facts lost {row.facts_lost}"
                )
        print(
            f"  {'+'.join(steps)}: 2000/500 time ratio {medians[2000] / medians[500]:.2f} (4 = linear, 16 = quadratic)"
        )
        print()


if __name__ == "__main__":
    main()
