"""The span to summarize as plain text: what a model reads, and what chunk limits measure."""

from __future__ import annotations

from compactctl.transcript import Message, annotations_of, content_text, tool_calls_of

HARNESS_LABELS = {"harness": "harness text (not the user)", "summary": "earlier summary (not the user)"}


def render_message(message: Message, number: int | None = None) -> str:
    """One message as ``[n] role: text``, its tool calls on their own lines."""
    role = str(message.get("role"))
    if role == "tool" and message.get("tool_call_id"):
        role = f"tool result ({message.get('name') or message['tool_call_id']})"
    elif role == "user" and annotations_of(message).get("kind") in HARNESS_LABELS:
        # Text a harness injected, or the producer's own earlier summary: never shown as the user's words.
        role = HARNESS_LABELS[annotations_of(message)["kind"]]
    head = f"[{number}] {role}" if number is not None else role
    lines = [f"{head}: {content_text(message)}".rstrip()]
    for call in tool_calls_of(message):
        function = call.get("function") if isinstance(call, dict) else None
        if isinstance(function, dict):
            lines.append(f"  -> tool call {function.get('name', '')} {function.get('arguments', '')}".rstrip())
    return "\n".join(lines)


def render_messages(messages: list[Message]) -> str:
    return "\n\n".join(render_message(message, number) for number, message in enumerate(messages, 1))
