"""Claude Code's subagents' own files, read beside the session, and what a forked subagent copies.

A subagent (the Agent tool) writes ``<session>/subagents/agent-<id>.jsonl``: its calls are billed with the session.
Claude Code 2.0.x wrote them in the project's folder itself, beside the session's file, as ``agent-<id>.jsonl``
joined to it by their records' ``sessionId`` alone; the "Warmup" sidechains it sent at each start (one per agent
type, a billed call each) are such files too. Measured with the real 2.0.76 against the loopback fake: 10 of the
24 responses served were in 9 such files, the session's own held 8. A 2.0.x resume's warmup opens on the resuming
run's own id and goes on under the resumed session's: the last ``sessionId`` a file names is its session's.
2.1.332's ``subagent_type: "fork"`` runs one on the session's own context: its file opens on a ``fork-context-ref``
record (``parentSessionId``, ``parentLastUuid``, ``contextLength``) and a copy of the session's last response (the
Agent call itself: the same message id and usage, fewer blocks), then its own calls. That response was billed in
the session's file, so the copy is marked copied (measured with the real client against the loopback fake: 6
responses served, 7 billed before).
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable
from pathlib import Path
from typing import Any

from compactctl import jsonbytes, lazyre
from compactctl.errors import InputError
from compactctl.formats.claude_code import FORK_REF
from compactctl.formats.records import Record
from compactctl.recorded import InRun, RecordedContext, RecordedSession, marked_shared
from compactctl.recorded.claude_code_chain import Index
from compactctl.recorded.claude_code_side import SideRequests, side_requests


def subagent_sessions(
    path: str, run: InRun, read: Callable[[list[Record], str, InRun], RecordedSession], index: Index
) -> list[tuple[str, RecordedSession, SideRequests]]:
    """The subagents' own files beside a session file, read (``read``: the session reader), with the side requests
    their tool results show; a forked subagent's copy of the session's response (``index``'s) marked copied."""
    from compactctl.formats.records import parse_records

    if not path.endswith(".jsonl"):
        return []
    folder = Path(path).with_suffix("") / "subagents"
    files = sorted(folder.glob("agent-*.jsonl")) if folder.is_dir() else []
    found = []
    for file in files + project_agent_files(path, index.session_id):
        try:
            records = parse_records(file.read_bytes(), str(file))[0]
        except (OSError, InputError):
            continue  # a subagent file that does not read is left out, not the session
        values = [r.value for r in records if isinstance(r.value, dict)]
        subagent = read(records, str(file), run)
        fork = next((value for value in values if value.get("type") == FORK_REF), None)
        if fork is not None:
            subagent = _copies_marked(subagent, fork, _responses(values) & _responses(index.values))
        subagent = _shared_marked(subagent, run)
        found.append((file.stem.removeprefix("agent-"), subagent, side_requests(values)))
    return found


# A record's ``sessionId`` as Claude Code writes it (compact JSON): escaped inside a string it is not one.
_SESSION_ID = lazyre.compile(rb'"sessionId":"([^"\\]{1,200})"')
_TAIL = 65_536  # the end of a file read for its last record's ``sessionId``


def is_project_agent_file(path: Path) -> bool:
    """``agent-<id>.jsonl`` where Claude Code 2.0.x wrote it: in a folder of sessions, not a 2.1 ``subagents/``."""
    return path.name.startswith("agent-") and path.suffix == ".jsonl" and path.parent.name != "subagents"


def project_agent_files(path: str, session_id: str | None) -> list[Path]:
    """The 2.0.x subagents' files beside the session file at ``path`` whose session is ``session_id``; none for a
    subagent's file itself, of either release (its siblings are its session's, not its own)."""
    own = Path(path)
    if session_id is None or own.name.startswith("agent-"):
        return []
    found = []
    for file in sorted(own.parent.glob("agent-*.jsonl")):
        try:
            stat = file.stat()
        except OSError:
            continue
        if session_of_agent_file(str(file), stat.st_size, stat.st_mtime_ns) == session_id:
            found.append(file)
    return found


@functools.lru_cache(maxsize=65_536)
def session_of_agent_file(path: str, size: int, mtime_ns: int) -> str | None:
    """The last ``sessionId`` a file's records name (``size`` and ``mtime_ns`` key the cache: every session file of
    a folder looks at every agent file in it). Its tail first: the whole file where the tail names none."""
    try:
        with open(path, "rb") as file:
            file.seek(max(0, size - _TAIL))
            found = _SESSION_ID.findall(file.read())
            if not found and size > _TAIL:
                file.seek(0)
                found = _SESSION_ID.findall(file.read())
    except OSError:
        return None
    return found[-1].decode("utf-8", "replace") if found else None


def read_by_session(source: str, sources: set[str]) -> bool:
    """A subagent's ``agent-<id>.jsonl`` whose session's file is among ``sources``: that session reads and bills it.
    2.1's ``<session>/subagents/``: the session's ``<session>.jsonl``; 2.0.x's, beside it: ``<sessionId>.jsonl``."""
    path = Path(source)
    if path.parent.name == "subagents":
        return str(path.parent.parent.with_suffix(".jsonl")) in sources
    if not is_project_agent_file(path):
        return False
    try:
        stat = path.stat()
    except OSError:
        return False
    session = session_of_agent_file(source, stat.st_size, stat.st_mtime_ns)
    return session is not None and str(path.parent / f"{session}.jsonl") in sources


def _copies_marked(
    subagent: RecordedSession, fork: dict[str, Any], made_here: set[tuple[str, bytes]]
) -> RecordedSession:
    """The subagent's calls that are a response the session made (``made_here``: message id and usage) marked copied,
    from the session its ``fork-context-ref`` names."""
    copies = {message_id for message_id, _ in made_here}

    def marked(context: RecordedContext) -> RecordedContext:
        calls = [
            dataclasses.replace(call, copied=True) if (call.copy_key or "").split(" ", 1)[0] in copies else call
            for call in context.calls
        ]
        return dataclasses.replace(context, calls=calls)

    parent = fork.get("parentSessionId")
    return dataclasses.replace(
        subagent,
        contexts=[marked(context) for context in subagent.contexts],
        copied_from=(parent,) if isinstance(parent, str) else (),
    )


def _shared_marked(subagent: RecordedSession, run: InRun) -> RecordedSession:
    """The subagent's calls another file of the run made (a copy of the session's folder: its subagents' files are
    copies too) marked copied, billed there. The reader marks only those a context opens with (a 1.x resume's copy),
    and a fork's context opens with its copy of the session's response, which is no other file's: the rest of a
    copied fork read as its own. A subagent's file is 2.1's, its keys hold each record's uuid: no other run's."""
    contexts, shared = [], dict[str, str]()
    for context in subagent.contexts:
        calls, found = marked_shared(context.calls, run.billed_elsewhere)
        contexts.append(dataclasses.replace(context, calls=calls))
        shared |= found
    if not shared:
        return subagent
    return dataclasses.replace(
        subagent,
        contexts=contexts,
        shared_calls=subagent.shared_calls + len(shared),
        shared_with=tuple(sorted({*subagent.shared_with, *shared.values()})),
    )


def _responses(values: list[dict[str, Any]]) -> set[tuple[str, bytes]]:
    """(message id, its usage) of each response record of a file."""
    found = set()
    for value in values:
        message = value.get("message")
        if isinstance(message, dict) and message.get("role") == "assistant" and isinstance(message.get("id"), str):
            found.add((message["id"], jsonbytes.dumps(message.get("usage"))))
    return found
