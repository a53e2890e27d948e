"""Peak memory (RSS) and time of each command on chat files of 20, 100 and 300 MB.

    python bench/memory_bench.py [--sizes 20 100 300] [--commands prune compact report replay] [--exe CMD]

``--exe`` runs another compactctl (a baseline): e.g. ``--exe "env PYTHONPATH=/tmp/main python -m compactctl"``.

A tool-agent transcript from workloads.py is repeated (ids made unique) until the file
has the size asked for; each command then runs as its own process, and its peak RSS is
read from the kernel (``ru_maxrss`` of the child). The ratio column is peak RSS over
the file size: a command that streams stays flat as the file grows.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from workloads import generate

COMMANDS = {
    "prune": ["prune", "{src}", "-o", "{out}", "--quiet"],
    "compact": ["compact", "{src}", "-o", "{out}", "-s", "prune", "-s", "trim-tools", "--quiet"],
    "report": ["report", "{src}", "--quiet"],
    "replay": ["replay", "{src}", "--threshold", "100000", "-s", "window", "--quiet"],
}


def make_file(path: Path, megabytes: int) -> int:
    """A chat file of at least ``megabytes`` MB: one tool-agent session repeated, ids renumbered."""
    session = generate("tool", 400, seed=7)
    target = megabytes * 1_000_000
    written = 0
    copy = 0
    with path.open("wb") as file:
        while written < target:
            for message in session:
                line = json.dumps(message, ensure_ascii=False)
                line = line.replace('"call_', f'"c{copy}_')  # a tool call id is unique within the file
                data = (line + "\n").encode()
                file.write(data)
                written += len(data)
            copy += 1
    return written


def peak_of(command: list[str]) -> tuple[float, float, int]:
    """Seconds, peak RSS in MB, and the exit code of ``command`` run as its own process."""
    script = (
        "import resource, subprocess, sys, time\n"
        "t = time.perf_counter(); code = subprocess.call(sys.argv[1:], stdout=subprocess.DEVNULL)\n"
        "elapsed = time.perf_counter() - t\n"
        "print(elapsed, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024, code)\n"
    )
    out = subprocess.run([sys.executable, "-c", script, *command], capture_output=True, text=True, check=True)
    seconds, peak, code = out.stdout.split()
    return float(seconds), float(peak), int(code)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", type=int, nargs="+", default=[20, 100, 300])
    parser.add_argument("--commands", nargs="+", default=list(COMMANDS))
    parser.add_argument("--exe", help="the compactctl command to measure (default: the one beside this Python)")
    args = parser.parse_args()
    exe = args.exe.split() if args.exe else [str(Path(sys.executable).with_name("compactctl"))]
    # s / MB: flat as the file grows when time is linear in it
    print(
        f"{'command':8} {'file MB':>8} {'peak RSS MB':>12} {'RSS / file':>11} {'seconds':>8} {'s / MB':>7} {'exit':>5}"
    )
    with tempfile.TemporaryDirectory() as folder:
        for size in args.sizes:
            source = Path(folder) / f"chat-{size}.jsonl"
            actual = make_file(source, size) / 1e6
            for name in args.commands:
                out = Path(folder) / f"out-{name}-{size}.jsonl"
                command = [*exe, *(part.format(src=source, out=out) for part in COMMANDS[name])]
                seconds, peak, code = peak_of(command)
                print(
                    f"{name:8} {actual:8.0f} {peak:12.0f} {peak / actual:11.2f} {seconds:8.1f} "
                    f"{seconds / actual:7.3f} {code:5}",
                    flush=True,
                )
                out.unlink(missing_ok=True)
            source.unlink()


if __name__ == "__main__":
    main()
