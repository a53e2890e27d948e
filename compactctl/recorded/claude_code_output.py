"""Claude Code releases that log a response's usage as its stream starts: their output counts, estimated.

A response's records repeat its usage, and most releases write them after the stream ends (the final
``output_tokens``, a ``stop_reason``). 2.1.9 and 2.1.50 write them at the stream's start: every record of a response
has ``stop_reason`` null and ``output_tokens`` 1, whatever the model wrote (measured with the real clients against
the loopback fake, tests/recorded/data/claude-code-<release>-compacted-subagent: 10 responses logged 10 output
tokens for the 334 served, on both); 2.0.30, 2.0.76 and 2.1.83 log the final count. A real 2.1.22 session logs 1, 2,
25, ... (FORMATS.md), a real 2.1.17 one 0 on every response. A bill read from such a log leaves out nearly all its
output; where a response of such a release names no stop reason, its output is what it said, counted.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from compactctl import jsonbytes
from compactctl.recorded.claude_code_thinking import released_in
from compactctl.recorded.iterations import Billed

# The releases that log the usage at the stream's start: measured on 2.1.9 and 2.1.50 (and real 2.1.17 and 2.1.22
# sessions); 2.0.76 and 2.1.83 log the final count. The releases between are read as the nearest measured.
STREAM_START = ((2, 1, 0), (2, 1, 82))


def logged_at_stream_start(messages: list[Any], version: object) -> bool:
    """Whether a response's records (their ``message``s), written by Claude Code ``version``, hold the usage of its
    stream's start: a release of ``STREAM_START`` and no record naming a stop reason."""
    if not released_in(version, STREAM_START):
        return False
    return not any(isinstance(m, dict) and m.get("stop_reason") for m in messages)


def with_output_counted(bill: Billed, messages: list[Any], version: object) -> Billed:
    """``bill`` (a response's, its records' ``messages``) with its output the tokens the response holds where the log
    counted fewer at the stream's start (``logged_at_stream_start``), and how many were added (``output_counted``:
    thinking and tool calls counted as their text)."""
    from compactctl.formats.anthropic import assistant_message
    from compactctl.tokens import counter_for

    if bill.usage is None or not logged_at_stream_start(messages, version):
        return bill
    blocks, seen = [], set()
    for message in messages:
        content = message.get("content") if isinstance(message, dict) else None
        for block in content if isinstance(content, list) else []:
            key = jsonbytes.dumps(block, sort_keys=True)
            if key not in seen:  # a rewritten copy of a record repeats its block
                seen.add(key)
                blocks.append(block)
    counted = counter_for().message(assistant_message(blocks))
    if counted <= bill.usage.output_tokens:
        return bill
    usage = dataclasses.replace(bill.usage, output_tokens=counted)
    return dataclasses.replace(bill, usage=usage, output_counted=counted - bill.usage.output_tokens)


def stream_start_note(responses: int, added: int) -> str:
    """What replay says of the responses whose output was counted (``with_output_counted``)."""
    return (
        f"{responses} response(s) logged their usage as the stream started (Claude Code 2.1.x before 2.1.83: no stop "
        f"reason, an output count of about 1): their output is counted from what they said, {added:,} tokens more "
        "than the log's"
    )


# The releases that ask their small model about each Bash command and write no record of it, where no cost-state
# bills it: measured on 2.0.30, 2.0.76, 2.1.9 and 2.1.50 (1.0.x asks it too: tests/fakes/anthropic.py answers it);
# 2.1.83 asks nothing.
BASH_QUERIES = ((1, 0, 0), (2, 1, 82))


def bash_queries_note(values: list[dict[str, Any]], version: object) -> tuple[str, ...]:
    """What replay says of the small model's requests about the Bash commands a file's responses ran (``values``: its
    records), billed and in no record: the files each command's output shows, and a new command's prefix (its risk,
    for the permission check). Measured against the loopback fake, 3 commands: 3 to 5 such calls, 1,900 to 3,100
    input tokens on claude-haiku-4-5, 0.5 to 0.9 % of those sessions' bills."""
    if not released_in(version, BASH_QUERIES):
        return ()
    commands = set()
    for value in values:
        message = value.get("message")
        content = message.get("content") if isinstance(message, dict) and message.get("role") == "assistant" else None
        for block in content if isinstance(content, list) else []:
            if isinstance(block, dict) and block.get("type") == "tool_use" and block.get("name") == "Bash":
                commands.add(str(block.get("id")))
    if not commands:
        return ()
    return (
        f"{len(commands)} Bash command(s) ran: Claude Code before 2.1.83 asks its small model after each which files "
        "its output shows (and, of a new command, its prefix); those requests write no record: billed, in no row",
    )
