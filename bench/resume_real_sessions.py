"""Resume real sessions, compacted and pruned by compactctl, with the real Claude Code and Codex.

    python bench/resume_real_sessions.py [--transcripts ../shared/transcripts] [--only NAME]

For each real Claude Code session and Codex rollout: lay it out in a temporary HOME as the
client keeps it, resume the original and each compactctl output (compact, prune in both
modes, compact twice) against the loopback fakes of tests/fakes, and print one row per
resume: did the client resume, did the fake (which checks what the API checks) reject the
request, blocks or items sent twice, request bytes and the history's tokens against the
original's, and the reduction report claimed. A JSON-array session (saved by a hook) is
laid out one record a line, which is how Claude Code keeps it.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.fakes.clients import find_client
from tests.fakes.resume import CASES, Resumed, resume_claude_code, resume_codex, run_compactctl
from tests.fakes.scenarios import Recorded

VARIANTS = {
    "compact": [CASES["compact"]],
    "prune": [CASES["prune-stub"]],
    "prune --mode drop": [CASES["prune-drop"]],
    "compact -s trim-tools": [CASES["trim-tools"]],
    "compact twice": [CASES["summary"], CASES["compact"]],
}


def _records(path: Path) -> list[dict]:
    text = path.read_text()
    if text.lstrip().startswith("["):
        return list(json.loads(text))
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def claude_layout(source: Path, root: Path) -> Recorded:
    records = _records(source)
    session = next(r["sessionId"] for r in reversed(records) if isinstance(r, dict) and r.get("sessionId"))
    cwd = root / "project"
    cwd.mkdir(parents=True)
    folder = root / ".claude" / "projects" / re.sub(r"[^A-Za-z0-9]", "-", str(cwd))
    folder.mkdir(parents=True)
    path = folder / f"{session}.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False, separators=(",", ":")) + "\n" for r in records))
    return Recorded(root, cwd, session, path)


def codex_layout(source: Path, root: Path) -> Recorded:
    records = _records(source)
    meta = next(r.get("payload", r) for r in records if r.get("type") == "session_meta" or "payload" not in r)
    thread, stamp = meta["id"], meta.get("timestamp", "2025-01-01T00:00:00.000Z")
    day = stamp[:10].split("-")
    folder = root / ".codex" / "sessions" / day[0] / day[1] / day[2]
    folder.mkdir(parents=True)
    path = folder / f"rollout-{stamp[:19].replace(':', '-')}-{thread}.jsonl"
    path.write_bytes(source.read_bytes())
    (root / "project").mkdir()
    return Recorded(root, root / "project", thread, path)


def _row(name: str, variant: str, resumed: Resumed | str, original: Resumed | None, claimed: float | None) -> str:
    if isinstance(resumed, str):
        return f"| {name} | {variant} | no: {resumed[:160]} | | | | |"
    size = f"{resumed.size / 1e3:.1f} kB"
    if original is not None and resumed is not original:
        size += f" ({resumed.size / original.size - 1:+.0%})"
        tokens = f"{resumed.history_tokens:,} ({resumed.history_tokens / original.history_tokens - 1:+.0%})"
    else:
        tokens = f"{resumed.history_tokens:,}"
    status = "yes" if not resumed.rejected else f"rejected: {resumed.rejected[0][:120]}"
    claim = f"{-claimed:+.0%}" if claimed is not None else ""
    return f"| {name} | {variant} | {status} | {len(resumed.repeated)} | {size} | {tokens} | {claim} |"


def run(producer: str, source: Path, work: Path) -> list[str]:
    client = find_client("claude" if producer == "claude-code" else "codex")
    if client is None:
        return [f"| {source.name} | | {producer} client not installed | | | | |"]
    layout, resume = (claude_layout, resume_claude_code) if producer == "claude-code" else (codex_layout, resume_codex)
    recorded = layout(source, work / "home")
    name = f"{source.parent.name}/{source.name}"
    rows = []
    try:
        original: Resumed | None = resume(client, recorded, recorded.path.read_bytes())
        rows.append(_row(name, "original", original, None, None))
    except AssertionError as error:
        original = None
        rows.append(_row(name, "original", str(error).replace("\n", " "), None, None))
    for variant, steps in VARIANTS.items():
        current = recorded.path
        try:
            for n, args in enumerate(steps):
                compacted = run_compactctl(current, work / f"{variant.replace(' ', '_')}-{n}.jsonl", args)
                current = work / f"{variant.replace(' ', '_')}-{n}.jsonl"
            claimed = _claimed(recorded.path.read_bytes(), compacted.data)
            rows.append(_row(name, variant, resume(client, recorded, compacted.data), original, claimed))
        except AssertionError as error:
            rows.append(_row(name, variant, str(error).replace("\n", " "), original, None))
    return rows


def _claimed(before: bytes, after: bytes) -> float:
    import compactctl

    _, b = compactctl.load(before, "before.jsonl")
    _, a = compactctl.load(after, "after.jsonl")
    return float(compactctl.report(b[0].messages, a[0].messages).reduction or 0.0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--transcripts", type=Path, default=Path(__file__).resolve().parents[2] / "shared" / "transcripts"
    )
    parser.add_argument("--only", default="")
    args = parser.parse_args()
    print("| session | variant | resumed | repeated | request (vs original) | history tokens sent | report |")
    print("|---|---|---|---|---|---|---|")
    for producer, folder in (("claude-code", "claude-code"), ("codex", "codex")):
        for source in sorted((args.transcripts / folder).glob("*/*.json*")):
            if args.only and args.only not in str(source):
                continue
            with tempfile.TemporaryDirectory(prefix="resume-real-") as work:
                for row in run(producer, source, Path(work)):
                    print(row, flush=True)


if __name__ == "__main__":
    main()
