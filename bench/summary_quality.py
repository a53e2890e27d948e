"""What the default compaction (``structured`` + extractive) keeps of what the next turn needs,
measured on the summarized span of real agent sessions.

For every file (the real Claude Code, Codex and SWE-agent sessions in ../shared/transcripts by
default), compact each transcript with ``structured`` and check, on the messages that were
summarized (not the kept tail):

- sections: how many of Goal, Progress, Facts, Decisions, Next steps, Constraints the summary
  fills (Constraints counts as filled when the span holds no constraint sentence of the user's);
- latest request: the last message the *user* wrote in the whole session is in the output
  (summary or kept tail), whitespace-folded but otherwise verbatim;
- touched paths: the file paths the agent's tool calls read or wrote in the span (``file_path``
  / ``path`` arguments, ``apply_patch`` file headers, SWE-agent ``open``/``create``/``edit``), kept verbatim;
- commands: the shell commands the agent ran in the span (``cmd``/``command`` arguments, SWE-agent
  ``action``), first line kept verbatim;
- user constraints: sentences of the user's own messages in the span that state a rule
  ("never", "must", "do not", "jamais", "nunca", "nicht", "不要", "しないで", "하지 마", ...),
  hard-wrapped lines joined, kept verbatim (whitespace-folded);
- not the user's: items of the summary's Constraints section that are not in any message the
  user wrote (harness text, tool output, an earlier summary quoted as the user);
- size: the summary's tokens, as a share of the span's.

Everything is found with this script's own rules, not the summarizer's: which messages the user
wrote is decided from the text and, for Claude Code, from the raw records (``isMeta``,
``isCompactSummary``), not from the readers' tags, so the measure does not replay the extractor.

    python bench/summary_quality.py [PATH ...] [--json] [--summary-max-tokens N] [--keep-recent N]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
from pathlib import Path
from typing import Any

try:
    from compactctl.compaction import compact
    from compactctl.files.io import find_transcripts
except ImportError:  # a checkout from before the restructuring (issue 13): the 'before' column
    from compactctl.batch import find_transcripts  # type: ignore[no-redef]
    from compactctl.compact import compact  # type: ignore[no-redef]
from compactctl.formats import load
from compactctl.tokens import counter_for
from compactctl.transcript import content_text, message_text, tool_calls_of

ROOT = Path(__file__).resolve().parent.parent
# The real transcripts: $COMPACTCTL_TRANSCRIPTS (as CI sets it), else beside the repository (../shared)
# or beside its worktree folder.
REAL = (
    Path(os.environ["COMPACTCTL_TRANSCRIPTS"])
    if os.environ.get("COMPACTCTL_TRANSCRIPTS")
    else next(
        (up / "shared" / "transcripts" for up in ROOT.parents if (up / "shared" / "transcripts").is_dir()),
        ROOT.parent / "shared" / "transcripts",
    )
)
DEFAULT_INPUTS = [REAL / "claude-code", REAL / "codex", REAL / "swe-agent", REAL / "mini-swe-agent"]
SECTIONS = ("Goal", "Progress", "Current state", "Facts", "Decisions", "Next steps", "Constraints")
SUMMARY_HEADER = re.compile(r"^\[compactctl summary of \d+ earlier messages\]")

# Text a harness writes into user messages (Claude Code, Codex, SWE-agent, compactctl itself).
HARNESS_PREFIXES = (
    "<command-",
    "<local-command-",
    "<bash-input>",
    "<bash-stdout>",
    "<bash-stderr>",
    "<task-notification>",
    "<environment_context>",
    "<permissions instructions>",
    "<user_instructions>",
    "<user_shell_command>",
    "<turn_aborted>",
    "# AGENTS.md",
    "Caveat: The messages below were generated",
    "This session is being continued from a previous conversation",
    "[Request interrupted by user",
    "[compactctl summary",
)
HARNESS_BLOCKS = re.compile(r"<(system-reminder|ide_opened_file|ide_selection|ide_diagnostics)>.*?</\1>", re.S)
COMMAND_ARGS = re.compile(r"<command-args>(.*?)</command-args>", re.S)
OBSERVATION_MARKS = ("(Open file:", "(Current directory:", "<returncode>")

CUES = re.compile(
    # "we don't have many customers" states a fact; "don't touch X" is a rule
    r"\b(?:never|always|must|mustn[’']t|(?:do not|don[’']t)(?!\s+(?:have|know|see|think|remember|understand)\b)|"
    r"should not|shouldn[’']t|only|make sure|ensure|avoid|"
    r"at most|at least|not allowed|forbidden|instead of|rather than|"
    r"jamais|toujours|il faut|il ne faut|uniquement|seulement|doit|interdit|surtout pas|"
    r"nunca|siempre|debe|deben|no debe|solo|sólo|evita|asegúrate|"
    r"niemals|immer|muss|müssen|nicht|kein|keine|nur|darf nicht)\b"
    r"|\bne\s+(?:\S+\s+)?(?:pas|jamais|plus)\b"
    r"|不要|不能|必须|务必|禁止|永远不|只能|请勿|しないで|しないでください|必ず|禁止|だけ|してはいけ"
    r"|하지\s?마|하지\s?말|반드시|항상|절대|만\s"
)
CODE_CHARS = re.compile(r"[(){}\[\]=;<>_`\\|]")
SENTENCE_END = re.compile(r"(?<=[.!?])\s+|(?<=[。！？])")
LIST_ITEM = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s+")
PATH_KEYS = ("file_path", "path", "filePath", "notebook_path", "target_file", "filename")
PATCH_FILE = re.compile(r"^\*\*\* (?:Add|Update|Delete) File: (.+)$", re.M)
SWE_FILE_ACTION = re.compile(r"^(?:open|create|edit_file|view)\s+\"?([^\s\"]+)", re.M)


def fold(text: str) -> str:
    return " ".join(text.split()).casefold()


def harness_texts(path: Path) -> set[str]:
    """Texts Claude Code's own records mark as not typed by the user (``isMeta``, compact summaries)."""
    found: set[str] = set()
    try:
        raw = path.read_bytes()
        values = (
            json.loads(raw)
            if raw.lstrip()[:1] == b"["
            else [json.loads(line) for line in raw.splitlines() if line.strip()]
        )
    except ValueError:
        return found
    for value in values if isinstance(values, list) else []:
        if not isinstance(value, dict) or not (value.get("isMeta") or value.get("isCompactSummary")):
            continue
        content = (value.get("message") or {}).get("content")
        parts = (
            [content] if isinstance(content, str) else [p.get("text", "") for p in content or [] if isinstance(p, dict)]
        )
        found |= {fold(p) for p in parts if isinstance(p, str) and p.strip()}
    return found


