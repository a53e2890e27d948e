"""Prompt A against prompt B on the real sessions, through a real local model: the README's A/B table.

Starts llama-cpp-python's server with SmolLM2-135M (tests/local_model.py; `.ci/local-model` installs
both), runs `compactctl review` over the Claude Code and Codex sessions in shared/transcripts with
the shipped `structured` prompt as side A and bench/prompts/ledger-first.md as side B, and prints
each side's scores on the model's own text and on the whole summary, as a Markdown table. The pages
(and index.html) go to --pages. Temperature 0 and the summary cache make a rerun repeatable and free.

Each session is cut to its first records (JSONL lines, or items of a JSON array), the most whose
messages hold at most --prefix-tokens: the session as it stood at that point, which is what a
compaction in the middle of a session sees. A 135M model on one shared core reads some 50-150
tokens a second, so whole sessions (4,000-26,000 tokens of span each, twice) would take hours;
--prefix-tokens 0 runs them whole.

    python bench/prompt_ab.py --pages /tmp/ab-pages --prefix-tokens 4000
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.local_model import start  # noqa: E402
from tests.needs import SHARED_TRANSCRIPTS  # noqa: E402

ALTERNATIVE = ROOT / "bench" / "prompts" / "ledger-first.md"
PRODUCERS = ("claude-code", "codex")
WINDOW = 8192  # SmolLM2's trained context: fewer chunks than the tests' 4,096


def sessions() -> list[Path]:
    found = []
    for producer in PRODUCERS:
        found += sorted(p for p in (SHARED_TRANSCRIPTS / producer).rglob("*") if p.suffix in (".jsonl", ".json"))
    return found


def message_tokens(data: bytes, name: str) -> int:
    """About how many tokens the messages read from ``data`` hold (4 characters a token), system and
    developer messages left out: a compaction keeps them, they are not in what is summarized."""
    import compactctl

    try:
        _, transcripts = compactctl.load(data, name)
    except compactctl.InputError:
        return 1 << 30  # a cut the reader refuses is never chosen
    kept = ("system", "developer")
    text = sum(len(json.dumps(m, ensure_ascii=False)) for t in transcripts for m in t.messages if m["role"] not in kept)
    return text // 4


def session_prefix(path: Path, budget: int) -> bytes:
    """The first records of ``path``, the most whose messages hold at most ``budget`` tokens."""
    data = path.read_bytes()
    if budget <= 0:
        return data
    if path.suffix == ".jsonl":
        records: list = data.splitlines(keepends=True)

        def join(n: int) -> bytes:
            return b"".join(records[:n])
    else:
        records = json.loads(data)

        def join(n: int) -> bytes:
            return json.dumps(records[:n], ensure_ascii=False).encode()

    low, high = 1, len(records)  # the largest n that fits, by bisection: tokens grow with n
    while low < high:
        middle = (low + high + 1) // 2
        if message_tokens(join(middle), path.name) <= budget:
            low = middle
        else:
            high = middle - 1
    return join(low)


def server_threads() -> int:
    from tests.local_model import THREADS

    return THREADS


def pct(share: dict) -> str:
    return "–" if share["score"] is None else f"{share['passed']}/{share['total']} ({100 * share['score']:.0f}%)"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=Path, default=Path(tempfile.mkdtemp(prefix="prompt-ab-")))
    parser.add_argument("--prefix-tokens", type=int, default=4000, help="each session's first records up to this")
    parser.add_argument("--summary-max-tokens", type=int, default=500)
    parser.add_argument("--keep-recent", type=int, default=2, help="messages kept as they are; the rest summarized")
    parser.add_argument("--cache-dir", type=Path, default=Path(tempfile.gettempdir()) / "compactctl-prompt-ab-cache")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        inputs = Path(folder) / "sessions"
        for path in sessions():
            link = inputs / path.relative_to(SHARED_TRANSCRIPTS)
            link.parent.mkdir(parents=True, exist_ok=True)
            link.write_bytes(session_prefix(path, args.prefix_tokens))
        server = start(Path(folder), window=WINDOW)
        load_before = os.getloadavg()[1]
        try:
            started = time.monotonic()
            command = [
                sys.executable, "-m", "compactctl", "review", str(inputs), "-o", str(args.pages),
                "--summarizer", "openai", "--base-url", server.url, "--model", server.model,
                "--threshold", "0", "--keep-recent", str(args.keep_recent),
                "--summary-max-tokens", str(args.summary_max_tokens),
                "--summary-temperature", "0", "--summary-timeout", "1800", "--summary-request-deadline", "1800",
                "--cache-dir", str(args.cache_dir),
                "--vs-prompt-file", f"structured={ALTERNATIVE}", "--json", "-q",
            ]  # fmt: skip
            done = subprocess.run(command, capture_output=True, text=True, cwd=ROOT)
            seconds = time.monotonic() - started
            load = (load_before + os.getloadavg()[1]) / 2  # 5-minute load average at the start and the end
        finally:
            server.stop()
            args.pages.mkdir(parents=True, exist_ok=True)
            shutil.copy(server.log, args.pages / "llama_server.log")  # its llama_perf lines: tokens a second
    if done.returncode != 0:
        sys.exit(f"review failed ({done.returncode}):\n{done.stderr[-3000:]}")
    body = json.loads(done.stdout)
    cut = f"each session's first {args.prefix_tokens} tokens" if args.prefix_tokens > 0 else "whole sessions"
    print(
        f"SmolLM2-135M-Instruct Q4_1, llama-cpp-python server, window {WINDOW}, temperature 0, {cut}, "
        f"the last {args.keep_recent} messages kept, summary bound {args.summary_max_tokens}; "
        f"{server_threads()} thread(s); {seconds:.0f} s "
        f"at a load of {load:.1f} on {os.cpu_count()} cores"
    )
    print(f"pages: {args.pages / 'index.html'}\n")
    print("| session | A (shipped): identifiers | A: probes | B (ledger-first): identifiers | B: probes | B − A (pp) |")
    print("|---|---|---|---|---|---|")
    for entry in sorted(body["files"], key=lambda f: -abs(f["own_text_difference_pp"])):
        a, b = entry["sides"]["A"]["own_text"], entry["sides"]["B"]["own_text"]
        cells = [pct(a["identifiers"]), pct(a["probes"]), pct(b["identifiers"]), pct(b["probes"])]
        print(f"| {entry['name']} | {' | '.join(cells)} | {entry['own_text_difference_pp']:+.1f} |")
    total = body["total"]
    a, b = total["A"]["own_text"], total["B"]["own_text"]
    print(
        f"| **all** | {pct(a['identifiers'])} | {pct(a['probes'])} | {pct(b['identifiers'])} | {pct(b['probes'])} | |"
    )
    wa, wb = total["A"]["whole_summary"], total["B"]["whole_summary"]
    print(
        f"\nWhole summary (with what compactctl appends): A {pct(wa['identifiers'])} identifiers, "
        f"{pct(wa['probes'])} probes; B {pct(wb['identifiers'])}, {pct(wb['probes'])}."
    )


if __name__ == "__main__":
    main()
