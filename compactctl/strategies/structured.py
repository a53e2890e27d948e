"""``structured``, the agent strategy and the default: system prompt kept, the last turns kept,
long tool outputs trimmed first, the rest summarized into Goal, Progress, Facts, Decisions,
Next steps, with the user's constraints quoted verbatim.

A turn is a user message and everything up to the next one. An agent's single turn may run
to hundreds of messages, so the kept tail is also capped at ``--keep-recent`` messages (cut
between tool units). ``--threshold`` 0 (the default) compacts whenever there is something to
summarize; above 0, trimming alone may be enough and nothing is summarized.

The summarizer reads the older messages as they were, not trimmed: the facts the next turn
needs (paths, ids, error lines) are often in the middle of a long tool output.
"""

from __future__ import annotations

from dataclasses import dataclass

from compactctl.facts import FactMatcher, declared_facts, keepers
from compactctl.settings import Options, setting
from compactctl.strategies.base import StepContext, StepResult
from compactctl.strategies.settings import (
    DEFAULT_INPUT_MAX_TOKENS,
    HEAD_LINES,
    KEEP_RECENT,
    SUMMARY_INPUT_MAX_TOKENS,
    SUMMARY_MAX_TOKENS,
    SUMMARY_PANEL,
    SUMMARY_ROLE,
    TAIL_LINES,
    THRESHOLD,
    TOOL_MAX_TOKENS,
)
from compactctl.strategies.summarizing import (
    noted_if_over,
    summarize_units,
    tail_start_for,
)
from compactctl.strategies.trim_tools import TrimOptions, trim_tool_outputs
from compactctl.transcript import Message, tool_units


@dataclass(frozen=True)
class StructuredOptions(Options):
    """structured's settings."""

    threshold: int = THRESHOLD(0)
    keep_turns: int = setting(
        2, help="structured: last turns kept (a user message and what follows).", min=0, panel=SUMMARY_PANEL
    )
    keep_recent: int = KEEP_RECENT(10)
    tool_max_tokens: int = TOOL_MAX_TOKENS(1000)
    head_lines: int = HEAD_LINES(20)
    tail_lines: int = TAIL_LINES(20)
    # The summary's cap; within it the summary takes summary_ratio of the span it replaces (at least
    # MIN_SUMMARY_TOKENS, plus the user's own words): 4,000 is 2 % of a 200 K-token window and above
    # what Claude Code's own summaries reach; 8 % is where the producers' summaries sit (3-13 %).
    summary_max_tokens: int = SUMMARY_MAX_TOKENS(4000)
    summary_ratio: float = setting(
        0.08,
        help="structured: the summary's share of the span it replaces, up to --summary-max-tokens (0: fixed).",
        min=0,
        panel=SUMMARY_PANEL,
    )
    summary_input_max_tokens: int = SUMMARY_INPUT_MAX_TOKENS(DEFAULT_INPUT_MAX_TOKENS)
    summary_role: str = SUMMARY_ROLE("system")
    open_on_user: bool = False  # set by the caller for Anthropic output (strategies.base.keep_opening_request)


def turns_start(messages: list[Message], keep_turns: int, keep_recent: int) -> int:
    """Where the kept tail starts: the last ``keep_turns`` turns, at most ``keep_recent`` messages."""
    if keep_turns <= 0:
        return len(messages)
    start = _last_users_start(messages, keep_turns)
    if keep_recent > 0 and len(messages) - start > keep_recent:
        start = max(start, tail_start_for(messages, keep_recent))
    return start


def _last_users_start(messages: list[Message], count: int) -> int:
    """Where the ``count``-th user message from the end is, else 0: read from the end, as a replay
    asks this of a whole context at every compaction and the kept turns are near its end."""
    seen = 0
    for i in range(len(messages) - 1, -1, -1):
        if messages[i].get("role") == "user":
            seen += 1
            if seen == count:
                return i
    return 0


def fact_copies_outside(messages: list[Message], tail_start: int) -> list[int]:
    """The messages before ``tail_start`` holding the one copy of each fact the tail does not hold."""
    matcher = FactMatcher(declared_facts(messages))
    if not matcher:
        return []
    return keepers(matcher.holders(messages), lambda i: i >= tail_start, matcher.declarers(messages))


def structured(messages: list[Message], options: StructuredOptions, context: StepContext) -> StepResult:
    counter = context.counter
    units = tool_units(messages)
    tail_start = turns_start(messages, options.keep_turns, options.keep_recent)
    # The output the agent is about to answer stays whole, and so does the copy of a fact the
    # kept tail lacks: trimmed first, it would no longer hold the fact when the summarizing
    # step looks for the copy to keep verbatim.
    spared = {*(units[-1] if units else ()), *fact_copies_outside(messages, tail_start)}
    trim = TrimOptions(options.tool_max_tokens, options.head_lines, options.tail_lines)
    reason = "structured: tool output over {tool_max_tokens} tokens trimmed"
    trimming = trim_tool_outputs(messages, trim, counter, spared=spared, reason=reason)
    trimmed, fates = trimming.messages, trimming.fates
    if options.threshold > 0 and counter.messages(trimmed) <= options.threshold:
        return trimming
    result, _ = summarize_units(
        trimmed,
        tail_start,
        strategy="structured",
        max_tokens=options.summary_max_tokens,
        input_max_tokens=options.summary_input_max_tokens,
        role=options.summary_role,
        context=context,
        open_on_user=options.open_on_user,
        shown=lambda index, _: messages[index],
        ratio=options.summary_ratio,
    )
    result = StepResult(result.messages, result.origins, {**fates, **result.fates}, result.notes, result.usage)
    # Threshold 0 means "always compact": nothing to be over.
    return noted_if_over(result, "structured", options.threshold, context) if options.threshold > 0 else result