def user_text(messages: list[dict[str, Any]], index: int, harness: set[str]) -> str | None:
    """What the user wrote in message ``index``, or None when it is not the user's writing."""
    message = messages[index]
    if message.get("role") != "user" or message.get("is_demo"):
        return None
    text = content_text(message)
    if fold(text) in harness:
        return None
    args = COMMAND_ARGS.search(text)
    if args:  # a slash command: its arguments are what the user typed
        return args.group(1).strip() or None
    text = HARNESS_BLOCKS.sub("", text).strip()
    if not text or text.startswith(HARNESS_PREFIXES) or fold(text) in harness:
        return None
    previous = messages[index - 1] if index else None
    answers_agent = previous is not None and previous.get("role") in ("assistant", "tool")
    if answers_agent and (message.get("message_type") == "observation" or any(m in text for m in OBSERVATION_MARKS)):
        return None
    return text


def sentences(text: str) -> list[str]:
    """Sentences with hard-wrapped lines joined: a paragraph is one run of text, a list item its own."""
    text = re.sub(r"```.*?```", "\n\n", text, flags=re.S)
    blocks: list[list[str]] = []
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped:
            blocks.append([])
        elif LIST_ITEM.match(stripped) or not blocks:
            blocks.append([LIST_ITEM.sub("", stripped)])
        else:
            blocks[-1].append(stripped)
    found = []
    for block in blocks:
        found += [s.strip() for s in SENTENCE_END.split(" ".join(block)) if s.strip()]
    return found


def is_constraint(sentence: str) -> bool:
    words = len(sentence.split())
    cjk = sum(ord(c) > 0x2E80 for c in sentence)
    long_enough = words >= 3 or cjk >= 6
    prose = len(CODE_CHARS.findall(sentence)) * 20 <= len(sentence)
    return long_enough and prose and len(sentence) <= 400 and bool(CUES.search(sentence))


def arguments_of(call: dict[str, Any]) -> Any:
    arguments = (call.get("function") or {}).get("arguments")
    if isinstance(arguments, str):
        try:
            return json.loads(arguments)
        except ValueError:
            return arguments
    return arguments


