"""Codex's own compaction calls, which write no response item: which ``token_count`` is one's, and the estimate of
one the rollout recorded no usage for.

- **A local compaction's count.** The summarizing request streams, and its usage goes into a changed
  ``token_count`` written just before the ``compacted`` line, with no response item of its own. Releases that
  write each count before the items of the response it counts (0.45 to 0.6x: ``pair``'s "before" side) would
  give it to the next response, the first after the compaction, whose own count is then left over: measured on
  0.45.0 against the fake (tests/recorded/data/codex-0.45.0-local-compacted), the call after the compaction got
  the summary's 8,259 input tokens and its own 7,519 were billed as a response never written. Releases that write
  the count after the response have it as a second count for the call before (0.77.0, 0.100.0).
- **An unrecorded compaction's estimate** (remote: ``/responses/compact`` up to 0.13x, and the streamed request
  that ends on a ``compaction_trigger`` from 0.140 until 0.171 records its usage): the request it was.
  Releases up to ``TOOLLESS_COMPACT_LAST`` sent ``/responses/compact`` only ``{model, input, instructions}``
  (``compact_remote.rs``: ``tools: vec![]``): the last call's input held tools that request did not
  (``ToollessCompaction``).
- **What a local compaction keeps** (a ``compacted`` line with only its summary): ``rebuilt_history``.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from compactctl.formats.codex import SUMMARY_PREFIX, client_context
from compactctl.recorded import ApiUsage, Pricing, RecordedCall, integer
from compactctl.recorded.claude_code_thinking import release
from compactctl.transcript import Message, content_text

# Measured on real rollouts with usage: a reasoning item's billed tokens are about
# 0.14 per character of its encrypted content past a fixed envelope of about 870 characters.
REASONING_TOKENS_PER_ENCRYPTED_CHAR = 0.14
ENCRYPTED_ENVELOPE_CHARS = 870
# The last release whose ``/responses/compact`` request carries no tools, measured with the real clients against
# the loopback fake, their requests kept: 0.77.0, 0.100.0, 0.110.0, 0.111.0, 0.113.0 and 0.114.0 sent none; 0.115.0,
# 0.116.0 and 0.120.0 sent the 12 tools their turns had.
TOOLLESS_COMPACT_LAST = (0, 114, 0)
# Codex's own estimate of a context (``estimate_item_token_count``): a token per 4 bytes of each item serialized, an
# encrypted item as its decoded length less a fixed 650 bytes.
CODEX_BYTES_PER_TOKEN = 4
CODEX_ENCRYPTED_OVERHEAD_BYTES = 650


def encrypted_estimate(item: dict[str, Any]) -> int:
    encrypted = item.get("encrypted_content")
    if not isinstance(encrypted, str):
        return 0
    return max(0, round((len(encrypted) - ENCRYPTED_ENVELOPE_CHARS) * REASONING_TOKENS_PER_ENCRYPTED_CHAR))


def local_compaction_count(counts: list[tuple[int, ApiUsage | None]], calls: int) -> bool:
    """Whether the last changed count, read as a ``compacted`` line comes, is the compaction's summarizing call:
    no response began since it was written, and it is no response's own (written before the items, it has none
    after it; written after them, the response before already has its count)."""
    if not counts or counts[-1][1] is None or counts[-1][0] != calls:
        return False
    counted_before = counts[0][0] == 0  # as ``pair`` tells the side: the first count came before any response
    return counted_before or (len(counts) > 1 and counts[-2][0] == calls)


def compaction_estimate(payload: dict[str, Any], counts: list[tuple[int, ApiUsage | None]]) -> ApiUsage | None:
    """A remote compaction the rollout recorded no usage for: the request it was, estimated. The whole history
    went out again: the last call's input (its cache still warm, where the provider caches at all: some count
    read from it) and its output; the encrypted summary's length as output."""
    last = next((usage for _, usage in reversed(counts) if usage is not None), None)  # paired at the end
    if last is None:
        return None
    history = payload.get("replacement_history")
    items = history if isinstance(history, list) else []
    summary = sum(
        encrypted_estimate(item)
        for item in items
        if isinstance(item, dict) and item.get("type") in ("compaction", "compaction_summary")
    )
    caches = any(usage is not None and usage.cached_tokens for _, usage in counts)
    cached = last.input_tokens if caches else 0
    return ApiUsage(last.input_tokens + last.output_tokens, cached, output_tokens=summary)


