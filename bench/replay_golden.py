"""Replay's full ``--json`` output, pinned: every figure must stay what main gave before replay streamed.

    python bench/replay_golden.py write OUT.json [--transcripts DIR]   # on the reference checkout
    python bench/replay_golden.py check OUT.json [--transcripts DIR]   # on the changed one

Each case is one input file replayed under one configuration (strategies, triggers, summarizer):
the samples, the format test files, generated chat files (the memory benchmark's, one with
mini-swe-agent observations, one with a bad line under ``--on-error skip``) and, when there,
every real transcript. ``write`` stores each case's output (and its digest); ``check`` runs them
again and names every case whose output differs, with the first differing key. The digests of
the cases are also in ``tests/golden/replay.json``, which ``tests/test_replay_golden.py`` checks.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

ROOT = Path(__file__).resolve().parent.parent
BENCH = Path(__file__).resolve().parent

CONFIGS: dict[str, list[str]] = {
    "window": ["-t", "2000,8000", "-s", "window", "--keep-recent", "4"],
    "prune+trim": ["-t", "4000,16000", "-s", "prune", "-s", "trim-tools"],
    "structured-stage": ["--stage", "-t", "3000", "-s", "structured"],
    "summary-marker": ["-t", "2000", "-s", "summary", "--stage-marker", "(?i)done|fixed|thank"],
    "mask+thinking": ["-t", "3000", "-s", "mask-observations", "-s", "clear-thinking"],
    "rolling": ["-t", "4000", "-s", "rolling"],
    "selective": ["-t", "4000", "-s", "selective"],
}
SUFFIXES = (".jsonl", ".json", ".traj", ".ndjson")


def generated_inputs(folder: Path, transcripts: Path | None) -> list[Path]:
    """Chat JSON Lines files made for the cases the samples lack (all streamable)."""
    sys.path.insert(0, str(BENCH))
    from memory_bench import make_file
    from workloads import generate

    made = [folder / "bench-chat.jsonl"]
    make_file(made[0], 0.3)  # type: ignore[arg-type]  # two copies of the session: ids made unique
    tools = folder / "tool-facts-in-tools.jsonl"
    tools.write_text("".join(json.dumps(m) + "\n" for m in generate("tool", 120, seed=3, facts_in="tools")))
    made.append(tools)
    broken = folder / "coding-agent-bad-line.jsonl"
    lines = (ROOT / "samples" / "coding-agent.jsonl").read_bytes().splitlines(keepends=True)
    broken.write_bytes(b"".join([*lines[:3], b"{not json\n", *lines[3:]]))
    made.append(broken)
    if transcripts is not None:
        mini = next(iter(sorted(transcripts.joinpath("mini-swe-agent").rglob("*.json"))), None)
        if mini is not None:  # its observations, as JSON Lines: the streamed reader must mark them too
            observations = folder / "mini-swe-agent-as-jsonl.jsonl"
            messages = json.loads(mini.read_text())  # a bare array of messages
            observations.write_bytes(b"".join(orjson.dumps(m) + b"\n" for m in messages))
            made.append(observations)
    return made


def inputs(transcripts: Path | None, folder: Path) -> list[tuple[str, Path]]:
    found = [(f"samples/{p.name}", p) for p in sorted((ROOT / "samples").iterdir()) if p.suffix in SUFFIXES]
    data = ROOT / "tests" / "formats" / "data"
    found += [(f"formats/{p.name}", p) for p in sorted(data.iterdir()) if p.is_file() and p.suffix in SUFFIXES]
    found += [(f"generated/{p.name}", p) for p in generated_inputs(folder, transcripts)]
    if transcripts is not None:
        real = sorted(p for p in transcripts.rglob("*") if p.is_file() and p.suffix in SUFFIXES)
        found += [(f"real/{p.relative_to(transcripts)}", p) for p in real]
    return found


def cases(transcripts: Path | None, folder: Path) -> Iterator[tuple[str, list[str]]]:
    """(case id, replay arguments) for every input and configuration."""
    for name, path in inputs(transcripts, folder):
        for config, arguments in CONFIGS.items():
            extra = ["--on-error", "skip"] if "bad-line" in name else []
            yield f"{name} :: {config}", [str(path), "--json", *arguments, *extra]


def run_case(arguments: list[str], roots: dict[str, Path | None]) -> Any:
    """Replay's JSON output and exit code, run in this process; the folders in ``roots`` (where the
    files are, which differs between machines) are written by their names, as ``<transcripts>``."""
    from typer.testing import CliRunner

    from compactctl.cli.main import app

    result = CliRunner().invoke(app, ["replay", *arguments], env={"COLUMNS": "200"})
    text = result.stdout if result.stdout.strip() else json.dumps({"stderr": result.stderr.strip()[-300:]})
    for name, folder in roots.items():
        if folder is not None:
            text = text.replace(str(folder), f"<{name}>")
    return {"exit": result.exit_code, "output": orjson.loads(text)}


# Keys added to the JSON since the digests were written (issue 20: the price source, unpriced
# calls, the producer's unrecorded compaction calls estimated apart): left out of the digest, so what
# was there before is still checked to be unchanged.
ADDED_KEYS = frozenset(
    {
        "prices",
        "unpriced_calls",
        "unpriced_models",
        "calls_over_threshold",
        "off_thread",
        "thresholds_from",
        "unlogged",
        "compaction_estimate",
        "side_requests",
        "live_thread_bill_cost",
        "passes_apart",
    }
)


def _without_added(value: Any, added: frozenset[str] = ADDED_KEYS) -> Any:
    if isinstance(value, dict):
        return {k: _without_added(v, added) for k, v in value.items() if k not in added}
    if isinstance(value, list):
        return [_without_added(v, added) for v in value]
    return value


# The run document (--json v2, issue 25) wraps the same figures: a file is named as given (``file``)
# with its name under the folder beside it (``name``, v1's ``file``), and each file and the run carry a
# status, the output written and the gates. Read back into v1's shape, the pinned digests still check
# every figure replay printed before.
V2_FILE_KEYS = frozenset({"name", "output", "status", "reason"})
V2_RUN_KEYS = frozenset({"exit_code", "error", "gates"})
V2_TOTAL_KEYS = frozenset({"inputs", "written", "unchanged"})


def _as_pinned(document: Any) -> Any:
    if not isinstance(document, dict) or document.get("version") != 2:
        return document
    pinned = {k: v for k, v in document.items() if k not in V2_RUN_KEYS} | {"version": 1}
    pinned["files"] = [
        {k: v for k, v in entry.items() if k not in V2_FILE_KEYS} | {"file": entry.get("name", entry.get("file"))}
        for entry in document.get("files", [])
    ]
    if isinstance(document.get("total"), dict):
        pinned["total"] = {k: v for k, v in document["total"].items() if k not in V2_TOTAL_KEYS}
    return pinned


def digest(output: Any) -> str:
    if isinstance(output, dict) and "output" in output:
        output = {**output, "output": _as_pinned(output["output"])}
    return hashlib.sha256(orjson.dumps(_without_added(output), option=orjson.OPT_SORT_KEYS)).hexdigest()


def first_difference(a: Any, b: Any, where: str = "") -> str:
    if type(a) is not type(b):
        return f"{where or '.'}: {type(a).__name__} vs {type(b).__name__}"
    if isinstance(a, dict):
        for key in [*a, *(k for k in b if k not in a)]:
            if key not in a or key not in b:
                return f"{where}.{key}: only on one side"
            if a[key] != b[key]:
                return first_difference(a[key], b[key], f"{where}.{key}")
    if isinstance(a, list):
        if len(a) != len(b):
            return f"{where}: {len(a)} items vs {len(b)}"
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            if x != y:
                return first_difference(x, y, f"{where}[{i}]")
    return f"{where or '.'}: {str(a)[:80]} vs {str(b)[:80]}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("mode", choices=("write", "check"))
    parser.add_argument("file", type=Path)
    parser.add_argument("--transcripts", type=Path, default=os.environ.get("COMPACTCTL_TRANSCRIPTS"))
    parser.add_argument("--verbose", action="store_true", help="print each case's seconds")
    args = parser.parse_args()
    transcripts = args.transcripts if args.transcripts and args.transcripts.is_dir() else None
    stored = json.loads(args.file.read_text()) if args.mode == "check" else {}
    outputs: dict[str, Any] = {}
    differ = 0
    with tempfile.TemporaryDirectory() as folder:
        for case, arguments in cases(transcripts, Path(folder)):
            start = time.perf_counter()
            outputs[case] = run_case(arguments, {"transcripts": transcripts, "generated": Path(folder), "root": ROOT})
            if args.verbose:
                print(f"{time.perf_counter() - start:6.1f} s  {case}", flush=True)
            if args.mode == "check":
                expected = stored.get(case)
                if expected is None:
                    print(f"NEW   {case}")
                elif expected != outputs[case]:
                    differ += 1
                    print(f"DIFF  {case}: {first_difference(expected, outputs[case])}")
    if args.mode == "write":
        args.file.write_text(json.dumps(outputs))
        print(f"{len(outputs)} cases written to {args.file}")
    else:
        missing = [case for case in stored if case not in outputs]
        print(f"{len(outputs)} cases: {len(outputs) - differ} identical, {differ} differ, {len(missing)} not run")
        sys.exit(1 if differ or missing else 0)
    digests = {case: digest(output) for case, output in outputs.items()}
    print(json.dumps({"digests": len(digests)}))
    if args.mode == "write":
        args.file.with_suffix(".digests.json").write_text(json.dumps(digests, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
