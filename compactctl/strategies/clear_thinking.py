"""``clear-thinking``: reasoning blocks leave all but the last N assistant turns that carry them.

A provider re-sends (and bills) every earlier call's thinking on every later call unless
the client drops it; Anthropic's ``clear_thinking`` edit does the same as this step.
Whole blocks only: a thinking block, its signature, a redacted block or a reasoning item
goes entirely or stays exactly as it was (a changed block would fail its signature).

Never cleared: the assistant messages of the turn in progress, when the transcript ends
inside a tool loop (the last assistant message has a tool use whose result is pending or
is the last thing in the transcript): the API requires that turn's thinking passed back
unmodified. Nor a message that would be left with no content and no call, nor a pinned one.

Idempotent: clearing changes no message's role or calls, so the same turns are the last ones.
"""

from __future__ import annotations

from compactctl.strategies.base import Fate, StepContext, StepResult, unchanged
from compactctl.strategies.settings import ClearThinkingOptions
from compactctl.transcript import Message, is_observation, is_pinned, is_thinking, tool_calls_of


def clear_thinking(messages: list[Message], options: ClearThinkingOptions, context: StepContext) -> StepResult:
    carrying = [i for i, message in enumerate(messages) if message.get("role") == "assistant" and _thinking(message)]
    if not carrying:
        return unchanged(messages)
    keep = set(carrying[len(carrying) - options.keep_thinking_turns :]) if options.keep_thinking_turns > 0 else set()
    keep |= set(turn_in_progress(messages))
    out = list(messages)
    fates: dict[int, Fate] = {}
    for i in carrying:
        message = messages[i]
        if i in keep or is_pinned(message):
            continue
        content = [part for part in message["content"] if not is_thinking(part)]
        if not content and not tool_calls_of(message):
            continue  # nothing else to say: an empty assistant message is rejected
        cleared = len(message["content"]) - len(content)
        out[i] = {**message, "content": content}
        fates[i] = Fate("elided", f"{cleared} thinking block(s) cleared (not among the last turns)")
    return StepResult(out, list(range(len(messages))), fates) if fates else unchanged(messages)


def _thinking(message: Message) -> bool:
    content = message.get("content")
    return isinstance(content, list) and any(is_thinking(part) for part in content)


def turn_in_progress(messages: list[Message]) -> list[int]:
    """The assistant messages of a tool loop the transcript ends in (empty when it ends otherwise).

    The loop is everything after the last message a person wrote: when the last assistant
    message there made tool calls and nothing but their results follows, that turn is open.
    """
    last_assistant = next((i for i in range(len(messages) - 1, -1, -1) if messages[i].get("role") == "assistant"), None)
    if last_assistant is None or not tool_calls_of(messages[last_assistant]):
        return []
    if any(m.get("role") not in ("tool",) for m in messages[last_assistant + 1 :]):
        return []
    start = last_assistant
    while start > 0:
        previous = messages[start - 1]
        role = previous.get("role")
        if role == "tool" or role == "assistant" or (role == "user" and is_observation(previous)):
            start -= 1
            continue
        break
    return [i for i in range(start, last_assistant + 1) if messages[i].get("role") == "assistant"]
