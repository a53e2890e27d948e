"""Issue 20's "numbers right on sessions nobody here has seen": compactctl's commands checked against each other
and against what was served, on every real-client session we have.

    PYTHONPATH=. python bench/consistency_sweep.py [--only SUBSTRING] [--json] [PATH...]

The sessions: tests/recorded/data/* and tests/formats/data/real-clients/* (files the real Claude Code, Codex and
Gemini CLI wrote against the loopback fakes; a folder is one session with its subagents, resumes or copies, and is
checked as one input), and the public transcripts under $COMPACTCTL_TRANSCRIPTS (/work/shared/transcripts), each
file on its own; or only the PATHs given (a session file or folder anywhere, its ``<name>.served.json`` beside it
if there is one: a session just recorded, before it is a fixture; sidecars given are skipped, so ``DIR/*`` does).
For each input it checks, and prints one table row per violation:

1. bill: ``replay IN --json``'s bill rows (basis ``bill``) cost what the fake served (``<name>.served.json``,
   priced apart from replay by genai-prices' calc_price with tests/replay/test_bill.py's readers; the calls no file
   records, Codex's memory and title calls and Gemini CLI's side calls, left out) within 0.5 %; Gemini CLI's
   compression calls (the side calls it sent without tools: ``"caller": "side_call"``) as many as replay's
   ``compaction_estimate`` calls, their input within 5 % of its tokens; no unpriced model; each file's held-out
   calibration error (``api.calibration.error.held_out``) median <= 2 % and p90 <= 5 %. Codex's remote compactions
   (``"caller": "compact"`` or ``"compaction"``) that replay estimated apart (``compaction_estimate``): as many, their
   input within 5 %, and out of the bill compared. Claude Code's served responses whose message id no file of the
   session holds: the summarizing request of a release that records no usage for it checked as those (against
   ``compaction_estimate``), the small model's Bash queries (releases before 2.1.83) against replay's note saying so;
   neither in the bill compared.
2. report: ``compact IN -o OUT --json`` (the default steps, and ``-s window --keep-recent 2``, which changes a file
   of any size), then ``report IN OUT --json``: report's after-tokens are compact's; API-valid is never false
   before, nor after where it was true before (every input here but ``REFUSED`` is a file its client accepted).
3. replay of the output: ``replay OUT`` alone bills the calls and cost ``replay IN`` alone does (the output still
   holds the calls made before the compaction, and the copies compactctl made are not billed again), and
   ``replay IN OUT`` together bills IN's bill once.
4. review: ``review IN --compacted OUT --json`` exits without an error.
5. idempotence: ``prune`` of prune's output is byte-identical to it.

Every command runs in this process (typer's CliRunner), one input after another, ``-j 1``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
import traceback
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from genai_prices import Usage, calc_price  # noqa: E402
from typer.testing import CliRunner  # noqa: E402

from compactctl.cli.main import app  # noqa: E402
from tests.replay.test_bill import anthropic_counts, google_counts, openai_counts  # noqa: E402

RECORDED = ROOT / "tests" / "recorded" / "data"
REAL_CLIENTS = ROOT / "tests" / "formats" / "data" / "real-clients"
TRANSCRIPTS = Path(os.environ.get("COMPACTCTL_TRANSCRIPTS", "/work/shared/transcripts"))
UNRECORDED_CALLERS = {"memory", "memory_consolidation", "thread_title"}  # served, written in no rollout
# Served, written in no Gemini CLI chat: its requests without tools (the compressor's summary and check; the router's
# classifier when the model is auto), which replay estimates as the compaction's calls, in no row.
SIDE_CALL = "side_call"
# Codex's remote compactions as the fake tags them: the unary /v1/responses/compact, a compaction_trigger request.
COMPACTION_CALLERS = {"compact", "compaction"}
ESTIMATE_TOLERANCE = 0.05
SIDECARS = (".served.json", ".sessions.json", ".requests.json", ".reminder.json")
BILL_TOLERANCE = 0.005
HELD_OUT_MEDIAN, HELD_OUT_P90 = 0.02, 0.05
# Files their client refused, kept to show the check says so (docs/validity.md): API-valid "no" before is right there.
REFUSED = {"claude-code-2.1.332-window-opens-on-assistant.jsonl"}
STRATEGIES: dict[str, list[str]] = {"default": [], "window2": ["-s", "window", "--keep-recent", "2"]}


@dataclass(frozen=True)
class Violation:
    input: str
    check: str
    detail: str


def inputs(only: str | None, paths: list[Path] | None = None) -> Iterator[Path]:
    """Each session: a top-level file or folder of the two fixture folders, each public transcript file; or
    ``paths`` alone where given."""
    if paths:
        kept = [p for p in paths if not p.name.endswith(SIDECARS) and (only is None or only in str(p))]
        yield from (path.resolve() for path in kept)
        return
    for folder in (RECORDED, REAL_CLIENTS):
        for path in sorted(folder.iterdir()):
            if path.name.endswith(SIDECARS) or path.suffix == ".md" or path.name.startswith("."):
                continue
            if only is None or only in str(path):
                yield path
    if TRANSCRIPTS.is_dir():
        for path in sorted(TRANSCRIPTS.rglob("*")):
            if path.is_file() and path.suffix in {".jsonl", ".json", ".traj"} and (only is None or only in str(path)):
                yield path


def _served_price(response: dict[str, Any]) -> float:
    """One served response at list price, at the tier it was answered at; an advised response's other passes too."""
    usage, model = response["usage"], response["model"]
    if "promptTokenCount" in usage or "candidatesTokenCount" in usage:
        return float(calc_price(Usage(**google_counts(usage)), model, provider_id="google").total_price)
    if "input_tokens_details" in usage:
        cached = (usage.get("input_tokens_details") or {}).get("cached_tokens") or 0
        context = {"service_tier": response["service_tier"]} if "service_tier" in response else None
        counts = openai_counts({**usage, "cached_input_tokens": cached})
        price = calc_price(Usage(**counts), model, provider_id="openai", price_context=context)
        # Hosted web searches (the fake notes each response's): billed per search beside the tokens, in no usage.
        per_search = float(getattr(price.model_price, "web_searches_kcount", None) or 0) / 1000
        return float(price.total_price) + response.get("web_searches", 0) * per_search
    context = {"speed": "fast"} if usage.get("speed") == "fast" else None
    price = calc_price(Usage(**anthropic_counts(usage)), model, provider_id="anthropic", price_context=context)
    total = float(price.total_price) * (1.1 if usage.get("inference_geo") == "us" else 1.0)
    for entry in usage.get("iterations") or []:  # the advisor's passes, which the top-level usage leaves out
        if entry.get("type") == "advisor_message":
            passed = calc_price(Usage(**anthropic_counts(entry)), entry["model"], provider_id="anthropic")
            total += float(passed.total_price)
    return total


