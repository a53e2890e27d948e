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
  line that left it out (``Native.added_on_resume``), and an "aborted" result for a call the file
  answers nowhere before the history goes on (``Native.resumed``). Claude Code's attachments on
  the chain are read as messages already (system reminders).

What no file holds (the harness's hidden system prompt and tool schemas) is not here: that is
calibration's ``prefix``, fitted on the usage (``calibration.py``).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from compactctl.formats.base import Transcript
from compactctl.tokens import TokenCounter
from compactctl.transcript import Message
from compactctl.transcript import resumed_compaction as resumed_compaction  # one measure: replay's too

if TYPE_CHECKING:
    from compactctl.formats import Format
    from compactctl.strategies import ClientView


def model_input(transcript: Transcript) -> list[Message]:
    """The messages the model receives when the producer's client resumes this transcript."""
    return transcript.native.resumed(transcript.messages) if transcript.native is not None else transcript.messages


def client_view(read_as: Format, written_as: Format) -> ClientView:
    """How the client that resumes the output sees a compaction: the context the input's client owns
    (never folded), and a summary as the output's writer writes it."""
    from compactctl.strategies import ClientView  # the strategies, only where a compaction runs

    default = ClientView()
    return ClientView(read_as.client_context or default.owned, written_as.written_summary or default.summary)


def owned_view(read_as: Format | str) -> ClientView:
    """Replay's view of a compaction: the context the client owns, never folded and sent again on resume
    (``resumed_compaction``), and a summary as the step made it, which is what a replayed context counts."""
    from compactctl.formats import get_format
    from compactctl.strategies import ClientView

    read_as = get_format(read_as) if isinstance(read_as, str) else read_as
    return ClientView(read_as.client_context) if read_as.client_context is not None else ClientView()


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
