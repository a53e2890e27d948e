"""``compact --jobs 2`` against ``--jobs 1`` on a folder of real sessions, CPU beside wall, in one run.

    python bench/jobs_bench.py [--runs 5] [--folder DIR] [--copies 4] [--strategy NAME] [--baseline CHECKOUT]

Without ``--folder`` the folder is made of the shared real Claude Code and Codex sessions
(``../shared/transcripts``), ``--copies`` copies of each (10 sessions x 4 = 40 files). Each run
is one whole ``compactctl compact DIR -o OUT -q`` process, ``--jobs 1`` and ``--jobs 2`` in
turn (A B A B ...). For each it prints the median wall time and where the CPU went: the
parent process (start-up, planning, the tokenizer tables, the report) and the workers (the
files), from the kernel's accounting of each, and the workers' utilisation (their CPU over
wall time x workers). With ``--jobs 2`` the parent runs files too, beside one forked worker;
what it does before the fork (start-up, planning, the tokenizer tables) no worker can share
(Amdahl), and the worker starts after it. The best ``--jobs 2`` can do on an idle machine is
then the largest of: the parent's CPU; before the fork + the worker's; before the fork + the
rest of both / 2, printed as the bound, and the CPU by phase beside it (before the fork: the
start-up with the file list, then the tables and the forking). The machine's load average is printed too: on shared
cores a worker gets what the other processes leave. The checkout is byte-compiled first, as
an installed package is. Both runs' outputs are checked byte for byte. With ``--baseline`` another
checkout (a worktree of the previous main) is run in the same loop, A B A' B', and compared.
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

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared" / "transcripts"

# Runs the CLI and prints, on its last stderr line, the CPU seconds of the process itself and of
# its children (the forked workers), as the kernel counted them, and the process's own once its
# workers were forked and when it began to fork them (after start-up and the file list; 0 when
# none were).
RUN = """
import atexit, resource, sys
def cpu(who):
    used = resource.getrusage(who)
    return used.ru_utime + used.ru_stime
at_fork = [0.0, 0.0]
def said():
    own, workers = cpu(resource.RUSAGE_SELF), cpu(resource.RUSAGE_CHILDREN)
    sys.stderr.write(f"\\nCPU {own:.4f} {workers:.4f} {at_fork[0]:.4f} {at_fork[1]:.4f}\\n")
atexit.register(said)
from compactctl.files import jobs
hook = "_fork_workers" if hasattr(jobs, "_fork_workers") else "_forked_pool"  # a baseline before it: its pool
forked_pool = getattr(jobs, hook)
def timed_pool(*args, **options):
    at_fork[1] = cpu(resource.RUSAGE_SELF)
    pool = forked_pool(*args, **options)
    at_fork[0] = cpu(resource.RUSAGE_SELF)
    return pool
