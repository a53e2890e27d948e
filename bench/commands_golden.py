"""compact, prune, report and replay on every input, pinned: a restructuring must not change a figure or a byte.

    python bench/commands_golden.py write OUT.json [--transcripts DIR]   # on the reference checkout
    python bench/commands_golden.py check OUT.json [--transcripts DIR]   # on the changed one

The inputs are replay_golden's (samples, format test files, generated chat files and, when there,
every real transcript). Each case is one input under one command: ``compact -s S`` for every
registered strategy (the offline summarizer), ``prune``, ``prune --mode drop``, ``report``, and
``replay`` with its default triggers. A case's record is the exit code, the ``--json`` output
(folders written by their names) and the digest of the file written; ``check`` names every case
that differs, with the first differing key. ``bench/replay_golden.py`` pins replay's options.

A pin written before ``--json`` became the run document (v1) still checks: both sides are read
back into v1's shape first (replay_golden's ``_as_pinned``), leaving out the keys added since
(``ADDED_KEYS`` below, each named by the issue that added it), so every figure, exit code and
written byte v1 pinned is compared. Run it from the checkout under test, with its own imports::

    PYTHONPATH=. .venv/bin/python bench/commands_golden.py check PIN.json --transcripts ../shared/transcripts

Pin before a change (``write``, on the reference checkout: ``git worktree add`` or ``git archive``
of it, run with its own ``PYTHONPATH``) and check after; with the real transcripts it is 559 cases
(377 of them real) in about 30 s of CPU (95 s of wall under a load of 11 on 2 cores).
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

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))

from replay_golden import ADDED_KEYS as REPLAY_ADDED_KEYS  # noqa: E402
from replay_golden import ROOT, _as_pinned, _without_added, first_difference, inputs  # noqa: E402

STRATEGIES = (
    "window",
    "trim-tools",
    "prune",
    "mask-observations",
    "clear-thinking",
    "summary",
    "rolling",
    "selective",
    "structured",
)


# Keys the file reports gained after the v1 pin: the API-validity detail (issue 26: how many
# violations, which, the calls left open) beside v1's ``violation_before``/``violation_after``,
# and why a file no step changed is not written (issue 20, point 7: ``unchanged_reason``).
ADDED_KEYS = REPLAY_ADDED_KEYS | {
    "unchanged_reason",
    "violation_count_before",
    "violation_count_after",
    "violations_before",
    "violations_after",
    "open_calls_before",
    "open_calls_after",
}


def comparable(record: Any) -> Any:
    """A case's record in v1's shape without the keys added since, so a v1 pin and a v2 run compare."""
    if isinstance(record, dict) and "output" in record:
        record = {**record, "output": _as_pinned(record["output"])}
    return _without_added(record, ADDED_KEYS)


def commands(name: str, path: Path, out: Path) -> Iterator[tuple[str, list[str], Path | None]]:
    """(case id, arguments, the file the command writes) for one input."""
    target = out / f"out{path.suffix}"
    for strategy in STRATEGIES:
        yield f"{name} :: compact {strategy}", ["compact", str(path), "-s", strategy, "-o", str(target)], target
    yield f"{name} :: prune", ["prune", str(path), "-o", str(target)], target
    yield f"{name} :: prune drop", ["prune", str(path), "--mode", "drop", "-o", str(target)], target
    yield f"{name} :: report", ["report", str(path)], None
    yield f"{name} :: replay", ["replay", str(path)], None


def run_case(arguments: list[str], written: Path | None, roots: dict[str, Path | None], extra: list[str]) -> Any:
    from typer.testing import CliRunner

    from compactctl.cli.main import app

    if written is not None and written.exists():
        written.unlink()
    result = CliRunner().invoke(app, [*arguments, "--json", "-q", *extra], env={"COLUMNS": "200"})
    text = result.stdout if result.stdout.strip() else json.dumps({"stderr": result.stderr.strip()[-300:]})
    for name, folder in roots.items():
        if folder is not None:
            text = text.replace(str(folder), f"<{name}>")
    try:
        output = orjson.loads(text)
    except orjson.JSONDecodeError:
        output = {"text": text[-500:]}
    record: dict[str, Any] = {"exit": result.exit_code, "output": output}
    if written is not None:
        record["written"] = hashlib.sha256(written.read_bytes()).hexdigest() if written.exists() else None
    return record


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("mode", choices=("write", "check"))
    parser.add_argument("file", type=Path)
    parser.add_argument("--transcripts", type=Path, default=os.environ.get("COMPACTCTL_TRANSCRIPTS"))
    parser.add_argument("--verbose", action="store_true")
    args = parser.parse_args()
    transcripts = args.transcripts if args.transcripts and args.transcripts.is_dir() else None
    stored = json.loads(args.file.read_text()) if args.mode == "check" else {}
    outputs: dict[str, Any] = {}
    differ = 0
    with tempfile.TemporaryDirectory() as folder, tempfile.TemporaryDirectory() as written:
        out = Path(written)
        roots = {"transcripts": transcripts, "generated": Path(folder), "root": ROOT, "out": out}
        for name, path in inputs(transcripts, Path(folder)):
            extra = ["--on-error", "skip"] if "bad-line" in name else []
            for case, arguments, target in commands(name, path, out):
                start = time.perf_counter()
                outputs[case] = run_case(arguments, target, roots, extra)
                if args.verbose:
                    print(f"{time.perf_counter() - start:6.1f} s  {case}", flush=True)
                if args.mode == "check":
                    expected = stored.get(case)
                    if expected is None:
                        print(f"NEW   {case}")
                    elif (pinned := comparable(expected)) != (now := comparable(outputs[case])):
                        differ += 1
                        print(f"DIFF  {case}: {first_difference(pinned, now)}", flush=True)
    if args.mode == "write":
        args.file.write_text(json.dumps(outputs))
        print(f"{len(outputs)} cases written to {args.file}")
    else:
        missing = [case for case in stored if case not in outputs]
        print(f"{len(outputs)} cases: {len(outputs) - differ} identical, {differ} differ, {len(missing)} not run")
        sys.exit(1 if differ or missing else 0)


if __name__ == "__main__":
    main()
