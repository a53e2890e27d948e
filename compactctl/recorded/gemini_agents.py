"""Gemini CLI's subagents: the chats of the agents a session's model started, in a folder beside the session's file.

What 0.61.0 writes (its bundle; ``packages/core/src/services/chatRecordingService.ts`` and ``agents/`` in
google-gemini/gemini-cli). Agents are on by default (``enableAgents ?? true``); the model starts one with the
``invoke_agent`` tool (``{agent_name, prompt}``: the built-in ``generalist``, ``codebase_investigator``, ...):

- **The subagent's chat.** ``LocalAgentExecutor`` runs a chat of its own, recorded as the session's is (each
  response a ``gemini`` record with ``tokens`` and ``model``; ``createChatObject``:
  ``await chat.initialize(void 0, "subagent")``), under its own id (``this.agentId = randomUUID()``) and the main
  agent's session id (``parentSessionId: this.context.parentSessionId || this.context.promptId, // Always preserve
  the main agent session ID``). ``ChatRecordingService.initialize`` files it beside the session's chat::

      if (this.kind === "subagent" && this.context.parentSessionId) {
        const safeParentId = sanitizeFilenamePart(this.context.parentSessionId);
        chatsDir = path.join(chatsDir, safeParentId); }
      if (this.kind === "subagent") { filename = `${safeSessionId}.jsonl`; }

  so ``chats/<session id>/<agent id>.jsonl`` beside ``chats/session-<minute>-<session id[:8]>.jsonl``
  (``sanitizeFilenamePart``: every character but ``[a-zA-Z0-9_-]`` as ``_``). Its header is
  ``{sessionId: <agent id>, projectHash, startTime, lastUpdated, kind: "subagent", directories}``: nothing in it
  names the session or the agent. It finishes with a ``complete_task`` call, the last ``$set`` its ``summary``.
- **The session's chat** records the delegation as a tool call of the response that asked for it: ``invoke_agent``,
  its result ``Subagent '<name>' finished.\\nTermination Reason: GOAL\\nResult: ...``, and the chat's id
  (``recordCompletedToolCalls``: ``agentId: typeof call.response?.data?.["agentId"] === "string" ? ...``), the
  agent's name in ``resultDisplay.agentName``.

A session's calls name its subagents' chats: the reader reads those (measured with the real 0.61.0:
tests/fakes/record_gemini_subagents.py). A file of the session that holds no call (the stub a resume in a later
minute leaves) names none, so a folder of both bills each subagent once.

- **A subagent stopped.** Where the client is stopped while a subagent runs, no call names its chat, whose calls
  were billed all the same: 0.61 throws the abort on and records no ``agentId``. Measured with the real client
  (the fake holding the subagent's second call): Esc in the interactive client records the ``invoke_agent`` call
  ``cancelled`` on a record of its own with no ``tokens``, its ``resultDisplay.recentActivity`` the subagent's tool
  calls, each id ``<chat id>#<turn>-<n>``; a Ctrl-C key in ``-p`` mode the same call on the response's own record;
  SIGINT, SIGTERM or SIGKILL of the process no tool call at all. A chat in the folder that no file of the session
  names is read with the session's first file (by name) that holds a response, so a folder of them bills it once:
  labelled by the agent's name where a cancelled call's activity names the chat, else by the chat's id.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

from compactctl import lazyre

_UNSAFE = lazyre.compile(r"[^a-zA-Z0-9_-]")
SUBAGENT_TOOL = "invoke_agent"


def sanitized(part: str) -> str:
    """A name as the client files it (``sanitizeFilenamePart``)."""
    return _UNSAFE.sub("_", part)


def _messages(values: list[Any]) -> Iterator[dict[str, Any]]:
    """Every message record, on a line of its own or in a checkpoint (``$set`` of ``messages``, an older chat's
    one document)."""
    for value in values:
        if not isinstance(value, dict):
            continue
        update = value.get("$set")
        listed = update.get("messages") if isinstance(update, dict) else value.get("messages")
        for record in [value, *(listed if isinstance(listed, list) else [])]:
            if isinstance(record, dict) and isinstance(record.get("id"), str):
                yield record


def _billed(values: list[Any]) -> set[str]:
    """The ids of the chat's billed responses (``gemini`` records with ``tokens``)."""
    return {r["id"] for r in _messages(values) if r.get("type") == "gemini" and isinstance(r.get("tokens"), dict)}


def delegated(values: list[Any]) -> dict[str, str]:
    """The subagents the chat's billed responses (``gemini`` records with ``tokens``) started: each chat's id and
    its agent's name, in the order the calls were recorded."""
    billed = _billed(values)
    found: dict[str, str] = {}
    for record in _messages(values):
        if record["id"] not in billed or not isinstance(record.get("toolCalls"), list):
            continue
        for call in record["toolCalls"]:
            agent = call.get("agentId") if isinstance(call, dict) else None
            if isinstance(agent, str) and agent:
                found.setdefault(agent, _agent_name(call))
    return found


def _agent_name(call: dict[str, Any]) -> str:
    shown = call.get("resultDisplay")
    name = shown.get("agentName") if isinstance(shown, dict) else None
    args = call.get("args")
    asked = args.get("agent_name") if isinstance(args, dict) else None
    for candidate in (name, asked, call.get("name")):
        if isinstance(candidate, str) and candidate:
            return candidate
    return SUBAGENT_TOOL


