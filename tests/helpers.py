"""Small builders the tests share."""

from __future__ import annotations

from collections import deque
from typing import Any

from compactctl.report import SummarizerUsage
from compactctl.summarizers import Summary, SummaryRequest


def call(call_id: str, name: str, arguments: str = "{}") -> dict[str, Any]:
    """One entry of an assistant message's ``tool_calls``."""
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


class ScriptedSummarizer:
    """A fake summarizer: given its replies, it records its requests; a reply left unused fails the test.

    Use through the ``scripted`` fixture, which checks at teardown that every reply was used.
    """

    def __init__(self) -> None:
        self.replies: deque[Summary] = deque()
        self.requests: list[SummaryRequest] = []

    def enqueue(
        self, *texts: str, prompt_tokens: int = 10, completion_tokens: int = 5, truncated: bool = False
    ) -> None:
        for text in texts:
            usage = SummarizerUsage(1, prompt_tokens, completion_tokens, int(truncated))
            self.replies.append(Summary(text, usage, truncated))

    def summarize(self, request: SummaryRequest) -> Summary:
        self.requests.append(request)
        if not self.replies:
            raise AssertionError(f"unexpected summarizer call #{len(self.requests)} ({request.strategy})")
        return self.replies.popleft()
