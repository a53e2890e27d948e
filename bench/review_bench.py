"""Review page: its size, and how long headless Chromium takes to open it (target: < 1 s at 2,000 messages).

    python bench/review_bench.py [--repeat 5] [--real FILE ...]

For the 2,000-message tool-agent workload (``workloads.generate("tool", 1077)``), and for
each real transcript given: builds the page (``compactctl review``, structured strategy,
extractive summarizer), then opens it ``--repeat`` times in Debian's chromium, each in a
fresh profile, and prints the medians of the in-page load time (navigation start to the
load event, first layout forced: what a person waits for) and of the whole browser run
(start-up included). The baseline in the same run is the same transcript as one plain
``<pre>`` of its text, the least a page showing it can cost: the ratio is what the review's
markup, marks and layout add.
"""

from __future__ import annotations

import argparse
import html
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import orjson

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from browser import Chromium, chromium_path  # noqa: E402
from workloads import generate  # noqa: E402

from compactctl.formats import load  # noqa: E402
from compactctl.transcript import message_text  # noqa: E402

TURNS = 1077  # 2,000 messages


def build_page(source: Path, page: Path) -> float:
    started = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "compactctl", "review", str(source), "-o", str(page), "-q"],
        check=True,
        capture_output=True,
    )
    return time.perf_counter() - started


def plain_page(source: Path, page: Path) -> None:
    _, transcripts = load(source.read_bytes(), str(source))
    text = "\n\n".join(message_text(m) for t in transcripts for m in t.messages)
    page.write_text(f"<!doctype html><html><body><pre>{html.escape(text)}</pre></body></html>", encoding="utf-8")


def timed(browser: Chromium, page: Path, repeat: int) -> tuple[float, float]:
    runs = [browser.load_ms(page) for _ in range(repeat)]
    return statistics.median(r[0] for r in runs), statistics.median(r[1] for r in runs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--real", nargs="*", default=[], help="real transcripts to measure too")
    args = parser.parse_args()
    found = chromium_path()
    if found is None:
        sys.exit("chromium is not installed (apt-get install chromium)")
    browser = Chromium(found, timeout=120)
    with tempfile.TemporaryDirectory(prefix="review-bench-") as folder:
        work = Path(folder)
        synthetic = work / "tool-2000.jsonl"
        messages = generate("tool", TURNS)
        synthetic.write_bytes(b"".join(orjson.dumps(m) + b"\n" for m in messages))
        print(f"chromium: {subprocess.run([found, '--version'], capture_output=True, text=True).stdout.strip()}")
        print(
            f"{'transcript':48} {'msgs':>6} {'page KB':>8} {'build s':>8} {'load ms':>8} "
            f"{'plain ms':>9} {'ratio':>6} {'run s':>6}"
        )
        for source in [synthetic, *map(Path, args.real)]:
            page, plain = work / f"{source.name}.html", work / f"{source.name}.plain.html"
            built = build_page(source, page)
            plain_page(source, plain)
            count = sum(len(t.messages) for t in load(source.read_bytes(), str(source))[1])
            load_ms, run_s = timed(browser, page, args.repeat)
            plain_ms, _ = timed(browser, plain, args.repeat)
            name = source.name if source == synthetic else str(source)[-48:]
            print(
                f"{name:48} {count:6,} {page.stat().st_size / 1024:8.0f} {built:8.2f} {load_ms:8.0f} "
                f"{plain_ms:9.0f} {load_ms / plain_ms:6.1f} {run_s:6.2f}"
            )
    print(f"medians of {args.repeat} opens each, fresh profile each; target: load < 1000 ms at 2,000 messages")


if __name__ == "__main__":
    main()
