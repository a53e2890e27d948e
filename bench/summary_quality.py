"""How much of what the next turn needs survives ``structured`` with the extractive summarizer.

For every file (samples/ and ../shared/transcripts/ by default), compact each transcript with
``structured`` and report: the token reduction; the share of file paths, commands and numbers
with units found in the *summarized* span that are still present verbatim in the output; and
whether every labeled fact (``facts`` annotations) and every explicit user constraint from the
summarized span survived verbatim.

SWE-agent demonstration messages (``is_demo``: an example run shown to the agent) are left
out of the span, as the summarizer leaves them out. The identifiers are found with this
script's own patterns, not the summarizer's, so the
measure does not simply replay the extractor. Commands are the commands the agent ran: the
``cmd``/``command`` argument of a tool call, or a SWE-agent ``action``.

    python bench/summary_quality.py [PATH ...] [--keep-turns N] [--summary-max-tokens N]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from pathlib import Path

from compactctl.compaction import compact
from compactctl.files import find_transcripts
from compactctl.formats import load
from compactctl.summarizers.ledger import constraints
from compactctl.tokens import counter_for
from compactctl.transcript import content_text, facts_of, message_text, tool_calls_of

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_INPUTS = [ROOT / "samples", ROOT.parent / "shared" / "transcripts"]

PATH = re.compile(
    r"(?<![\w/:])(?:[\w.-]+/)+[\w.-]+\.[A-Za-z]{1,5}\b|(?<![\w/.])[\w-]+\.(?:py|js|ts|json|toml|md|txt|cfg|yaml|yml|sh|c|rs|go)\b"
)
NUMBER = re.compile(
    r"(?:[$€]\s?\d(?:[\d,]*\d)?(?:\.\d+)?|\b\d(?:[\d,]*\d)?(?:\.\d+)?\s?(?:ms|s|seconds|minutes|KB|MB|GB|%|€|EUR|USD|tokens)(?!\w))"
)
URL = re.compile(r"https?://\S+")
PROGRESS_BAR = re.compile(r"\[\s*\d{1,3}%\]")  # pytest's "[ 37%]" is a position, not a measured number


def commands(message: dict) -> list[str]:
    found = []
    for call in tool_calls_of(message):
        arguments = (call.get("function") or {}).get("arguments")
        try:
            parsed = json.loads(arguments) if isinstance(arguments, str) else arguments
        except ValueError:
            parsed = None
        if isinstance(parsed, dict):
            found += [
                v.strip().splitlines()[0]
                for k, v in parsed.items()
                if k in ("cmd", "command") and isinstance(v, str) and v.strip()
            ]
    action = message.get("action")
    if isinstance(action, str) and action.strip():
        found.append(action.strip().splitlines()[0])
    return found


def identifiers(messages: list[dict]) -> dict[str, set[str]]:
    found: dict[str, set[str]] = {"paths": set(), "commands": set(), "numbers": set()}
    for message in messages:
        text = PROGRESS_BAR.sub(" ", URL.sub(" ", content_text(message)))
        found["paths"] |= set(PATH.findall(text))
        found["numbers"] |= set(NUMBER.findall(text))
        found["commands"] |= {c[:200] for c in commands(message)}
    return found


def measure_file(path: Path, counter, settings: dict) -> dict:
    fmt, transcripts = load(path.read_bytes(), str(path))
    kinds = ("paths", "commands", "numbers")
    row: dict = {"before": 0, "after": 0, "kept": dict.fromkeys(kinds, 0), "total": dict.fromkeys(kinds, 0)}
    row.update(facts=[0, 0], constraints=[0, 0], lost=[])
    for transcript in transcripts:
        messages = transcript.messages
        result = compact(messages, ["structured"], settings, counter=counter)
        row["before"] += counter.messages(messages)
        row["after"] += counter.messages(result.messages)
        output = "\n".join(message_text(m) for m in result.messages)
        # SWE-agent demonstrations are example runs, not this session: they are not asked to survive.
        span = [
            messages[e.index]
            for e in result.manifest
            if e.action == "summarized" and not messages[e.index].get("is_demo")
        ]
        for kind, items in identifiers(span).items():
            row["total"][kind] += len(items)
            kept = {item for item in items if item in output}
            row["kept"][kind] += len(kept)
            row["lost"] += [f"{kind}: {item}" for item in sorted(items - kept)[:3]]
        labeled = {fact for m in messages for fact in facts_of(m)}
        row["facts"][0] += sum(fact in output for fact in labeled)
        row["facts"][1] += len(labeled)
        quoted = constraints(span)
        row["constraints"][0] += sum(c in output for c in quoted)
        row["constraints"][1] += len(quoted)
        row["lost"] += [f"constraint: {c}" for c in quoted if c not in output]
    row["format"], row["transcripts"] = fmt.name, len(transcripts)
    return row


def share(kept: int, total: int) -> str:
    return f"{kept}/{total} ({100 * kept / total:.0f}%)" if total else "-"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("inputs", nargs="*", type=Path, default=DEFAULT_INPUTS)
    parser.add_argument("--keep-turns", type=int)
    parser.add_argument("--keep-recent", type=int)
    parser.add_argument("--summary-max-tokens", type=int)
    parser.add_argument("--show-lost", action="store_true", help="list a few identifiers that did not survive")
    args = parser.parse_args()
    settings = {k: v for k, v in {"keep_turns": args.keep_turns, "keep_recent": args.keep_recent,
                "summary_max_tokens": args.summary_max_tokens}.items() if v is not None}  # fmt: skip
    counter = counter_for()
    files = [p for given in args.inputs for p in (find_transcripts(given) if given.is_dir() else [given])]
    columns = ["file", "transcripts", "tokens before -> after", "reduction", "paths kept", "commands kept"]
    columns += ["numbers kept", "labeled facts", "user constraints"]
    print("| " + " | ".join(columns) + " |")
    print("|---|" + "---:|" * (len(columns) - 1))
    totals = {"kept": {"paths": 0, "commands": 0, "numbers": 0}, "total": {"paths": 0, "commands": 0, "numbers": 0}}
    all_facts, all_constraints, started = [0, 0], [0, 0], time.perf_counter()
    for path in files:
        try:
            row = measure_file(path, counter, settings)
        except Exception as error:  # a file no reader knows: say so and go on
            print(f"| {path.name} | unreadable: {error} |", file=sys.stderr)
            continue
        for kind in totals["kept"]:
            totals["kept"][kind] += row["kept"][kind]
            totals["total"][kind] += row["total"][kind]
        for acc, pair in ((all_facts, row["facts"]), (all_constraints, row["constraints"])):
            acc[0] += pair[0]
            acc[1] += pair[1]
        reduction = 1 - row["after"] / row["before"] if row["before"] else 0
        kept = [share(row["kept"][kind], row["total"][kind]) for kind in ("paths", "commands", "numbers")]
        cells = [
            path.name,
            str(row["transcripts"]),
            f"{row['before']:,} -> {row['after']:,}",
            f"{100 * reduction:.1f}%",
        ]
        cells += [*kept, share(*row["facts"]), share(*row["constraints"])]
        print("| " + " | ".join(cells) + " |")
        if args.show_lost and row["lost"]:
            print("  lost: " + "; ".join(row["lost"][:8]), file=sys.stderr)
    kept = [share(totals["kept"][kind], totals["total"][kind]) for kind in ("paths", "commands", "numbers")]
    print("| " + " | ".join(["**total**", "", "", "", *kept, share(*all_facts), share(*all_constraints)]) + " |")
    print(f"\n{len(files)} files in {time.perf_counter() - started:.1f} s", file=sys.stderr)
    return 0 if all_facts[0] == all_facts[1] and all_constraints[0] == all_constraints[1] else 1


if __name__ == "__main__":
    sys.exit(main())
