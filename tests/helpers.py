"""Small builders the tests share."""

from __future__ import annotations

from collections import deque
from typing import Any

from compactctl.summarizers import Summary, SummaryRequest
from compactctl.usage import SummarizerUsage


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


def valid_transcripts(max_rounds: int = 8):
    """A hypothesis strategy for API-valid transcripts: system, then user/assistant/tool rounds."""
    from hypothesis import strategies as st

    text = st.text(alphabet="abc \n0123456789", min_size=1, max_size=60)

    @st.composite
    def build(draw):
        messages: list[dict[str, Any]] = [{"role": "system", "content": "sys"}]
        next_id = 0
        for _ in range(draw(st.integers(0, max_rounds))):
            kind = draw(st.sampled_from(["user", "assistant", "tools", "pinned"]))
            if kind == "tools":
                count = draw(st.integers(1, 3))
                ids = [f"c{next_id + i}" for i in range(count)]
                next_id += count
                messages.append({"role": "assistant", "content": None, "tool_calls": [call(i, "f") for i in ids]})
                messages += [{"role": "tool", "tool_call_id": i, "content": draw(text)} for i in ids]
            elif kind == "pinned":
                messages.append({"role": "user", "content": draw(text), "compactctl": {"pin": True}})
            else:
                messages.append({"role": kind, "content": draw(text)})
        return messages

    return build()


def import_or_skip(module: str, extra: str):
    """A test extra's module: skipped where it is not installed, a failure in CI (CI=true), which installs it."""
    import importlib
    import os

    import pytest

    try:
        return importlib.import_module(module)
    except ImportError as error:
        message = f"{module} is not installed ({extra}): {error}"
        if os.environ.get("CI") == "true":
            pytest.fail(message, pytrace=False)
        pytest.skip(message, allow_module_level=True)
