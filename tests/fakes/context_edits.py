"""The Anthropic API's server-side context editing, ``clear_tool_uses_20250919``, as the loopback fake applies it.

A request may carry ``context_management.edits``; Claude Code 2.1.332 adds a ``clear_tool_uses_20250919`` edit
to the first requests after the user was idle over an hour (its flag ``tengu_jiggly_blossom`` "on"). The API
(Anthropic's context-editing docs) then, where the request holds at least ``trigger`` tool uses, replaces the
results of the oldest ones with a placeholder, keeping the last ``keep`` tool uses and never touching a tool in
``exclude_tools``, and applies the edit only where that clears at least ``clear_at_least`` input tokens. The input
it bills is the edited request's, and the response reports ``context_management.applied_edits``
(``[{type, cleared_tool_uses, cleared_input_tokens}]``; streamed in the final ``message_delta``).

The edit's ``clear_tool_inputs`` (true, or a list of tool names: the API's "whether to clear all tool inputs (bool)
or specific tool inputs to clear (list)") clears the inputs of the cleared tool uses too, of every tool or of those
named; 2.1.332 names Write, Edit, Bash and PowerShell (and their ``mcp__container__`` twins) behind its flag
``tengu_tidy_crayon``. The API's form of a cleared input is not public either: the fake sends it as ``{}``, as the
client's own estimate counts it (the input's JSON bytes all saved), and its tokens are in ``cleared_input_tokens``.

The API's own placeholder wording is not public: the fake uses the client's own stand-in for a cleared result
(``"[Old tool result content cleared]"``, the ``bln`` constant of 2.1.332's bundle), which is also what compactctl
counts in its place (``compactctl.recorded.claude_code_cleared``).

Earlier turns' thinking (Anthropic's context-editing docs, "thinking block clearing"): without a
``clear_thinking_20251015`` edit the API keeps only the ongoing turn's thinking (the assistant messages after the
last user message that holds no tool result) on Claude Opus 4.1 and earlier, Sonnet 4.5 and earlier, Haiku
4.5 and earlier, and keeps all on the later models; with the edit it keeps the last ``keep`` turns'
(``{"type": "thinking_turns", "value": N}``) or, for ``keep: "all"``, every turn's.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable
from typing import Any

CLEAR_TOOL_USES = "clear_tool_uses_20250919"
CLEAR_THINKING = "clear_thinking_20251015"
# The models whose API keeps only the ongoing turn's thinking where the request sends no edit (the docs' table).
_ONGOING_TURN_ONLY = re.compile(
    r"claude-(?:3-7-sonnet|sonnet-4-5|haiku-4-5|opus-4-1|sonnet-4(?:-\d{8})?$|opus-4(?:-\d{8})?$)"
)
_THINKING = ("thinking", "redacted_thinking")
PLACEHOLDER = "[Old tool result content cleared]"
CLEARED_INPUT: dict[str, Any] = {}


def _blocks(content: Any) -> list[dict[str, Any]]:
    return [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []


def clear_tool_uses(body: dict[str, Any], count: Callable[[Any], int]) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """``body`` as the model sees it after its ``clear_tool_uses_20250919`` edit, and the ``applied_edits`` entry
    to report (None where the request carries no such edit; ``cleared_tool_uses`` 0 where it did not apply).
    ``count`` is the fake's count of a request's tokens."""
    edits = (body.get("context_management") or {}).get("edits") or []
    edit = next((e for e in edits if isinstance(e, dict) and e.get("type") == CLEAR_TOOL_USES), None)
    if edit is None:
        return body, None
    excluded = set(edit.get("exclude_tools") or [])
    trigger = int((edit.get("trigger") or {}).get("value") or 0)
    keep = int((edit.get("keep") or {}).get("value") or 0)
    at_least = int((edit.get("clear_at_least") or {}).get("value") or 0)
    messages = body.get("messages") or []
    names = {
        b.get("id"): b.get("name")
        for m in messages
        if m.get("role") == "assistant"
        for b in _blocks(m.get("content"))
        if b.get("type") == "tool_use"
    }
    uses = [call for call, name in names.items() if name not in excluded]
    nothing = {"type": CLEAR_TOOL_USES, "cleared_tool_uses": 0, "cleared_input_tokens": 0}
    if len(names) < trigger or len(uses) <= keep:
        return body, nothing
    cleared = set(uses[: len(uses) - keep])
    inputs = edit.get("clear_tool_inputs") or False
    edited = copy.deepcopy(body)
    for message in edited.get("messages") or []:
        for block in _blocks(message.get("content")):
            if block.get("type") == "tool_result" and block.get("tool_use_id") in cleared:
                block["content"] = PLACEHOLDER
            elif (
                block.get("type") == "tool_use"
                and block.get("id") in cleared
                and (inputs is True or (isinstance(inputs, list) and block.get("name") in inputs))
            ):
                block["input"] = dict(CLEARED_INPUT)
    sizes = [count([b.get("system"), b.get("messages"), b.get("tools")]) for b in (body, edited)]
    if sizes[0] - sizes[1] < at_least:
        return body, nothing
    applied = {"type": CLEAR_TOOL_USES, "cleared_tool_uses": len(cleared), "cleared_input_tokens": sizes[0] - sizes[1]}
    return edited, applied


def _turn_starts(messages: list[dict[str, Any]]) -> list[int]:
    """The indices of the user messages that open a turn: a prompt, no tool result (a result's message may carry
    the client's reminders as text beside it: the tool loop goes on)."""
    return [
        n
        for n, m in enumerate(messages)
        if m.get("role") == "user" and not any(b.get("type") == "tool_result" for b in _blocks(m.get("content")))
    ]


def clear_thinking(body: dict[str, Any]) -> dict[str, Any]:
    """``body`` as the model sees it after the API's rule for earlier turns' thinking: the thinking blocks of the
    turns before the last ``keep`` dropped (one turn, the ongoing one, where the model's default is so and the
    request sends no ``clear_thinking_20251015``; every turn for ``keep: "all"`` or a model that keeps all)."""
    edits = (body.get("context_management") or {}).get("edits") or []
    edit = next((e for e in edits if isinstance(e, dict) and e.get("type") == CLEAR_THINKING), None)
    if edit is None:
        if not _ONGOING_TURN_ONLY.match(str(body.get("model") or "")):
            return body
        keep = 1
    elif edit.get("keep") == "all":
        return body
    else:
        keep = int((edit.get("keep") or {}).get("value") or 1)
    messages = body.get("messages") or []
    starts = _turn_starts(messages)
    if len(starts) <= keep:
        return body
    cut = starts[-keep]  # the first message of the oldest turn kept
    edited = {**body, "messages": [dict(m) for m in messages]}
    for message in edited["messages"][:cut]:
        if message.get("role") == "assistant" and isinstance(message.get("content"), list):
            message["content"] = [
                b for b in message["content"] if not (isinstance(b, dict) and b.get("type") in _THINKING)
            ]
    return edited
