"""Gemini CLI's chats: ``~/.gemini/tmp/<project>/chats/session-<UTC minute>-<id8>.jsonl`` (``$GEMINI_CLI_HOME``
stands for the home folder).

``<project>`` is a short name that ``~/.gemini/projects.json`` maps from the project's path
(older versions: the SHA-256 of the path). The first record is the header holding the whole
``sessionId``; ``gemini --resume ID`` looks in the chats folder of the project it is started
in for a file ending ``-<first 8 characters of ID>.jsonl`` whose header has that id
(``packages/cli/src/utils/sessionUtils.ts`` in google-gemini/gemini-cli). No index, no lock.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Iterator, Mapping
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from compactctl.formats.gemini import COPIED_FROM
from compactctl.formats.records import Record
from compactctl.sessions.live import Anchor
from compactctl.sessions.records import first_values, rewrite_values

NAME = "gemini"  # its format\'s name, whose entry says RESUMABLE
PRIOR_RATIO = 1.0  # its model's tokens per cl100k token where a session cannot tell
# tokenLimit() in packages/core/src/core/tokenLimits.ts: every Gemini model 1,048,576; Gemma 4 256,000.
WINDOW = 1_048_576
GEMMA_WINDOW = 256_000
COMPRESSION_MARK = "<state_snapshot>"  # the summary Gemini CLI's own compression writes


def _home(env: Mapping[str, str], home: Path) -> Path:
    return Path(env["GEMINI_CLI_HOME"]) if env.get("GEMINI_CLI_HOME") else home


def roots(env: Mapping[str, str], home: Path) -> list[Path]:
    return [_home(env, home) / ".gemini"]


def session_files(root: Path) -> Iterator[Path]:
    """Each session's chat; a subagent's (``chats/<session id>/<agent id>.jsonl``, a folder down) is part of its
    session, whose replay bills its calls (``recorded.gemini_agents``): the ``chats/`` folder's own files only."""
    for chats in (root / "tmp").glob("*/chats"):
        yield from chats.glob("session-*.jsonl")
        yield from chats.glob("session-*.json")


def _header(path: Path) -> dict[str, Any]:
    if path.suffix == ".json":
        try:
            value = json.loads(path.read_bytes())
        except (OSError, ValueError):
            return {}
        return value if isinstance(value, dict) else {}
    found = first_values(path, lambda value: isinstance(value.get("sessionId"), str), lines=3)
    return found[0] if found else {}


def session_id(path: Path) -> str:
    found = _header(path).get("sessionId")
    return found if isinstance(found, str) else path.stem


def working_directory(path: Path) -> str | None:
    """The project's path, from ``projects.json`` (short name to path) or the folder's ``.project_root``."""
    project = path.parent.parent
    marker = project / ".project_root"
    if marker.is_file():
        return marker.read_text(encoding="utf-8", errors="replace").strip() or None
    registry = project.parent.parent / "projects.json"
    try:
        projects = json.loads(registry.read_bytes()).get("projects", {})
    except (OSError, ValueError, AttributeError):
        return None
    return next((str(p) for p, name in projects.items() if name == project.name), None)


def model_of(values: list[dict[str, Any]]) -> str | None:
    for value in reversed(values):
        records = value["$set"].get("messages") if isinstance(value.get("$set"), dict) else [value]
        for record in reversed(records if isinstance(records, list) else []):
            if isinstance(record, dict) and record.get("type") == "gemini" and isinstance(record.get("model"), str):
                return str(record["model"])
    return None


def window_of(model: str | None, values: list[dict[str, Any]]) -> int:
    return GEMMA_WINDOW if model and model.startswith("gemma-4") else WINDOW


def compacted(values: list[dict[str, Any]]) -> bool:
    """A checkpoint whose history opens on a summary: the client's compression, or compactctl's."""
    from compactctl.strategies.summarizing import SUMMARY_HEADER

    ours = SUMMARY_HEADER.split("{", 1)[0]
    for value in values:
        checkpoint = value.get("$set") if isinstance(value.get("$set"), dict) else None
        for record in (checkpoint or {}).get("messages") or []:
            text = json.dumps(record.get("content"), ensure_ascii=False) if isinstance(record, dict) else ""
            if COMPRESSION_MARK in text or ours in text:
                return True
    return False


def new_session_id() -> str:
    return str(uuid.uuid4())


def new_path(original: Path, new_id: str, now: datetime) -> Path:
    """The original's name with the new id: its minute, not this one. Gemini CLI, resuming a session,
    first opens a file of its own named by the current minute and the id, appending to it when it
    exists: a new session named by this minute and resumed within it would get that header inside it."""
    named = re.fullmatch(r"session-(\d{4}-\d\d-\d\dT\d\d-\d\d)-[^.]+\.jsonl?", original.name)
    minute = named.group(1) if named else f"{now.astimezone(UTC) - timedelta(minutes=1):%Y-%m-%dT%H-%M}"
    return original.with_name(f"session-{minute}-{new_id[:8]}.jsonl")


