"""Claude Code's own summarizing call of a compaction that no usage records (no ``cost-state``), estimated.

What the request holds differs by release, measured on the real clients against the loopback fake (the served
usage beside the fixtures): 2.1.332 sends the session's system prompt and tools with the history (1,612 tokens over
``preTokens`` on a 179,521-token auto-compaction, 1,608 on a 12,404-token ``/compact``); 2.0.76 sends the history
alone, without the ~17.8k tokens of the session's system prompt and tools (tests/recorded/data/
claude-code-2.0.76-compacted-subagent: ``preTokens`` 19,229, the summarizing request 3,289 input tokens), and so do
2.0.30, 2.1.9, 2.1.50 and 2.1.83 (``claude-code-<release>-compacted-subagent``: 3,264, 3,290, 3,427 and 3,407 served).
"""

from __future__ import annotations

import re

from compactctl import lazyre
from compactctl.recorded import ApiUsage, RecordedCompaction, RecordedContext
from compactctl.recorded.claude_code_thinking import released_in

# What Claude Code's summarizing request adds to the history it summarizes (its instructions):
# measured on 2.1.332 against the loopback fake, where cost-state holds the call: 1,612 tokens over
# preTokens on a 179,521-token auto-compaction (1,608 on a 12,404-token /compact).
SUMMARY_REQUEST_TOKENS = 1_612
# The releases whose summarizing request sends the history without the session's system prompt and tools
# (measured on 2.0.30, 2.0.76, 2.1.9, 2.1.50 and 2.1.83; 2.1.332 sends them). 1.0.x and 2.1.84-2.1.331 are not
# measured: read as 2.1.332's.
HISTORY_ALONE = ((2, 0, 0), (2, 1, 83))
# What their summarizing request adds to the history: the served input less the history without the prefix, measured
# on those five (1,848, 1,862, 1,998, 2,108 and 2,081 tokens): the median.
HISTORY_ALONE_REQUEST_TOKENS = 1_998
# The client's own words around the summary the model wrote (1.0.x and 2.1's openings, the reminder 2.1
# adds of the tools used, and their closing instructions): in the summary message, not in the output.
_SUMMARY_WRAPPER = lazyre.compile(
    r"\AThis session is being continued from a previous conversation[^\n]*\n+"
    r"(?:<system-reminder>.*?</system-reminder>\n)?"
    r"|\n+(?:If you need specific details from before compaction|Please continue the conversation from where"
    r"|Continue the conversation from where).*\Z",
    re.DOTALL,
)


def compaction_estimate(
    compaction: RecordedCompaction, context: RecordedContext, version: object = None
) -> ApiUsage | None:
    """The producer's summarizing call of a compaction no usage records (no ``cost-state``), estimated:
    the history it summarized (``preTokens``, else the last call's input and output), read from the
    cache as far as the last call left it there (what it read and wrote: nothing where the provider
    caches nothing), plus its instructions; the summary it wrote as output, without the client's words
    around it. Measured on 2.1.332 against the fake, the cost-state of which holds the call: 14,016
    input tokens estimated for 14,012. Claude Code ``version`` 2.0.0-2.1.83 (``HISTORY_ALONE``) sends the history
    without the session's hidden prefix (system prompt, tools): that prefix, the first call's input less the
    messages it sent, is left out, and nothing is read from the cache (the request opens otherwise than the
    session's): on 2.0.76 3,439 input tokens estimated for 3,289 served (20,841 with the prefix); on 2.1.9, 2.1.50
    and 2.1.83 3,290, 3,317 and 3,324 for 3,290, 3,427 and 3,407 (21,349, 22,056 and 27,447 read as 2.1.332's)."""
    from compactctl.tokens import counter_for

    last = next((c.usage for c in reversed(context.calls[: compaction.before_call]) if c.usage is not None), None)
    if last is None:
        return None
    history = compaction.pre_tokens or last.input_tokens + last.output_tokens
    summary = next((m for m in compaction.replacement if m.get("role") == "user"), None)
    text = _SUMMARY_WRAPPER.sub("", str(summary.get("content") or "")) if summary is not None else ""
    output = counter_for()(text.strip()) if text.strip() else 0
    if released_in(version, HISTORY_ALONE):
        first = next((c for c in context.calls if c.usage is not None), None)
        if first is not None and first.usage is not None:
            sent = counter_for().messages(context.messages[: first.position])
            prefix = max(0, first.usage.input_tokens - sent)
            return ApiUsage(max(0, history - prefix) + HISTORY_ALONE_REQUEST_TOKENS, 0, output_tokens=output)
    cached = min(last.cached_tokens + last.cache_write_tokens, history)
    return ApiUsage(history + SUMMARY_REQUEST_TOKENS, cached, output_tokens=output)