def _served(path: Path) -> list[dict[str, Any]] | None:
    served_file = path.parent / f"{path.name.removesuffix('.jsonl')}.served.json"
    return json.loads(served_file.read_text()) if served_file.exists() else None


def served_bill(
    path: Path, estimated: bool = False, unrecorded: frozenset[str] = frozenset()
) -> tuple[int, float] | None:
    """What the fake served at list price; ``estimated``: less Codex's remote compactions (``"caller": "compact"``,
    ``"compaction"``), which replay estimated apart as the rollout recorded no usage for them; less the responses
    ``unrecorded`` names (Claude Code's, by id)."""
    responses = _served(path)
    if responses is None:
        return None
    left_out = {*UNRECORDED_CALLERS, SIDE_CALL, *(COMPACTION_CALLERS if estimated else ())}
    served = [r for r in responses if r.get("caller") not in left_out and r.get("id") not in unrecorded]
    return len(served), sum(_served_price(r) for r in served)


def unrecorded_responses(path: Path) -> list[dict[str, Any]]:
    """Claude Code's served responses whose message id no file of the session holds, untagged by the fake: the
    summarizing request of a release that records no usage for it (before 2.1.332), and the small model's queries
    about each Bash command (before 2.1.83). A response the fake tagged (a stream it cut) is checked as before."""
    responses = _served(path) or []
    if not any(str(r.get("id", "")).startswith("msg_") for r in responses):
        return []
    held = b"".join(_files(path).values())
    return [r for r in responses if "caller" not in r and str(r.get("id", "")).encode() not in held]


