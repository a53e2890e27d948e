"""Secrets planted in a real Claude Code session, followed down every path that sends or writes text.

    python bench/secrets_paths.py [--corpus blind|held-out|table|all] [--session PATH]

Each document of the corpus, in each placement (as is, split, base64, URL-encoded), is
planted in a real session from /work/shared/transcripts (appended to a user turn, to a
tool result and to a tool call's input, early in the session so the kept tail holds none),
all documents of a placement in one file. Then, in this process through typer's CliRunner,
with a loopback OpenAI-compatible server (tests/summarizers/openai_server.py):

- ``summary``: the output of ``compact -s summary`` offline (the written summary);
- ``request``: what ``compact -s summary --summarizer openai`` sends the server;
- ``second pass``: what compacting that offline output again with the model sends;
- ``review``: the page ``review -s structured`` writes;
- ``error``: what the CLI prints when the server's 400 quotes the request back.

Each path is run twice: with ``--no-redact`` (the control: how many kinds the path would
carry at all) and as shipped (kinds exposed: the figure that must be 0). A kind counts as
exposed when a 10-character piece of it, in the form its placement carries it, is there
(``tests.heldout_secrets.exposed``).
"""

from __future__ import annotations

import argparse
import html
import json
import os
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.heldout_secrets import PLACEMENTS, Document, Placed, exposed  # noqa: E402

SHARED = Path(os.environ.get("COMPACTCTL_TRANSCRIPTS") or ROOT.parent / "shared" / "transcripts")
SESSION = SHARED / "claude-code" / "yoavf__ai-sessions" / "claude-code-pomodoro-timer.jsonl"
MARK = "Here is what I have:"
PATHS = ("summary", "request", "second pass", "review", "error")


def corpus(name: str) -> list[Placed]:
    from tests import blind_secrets, heldout_secrets, secrets_corpus

    table = [
        Placed(s.kind, placement, s.secret, *place(Document(s.kind, s.secret, s.text)))
        for s in secrets_corpus.CORPUS
        for placement, place in PLACEMENTS.items()
    ]
    chosen = {"blind": blind_secrets.PLACED, "held-out": heldout_secrets.PLACED, "table": table}
    if name == "all":
        return [narrowed(p) for items in chosen.values() for p in items]
    return [narrowed(p) for p in chosen[name]]