def sends_no_tools(version: object) -> bool:
    """Whether Codex ``version`` (``session_meta.cli_version``) sent its remote compaction without the tools."""
    found = release(version)
    return found is not None and found <= TOOLLESS_COMPACT_LAST


def codex_opaque_estimate(item: dict[str, Any]) -> int:
    """An encrypted item's tokens (a reasoning or ``compaction`` item) as Codex estimates them
    (``estimate_item_token_count``: its decoded length less a fixed 650 bytes, a token per 4 bytes)."""
    encrypted = item.get("encrypted_content")
    if not isinstance(encrypted, str):
        return 0
    size = max(0, len(encrypted) * 3 // 4 - CODEX_ENCRYPTED_OVERHEAD_BYTES)
    return -(-size // CODEX_BYTES_PER_TOKEN)


def opaque_gap(history: list[Any]) -> int:
    """How many tokens more replay counts the encrypted items of ``history`` (a replacement) than Codex estimates
    them: replay's is measured on billed usage (``encrypted_estimate``)."""
    opaque = [i for i in history if isinstance(i, dict) and i.get("type") in ("compaction", "compaction_summary")]
    return sum(map(encrypted_estimate, opaque)) - sum(map(codex_opaque_estimate, opaque))


@dataclasses.dataclass(frozen=True)
class ToollessCompaction:
    """A remote compaction of a release that sent it no tools, what its estimate is corrected from.

    The request was the instructions and the history; the last call's input held the tools too, and the items
    written since it (tool outputs, a turn's context) were in no call's input. The tools' size is no record's, but
    Codex writes its own estimate of the compacted context beside the ``compacted`` line (``recompute_token_usage``:
    the instructions and the replacement history, a token per 4 bytes; 0.77 just before it, 0.110 just after), and
    the call after the compaction was sent that context, the tools and what was written in between: its input less
    those is the tools'. Measured on the real 0.77.0 against the fake, its requests kept: instructions and history
    11,430 tokens served; the tools 1,250 (estimated 1,333: Codex's byte estimate of the instructions is 54 under the
    fake's count)."""

    estimate: int  # its index among the rollout's estimates
    at: int  # the messages before the compaction
    calls: int  # the calls before it
    since: list[Message]  # what was written since the last call: sent with the history, in no call's input
    opaque: int  # ``opaque_gap`` of the replacement history
    codex_context: int | None = None  # Codex's estimate of the compacted context: None where it wrote none

    def corrected(self, estimate: ApiUsage, calls: list[RecordedCall], messages: list[Message]) -> ApiUsage:
        """``estimate`` with the items written since the last call, and without the tools where the call after the
        compaction shows them."""
        from compactctl.tokens import REPLY_PRIMING_TOKENS, counter_for, encoding_for_model

        after = calls[self.calls] if self.calls < len(calls) else None
        counter = counter_for(encoding_for_model((after or calls[self.calls - 1]).model))

        def cost(sent: list[Message]) -> int:
            return sum(int(m["encrypted_chars"]) if "encrypted_chars" in m else counter.message(m) for m in sent)

        tools = 0
        if after is not None and after.usage is not None and self.codex_context is not None:
            between = cost(messages[self.at : after.position]) + REPLY_PRIMING_TOKENS
            tools = max(0, after.usage.input_tokens - (self.codex_context + self.opaque) - between)
        input_tokens = max(0, estimate.input_tokens + cost(self.since) - tools)
        return dataclasses.replace(
            estimate, input_tokens=input_tokens, cached_tokens=min(estimate.cached_tokens, input_tokens)
        )


@dataclasses.dataclass
class ToollessCompactions:
    """A rollout's remote compactions sent without the tools (``sends_no_tools`` of its ``version``), and Codex's
    own estimates of the context beside them: their estimates corrected once the calls after them are paired."""

    version: object = None  # session_meta's cli_version
    found: list[ToollessCompaction] = dataclasses.field(default_factory=list)
    context_estimate: tuple[int, int] | None = None  # Codex's own last estimate: (calls before it, its total)

    def counted(self, last: Any, calls: list[RecordedCall]) -> None:
        """A ``token_count``'s ``last_token_usage``: with no usage but its total, it is Codex's own estimate of the
        context; the first since a toolless compaction, no call between, is the compacted context's."""
        if not isinstance(last, dict) or not integer(last.get("total_tokens")):
            return
        if any(integer(last.get(k)) for k in ("input_tokens", "cached_input_tokens", "output_tokens")):
            return
        self.context_estimate = (len(calls), integer(last["total_tokens"]))
        latest = self.found[-1] if self.found else None
        if latest is not None and latest.codex_context is None and latest.calls == len(calls):
            self.found[-1] = dataclasses.replace(latest, codex_context=self.context_estimate[1])

    def compacted(
        self, index: int, payload: dict[str, Any], messages: list[Message], calls: list[RecordedCall]
    ) -> None:
        """The ``compacted`` line of the ``index``-th estimated compaction, kept where it was sent no tools."""
        if not sends_no_tools(self.version) or not calls:
            return
        since = messages[calls[-1].position + 1 :]
        gap = opaque_gap(payload["replacement_history"])
        self.found.append(ToollessCompaction(index, len(messages), len(calls), since, gap))
        written = self.context_estimate
        if written is not None and written[0] == len(calls):  # written before the line (0.77)
            self.found[-1] = dataclasses.replace(self.found[-1], codex_context=written[1])

    def correct(
        self,
        estimates: list[ApiUsage],
        models: list[tuple[str | None, ApiUsage, Pricing]],
        calls: list[RecordedCall],
        messages: list[Message],
    ) -> None:
        """Each one's estimate (and its model's row) corrected, once the calls after it are paired."""
        for found in self.found:
            estimate = found.corrected(estimates[found.estimate], calls, messages)
            estimates[found.estimate] = estimate
            model, _, pricing = models[found.estimate]
            models[found.estimate] = (model, estimate, pricing)


def rebuilt_history(messages: list[Message]) -> list[Message]:
    """What Codex's local compaction keeps of the history before its summary (codex-rs ``compact.rs``:
    ``build_compacted_history(build_initial_context(turn), collect_user_messages(history), summary)``): the initial
    context once, as the turn has it (the last run of context messages the rollout wrote), then the user's own
    messages, without the context Codex wrote at each turn (AGENTS.md, environment) or an earlier summary (Codex
    keeps the last 20k tokens of them, by its own estimate: not applied here, as no session here comes near it).

    Measured on the real Codex 0.100.0 against the loopback fake, its requests kept: after a local compaction it sent
    the permissions, AGENTS.md and environment messages once, both prompts, the summary and the new prompt; every user
    message kept (AGENTS.md and the environment three times each, no permissions) counted 1,414 o200k tokens more, and
    the fitted prefix of each compacted context fell below the one before (1,239 -> -174 -> -919 tokens)."""
    last = max((n for n, m in enumerate(messages) if client_context(m)), default=-1)
    start = last
    while start > 0 and client_context(messages[start - 1]):
        start -= 1
    context = messages[start : last + 1] if last >= 0 else []
    own = [
        m
        for m in messages
        if m.get("role") == "user" and not client_context(m) and not content_text(m).startswith(SUMMARY_PREFIX[:60])
    ]
    return [*context, *own]
