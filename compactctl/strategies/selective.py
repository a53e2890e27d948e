"""``selective``: like ``summary``, but older messages holding code, JSON or other structured
data, or matching ``--keep-pattern``, stay verbatim in place; only conversation is summarized."""

from __future__ import annotations

import json
import re

from compactctl import lazyre
from compactctl.errors import InputError
from compactctl.strategies.base import StepContext, StepResult, unchanged
from compactctl.strategies.settings import (
    SelectiveOptions,
)
from compactctl.strategies.summarizing import (
    noted_if_over,
    summarize_units,
    tail_start_for,
)
from compactctl.transcript import Message, content_text, message_text

_TABLE_ROW = lazyre.compile(r"^\s*\|.*\|\s*$")
_MARKUP = lazyre.compile(r"<([A-Za-z][\w:-]*)[^>]*>.*?</\1>", re.S)
_KEY_VALUE = lazyre.compile(r"^\s*[\w.-]+\s*[:=]\s*\S", re.M)


def is_structured(text: str) -> bool:
    """Code fences, JSON, tables, markup, indented code or key/value blocks: data, not conversation."""
    stripped = text.strip()
    if "```" in text or "~~~" in text:
        return True
    if stripped[:1] in ("{", "[") and stripped[-1:] in ("}", "]"):
        try:
            json.loads(stripped)
            return True
        except ValueError:
            pass
    lines = text.splitlines()
    if sum(bool(_TABLE_ROW.match(line)) for line in lines) >= 2:
        return True
    if sum(line.startswith(("    ", "\t")) and bool(line.strip()) for line in lines) >= 3:
        return True
    if len(_KEY_VALUE.findall(text)) >= 3 and len(_KEY_VALUE.findall(text)) * 2 >= len(
        [ln for ln in lines if ln.strip()]
    ):
        return True
    return bool(_MARKUP.search(text)) and len(lines) >= 3


def compile_patterns(patterns: tuple[str, ...] | list[str]) -> list[re.Pattern[str]]:
    compiled = []
    for pattern in patterns:
        try:
            compiled.append(re.compile(pattern))
        except re.error as error:
            raise InputError(f"bad `keep_pattern` {pattern!r}: {error}") from None
    return compiled


def selective(messages: list[Message], options: SelectiveOptions, context: StepContext) -> StepResult:
    patterns = compile_patterns(options.keep_pattern)
    if context.counter.messages(messages) <= options.threshold:
        return unchanged(messages)

    def keep_in_place(messages: list[Message], unit: range) -> bool:
        return any(
            is_structured(content_text(messages[i])) or any(p.search(message_text(messages[i])) for p in patterns)
            for i in unit
        )

    result, _ = summarize_units(
        messages,
        tail_start_for(messages, options.keep_recent),
        strategy="selective",
        max_tokens=options.summary_max_tokens,
        input_max_tokens=options.summary_input_max_tokens,
        role=options.summary_role,
        context=context,
        open_on_user=options.open_on_user,
        keep_in_place=keep_in_place,
    )
    return noted_if_over(result, "selective", options.threshold, context)
