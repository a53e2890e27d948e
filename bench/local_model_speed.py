"""How fast the tests' local model server reads a prompt and writes a reply, by prompt thread count.

llama-cpp-python's server reads the prompt with ``n_threads_batch`` threads, every core unless told
(``multiprocessing.cpu_count()``), whatever ``--n_threads`` says; ggml's thread pool spins while
it waits, so on cores other work shares, two threads read slower than one. This starts the server
(tests/local_model.py) once per setting, sends the same real text (the start of a Claude Code
session in shared/transcripts, a round number first so no prompt cache helps) through
``/v1/chat/completions``, and prints the server's own timings (its ``llama_perf_context_print``
lines): median tokens/s of prompt reading and of writing, and the ratio to the first setting.

    python bench/local_model_speed.py --rounds 3
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import tempfile
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import compactctl  # noqa: E402
from tests.local_model import start  # noqa: E402
from tests.needs import SHARED_TRANSCRIPTS  # noqa: E402

SESSION = SHARED_TRANSCRIPTS / "claude-code" / "yoavf__ai-sessions" / "claude-code-pomodoro-timer.jsonl"
TIMING = re.compile(r"(prompt eval|\beval) time =\s*([\d.]+) ms /\s*(\d+) (?:tokens|runs)")


def real_text(chars: int) -> str:
    _, transcripts = compactctl.load(SESSION.read_bytes(), str(SESSION))
    text = "\n\n".join(str(m.get("content") or "") for m in transcripts[0].messages)
    return text[:chars]


def ask(url: str, model: str, text: str, max_tokens: int) -> None:
    body = {
        "model": model,
        "messages": [{"role": "user", "content": f"{text}\n\nSummarize the above in three lines."}],
        "max_tokens": max_tokens,
        "temperature": 0,
    }
    headers = {"Content-Type": "application/json"}
    request = urllib.request.Request(f"{url}/chat/completions", json.dumps(body).encode(), headers)
    with urllib.request.urlopen(request, timeout=1800) as reply:
        json.loads(reply.read())


def timings(log: str) -> list[tuple[float, float]]:
    """(prompt tokens/s, reply tokens/s) per request, from the server's log."""
    found: list[tuple[float, float]] = []
    prompt: float | None = None
    for kind, ms, count in TIMING.findall(log):
        rate = int(count) / (float(ms) / 1000) if float(ms) else 0.0
        if kind == "prompt eval":
            prompt = rate
        elif prompt is not None:
            found.append((prompt, rate))
            prompt = None
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--chars", type=int, default=6000, help="prompt text (about 1,500 tokens at 6,000)")
    parser.add_argument("--max-tokens", type=int, default=64)
    parser.add_argument("--batch-threads", type=int, nargs="+", default=[2, 1], help="the first is the baseline")
    args = parser.parse_args()
    text = real_text(args.chars)
    rates: dict[int, list[tuple[float, float]]] = {}
    for threads in args.batch_threads:
        with tempfile.TemporaryDirectory() as folder:
            server = start(Path(folder), batch_threads=threads)
            try:
                for round_ in range(args.rounds):
                    ask(server.url, server.model, f"Round {round_ + 1} of {args.rounds}.\n\n{text}", args.max_tokens)
            finally:
                server.stop()
            rates[threads] = timings(server.log.read_text(errors="replace"))
    base = args.batch_threads[0]
    base_prompt = statistics.median(p for p, _ in rates[base])
    base_reply = statistics.median(r for _, r in rates[base])
    print(f"SmolLM2-135M Q4_1, llama-cpp-python server, {args.rounds} rounds, medians; reply threads 1")
    print("| n_threads_batch | prompt tokens/s | reply tokens/s | prompt vs first | reply vs first |")
    print("|---|---|---|---|---|")
    for threads, found in rates.items():
        prompt = statistics.median(p for p, _ in found)
        reply = statistics.median(r for _, r in found)
        print(f"| {threads} | {prompt:.1f} | {reply:.1f} | {prompt / base_prompt:.2f}x | {reply / base_reply:.2f}x |")


if __name__ == "__main__":
    main()
