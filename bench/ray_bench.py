"""--jobs N (forked processes, the default engine) against --engine ray on a generated folder, through the real CLI.

    python bench/ray_bench.py [--files 5000] [--jobs 2] [--runs 1] [--strategy structured]

Generates FILES chat transcripts (copies of samples/coding-agent.jsonl with a distinct last
turn, spread over 50 sub-folders), then times ``compactctl compact DIR -o OUT`` with
``--jobs N`` and with ``--engine ray --jobs N`` (a local Ray of N CPUs, started by the
command, so its start-up is in the figure), checks the two output trees are identical, and
prints the median wall time, files per second and milliseconds per file of each.
"""

from __future__ import annotations

import argparse
import filecmp
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import orjson

ROOT = Path(__file__).resolve().parent.parent


def generate(folder: Path, files: int) -> None:
    base = (ROOT / "samples" / "coding-agent.jsonl").read_bytes()
    for number in range(files):
        path = folder / f"team{number % 50:02d}" / f"session{number:05d}.jsonl"
        path.parent.mkdir(parents=True, exist_ok=True)
        extra = [
            {"role": "user", "content": f"Now run job {number}"},
            {"role": "assistant", "content": f"Job {number} done."},
        ]
        path.write_bytes(base + b"".join(orjson.dumps(m) + b"\n" for m in extra))


def timed(arguments: list[str]) -> float:
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "compactctl", *arguments], capture_output=True, check=False)
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"compactctl {' '.join(arguments)} failed ({done.returncode}): {done.stderr.decode()[-2000:]}")
    return elapsed


def same_tree(a: Path, b: Path) -> bool:
    files_a = sorted(p.relative_to(a) for p in a.rglob("*") if p.is_file())
    files_b = sorted(p.relative_to(b) for p in b.rglob("*") if p.is_file())
    return files_a == files_b and all(filecmp.cmp(a / p, b / p, shallow=False) for p in files_a)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--files", type=int, default=5000)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--strategy", default="structured")
    args = parser.parse_args()
    os.environ.setdefault("RAY_AUTH_MODE", "disabled")  # a local throwaway instance
    work = Path(tempfile.mkdtemp(prefix="ray-bench-"))
    try:
        source = work / "in"
        generate(source, args.files)
        common = [str(source), "--strategy", args.strategy, "--quiet", "--jobs", str(args.jobs)]
        engines = {"processes": [], "ray": ["--engine", "ray"]}
        times: dict[str, list[float]] = {name: [] for name in engines}
        for _ in range(args.runs):
            for name, flags in engines.items():
                out = work / f"out-{name}"
                shutil.rmtree(out, ignore_errors=True)
                times[name].append(timed(["compact", *common, "-o", str(out), *flags]))
        identical = same_tree(work / "out-processes", work / "out-ray")
        size = sum(p.stat().st_size for p in source.rglob("*") if p.is_file())
        print(
            f"{args.files} files, {size / 1e6:.1f} MB, --jobs {args.jobs}, strategy {args.strategy}, {args.runs} run(s)"
        )
        base = statistics.median(times["processes"])
        for name, values in times.items():
            median = statistics.median(values)
            print(
                f"{name:9} median {median:7.2f} s  {args.files / median:7.1f} files/s  "
                f"{median / args.files * 1000:6.2f} ms/file  x{median / base:.2f} of --jobs"
            )
        print(f"outputs identical: {identical}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
