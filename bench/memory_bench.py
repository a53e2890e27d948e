"""Peak memory (RSS) and time of each command on chat files of 20, 100 and 300 MB.

    python bench/memory_bench.py [--sizes 20 100 300] [--commands prune compact report replay] [--exe CMD]
    python bench/memory_bench.py --long-line 50 [--baseline CMD]

``--exe`` runs another compactctl: e.g. ``--exe "env PYTHONPATH=/tmp/main python -m compactctl"``;
``--baseline CMD`` runs each command with it too, in the same run, and prints the ratio of the peaks.

``--long-line MB``: instead of the sizes, one file whose user message is a single line of
MB megabytes of letters and no space (one piece of the tokenizer's split: a base64 blob
or a minified bundle is like it), and a short reply. Tokens of such a line are counted
in pieces (``encodings.counted_in_pieces``); counted whole, 50 MB took 2.7 GB.

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


def make_long_line(path: Path, megabytes: int) -> int:
    """A chat file whose user message is ``megabytes`` MB of random letters with no space, and a reply."""
    import random
    import string

    letters = "".join(random.Random(50).choices(string.ascii_lowercase, k=1_000_000))
    with path.open("wb") as file:
        file.write(b'{"role": "user", "content": "')
        for _ in range(megabytes):
            file.write(letters.encode())
        file.write(b'"}\n{"role": "assistant", "content": "Seen: a blob of letters."}\n')
    return path.stat().st_size


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
    parser.add_argument("--long-line", type=int, metavar="MB", help="one line of MB megabytes with no space instead")
    parser.add_argument("--commands", nargs="+", default=list(COMMANDS))
    parser.add_argument("--exe", help="the compactctl command to measure (default: the one beside this Python)")
    parser.add_argument("--baseline", help="another compactctl command, measured on the same files in the same run")
    args = parser.parse_args()
    exe = args.exe.split() if args.exe else [str(Path(sys.executable).with_name("compactctl"))]
    runs = [("", exe), *([("baseline", args.baseline.split())] if args.baseline else [])]
    # s / MB: flat as the file grows when time is linear in it
    print(
        f"{'command':8} {'file MB':>8} {'peak RSS MB':>12} {'RSS / file':>11} {'seconds':>8} {'s / MB':>7} {'exit':>5}"
        + ("  run       peak vs baseline" if args.baseline else "")
    )
    with tempfile.TemporaryDirectory() as folder:
        for size in [args.long_line] if args.long_line else args.sizes:
            source = Path(folder) / f"chat-{size}.jsonl"
            actual = (make_long_line(source, size) if args.long_line else make_file(source, size)) / 1e6
            for name in args.commands:
                peaks = []
                for label, command_line in runs:
                    out = Path(folder) / f"out-{name}-{size}.jsonl"
                    command = [*command_line, *(part.format(src=source, out=out) for part in COMMANDS[name])]
                    seconds, peak, code = peak_of(command)
                    peaks.append(peak)
                    ratio = f"  {label or 'this':9} {peaks[0] / peak:5.2f}x" if args.baseline else ""
                    print(
                        f"{name:8} {actual:8.0f} {peak:12.0f} {peak / actual:11.2f} {seconds:8.1f} "
                        f"{seconds / actual:7.3f} {code:5}{ratio}",
                        flush=True,
                    )
                    out.unlink(missing_ok=True)
            source.unlink()


if __name__ == "__main__":
    main()
