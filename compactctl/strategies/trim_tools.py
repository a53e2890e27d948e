"""``trim-tools``: long tool outputs keep their first and last lines, with a marker in between."""

from __future__ import annotations

from collections.abc import Container
from dataclasses import dataclass

from compactctl.settings import Options
from compactctl.strategies.base import Fate, StepContext, StepResult
from compactctl.strategies.settings import HEAD_LINES, TAIL_LINES, TOOL_MAX_TOKENS
from compactctl.tokens import TokenCounter
from compactctl.transcript import Message, content_text, is_observation, is_protected, with_text


@dataclass(frozen=True)
class TrimOptions(Options):
    """trim-tools' settings."""

    tool_max_tokens: int = TOOL_MAX_TOKENS(1000)
    head_lines: int = HEAD_LINES(20)
    tail_lines: int = TAIL_LINES(20)


def trim_text(text: str, options: TrimOptions, counter: TokenCounter) -> str | None:
    """The trimmed text, or None when it is short enough or trimming would not shrink it."""
    tokens = counter(text)
    if tokens <= options.tool_max_tokens:
        return None
    lines = text.split("\n")
    if len(lines) > options.head_lines + options.tail_lines + 1:
        head = lines[: options.head_lines]
        tail = lines[len(lines) - options.tail_lines :] if options.tail_lines else []
        elided = lines[options.head_lines : len(lines) - options.tail_lines]
        unit = "lines"
        start, end = sum(len(line) + 1 for line in head), len(text) - sum(len(line) + 1 for line in tail)
        # The elided lines' count read off the whole's, counted already (``TokenCounter.piece``); a stand-in
        # counter (replay's calibrated one) counts them.
        if isinstance(counter, TokenCounter):
            elided_tokens = counter.piece(text, tokens, start, end)
        else:
            elided_tokens = counter(text[start:end])
    else:
        # Few but very long lines: cut by characters, keeping about the budget's worth.
        keep_chars = max(1, options.tool_max_tokens * 2)  # ~4 chars a token, half at each end
        if len(text) <= 2 * keep_chars:
            return None
        head, tail, elided = [text[:keep_chars]], [text[-keep_chars:]], [text[keep_chars:-keep_chars]]
        unit = "characters"
        elided_tokens = counter(elided[0])
    count = len(elided) if unit == "lines" else len(elided[0])
    marker = f"[... compactctl elided {count} {unit} ({elided_tokens} tokens) ...]"
    trimmed = "\n".join([*head, marker, *tail])
    return trimmed if counter(trimmed) < tokens else None


def trim_tools(messages: list[Message], options: TrimOptions, context: StepContext) -> StepResult:
    return trim_tool_outputs(messages, options, context.counter)


def trim_tool_outputs(
    messages: list[Message],
    options: TrimOptions,
    counter: TokenCounter,
    *,
    spared: Container[int] = (),
    reason: str = "tool output over {tool_max_tokens} tokens trimmed",
) -> StepResult:
    """Every unprotected tool output not ``spared`` (by index) trimmed; ``reason`` is each one's fate."""
    out: list[Message] = []
    fates: dict[int, Fate] = {}
    for index, message in enumerate(messages):
        trimmed = None
        # Observations a text-mode agent got as user messages are tool output too.
        is_output = message.get("role") == "tool" or is_observation(message)
        if is_output and not is_protected(message) and index not in spared:
            trimmed = trim_text(content_text(message), options, counter)
        if trimmed is None:
            out.append(message)
            continue
        out.append({**message, "content": with_text(message["content"], trimmed)})
        fates[index] = Fate("elided", reason.format(tool_max_tokens=options.tool_max_tokens))
    return StepResult(out, list(range(len(messages))), fates)
