"""One measure of what the model sees: the messages (and tokens) it receives when the producer's
client resumes a file.

``compact``'s after-figure, ``report A B``, ``review``, ``eval`` and the live context ``sessions``
shows all count this, so a figure means the same wherever it is printed:

- a file is measured as it is *written*: ``compact`` measures its output read back from the
  bytes it writes (a summary a strategy made is a system message in memory, but Claude Code's
  writer makes it the user's ``isCompactSummary`` turn, Codex's a user message behind its
  summary prefix), so ``report IN OUT`` on that output gives the same figure;
- plus what the producer's client adds back on resume that the file does not hold: Codex
  writes its initial context (permissions, AGENTS.md, environment) again after a ``compacted``
  line that left it out (``Native.added_on_resume``). Claude Code's attachments on the chain are
  read as messages already (system reminders).

What no file holds (the harness's hidden system prompt and tool schemas) is not here: that is
calibration's ``prefix``, fitted on the usage (``calibration.py``).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from compactctl.formats.base import Transcript
from compactctl.tokens import TokenCounter
from compactctl.transcript import Message


def model_input(transcript: Transcript) -> list[Message]:
    """The messages the model receives when the producer's client resumes this transcript."""
    added = transcript.native.added_on_resume() if transcript.native is not None else ()
    if not added:
        return transcript.messages
    # The client puts them back after the system prompt, where the session began with them.
    messages = transcript.messages
    head = 0
    while head < len(messages) and messages[head].get("role") == "system":
        head += 1
    return [*messages[:head], *added, *messages[head:]]


@dataclass(frozen=True)
class ModelInputTokens:
    """Tokens of what the model receives on resume, in total and per role."""

    tokens: int
    messages: int
    tokens_by_role: dict[str, int] = field(default_factory=dict)


def model_input_tokens(transcripts: Iterable[Transcript], counter: TokenCounter) -> ModelInputTokens:
    """``model_input`` of each transcript (a file's), counted: the live context a resume sends."""
    tokens = messages = 0
    by_role: dict[str, int] = {}
    for transcript in transcripts:
        for message in model_input(transcript):
            count = counter.message(message)
            tokens += count
            messages += 1
            role = str(message.get("role"))
            by_role[role] = by_role.get(role, 0) + count
    return ModelInputTokens(tokens, messages, dict(sorted(by_role.items())))
