"""Which Claude Code requests asked the API to keep every earlier turn's thinking (``clear_thinking_20251015``
with ``keep: "all"``): on those the models whose API otherwise drops it at a new prompt (``strips_thinking``) were
sent it whole.

Found by reading the client each npm release of ``@anthropic-ai/claude-code`` ships (``cli.js`` up to 2.1.112, the
``strings`` of the native ``claude`` binary of ``@anthropic-ai/claude-code-linux-x64`` after), bisected between
2.0.24 and 2.1.332, and the first sending release and the one before it run against the loopback fake
(tests/fakes/record_thinking.py, the request bodies in its fixtures' ``.requests.json``):

- up to 2.0.35: no such edit.
- 2.0.36 to 2.1.83: behind a flag the server sets per user (2.0.x's dynamic config ``preserve_thinking``,
  2.1.x's gate ``tengu_marble_anvil``, both off by default): the file does not say whether it was on, so these
  are read as not sent (2.1.83 against the fake sends no ``context_management``) unless the usage says
  otherwise: on the models whose API drops earlier turns' thinking, a call that sent it back is larger by it at
  each new prompt, which ``calibration.read_thinking`` tells from the usage (``flag_unknown``).
- 2.1.84, 2.1.85 and 2.1.101 on (2.1.332's ``MHn``): every request with thinking on.
- 2.1.86 to 2.1.100: not where the ``redact-thinking-2026-02-12`` beta goes out, which it does in the terminal
  interface (``entrypoint`` "cli") unless ``showThinkingSummaries`` is set; ``keep`` one turn instead of "all"
  once an hour passed since the process's last response (not modelled: ``-p`` runs are one process a prompt).

Each release sends it only with the ``context-management-2025-06-27`` beta, which goes to the first-party API and
Foundry (not Bedrock, not Vertex) unless ``CLAUDE_CODE_DISABLE_EXPERIMENTAL_BETAS`` is set, and only where
thinking is on (not ``CLAUDE_CODE_DISABLE_THINKING``); a response without thinking has nothing to keep, and the
environment a session ran in is not logged.
"""

from __future__ import annotations

from compactctl import lazyre
from compactctl.tokens import served_by

_FIRST = (2, 1, 84)  # the first release that sends it without a flag
_FLAGGED = (2, 0, 36)  # the first release that sends it behind the flag
_REDACTED = ((2, 1, 86), (2, 1, 100))  # not with the redact-thinking beta (the terminal interface's)
_VERSION = lazyre.compile(r"(\d+)\.(\d+)\.(\d+)")


def release(version: object) -> tuple[int, int, int] | None:
    """A record's ``version`` ("2.1.83") as numbers, or None where it names none."""
    found = _VERSION.match(version) if isinstance(version, str) else None
    return (int(found[1]), int(found[2]), int(found[3])) if found else None


def released_in(version: object, span: tuple[tuple[int, int, int], tuple[int, int, int]]) -> bool:
    """Whether Claude Code ``version`` is one of ``span``'s releases (first and last included)."""
    found = release(version)
    return found is not None and span[0] <= found <= span[1]


def keeps_thinking(version: object, entrypoint: object, model: str | None) -> bool:
    """Whether Claude Code ``version`` (a record's ``version``), run as ``entrypoint`` (its ``entrypoint``:
    "cli" the terminal interface, "sdk-cli" ``-p``), sent ``clear_thinking_20251015`` ``keep: "all"`` with
    a request to ``model`` as the response names it (a Bedrock or Vertex id: the beta is not sent there)."""
    found = release(version)
    if found is None or found < _FIRST or served_by(model) is not None:
        return False
    return not (released_in(version, _REDACTED) and entrypoint in ("cli", None))


def flag_unknown(version: object, model: str | None) -> bool:
    """Whether Claude Code ``version`` sent ``keep: "all"`` to ``model`` only behind the server's per-user flag,
    which no record says: the releases from 2.0.36 to 2.1.83, to the first-party API."""
    found = release(version)
    return found is not None and _FLAGGED <= found < _FIRST and served_by(model) is None