def served_compactions(path: Path) -> tuple[int, int] | None:
    """Codex's remote compaction calls the fake served: how many, their input tokens (None: none, or no file)."""
    found = [r["usage"] for r in _served(path) or [] if r.get("caller") in COMPACTION_CALLERS]
    return (len(found), sum(u.get("input_tokens") or 0 for u in found)) if found else None


def served_side_calls(path: Path) -> tuple[int, int] | None:
    """Gemini CLI's side calls the fake served: how many, their input tokens (None: none, or no served file)."""
    side = [r["usage"] for r in _served(path) or [] if r.get("caller") == SIDE_CALL]
    return (len(side), sum(u.get("promptTokenCount") or 0 for u in side)) if side else None


def run(*args: str) -> tuple[int, dict[str, Any] | None, str]:
    """One command in this process: its exit code, its JSON (None where it printed none) and its error text."""
    result = CliRunner().invoke(app, list(args))
    try:
        return result.exit_code, json.loads(result.stdout), ""
    except (json.JSONDecodeError, ValueError):
        error = result.stderr or result.stdout
        if result.exception is not None and not isinstance(result.exception, SystemExit):
            error += "".join(traceback.format_exception(result.exception))[-600:]
        return result.exit_code, None, error.strip()[-400:]


def _error(report: dict[str, Any] | None) -> Any:
    return report.get("error") if report else None


def bill(report: dict[str, Any]) -> tuple[int, float]:
    rows = [row for f in report["files"] for row in f["settings"] if row.get("basis") == "bill"]
    return sum(row["calls"] for row in rows), round(sum(row["cost"] for row in rows), 6)


def _rel(path: str, base: Path) -> str:
    try:
        return str(Path(path).resolve().relative_to(base.resolve()))
    except ValueError:
        return Path(path).name