def touched_paths(message: dict[str, Any]) -> set[str]:
    found: set[str] = set()
    for call in tool_calls_of(message):
        arguments = arguments_of(call)
        if isinstance(arguments, dict):
            found |= {v.strip() for k, v in arguments.items() if k in PATH_KEYS and isinstance(v, str) and v.strip()}
            for value in arguments.values():
                if isinstance(value, str):
                    found |= {p.strip() for p in PATCH_FILE.findall(value)}
        elif isinstance(arguments, str):
            found |= {p.strip() for p in PATCH_FILE.findall(arguments)}
    action = message.get("action")
    if isinstance(action, str):
        found |= set(SWE_FILE_ACTION.findall(action))
    return {p for p in found if len(p) <= 300 and "\n" not in p}


def commands(message: dict[str, Any]) -> set[str]:
    found: set[str] = set()
    for call in tool_calls_of(message):
        arguments = arguments_of(call)
        if isinstance(arguments, dict):
            for key in ("cmd", "command"):
                value = arguments.get(key)
                if isinstance(value, list):  # ["bash", "-lc", SCRIPT] runs SCRIPT
                    shell = len(value) == 3 and value[0] in ("bash", "sh", "zsh") and value[1] in ("-c", "-lc")
                    value = str(value[2]) if shell else " ".join(str(v) for v in value)
                if isinstance(value, str) and value.strip():
                    found.add(value.strip().splitlines()[0][:200])
    action = message.get("action")
    if isinstance(action, str) and action.strip():
        found.add(action.strip().splitlines()[0][:200])
    return found


def summary_sections(text: str) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    current: str | None = None
    for line in text.splitlines():
        if line.startswith("## "):
            current = line[3:].strip()
            found.setdefault(current, [])
        elif current is not None and line.startswith("- "):
            found[current].append(line[2:].strip())
    return found


def measure_transcript(messages: list[dict[str, Any]], harness: set[str], settings: dict, counter) -> dict:
    result = compact(messages, ["structured"], settings, counter=counter)  # type: ignore[call-arg]
    summaries = [m for m in result.messages if SUMMARY_HEADER.match(content_text(m))]
    span_indices = [e.index for e in result.manifest if e.action == "summarized"]
    span = [messages[i] for i in span_indices if not messages[i].get("is_demo")]
    output = fold("\n".join(message_text(m) for m in result.messages))
    writings = {i: t for i in range(len(messages)) if (t := user_text(messages, i, harness))}
    row: dict[str, Any] = {"summarized": bool(summaries and span)}
    if not row["summarized"]:
        return row
    summary_text = content_text(summaries[0])
    sections = summary_sections(summary_text)
    span_set = set(span_indices)
    quoted = list(
        dict.fromkeys(s for i, t in writings.items() if i in span_set for s in sentences(t) if is_constraint(s))
    )
    filled = [name for name in SECTIONS if sections.get(name)]
    if not quoted and "Constraints" not in filled:
        filled.append("Constraints")  # nothing the user stated: an empty section is right
    latest = writings[max(writings)] if writings else None
    paths = set().union(*(touched_paths(m) for m in span)) if span else set()
    ran = set().union(*(commands(m) for m in span)) if span else set()
    everything_user_wrote = fold("\n".join(writings.values()))
    foreign = [c for c in sections.get("Constraints", []) if fold(c.strip('"“”')) not in everything_user_wrote]
    row.update(
        # What the summary replaces, SWE-agent demonstrations included (they are summarized too).
        span_tokens=counter.messages([messages[i] for i in span_indices]),
        summary_tokens=counter.message(summaries[0]),
        sections=len(filled),
        missing_sections=[s for s in SECTIONS if s not in filled],
        latest=latest is not None and fold(latest) in output,
        latest_text=(latest or "")[:120],
        paths=[len([p for p in paths if fold(p) in output]), len(paths)],
        lost_paths=sorted(p for p in paths if fold(p) not in output)[:5],
        commands=[len([c for c in ran if fold(c) in output]), len(ran)],
        constraints=[len([c for c in quoted if fold(c) in output]), len(quoted)],
        lost_constraints=[c for c in quoted if fold(c) not in output][:3],
        foreign=foreign[:5],
        foreign_count=len(foreign),
    )
    return row


