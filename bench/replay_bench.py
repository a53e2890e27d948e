"""Replay speed: the 2000-turn tool-agent workload with five thresholds, and linear growth.

    python bench/replay_bench.py [--repeat 5] [--strategy NAME ...]

Prints the median wall time of one replay (all five thresholds plus the baseline,
tokenization included: a fresh counter each run) at 500 and 2000 turns, and their
ratio: about 4 means time grows linearly with length; 16 would be quadratic.
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


def summarizer_and_steps(asked: list[str] | None) -> tuple[Any, list[str], str]:
    """The extractive summarizer with the structured strategy when they are registered, else window."""
    if asked:
        return None, asked, "as asked"
    if "structured" in STRATEGIES:
        try:
            from compactctl.summarizers.extractive import ExtractiveSummarizer  # type: ignore[import-not-found]

            return ExtractiveSummarizer(), ["structured"], "extractive summarizer"
        except ImportError:
            pass
    return None, ["window"], "no summarizer on this branch"


def time_replay(
    messages: list[dict[str, Any]], steps: list[str], summarizer: Any, repeat: int
) -> tuple[float, list[Any]]:
    grid = settings_grid(THRESHOLDS, False, steps)
    times, rows = [], []
    for _ in range(repeat):
        counter = TokenCounter()  # fresh: every message is tokenized inside the timed run
        start = time.perf_counter()
        rows = replay(messages, grid, {"keep_recent": 10}, counter, None, summarizer)
        times.append(time.perf_counter() - start)
    return statistics.median(times), rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--strategy", "-s", action="append")
    args = parser.parse_args()
    summarizer, steps, why = summarizer_and_steps(args.strategy)
    medians = {}
    for turns in (500, 2000):
        messages, source = tool_workload(turns)
        median, rows = time_replay(messages, steps, summarizer, args.repeat)
        medians[turns] = median
        print(f"{turns} turns ({source}, {len(messages)} messages), steps {'+'.join(steps)} ({why}):")
        print(
            f"  median of {args.repeat}: {median:.3f} s for {len(rows)} settings "
            f"(baseline + {len(THRESHOLDS)} thresholds)"
        )
        for row in rows:
            print(
                f"  {row.trigger:9} {row.threshold or '':>6} calls {row.calls:5} compactions {row.compactions:4} "
                f"peak {row.peak_context:7,} input {row.input_tokens:12,} cost ${row.cost:8.2f}"
            )
    print(f"2000/500 time ratio: {medians[2000] / medians[500]:.2f} (4 = linear, 16 = quadratic)")


if __name__ == "__main__":
    main()