def _header(values: list[Any]) -> dict[str, Any]:
    first = next((v for v in values if isinstance(v, dict) and isinstance(v.get("sessionId"), str)), None)
    return first or {}


def subagent_chats(path: str, values: list[Any]) -> list[tuple[str, Path]]:
    """The chats of the subagents the session's calls started (``values``: its file's records), each by the name it
    is billed under (``subagent <name>``): its agent's, with the chat's id where two share one; then, where this is
    the session's first file that holds a response, the chats in its folder that no file of the session names."""
    header = _header(values)
    session = header.get("sessionId")
    if not isinstance(session, str) or header.get("kind") == "subagent":
        return []  # a subagent starts none (its tools hold no agent)
    folder = Path(path).parent / sanitized(session)
    if not folder.is_dir():
        return []
    named = {sanitized(agent): name for agent, name in delegated(values).items()}
    others = sorted(chat for chat in folder.glob("*.jsonl") if chat.stem not in named and is_subagent_chat(chat))
    if others:
        named |= _unnamed(path, session, values, others)
    names = list(named.values())
    found = []
    for agent, name in named.items():
        chat = folder / f"{agent}.jsonl"
        if chat.is_file():
            found.append((name if names.count(name) == 1 else f"{name} {agent[:8]}", chat))
    return found


def _unnamed(path: str, session: str, values: list[Any], chats: list[Path]) -> dict[str, str]:
    """Of ``chats`` (the folder's that this file names none of), those no file of the session names, by the name
    they are billed under, where this file is the session's first that holds a response; else none."""
    files = _session_files(path, session, values)
    first = next((name for name, held in files if _billed(held)), None)
    if first != Path(path).name:
        return {}  # the session's other file reads them, or none holds a call
    claimed = {sanitized(agent) for _, held in files for agent in delegated(held)}
    shown = _stopped_agents([value for _, held in files for value in held])
    return {c.stem: shown.get(c.stem, c.stem[:8]) for c in chats if c.stem not in claimed}


def _session_files(path: str, session: str, values: list[Any]) -> list[tuple[str, list[Any]]]:
    """Every file of the session beside ``path`` (``session-<minute>-<id[:8]>``, its header naming the session),
    by name, each with its records (``values`` for ``path`` itself)."""
    from compactctl.errors import InputError
    from compactctl.formats.records import parse_records

    own = Path(path)
    found = [(own.name, values)]
    for other in own.parent.glob(f"session-*-{sanitized(session)[:8]}.json*"):
        if other.name == own.name or other.suffix not in (".json", ".jsonl"):
            continue
        try:
            held = [r.value for r in parse_records(other.read_bytes(), str(other))[0]]
        except (OSError, InputError):
            continue
        if _header(held).get("sessionId") == session:
            found.append((other.name, held))
    return sorted(found, key=lambda pair: pair[0])


def _stopped_agents(values: list[Any]) -> dict[str, str]:
    """The agents' names the session's ``invoke_agent`` calls show, by the chat their activity was recorded in
    (``resultDisplay.recentActivity``: each tool call's id ``<chat id>#<turn>-<n>``): a cancelled call's only
    sign of the chat it ran."""
    found: dict[str, str] = {}
    for record in _messages(values):
        calls = record.get("toolCalls")
        for call in calls if isinstance(calls, list) else []:
            shown = call.get("resultDisplay") if isinstance(call, dict) else None
            activity = shown.get("recentActivity") if isinstance(shown, dict) else None
            for step in activity if isinstance(activity, list) else []:
                chat = step.get("id") if isinstance(step, dict) else None
                if isinstance(chat, str) and "#" in chat:
                    found.setdefault(sanitized(chat.split("#", 1)[0]), _agent_name(call))
    return found


def is_subagent_chat(path: Path) -> bool:
    """A chat whose header says ``kind: "subagent"``, in a folder named as a session id."""
    if path.suffix != ".jsonl" or _UNSAFE.search(path.parent.name) or _UNSAFE.search(path.stem):
        return False
    try:
        with open(path, "rb") as file:
            value = orjson.loads(file.readline(65_536))  # a header is short: a longer line is not one
    except (OSError, orjson.JSONDecodeError):
        return False
    return isinstance(value, dict) and value.get("kind") == "subagent"


def read_by_parent(source: str, sources: set[str]) -> bool:
    """A subagent's chat whose session's file is among ``sources`` and names it: read with that file."""
    from compactctl.errors import InputError
    from compactctl.formats.records import parse_records

    path = Path(source)
    if not is_subagent_chat(path):
        return False
    resolved, short = path.resolve(), path.parent.name[:8]
    for other in sources:
        parent = Path(other)
        if not parent.name.startswith("session-") or not parent.name.endswith((f"-{short}.jsonl", f"-{short}.json")):
            continue
        if parent.resolve().parent != resolved.parent.parent:
            continue
        try:
            records = parse_records(parent.read_bytes(), other)[0]
        except (OSError, InputError):
            continue
        if any(chat.resolve() == resolved for _, chat in subagent_chats(other, [r.value for r in records])):
            return True
    return False