def measure_file(path: Path, settings: dict, counter) -> list[dict]:
    loaded = load(path.read_bytes(), str(path))
    fmt, transcripts = loaded[0], loaded[1]  # older checkouts return a third item
    harness = harness_texts(path) if fmt.name == "claude-code" else set()
    rows = []
    for transcript in transcripts:
        row = measure_transcript(transcript.messages, harness, settings, counter)
        rows.append(
            {"file": str(path.relative_to(REAL) if path.is_relative_to(REAL) else path), "format": fmt.name, **row}
        )
    return rows


def share(pair: list[int]) -> str:
    kept, total = pair
    return f"{kept}/{total} ({100 * kept / total:.0f}%)" if total else "-"


def totals(rows: list[dict]) -> dict:
    done = [r for r in rows if r["summarized"]]
    add = lambda key: [sum(r[key][0] for r in done), sum(r[key][1] for r in done)]  # noqa: E731
    span = sum(r["span_tokens"] for r in done)
    summary = sum(r["summary_tokens"] for r in done)
    return {
        "sessions": len(done),
        "all_sections": sum(r["sections"] == len(SECTIONS) for r in done),
        "latest": sum(r["latest"] for r in done),
        "paths": add("paths"),
        "commands": add("commands"),
        "constraints": add("constraints"),
        "foreign": sum(r["foreign_count"] for r in done),
        "span_tokens": span,
        "summary_tokens": summary,
        "max_summary_tokens": max((r["summary_tokens"] for r in done), default=0),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("inputs", nargs="*", type=Path, default=DEFAULT_INPUTS)
    parser.add_argument("--keep-turns", type=int)
    parser.add_argument("--keep-recent", type=int)
    parser.add_argument("--summary-max-tokens", type=int)
    parser.add_argument("--json", action="store_true", help="one JSON object: rows and totals")
    parser.add_argument("--show-lost", action="store_true", help="list what did not survive, per file")
    args = parser.parse_args()
    settings = {k: v for k, v in {"keep_turns": args.keep_turns, "keep_recent": args.keep_recent,
                "summary_max_tokens": args.summary_max_tokens}.items() if v is not None}  # fmt: skip
    counter = counter_for()
    files = [p for given in args.inputs for p in (find_transcripts(given) if given.is_dir() else [given])]
    started = time.perf_counter()
    rows: list[dict] = []
    for path in files:
        try:
            rows += measure_file(path, settings, counter)
        except Exception as error:  # a file no reader knows: say so and go on
            print(f"{path}: unreadable: {error}", file=sys.stderr)
    total = totals(rows)
    if args.json:
        print(json.dumps({"version": 1, "rows": rows, "total": total}, indent=2, ensure_ascii=False))
        return 0
    columns = ["file", "span tokens", "summary", "sections", "latest request", "touched paths", "commands"]
    columns += ["user constraints", "not the user's"]
    print("| " + " | ".join(columns) + " |")
    print("|---|" + "---:|" * (len(columns) - 1))
    for row in rows:
        if not row["summarized"]:
            continue
        size = f"{row['summary_tokens']:,} ({100 * row['summary_tokens'] / max(1, row['span_tokens']):.1f}%)"
        cells = [
            row["file"].rsplit("/", 1)[-1][:40],
            f"{row['span_tokens']:,}",
            size,
            f"{row['sections']}/{len(SECTIONS)}",
        ]
        cells += ["yes" if row["latest"] else "**no**", share(row["paths"]), share(row["commands"])]
        cells += [share(row["constraints"]), str(row["foreign_count"])]
        print("| " + " | ".join(cells) + " |")
        if args.show_lost:
            lost = {k: row[k] for k in ("missing_sections", "lost_paths", "lost_constraints", "foreign") if row[k]}
            if not row["latest"]:
                lost["latest"] = row["latest_text"]
            if lost:
                print(f"  {row['file']}: {json.dumps(lost, ensure_ascii=False)[:900]}", file=sys.stderr)
    n = total["sessions"]
    size = f"{total['summary_tokens']:,} ({100 * total['summary_tokens'] / max(1, total['span_tokens']):.1f}%)"
    cells = ["**total**", f"{total['span_tokens']:,}", size, f"{total['all_sections']}/{n} all {len(SECTIONS)}"]
    cells += [f"{total['latest']}/{n}", share(total["paths"]), share(total["commands"])]
    cells += [share(total["constraints"]), str(total["foreign"])]
    print("| " + " | ".join(cells) + " |")
    print(f"\n{len(files)} files, {n} summarized, largest summary {total['max_summary_tokens']:,} tokens,"
          f" in {time.perf_counter() - started:.1f} s", file=sys.stderr)  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