def narrowed(item: Placed) -> Placed:
    """A base64 placement's secret as the base64 characters only its own bytes make.

    The placement encodes the whole document, and two documents' encodings can share ten
    characters where their plain text agrees (``https://``, indentation): with every document in
    one file, that would count one's leak as another's.
    """
    if item.placement != "base64":
        return item
    import base64
    import dataclasses

    encoded = item.sent_as
    plain = base64.b64decode(encoded)
    start = plain.find(item.secret.encode())
    end = start + len(item.secret.encode())
    own = encoded[(start + 2) // 3 * 4 : end // 3 * 4]
    return dataclasses.replace(item, sent_as=own)


def _message(record: dict[str, Any]) -> dict[str, Any] | None:
    message = record.get("message")
    return message if isinstance(message, dict) and not record.get("isSidechain") else None


def plant(records: list[dict[str, Any]], texts: Sequence[str]) -> list[dict[str, Any]]:
    """``records`` with each text appended to a user turn, a tool result and a tool call's input,
    one text per message, from the session's start (so the kept tail holds none)."""
    records = json.loads(json.dumps(records))
    users, results, calls = [], [], []
    for record in records[: len(records) * 2 // 3]:
        message = _message(record)
        if message is None:
            continue
        content = message.get("content")
        if message.get("role") == "user" and isinstance(content, str):
            users.append(message)
        for block in content if isinstance(content, list) else []:
            if block.get("type") == "tool_result" and isinstance(block.get("content"), str):
                results.append(block)
            elif block.get("type") == "tool_use" and isinstance(block.get("input"), dict):
                calls.append(block)
    for number, text in enumerate(texts):
        if users and number % 3 == 0:
            users[number // 3 % len(users)]["content"] += f"\n\n{MARK}\n{text}\n"
        elif results and number % 3 == 1:
            results[number // 3 % len(results)]["content"] += f"\n$ cat config\n{text}\n"
        elif calls:
            calls[number // 3 % len(calls)]["input"].setdefault("notes", []).append(text)
    return records


def _normal(line: str) -> str:
    return json.dumps(json.loads(line), sort_keys=True) if line.strip() else ""


def run_paths(placed: list[Placed], session: Path, folder: Path, redact: bool) -> dict[str, set[str]]:
    """For one placement's documents in one file: which kinds each path exposes."""
    from typer.testing import CliRunner

    from compactctl.cli.main import app
    from compactctl.summarizers.redact import redact_reply
    from tests.summarizers.openai_server import Behaviour, ServerThread

    runner = CliRunner()
    records = [json.loads(line) for line in session.read_text(encoding="utf-8").splitlines() if line.strip()]
    source = folder / "planted.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in plant(records, [p.text for p in placed])), "utf-8")
    flags = [] if redact else ["--no-redact"]
    common = ["-s", "summary", "--threshold", "10", "--keep-recent", "4", "--summary-max-tokens", "4000", *flags]
    model = ["--summarizer", "openai", "--model", "m", "--no-cache", "--summary-backoff", "0.01"]
    model += ["--summary-retries", "0"]
    server = ServerThread()
    found: dict[str, set[str]] = {}

    def seen(path: str, text: str) -> None:
        found[path] = {p.kind for p in placed if exposed(p, text)}

    def invoke(arguments: list[str], expect: int = 0) -> Any:
        result = runner.invoke(app, arguments)
        if result.exit_code != expect:
            raise SystemExit(f"{' '.join(arguments)}: exit {result.exit_code}\n{result.output}")
        return result

    try:
        first = folder / "offline.jsonl"
        invoke(["compact", str(source), "-o", str(first), *common])
        # A Claude Code file keeps its history before the compact boundary, as Claude Code's own
        # /compact does: what compactctl wrote is the records that are new.
        planted = {_normal(line) for line in source.read_text(encoding="utf-8").splitlines()}
        written = [line for line in first.read_text(encoding="utf-8").splitlines() if _normal(line) not in planted]
        seen("summary", "\n".join(written))
        base = ["--base-url", server.state.url, *model]
        invoke(["compact", str(source), "-o", str(folder / "model.jsonl"), *common, *base])
        seen("request", server.state.received_text())
        server.state.requests.clear()
        invoke(["compact", str(first), "-o", str(folder / "second.jsonl"), *common, "--keep-recent", "2", *base])
        seen("second pass", server.state.received_text())
        page = folder / "page.html"
        invoke(["review", str(source), "-o", str(page), "-s", "structured", "--keep-turns", "1", *flags])
        seen("review", html.unescape(page.read_text(encoding="utf-8")))
        # The server's 400 quotes the request from a planted document on (an error line shows its
        # first 200 characters): once through the CLI, then each document through the same function.
        server.state.enqueue(Behaviour("400-echo", text=MARK))
        failed = invoke(["compact", str(source), "-o", str(folder / "error.jsonl"), *common, *base], expect=3)
        printed = [failed.output + failed.stderr]
        for item in placed:
            quoted = json.dumps(f"{MARK}\n{item.text}")[1:-1]
            reply = f"Invalid value for 'messages': {quoted}"
            printed.append(redact_reply(reply) if redact else reply.splitlines()[0][:200])
        seen("error", "\n".join(printed))
    finally:
        server.stop()
    return found


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--corpus", default="blind", choices=("blind", "held-out", "table", "all"))
    parser.add_argument("--session", type=Path, default=SESSION)
    args = parser.parse_args()
    os.environ.setdefault("OPENAI_API_KEY", "sk-test-" + "0" * 24)
    placed = corpus(args.corpus)
    kinds = sorted({p.kind for p in placed})
    print(f"{args.corpus} corpus: {len(kinds)} kinds planted in {args.session.name}; kinds exposed per path")
    print(f"{'placement':13} " + " ".join(f"{p:>18}" for p in PATHS) + "   (without redaction -> with)")
    leaks: dict[str, list[str]] = {}
    for placement in PLACEMENTS:
        items = [p for p in placed if p.placement == placement]
        row = []
        for redact in (False, True):
            with tempfile.TemporaryDirectory() as folder:
                os.environ["COMPACTCTL_CACHE_DIR"] = str(Path(folder) / "cache")
                row.append(run_paths(items, args.session, Path(folder), redact))
        print(f"{placement:13} " + " ".join(f"{len(row[0][p]):>11} -> {len(row[1][p]):>3}" for p in PATHS))
        for path in PATHS:
            for kind in sorted(row[1][path]):
                leaks.setdefault(kind, []).append(f"{placement}/{path}")
    for kind, where in leaks.items():
        print(f"  LEAK {kind}: {', '.join(where)}")
    print(f"kinds exposed on some path: {len(leaks)} of {len(kinds)}")


if __name__ == "__main__":
    main()
