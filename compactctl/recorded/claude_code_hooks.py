"""What Claude Code 1.0.x told the model about its own hooks' log files, which its log does not hold.

A popular hook set (claude-code-hooks-mastery's ``~/.claude/hooks/*.py``) appends each hook's
input to a JSON list in the project, ``logs/<event>.json``; its ``UserPromptSubmit`` hook adds
one entry per prompt to ``logs/user_prompt_submit.json``: the session id, the transcript's path,
the folder, the event's name and the prompt, as ``json.dump(..., indent=2)`` writes them. Once the
client watches that file (a Read of it, or a Bash command whose output names it: 1.0.x asks a small
model after each command which files it showed, ``claude_code_files._shown``), every later prompt
changes it, and the client's check for changed files sends the new entry with 8 lines before it as
an ``edited_text_file`` reminder, with the first tool result after the prompt (the prompt's own
request is built before the hook writes). The check holds until the client forgets what it read:
at a compaction, or in a new process (a resume).

Measured with the real 1.0.69 in its terminal interface against the loopback fake (a ``cat`` of the
log, then a second prompt): the request after the second prompt's first command carries the
reminder, the session file holds the command's output alone, and the reminder rebuilt here is the
one sent, to the character. On kesslerio/attio-mcp-server (1.0.69, those hooks, whose sidechain's
``git status`` listed ``logs/user_prompt_submit.json``) the usage rises by 622 and 580 tokens more
than the log explains at the first tool result after each of its two prompts before the
compaction, and the rebuilt reminders are 579 and 613 at the file's fitted ratio.
"""

from __future__ import annotations

import json
import posixpath
from typing import Any

from compactctl import lazyre
from compactctl.recorded.claude_code_chain import is_boundary
from compactctl.recorded.claude_code_files import reminder

PROMPT_LOG = "logs/user_prompt_submit.json"
_NAMED = lazyre.compile(r"(?:^|[\s'\"(])((?:[\w.@+-]+/)*logs/user_prompt_submit\.json)\b")
_HOME = lazyre.compile(r"^/(?:Users|home)/[^/]+|^/root")
_NOT_A_PROMPT = ("<command-name>", "<local-command-", "Caveat: ", "<bash-", "[Request interrupted")


def prompt_log_reminders(values: list[dict[str, Any]]) -> dict[int, list[str]]:
    """Per record index of a tool result, the prompt log's reminder Claude Code sent with it unlogged."""
    found: dict[int, list[str]] = {}
    watched: str | None = None  # the log's path once the client watches it
    entries: list[dict[str, Any]] = []  # what the log is known to end with: this session's prompts
    held = 0  # how many of ``entries`` the client's copy of the log holds
    commands: dict[str, str] = {}  # tool_use id -> its command or file (a Bash command names the files it shows)
    process = None  # the session id: a resumed session starts a new process under a new one
    for at, value in enumerate(values):
        if _forgets(value) or value.get("sessionId", process) != process:
            watched, process = None, value.get("sessionId", process)
            if _forgets(value):
                continue
        if value.get("type") == "assistant":
            for block in _content(value):
                if isinstance(block, dict) and block.get("type") == "tool_use":
                    given = block.get("input")
                    given = given if isinstance(given, dict) else {}
                    commands[str(block.get("id"))] = str(given.get("command") or given.get("file_path") or "")
            continue
        if value.get("type") != "user":
            continue
        prompt = _prompt(value)
        if prompt is not None:
            entries.append(_entry(value, prompt))
            continue
        results = [b for b in _content(value) if isinstance(b, dict) and b.get("type") == "tool_result"]
        if not results:
            continue
        if watched is None:
            watched = _named(results, value, commands)
            held = len(entries)  # it reads the log as it is now
        elif held < len(entries):
            if held:  # the entries it held are what the 8 lines before the new ones come from
                found.setdefault(at, []).append(reminder(watched, _dumped(entries[:held]), _dumped(entries)))
            held = len(entries)
    return found


def _forgets(value: dict[str, Any]) -> bool:
    """A record after which the client holds no file state: a compaction or a new process's start."""
    if is_boundary(value):
        return True
    if value.get("type") == "system":
        return "SessionStart:" in str(value.get("content") or "")
    return bool(value.get("isCompactSummary"))


def _content(value: dict[str, Any]) -> list[Any]:
    message = value.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return content if isinstance(content, list) else []


def _prompt(value: dict[str, Any]) -> str | None:
    """The text of a prompt the user typed (the hook's input), or None for any other user record."""
    if value.get("isMeta") or value.get("isSidechain") or value.get("isCompactSummary"):
        return None
    blocks = _content(value)
    if not blocks or any(not isinstance(b, dict) or b.get("type") != "text" for b in blocks):
        return None
    text = "\n".join(str(b.get("text") or "") for b in blocks)
    return None if not text.strip() or text.startswith(_NOT_A_PROMPT) else text


def _entry(value: dict[str, Any], prompt: str) -> dict[str, Any]:
    """The hook's input for a prompt (cli.js 1.0.69: the session id, the transcript, the folder, then the event)."""
    cwd = str(value.get("cwd") or "")
    home = _HOME.match(cwd)
    folder = "".join(c if c.isalnum() else "-" for c in cwd)
    transcript = f"{home.group(0) if home else '~'}/.claude/projects/{folder}/{value.get('sessionId')}.jsonl"
    return {
        "session_id": value.get("sessionId"),
        "transcript_path": transcript,
        "cwd": cwd,
        "hook_event_name": "UserPromptSubmit",
        "prompt": prompt,
    }


def _dumped(entries: list[dict[str, Any]]) -> str:
    return json.dumps(entries, indent=2, ensure_ascii=True)  # Python's json.dump, as the hook writes it


def _named(results: list[dict[str, Any]], value: dict[str, Any], commands: dict[str, str]) -> str | None:
    """The prompt log's path where these tool results or their calls name it (a Read of it, a command
    or its output: the client's query for the files a command showed is given both)."""
    texts = [commands.get(str(b.get("tool_use_id")), "") for b in results]
    texts += [str(b.get("content")) for b in results]  # what the tool returned (a command's output)
    for text in texts:
        match = _NAMED.search(text) if "user_prompt_submit.json" in text else None
        if match is not None:
            return posixpath.normpath(posixpath.join(str(value.get("cwd") or ""), match.group(1)))
    return None