setattr(jobs, hook, timed_pool)
from compactctl.cli.main import main
sys.argv = ["compactctl", *sys.argv[1:]]
main()
"""


def real_folder(folder: Path, copies: int) -> int:
    sessions = sorted(
        p for name in ("claude-code", "codex") for p in (SHARED / name).rglob("*") if p.suffix in (".jsonl", ".json")
    )
    if not sessions:
        raise SystemExit(f"no sessions under {SHARED}: pass --folder")
    for copy in range(copies):
        for n, session in enumerate(sessions):
            shutil.copyfile(session, folder / f"{copy}-{n:02d}-{session.name}")
    return len(sessions)


Row = tuple[float, float, float, float, float]


def run(folder: Path, out: Path, jobs: int, strategy: str | None, root: Path = ROOT) -> Row:
    """(wall, parent CPU, workers' CPU, parent CPU at the fork, parent CPU when it began to fork)
    of one whole ``compact`` process of the checkout at ``root``."""
    shutil.rmtree(out, ignore_errors=True)
    command = [sys.executable, "-c", RUN, "compact", str(folder), "-o", str(out), "-q"]
    command += ["-s", strategy] if strategy else []
    env = {**os.environ, "PYTHONPATH": str(root)}  # that checkout's compactctl, in the workers too
    started = time.perf_counter()
    # Run in ``root``: ``python -c`` puts the working folder first on the path, before PYTHONPATH
    # (from another checkout's folder, a baseline would have run that checkout's compactctl).
    done = subprocess.run([*command, "--jobs", str(jobs)], capture_output=True, check=False, env=env, cwd=root)
    wall = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"--jobs {jobs} failed ({done.returncode}): {done.stderr.decode()[-2000:]}")
    _, own, workers, at_fork, forking = done.stderr.decode().strip().splitlines()[-1].split()
    return wall, float(own), float(workers), float(at_fork), float(forking)


def same_tree(a: Path, b: Path) -> bool:
    files_a = sorted(p.relative_to(a) for p in a.rglob("*") if p.is_file())
    files_b = sorted(p.relative_to(b) for p in b.rglob("*") if p.is_file())
    return files_a == files_b and all(filecmp.cmp(a / p, b / p, shallow=False) for p in files_a)


def show(label: str, rows: dict[int, list[Row]]) -> None:
    """The table and the ratios of one checkout's runs."""
    print(f"{label:<10}{'wall s':>8}{'parent cpu':>12}{'workers cpu':>13}{'total cpu':>11}{'utilisation':>13}")
    medians = {}
    for jobs, measured in rows.items():
        wall, own, workers, at_fork, forking = (statistics.median(m[i] for m in measured) for i in range(5))
        medians[jobs] = (wall, own, workers, at_fork, forking)
        # With --jobs 1 the files run in the process itself: its CPU is all of it.
        used = workers / (wall * (jobs - 1)) if jobs > 1 else own / wall
        print(f"--jobs {jobs:<3}{wall:>8.2f}{own:>12.2f}{workers:>13.2f}{own + workers:>11.2f}{used:>12.0%}")
    ratio = statistics.median(a[0] / b[0] for a, b in zip(rows[1], rows[2], strict=True))
    (_, own_1, _, _, _), (_, own_2, workers_2, fork_2, forking_2) = medians[1], medians[2]
    best = max(own_2, fork_2 + workers_2, fork_2 + (own_2 - fork_2 + workers_2) / 2)
    print(f"--jobs 2 against --jobs 1: wall x{ratio:.2f} faster (run by run, median)")
    print(
        f"CPU-time bound on an idle machine: --jobs 1 {own_1:.2f} s, --jobs 2 at best max(parent {own_2:.2f}, "
        f"before the fork {fork_2:.2f} + worker {workers_2:.2f}, "
        f"{fork_2:.2f} + rest {own_2 - fork_2 + workers_2:.2f} / 2) = {best:.2f} s: x{own_1 / best:.2f}"
    )
    print(
        f"--jobs 2 CPU by phase: parent before the fork {fork_2:.2f} (start-up and the file list {forking_2:.2f}, "
        f"tables and forking {fork_2 - forking_2:.2f}), parent after it {own_2 - fork_2:.2f}, worker {workers_2:.2f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--folder", type=Path, help="the sessions to compact (default: the shared ones, copied)")
    parser.add_argument("--copies", type=int, default=4)
    parser.add_argument("--strategy", help="one strategy (default: compact's own default steps)")
    parser.add_argument("--baseline", type=Path, help="another checkout (the previous main), run in turn with this one")
    args = parser.parse_args()
    roots = {"this": ROOT} | ({"baseline": args.baseline.resolve()} if args.baseline else {})
    for root in roots.values():  # as pip installs a package: byte-compiled (PYTHONDONTWRITEBYTECODE or not)
        compiled = [sys.executable, "-m", "compileall", "-q", str(root / "compactctl")]
        subprocess.run(compiled, check=False, capture_output=True)
    with tempfile.TemporaryDirectory(prefix="jobs-bench-") as work:
        folder = args.folder
        if folder is None:
            folder = Path(work) / "in"
            folder.mkdir()
            distinct = real_folder(folder, args.copies)
            what = f"{distinct} real sessions x {args.copies} copies"
        else:
            what = "given folder"
        files = [p for p in folder.rglob("*") if p.is_file()]
        size = sum(p.stat().st_size for p in files)
        outs = {(name, jobs): Path(work) / f"out-{name}-{jobs}" for name in roots for jobs in (1, 2)}
        rows: dict[str, dict[int, list[Row]]] = {name: {1: [], 2: []} for name in roots}
        loads = [os.getloadavg()[0]]
        run(folder, outs["this", 1], 1, args.strategy)  # warm-up: the page cache, the tokenizer cache
        for _ in range(args.runs):  # A B A B ..., or A B A' B' with a baseline
            for name, root in roots.items():
                for jobs in (1, 2):
                    rows[name][jobs].append(run(folder, outs[name, jobs], jobs, args.strategy, root))
            loads.append(os.getloadavg()[0])
        identical = all(same_tree(outs["this", 1], out) for out in outs.values())
    print(
        f"{len(files)} files ({what}), {size / 1e6:.1f} MB, {args.strategy or 'default steps'}, "
        f"medians of {args.runs}, load average {min(loads):.1f}-{max(loads):.1f} on {os.cpu_count()} cores"
    )
    for name, root in roots.items():
        if len(roots) > 1:
            print(f"{name}: {root}")
        show("", rows[name])
    if args.baseline:
        this, base = rows["this"][2], rows["baseline"][2]
        faster = statistics.median(b[0] / a[0] for a, b in zip(this, base, strict=True))
        print(f"--jobs 2, this against the baseline: wall x{faster:.2f} faster (run by run, median)")
    print(f"outputs identical: {'yes' if identical else 'NO'}")


if __name__ == "__main__":
    main()
