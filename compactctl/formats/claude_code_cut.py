"""What Claude Code sends on resume in place of the old tool results its ``tool_results_cut`` records name.

The reader's side of ``recorded.claude_code_cleared`` (which says what each client version writes): a Claude
Code file's ``model_input`` (``ClaudeCodeNative.resumed``) needs only these, so measuring a file does not load
the recorded-usage package (its classes cost a compact run of one small session some 3 ms).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from compactctl.transcript import Message

STAND_IN = "[Old tool result content cleared]"  # the bundle's ``bln``: its cut's, and its microcompact's


@dataclass(frozen=True)
class Cut:
    """Results the client sends as ``stand_in`` from message ``position`` of the context on."""

    position: int
    call_ids: tuple[str, ...]
    stand_in: str


def cut_of(value: dict[str, Any], position: int) -> Cut | None:
    """A ``tool_results_cut`` attachment's or a ``microcompact_boundary``'s cut; None for any other record."""
    attachment = value.get("attachment") if value.get("type") == "attachment" else None
    if isinstance(attachment, dict) and attachment.get("type") == "tool_results_cut":
        ids, stand_in = attachment.get("callIds"), attachment.get("standIn")
        # As the client reads its own records (``Vco``): a stand-in of 1-200 characters.
        if isinstance(ids, list) and isinstance(stand_in, str) and 0 < len(stand_in) <= 200:
            return Cut(position, tuple(i for i in ids if isinstance(i, str)), stand_in)
        return None
    if value.get("type") == "system" and value.get("subtype") == "microcompact_boundary":
        metadata = value.get("microcompactMetadata")
        ids = metadata.get("compactedToolIds") if isinstance(metadata, dict) else None
        if isinstance(ids, list):
            return Cut(position, tuple(i for i in ids if isinstance(i, str)), STAND_IN)
    return None


def stood_in(message: Message, stand_in: str, is_error: bool) -> Message | None:
    """A tool result as the client sends it cut (``Yco``): the stand-in where the result is longer; an error
    result, and one no longer than its stand-in, as it is (None)."""
    if is_error:
        return None
    content = message.get("content")
    if isinstance(content, list):
        if any(isinstance(p, dict) and p.get("type") == "image_url" for p in content):
            return {**message, "content": stand_in}
        text = "".join(str(p.get("text") or "") if isinstance(p, dict) else str(p) for p in content)
    else:
        text = str(content or "")
    return {**message, "content": stand_in} if len(text) > len(stand_in) else None


def resumed_cut(messages: list[Message], values: Sequence[Any]) -> list[Message]:
    """``messages`` as Claude Code sends them on resume: the results its ``tool_results_cut`` records name as their
    stand-in (2.1.332 reads its cuts from the history it loads, ``Vco``, and applies them to every request). A
    microcompact boundary's results are sent whole: that older client cut them in memory only."""
    cut: dict[str, str] = {}
    errors: set[str] = set()
    for value in values:
        if not isinstance(value, dict):
            continue
        found = cut_of(value, 0) if value.get("type") == "attachment" else None
        for call_id in found.call_ids if found is not None else ():
            cut.setdefault(call_id, found.stand_in)  # type: ignore[union-attr]
        message = value.get("message") if value.get("type") == "user" else None
        blocks = message.get("content") or [] if isinstance(message, dict) else []
        if isinstance(blocks, str):  # a prompt's text: no result in it (its characters were each looked at)
            continue
        for block in blocks:
            if isinstance(block, dict) and block.get("type") == "tool_result" and block.get("is_error") is True:
                errors.add(str(block.get("tool_use_id")))
    if not cut:
        return messages
    sent = []
    for message in messages:
        call_id = str(message.get("tool_call_id")) if message.get("role") == "tool" else ""
        replaced = stood_in(message, cut[call_id], call_id in errors) if call_id in cut else None
        sent.append(message if replaced is None else replaced)
    return sent
