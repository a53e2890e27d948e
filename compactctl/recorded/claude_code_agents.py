"""Claude Code's subagents' own files, read beside the session, and what a forked subagent copies.

A subagent (the Agent tool) writes ``<session>/subagents/agent-<id>.jsonl``: its calls are billed with the session.
2.1.332's ``subagent_type: "fork"`` runs one on the session's own context: its file opens on a ``fork-context-ref``
record (``parentSessionId``, ``parentLastUuid``, ``contextLength``) and a copy of the session's last response (the
Agent call itself: the same message id and usage, fewer blocks), then its own calls. That response was billed in
the session's file, so the copy is marked copied (measured with the real client against the loopback fake: 6
responses served, 7 billed before).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path
from typing import Any

from compactctl import jsonbytes
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

    folder = Path(path).with_suffix("") / "subagents"
    if not path.endswith(".jsonl") or not folder.is_dir():
        return []
    found = []
    for file in sorted(folder.glob("agent-*.jsonl")):
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
