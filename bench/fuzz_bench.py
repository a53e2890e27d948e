"""Crashes per 10,000 mutated inputs, through the library and through the CLI.

    python bench/fuzz_bench.py [--inputs 10000] [--cli 10000] [--seed 14]

Inputs are mutants of the real transcripts (tests/fuzzing.py): field, line and byte
mutants in turn. A crash is any exception other than compactctl's one-line error
(library), or a traceback, a "cannot process this file" or an exit code outside 0-3 (CLI:
compact, prune, report, replay, review and eval in turn, each with and without --json and
with and without --on-error skip, in this process through typer's CliRunner). Prints the
rate per kind and per command, then the crash sites by count. Run it niced: the machine
is shared (``nice -n 10 python bench/fuzz_bench.py``).
"""

from __future__ import annotations

import argparse
import collections
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.fuzzing import CLI_COMMANDS, load_sources, mutants, run_cli, run_library  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--inputs", type=int, default=10_000)
    parser.add_argument("--cli", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=14)
    args = parser.parse_args()
    loaded = load_sources()
    sites: collections.Counter[str] = collections.Counter()
    first: dict[str, str] = {}

    def tally(
        where: str,
        seed: int,
        runs: int,
        mutated: Iterator[tuple[str, bytes]],
        run: Callable[[str, bytes, int], str | None],
    ) -> None:
        started, cpu_started = time.perf_counter(), time.process_time()
        crashes: collections.Counter[str] = collections.Counter()
        kinds: collections.Counter[str] = collections.Counter()
        for number, (name, data) in enumerate(mutated):
            kind = name.rsplit(":", 1)[-1]
            kinds[kind] += 1
            site = run(name, data, number)
            if site:
                crashes[kind] += 1
                sites[site] += 1
                first.setdefault(site, name)
            if (number + 1) % 1000 == 0:
                print(f"  {where}: {number + 1:,} run, {sum(crashes.values())} crashes, "
                      f"{time.perf_counter() - started:.0f} s", file=sys.stderr, flush=True)  # fmt: skip
        total = sum(crashes.values())
        per_kind = ", ".join(f"{kind} {crashes[kind]}/{kinds[kind]:,}" for kind in kinds)
        print(f"{where}: {total} crashes in {runs:,} inputs = {total * 10_000 / max(runs, 1):.1f} per 10,000 "
              f"({per_kind}; {time.perf_counter() - started:.0f} s wall, {time.process_time() - cpu_started:.0f} s "
              f"CPU, {len(loaded)} source files, seed {seed})")  # fmt: skip
        if where == "cli":
            by_command = collections.Counter(
                site.split(":")[0].split()[1] for site in sites.elements() if site.startswith("cli ")
            )
            runs_each = runs // len(CLI_COMMANDS)
            print("  per command: " + ", ".join(f"{c} {by_command[c]}/{runs_each:,}" for c in CLI_COMMANDS)
                  + " (half of each with --json, half with --on-error skip)")  # fmt: skip

    if args.inputs:
        tally(
            "library",
            args.seed,
            args.inputs,
            mutants(args.seed, args.inputs, loaded),
            lambda name, data, n: run_library(data, name, n),
        )
    if args.cli:
        with tempfile.TemporaryDirectory() as folder:
            tally(
                "cli",
                args.seed + 1,
                args.cli,
                mutants(args.seed + 1, args.cli, loaded),
                lambda name, data, n: run_cli(data, Path(folder), n),
            )
    for site, count in sites.most_common():
        print(f"  {count:5}  {site}  (first: {first[site]})")


if __name__ == "__main__":
    main()
