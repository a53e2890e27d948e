"""Crashes per 10,000 mutated inputs, through the library and through the CLI.

    python bench/fuzz_bench.py [--inputs 10000] [--cli 300] [--seed 14]

Inputs are mutants of the real transcripts (tests/fuzzing.py). A crash is any exception
other than compactctl's one-line error (library), or a traceback / an exit code outside
0-3 (CLI). Prints the rate, then the crash sites by count.
"""

from __future__ import annotations

import argparse
import collections
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.fuzzing import load_sources, mutants, run_library  # noqa: E402


def run_cli(data: bytes, folder: Path, number: int) -> str | None:
    from typer.testing import CliRunner

    from compactctl.cli.main import app

    source = folder / f"in{number}.jsonl"
    source.write_bytes(data)
    command = (["compact", str(source), "-o", str(folder / f"out{number}.jsonl"), "-s", "prune", "-s", "window"],
               ["report", str(source)], ["prune", str(source), "-o", str(folder / f"p{number}.jsonl")],
               ["replay", str(source), "--threshold", "500"])[number % 4]  # fmt: skip
    result = CliRunner().invoke(app, command)
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        from tests.fuzzing import crash_site

        return f"cli {command[0]}: {crash_site(result.exception)}"
    if result.exit_code not in (0, 1, 2, 3):
        return f"cli {command[0]}: exit {result.exit_code}"
    return None


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--inputs", type=int, default=10_000)
    parser.add_argument("--cli", type=int, default=300)
    parser.add_argument("--seed", type=int, default=14)
    args = parser.parse_args()
    loaded = load_sources()
    sites: collections.Counter[str] = collections.Counter()
    started = time.perf_counter()
    crashes = 0
    for number, (name, data) in enumerate(mutants(args.seed, args.inputs, loaded)):
        site = run_library(data, name, number)
        if site:
            crashes += 1
            sites[site] += 1
    elapsed = time.perf_counter() - started
    print(f"library: {crashes} crashes in {args.inputs:,} inputs = {crashes * 10_000 / args.inputs:.1f} per 10,000 "
          f"({elapsed:.0f} s, {len(loaded)} source files)")  # fmt: skip
    cli_crashes = 0
    with tempfile.TemporaryDirectory() as folder:
        for number, (_name, data) in enumerate(mutants(args.seed + 1, args.cli, loaded)):
            site = run_cli(data, Path(folder), number)
            if site:
                cli_crashes += 1
                sites[site] += 1
    if args.cli:
        print(f"cli: {cli_crashes} crashes in {args.cli:,} runs = {cli_crashes * 10_000 / args.cli:.1f} per 10,000")
    for site, count in sites.most_common():
        print(f"  {count:5}  {site}")


if __name__ == "__main__":
    main()