def _files(folder: Path) -> dict[str, bytes]:
    if folder.is_file():
        return {folder.name: folder.read_bytes()}
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def check(path: Path, tmp: Path) -> list[Violation]:
    if path.is_relative_to(ROOT):
        name = str(path.relative_to(ROOT))
    else:
        name = str(path.relative_to(TRANSCRIPTS.parent)) if path.is_relative_to(TRANSCRIPTS.parent) else str(path)
    found: list[Violation] = []

    def violation(check: str, detail: str) -> None:
        found.append(Violation(name, check, detail))

    code, replayed, error = run("replay", str(path), "--json", "-q", "-j", "1")
    if replayed is None:
        violation("1 replay", f"exit {code}: {error}")
        return found
    billed = bill(replayed)
    has_bill = any(row.get("basis") == "bill" for f in replayed["files"] for row in f["settings"])
    estimates = [(e.get("api") or {}).get("compaction_estimate") or {} for e in replayed["files"]]
    estimated = sum(e.get("calls") or 0 for e in estimates), sum(e.get("input_tokens") or 0 for e in estimates)
    compactions = served_compactions(path)
    # Codex's remote compactions the rollout recorded no usage for: estimated apart, checked as Gemini's side calls.
    if compactions is not None and estimated[0]:  # noqa: SIM102 (the check apart from when it applies)
        if estimated[0] != compactions[0] or abs(estimated[1] - compactions[1]) > ESTIMATE_TOLERANCE * compactions[1]:
            violation("1 compaction estimate", f"estimated {estimated[0]} calls, {estimated[1]} input; served "
                      f"{compactions[0]}, {compactions[1]}")  # fmt: skip
    unrecorded = unrecorded_responses(path)
    queries = [r for r in unrecorded if "haiku" in r["model"]]
    summaries = [r for r in unrecorded if "haiku" not in r["model"]] if estimated[0] else []
    if summaries:
        tokens = sum(r["usage"].get("input_tokens") or 0 for r in summaries)
        if estimated[0] != len(summaries) or abs(estimated[1] - tokens) > ESTIMATE_TOLERANCE * tokens:
            violation("1 compaction estimate", f"estimated {estimated[0]} calls, {estimated[1]} input; served "
                      f"{len(summaries)}, {tokens} (in no record)")  # fmt: skip
    notes = [note for f in replayed["files"] for note in (f.get("api") or {}).get("notes") or []]
    if queries and not any("Bash command(s) ran" in note for note in notes):
        violation("1 unrecorded", f"{len(queries)} small-model queries in no record, and no note says so")
    left_out = frozenset(str(r["id"]) for r in [*queries, *summaries])
    served = served_bill(path, estimated=bool(compactions and estimated[0]), unrecorded=left_out)
    if served is not None:
        calls, cost = served
        if abs(billed[1] - cost) > BILL_TOLERANCE * cost and has_bill:
            violation("1 bill", f"replay ${billed[1]:.6f} ({billed[0]} calls), served ${cost:.6f} ({calls})")
        elif abs(billed[1] - cost) > BILL_TOLERANCE * cost:
            # No bill row: a response the log holds no usage for (a run killed, a broken stream retried).
            usage = sum((f.get("api") or {}).get("bill_cost") or 0.0 for f in replayed["files"])
            violation("1 bill", f"no bill row (a response without usage): the usage ${usage:.6f}, served ${cost:.6f}")
    side = served_side_calls(path)
    if side is not None:
        estimates = [(e.get("api") or {}).get("compaction_estimate") or {} for e in replayed["files"]]
        calls, tokens = sum(e.get("calls") or 0 for e in estimates), sum(e.get("input_tokens") or 0 for e in estimates)
        if calls != side[0] or abs(tokens - side[1]) > ESTIMATE_TOLERANCE * side[1]:
            violation("1 side calls", f"estimated {calls} calls, {tokens} input; served {side[0]}, {side[1]}")
    for entry in replayed["files"]:
        api = entry.get("api") or {}
        file = _rel(entry["file"], path) if path.is_dir() else ""
        if api.get("unpriced_models"):
            violation("1 unpriced", f"{file} {api['unpriced_models']}")
        held = ((api.get("calibration") or {}).get("error") or {}).get("held_out") or {}
        if held.get("calls") and (held["median"] > HELD_OUT_MEDIAN or held["p90"] > HELD_OUT_P90):
            violation("1 held-out", f"{file} median {held['median']:.2%} p90 {held['p90']:.2%} of {held['calls']}")

    for label, steps in STRATEGIES.items():
        out = tmp / label / path.name
        code, compacted, error = run(
            "compact", str(path), "-o", str(out), "--json", "-q", "-j", "1", "--write-unchanged", *steps
        )
        if compacted is None or compacted.get("error"):
            violation(f"2 compact {label}", f"exit {code}: {error or _error(compacted)}")
            continue
        code, reported, error = run("report", str(path), str(out), "--json", "-q", "-j", "1")
        if reported is None or reported.get("error"):
            violation(f"2 report {label}", f"exit {code}: {error or _error(reported)}")
        else:
            after = {_rel(f["file"], path): f.get("tokens_after") for f in compacted["files"]}
            told = {_rel(f["file"], path): f.get("tokens_after") for f in reported["files"]}
            if after != told:
                wrong = {
                    k: (after.get(k), told.get(k))
                    for k in sorted(after.keys() | told.keys())
                    if after.get(k) != told.get(k)
                }
                violation(f"2 after {label}", f"compact/report tokens_after {wrong}")
            for f in reported["files"]:
                where = _rel(f["file"], path) if path.is_dir() else ""
                if f.get("valid_before") is False and path.name not in REFUSED:
                    violation(f"2 api-valid {label}", f"{where} before: {f.get('violation_before')}")
                elif f.get("valid_after") is False and f.get("valid_before") is not False:
                    violation(f"2 api-valid {label}", f"{where} after: {f.get('violation_after')}")
        if has_bill:
            code, again, error = run("replay", str(out), "--json", "-q", "-j", "1")
            if again is None:
                violation(f"3 replay out {label}", f"exit {code}: {error}")
            elif bill(again) != billed:
                violation(f"3 replay out {label}", f"OUT bills {bill(again)}, IN {billed}")
            code, both, error = run("replay", str(path), str(out), "--json", "-q", "-j", "1")
            if both is None:
                violation(f"3 replay in+out {label}", f"exit {code}: {error}")
            elif bill(both) != billed:
                violation(f"3 replay in+out {label}", f"IN+OUT bill {bill(both)}, IN {billed}")
        page = tmp / label / "review"
        code, reviewed, error = run(
            "review", str(path), "--compacted", str(out), "-o", str(page), "--json", "-q", "-j", "1"
        )
        if code not in (0, 1) or reviewed is None or reviewed.get("error") or reviewed.get("failed"):
            why = error or (reviewed or {}).get("error") or (reviewed or {}).get("failed")
            violation(f"4 review {label}", f"exit {code}: {str(why)[:300]}")

    once, twice = tmp / "prune1" / path.name, tmp / "prune2" / path.name
    code, pruned, error = run("prune", str(path), "-o", str(once), "--json", "-q", "-j", "1", "--write-unchanged")
    if pruned is None or pruned.get("error"):
        violation("5 prune", f"exit {code}: {error or _error(pruned)}")
        return found
    code, pruned, error = run("prune", str(once), "-o", str(twice), "--json", "-q", "-j", "1", "--write-unchanged")
    if pruned is None or pruned.get("error"):
        violation("5 prune twice", f"exit {code}: {error or _error(pruned)}")
    elif _files(once) != _files(twice):
        first, second = _files(once), _files(twice)
        differ = sorted(k for k in first.keys() | second.keys() if first.get(k) != second.get(k))
        violation("5 prune idempotent", f"differ: {differ[:3]}")
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", help="inputs whose path holds this")
    parser.add_argument("--json", action="store_true", help="print the violations as JSON")
    parser.add_argument("paths", nargs="*", type=Path, help="sessions to check instead of the fixtures")
    args = parser.parse_args()
    start, violations, count = time.monotonic(), [], 0
    for path in inputs(args.only, args.paths):
        count += 1
        with tempfile.TemporaryDirectory(prefix="sweep-") as tmp:
            try:
                violations.extend(check(path, Path(tmp)))
            except Exception as exc:  # a crash of the sweep itself is a row too
                violations.append(Violation(str(path), "sweep", f"{type(exc).__name__}: {exc}"[:300]))
        print(f"{count:3d} {path.name}: {sum(v.input.endswith(path.name) for v in violations)}", file=sys.stderr)
    if args.json:
        print(json.dumps([v.__dict__ for v in violations], indent=1))
        return
    width = max([len(v.input) for v in violations] + [5])
    print(f"{'input':<{width}}  {'check':<22}  detail")
    for v in violations:
        print(f"{v.input:<{width}}  {v.check:<22}  {v.detail}")
    elapsed = time.monotonic() - start
    print(f"{len(violations)} violation(s) in {count} input(s), {elapsed:.0f} s, load {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