def with_session_id(data: bytes, old: str, new: str) -> bytes:
    """The header's ``sessionId`` and every ``$set`` of it renamed (the client sets it again on each
    resume, and the last one wins). The new session's responses are the old one's, made and paid for there: each
    ``gemini`` record with usage names that session in ``COPIED_FROM``, so replay bills only the turns the client
    adds, and the two together bill every response once (bench/client_shapes_seventh.py: alone, 6 calls for the 2
    served); the real client resumes it (tests/recorded/test_compactctl_sessions.py)."""

    def marked(record: Any) -> Any:
        made_here = isinstance(record, dict) and record.get("type") == "gemini" and "tokens" in record
        return {**record, COPIED_FROM: old} if made_here and COPIED_FROM not in record else record

    def renamed(value: dict[str, Any]) -> dict[str, Any] | None:
        update = value.get("$set")
        if isinstance(update, dict):
            changed = {**update, "sessionId": new} if update.get("sessionId") == old else dict(update)
            if isinstance(update.get("messages"), list):
                changed["messages"] = [marked(m) for m in update["messages"]]
            return {**value, "$set": changed} if changed != update else None
        copy = marked(value)
        if isinstance(copy.get("messages"), list):  # the older one-document chat
            copy = {**copy, "messages": [marked(m) for m in copy["messages"]]}
        if copy.get("sessionId") == old:
            copy = {**copy, "sessionId": new}
        return copy if copy != value else None

    return rewrite_values(data, renamed)


def slim(data: bytes) -> bytes:
    """Only what ``--resume`` reads: the header, then the last checkpoint of the whole history
    (a ``$set`` of ``messages``) and what follows it."""
    lines = data.splitlines(keepends=True)
    marks = [n for n, line in enumerate(lines) if line.startswith(b'{"$set":{"messages":')]
    if not marks or marks[-1] == 0:
        return data
    return b"".join([lines[0], *lines[marks[-1] :]])


def writer_active(root: Path, session: str) -> bool:
    return False  # no lock: a live chat shows as a recent write


def update_index(root: Path, original: str, new: str, new_file: Path) -> list[str]:
    return []  # found by its file name


def resume_command(new_id: str) -> list[str]:
    return ["gemini", "--resume", new_id]


def anchors(records: list[Record]) -> list[Anchor]:
    """Each response's ``tokens`` (prompt plus candidates; thoughts are not sent back), where the client
    first wrote it on a line of its own (not a copy inside a ``$set`` checkpoint)."""
    first: dict[str, Anchor] = {}
    for position, record in enumerate(records):
        value = record.value
        tokens = value.get("tokens") if isinstance(value, dict) and value.get("type") == "gemini" else None
        if isinstance(tokens, dict) and isinstance(tokens.get("input"), int) and isinstance(value.get("id"), str):
            total = tokens["input"] + int(tokens.get("output") or 0)
            first.setdefault(value["id"], Anchor(position, total))
    return sorted(first.values(), key=lambda anchor: anchor.position)


# Gemini CLI's tool output masking (packages/core/src/context/toolOutputMaskingService.ts): when it
# sends a history, the tool outputs older than the newest 50,000 tokens of them (its estimate: four
# characters a token of the response's JSON) become a preview (the first and last 10 lines of a
# shell output, else 250 characters at each end), if together they are 30,000 tokens or more. A
# resumed chat's last turn is no longer the latest one, so all of it may go. (0.61 sends each
# response of its own chats twice, and counts both: the newest 50,000 tokens are half as many outputs.)
PROTECTED_TOOL_TOKENS = 50_000
MIN_MASKED_TOKENS = 30_000
PREVIEW_LINES = 10
MASKED_PATH = "~/.gemini/tmp/<project>/tool-outputs/session-<id>/run_shell_command_<call id>_<random>.txt"


def _estimate(text: str) -> int:
    return len(json.dumps({"output": text}, indent=2, ensure_ascii=False)) // 4


def _preview(text: str) -> str:
    lines = text.split("\n")
    if len(lines) <= 2 * PREVIEW_LINES:
        return text
    omitted = len(lines) - 2 * PREVIEW_LINES
    head, tail = "\n".join(lines[:PREVIEW_LINES]), "\n".join(lines[-PREVIEW_LINES:])
    return f"{head}\n\n... [{omitted} lines omitted] ...\n\n{tail}"


def as_sent(messages: list[dict[str, Any]], records: list[Record]) -> list[dict[str, Any]]:
    """The messages as the client sends them on resume: older bulky tool outputs masked."""
    copies = 2 if sends_responses_twice(records) else 1
    protected = 0
    prunable: list[int] = []
    for position in range(len(messages) - 1, -1, -1):
        message = messages[position]
        if message.get("role") != "tool" or not isinstance(message.get("content"), str):
            continue
        tokens = _estimate(message["content"])
        if protected <= PROTECTED_TOOL_TOKENS:
            protected += copies * tokens
            if protected <= PROTECTED_TOOL_TOKENS:
                continue
        prunable.append(position)
    if sum(_estimate(messages[p]["content"]) for p in prunable) < MIN_MASKED_TOKENS:
        return messages
    masked = list(messages)
    for position in prunable:
        preview = _preview(masked[position]["content"])
        snippet = f"<tool_output_masked>\n{preview}\n\nOutput too large. Full output available at: {MASKED_PATH}"
        masked[position] = {**masked[position], "content": f"{snippet}\n</tool_output_masked>"}
    return masked


def sends_responses_twice(records: list[Record]) -> bool:
    """A chat the client wrote itself with tool calls: it keeps each result in ``toolCalls`` and in a
    ``user`` record, and sends both (google-gemini/gemini-cli#29365)."""
    results = any(
        isinstance(r.value, dict)
        and r.value.get("type") == "gemini"
        and any(isinstance(c, dict) and "result" in c for c in r.value.get("toolCalls") or [])
        for r in records
    )
    return results and any(
        isinstance(r.value, dict)
        and r.value.get("type") == "user"
        and "functionResponse" in str(r.value.get("content"))
        for r in records
    )
