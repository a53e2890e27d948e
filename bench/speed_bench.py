"""Speed where people wait, as ratios in one run (issue 24): start-up, prune, compact per real session, --jobs, replay.

    python bench/speed_bench.py [--runs 5] [--old PATH] [--claude DIR] [--folder DIR] [--only ...]

Every figure is a median of whole processes run in turn (A B A B ...), CPU time (user + system,
the OS's accounting of the child and its children) beside wall time, each against its baseline
in the same run: ``python -c pass``; the previous main (a checkout at ``--old``, run with
PYTHONPATH); ``cozempic treat`` (its dry run: what it computes, nothing written) on the real
Claude Code sessions in ``--claude`` (and on a session's first 4 lines: the floor every file
pays, start-up and the tokenizer table); ``--jobs 1``; tiktoken's own loader
(``COMPACTCTL_TOKENIZER=tiktoken``) against bpe-openai's counter. ``--folder`` holds the real
sessions for --jobs (the shared Claude Code and Codex transcripts copied to make 40). Both
checkouts are byte-compiled first, as an installed package is.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import orjson

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
sys.path.insert(0, str(BENCH))

REPLAY = """
import sys, time
sys.path.insert(0, {bench!r})
from workloads import generate
from compactctl.replay import replay, settings_grid
from compactctl.summarizers.extractive import ExtractiveSummarizer
from compactctl.tokens import TokenCounter
messages = generate("tool", 2000)
counter = TokenCounter()
rows = replay(messages, settings_grid([4000, 16000, 64000], False, ["structured"]), {{"keep_recent": 10}},
              counter=counter, prices=None, summarizer=ExtractiveSummarizer(counter))
print(repr([(r.compactions, r.cost, r.peak_context, r.facts_lost) for r in rows]))
"""


def run(command: list[str], env: dict[str, str] | None = None) -> tuple[float, float, bytes]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(command, env=env, capture_output=True, check=False)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime, done.stdout


def paired(a: list[str], b: list[str], runs: int, env_a=None, env_b=None) -> tuple[tuple[float, float], ...]:
    """Medians (wall, cpu) of A and of B, and the median A/B ratios, run in turn."""
    run(a, env_a), run(b, env_b)  # warm-up
    rows = []
    for _ in range(runs):
        wa, ca, _ = run(a, env_a)
        wb, cb, _ = run(b, env_b)
        rows.append((wa, ca, wb, cb))
    med = [statistics.median(r[i] for r in rows) for i in range(4)]
    ratios = (statistics.median(r[0] / r[2] for r in rows), statistics.median(r[1] / r[3] for r in rows))
    return (med[0], med[1]), (med[2], med[3]), ratios


def line(label: str, a, b, ratio, b_label: str) -> str:
    return (
        f"{label:<44}{a[0]:>7.3f}{a[1]:>7.3f}   {b_label:<22}{b[0]:>7.3f}{b[1]:>7.3f}"
        f"   wall x{ratio[0]:>6.2f} cpu x{ratio[1]:>6.2f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--old", default="/tmp/oldmain", help="a checkout of the previous main")
    parser.add_argument("--folder", type=Path, help="40 real sessions (Claude Code and Codex)")
    parser.add_argument("--cozempic", default=shutil.which("cozempic", path=str(Path(sys.executable).parent)))
    parser.add_argument("--claude", type=Path, default=ROOT.parent / "shared" / "transcripts" / "claude-code")
    parser.add_argument("--scaled", type=int, nargs="*", default=[4, 8], help="copies of a session chained")
    parser.add_argument("--only", nargs="*", default=["help", "prune", "compact", "tokenizer", "jobs", "replay"])
    args = parser.parse_args()
    script = str(Path(sys.executable).with_name("compactctl"))
    # cozempic, run without this, wires its hooks into ~/.claude/settings.json (every Claude Code session
    # of the user, with a pip upgrade in one): the benchmark must leave the machine as it found it.
    here = {**os.environ, "PYTHONPATH": str(ROOT), "COZEMPIC_NO_GLOBAL_INIT": "1", "COZEMPIC_NO_AUTO_INIT": "1"}
    old = {**os.environ, "PYTHONPATH": args.old}
    for tree in (ROOT, Path(args.old)):  # as pip installs a package: byte-compiled (PYTHONDONTWRITEBYTECODE or not)
        subprocess.run(
            [sys.executable, "-m", "compileall", "-q", str(tree / "compactctl")], check=False, capture_output=True
        )
    python_pass = [sys.executable, "-c", "pass"]
    print(f"{'A':<44}{'wall':>7}{'cpu':>7}   {'B (baseline)':<22}{'wall':>7}{'cpu':>7}   A/B, medians of {args.runs}")
    with tempfile.TemporaryDirectory() as folder:
        if "help" in args.only:
            for command in (["--help"], ["compact", "--help"]):
                shown = " ".join(command)
                a, b, r = paired([script, *command], python_pass, args.runs, here, here)
                print(line(f"compactctl {shown}", a, b, r, "python -c pass"))
                a, b, r = paired([script, *command], python_pass, args.runs, old, here)
                print(line(f"previous main: {shown}", a, b, r, "python -c pass"))
                a, b, r = paired([script, *command], [script, *command], args.runs, here, old)
                print(line(f"compactctl {shown}", a, b, r, "previous main"))
        if "prune" in args.only:
            from workloads import generate

            path = Path(folder) / "tool-500.jsonl"
            path.write_bytes(b"".join(orjson.dumps(m) + b"\n" for m in generate("tool", 500)))
            prune = [script, "prune", str(path), "-o", str(path.with_suffix(".out.jsonl")), "-q"]
            for name, env in (("compactctl prune -q, 500-turn agent", here), ("previous main: prune -q", old)):
                a, b, r = paired(prune, python_pass, args.runs, env, here)
                print(line(name, a, b, r, "python -c pass"))
            a, b, r = paired(prune, prune, args.runs, here, old)
            print(line("compactctl prune -q, 500-turn agent", a, b, r, "previous main"))
        if "compact" in args.only and args.claude.is_dir():
            sessions = sorted(p for p in args.claude.rglob("*.json*") if _is_claude(p))
            # The floor: a session's first 4 lines, where compacting is next to nothing, so what is
            # left is start-up (interpreter, imports) and the tokenizer table, paid by every file.
            smallest = min((p for p in sessions if p.suffix == ".jsonl"), key=lambda p: p.stat().st_size, default=None)
            if smallest is not None:
                head = Path(folder) / "head-4.jsonl"
                head.write_bytes(b"".join(smallest.read_bytes().splitlines(keepends=True)[:4]))
                ours = [script, "compact", str(head), "-o", f"{folder}/head-4.out.jsonl", "-q"]
                a, b, r = paired(ours, python_pass, args.runs, here, here)
                print(line("compact, 4 lines (start-up + table)", a, b, r, "python -c pass"))
                if args.cozempic:
                    theirs = [args.cozempic, "treat", str(head), "-rx", "standard"]
                    a, b, r = paired(ours, theirs, args.runs, here, here)
                    print(line("compact, 4 lines (start-up + table)", a, b, r, "cozempic treat"))
            for session in sessions:
                ours = [script, "compact", str(session), "-o", f"{folder}/{session.name}", "-q"]
                label = f"compact {session.parent.name[:20]}/{session.name[:8]}"
                if args.cozempic and session.suffix == ".jsonl":  # cozempic reads JSON Lines sessions only
                    theirs = [args.cozempic, "treat", str(session), "-rx", "standard"]
                    a, b, r = paired(ours, theirs, args.runs, here, here)
                    print(line(label, a, b, r, "cozempic treat"))
                a, b, r = paired(ours, ours, args.runs, here, old)
                print(line(label, a, b, r, "previous main"))
            # Larger sessions than the shared ones: what each MB costs. A real session's records copied
            # N times, chained one after the other, each copy's text changed (no memo meets a text twice).
            donor = next((p for p in sessions if p.parent.name.startswith("kcosr")), None)
            for copies in args.scaled if donor is not None and args.cozempic else ():
                path = Path(folder) / f"{donor.stem}-x{copies}.jsonl"
                path.write_bytes(chained_copies(donor, copies))
                ours = [script, "compact", str(path), "-o", f"{folder}/scaled.out.jsonl", "-q"]
                theirs = [args.cozempic, "treat", str(path), "-rx", "standard"]
                a, b, r = paired(ours, theirs, args.runs, here, here)
                size = path.stat().st_size / 1e6
                print(line(f"compact kcosr x{copies} ({size:.2f} MB)", a, b, r, "cozempic treat"))
        if "tokenizer" in args.only and args.claude.is_dir():
            session = max((p for p in args.claude.rglob("*.json*") if _is_claude(p)), key=lambda p: p.stat().st_size)
            ours = [script, "compact", str(session), "-o", f"{folder}/tokenizer.jsonl", "-q"]
            with_tiktoken = {**here, "COMPACTCTL_TOKENIZER": "tiktoken"}
            a, b, r = paired(ours, ours, args.runs, here, with_tiktoken)
            print(line(f"compact {session.name[:12]}: bpe-openai", a, b, r, "tiktoken (cached)"))
        if "jobs" in args.only and args.folder:
            common = [script, "compact", str(args.folder), "-q"]
            a, b, r = paired(
                [*common, "-o", f"{folder}/j2", "--jobs", "2"],
                [*common, "-o", f"{folder}/j1", "--jobs", "1"],
                args.runs,
                here,
                here,
            )
            files = len(list(args.folder.iterdir()))
            print(line(f"compact --jobs 2, {files} real sessions", a, b, r, "--jobs 1"))
        if "replay" in args.only:
            code = REPLAY.format(bench=str(BENCH))
            a, b, r = paired([sys.executable, "-c", code], [sys.executable, "-c", code], args.runs, here, old)
            same = run([sys.executable, "-c", code], here)[2] == run([sys.executable, "-c", code], old)[2]
            print(line("replay 2000-turn agent, 3 thresholds", a, b, r, "previous main"))
            print(f"  identical figures: {'yes' if same else 'NO'}")


def chained_copies(session: Path, copies: int) -> bytes:
    """A Claude Code session of ``copies`` copies of ``session``'s records, each copy's first record the child
    of the last one before, its ids and every text it holds changed (a word numbered per copy), so that the
    file is one chain of distinct texts, as a session that many times longer would be."""
    import re
    import uuid

    records = [orjson.loads(line) for line in session.read_bytes().splitlines() if line.strip()]
    out: list[bytes] = []
    last: str | None = None
    for copy in range(copies):

        def renamed(value: object, copy: int = copy) -> object:
            if isinstance(value, str):
                return value if not copy else re.sub(r"\bthe\b", f"the{copy}", value)
            if isinstance(value, list):
                return [renamed(item) for item in value]
            if isinstance(value, dict):
                return {
                    key: item if key in ("type", "role", "id", "tool_use_id") else renamed(item)
                    for key, item in value.items()
                }
            return value

        first = True
        for record in records:
            record = dict(record)
            if "uuid" in record:
                ids = {
                    key: str(uuid.uuid5(uuid.NAMESPACE_URL, f"{record[key]}/{copy}"))
                    for key in ("uuid", "parentUuid")
                    if record.get(key)
                }
                record.update(ids)
                if first:
                    record["parentUuid"] = last
                first = False
                last = record["uuid"]
            for key in ("message", "toolUseResult"):
                if copy and key in record:
                    record[key] = renamed(record[key])
            if copy and isinstance(record.get("message"), dict) and "id" in record["message"]:
                record["message"]["id"] = f"{record['message']['id']}_{copy}"
            out.append(orjson.dumps(record) + b"\n")
    return b"".join(out)


def _is_claude(path: Path) -> bool:
    with path.open("rb") as file:
        head = file.read(4000)
    return b'"sessionId"' in head or b'"session_id"' in head


if __name__ == "__main__":
    main()
