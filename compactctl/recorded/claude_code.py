"""Claude Code's recorded calls: one per ``message.id``, across the session's compactions and per sidechain.

- **One call per response.** Claude Code writes a response one content block per record; the records share
  ``message.id`` (and ``requestId``) and each repeats the usage, whose ``output_tokens`` grows while the response
  streams. All records of one id, wherever they sit (with streaming tool execution a ``tool_result`` is written between
  two of them), are one call, with the usage of the record reporting the most output. API-error stubs
  (``isApiErrorMessage``, model ``<synthetic>``) are no call; a stream the connection dropped (its ``api_error`` record)
  is, where the ``cost-state`` bills more than the messages (``dropped_streams``).
- **The chain** the model saw, across compactions and per sidechain, is walked in ``claude_code_chain.py``. A
  ``compact_boundary``'s ``compactMetadata`` holds ``trigger``, ``preTokens`` and, for a partial compaction, the
  ``preservedSegment`` kept verbatim (by uuid).
- **Attachments** on the chain are sent to the model as system reminders, read as harness user messages.
- **Subagents**: older versions write them inline as sidechains, each a context of its own; newer versions write a
  subagent's records to ``<session>/subagents/agent-<id>.jsonl`` beside the session file, read alike.
- **Every billed call.** A rewind (resuming from an earlier message, an edited prompt) leaves the old branch in the
  file, its responses billed: the calls of no context walked are kept as ``off_thread`` (with their usage), so the bill
  holds every call made.
- **Every pass billed.** A response of several sampling passes (``usage.iterations``: the advisor tool's pass on its own
  model, a server-side compaction's, the executor's pass after either) is a call for its first pass with its other
  passes billed apart, each at its own model (``iterations.py``).
- **Each billed call once.** A fork (``--fork-session``) starts a new file with a copy of the parent's thread: the
  copied responses keep their ``message.id`` and carry ``requestSessionId``, the session that made (and paid for) the
  request. Those are no call of the fork: their messages are its history, their cost is the parent's bill, so a parent
  and its fork replayed together count every response once (measured on 2.1.332's records: the fork's own response has
  no ``requestSessionId``). The fork's ``cost-state`` carries the parent's running total, so it is no check of the
  fork's own calls.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from typing import Any

from compactctl import jsonbytes
from compactctl.errors import InputError
from compactctl.formats.anthropic import assistant_message, user_messages
from compactctl.formats.claude_code import RECORD_FIELDS, is_compactctl_boundary
from compactctl.formats.records import Record, check_fields
from compactctl.recorded import (
    ALONE,
    COMPACTCTL,
    SUBAGENT,
    ApiUsage,
    InRun,
    RecordedCall,
    RecordedCompaction,
    RecordedContext,
    RecordedSession,
    claude_code_hooks,
    compaction_trigger,
    integer,
    resumes_by_gap,
    timestamp_of,
    usage_pricing,
)
from compactctl.recorded.claude_code_agents import subagent_sessions
from compactctl.recorded.claude_code_chain import (
    Index,
    chain_to,
    is_boundary,
    is_call_record,
    is_message,
    leaves,
    uuid_of,
)
from compactctl.recorded.claude_code_cleared import Edits
from compactctl.recorded.claude_code_compaction import compaction_estimate
from compactctl.recorded.claude_code_files import changed_file_reminders, logs_own_attachments
from compactctl.recorded.claude_code_output import bash_queries_note, stream_start_note, with_output_counted
from compactctl.recorded.claude_code_side import (
    SideRequests,
    dropped_streams,
    own_usage_by_model,
    side_requests,
    usage_by_model,
)
from compactctl.recorded.claude_code_thinking import flag_unknown, keeps_thinking, release
from compactctl.recorded.iterations import Billed, billed, stop_reason_of
from compactctl.transcript import Message

NAME = "claude-code"
# Measured on real sessions with usage: a thinking block's billed tokens per character of its
# signature (0.22-0.27); used only where a call has no usage.
THINKING_TOKENS_PER_SIGNATURE_CHAR = 0.25


def unlogged_reminders(values: list[dict[str, Any]]) -> dict[int, list[str]]:
    """Per tool-result record, the reminders Claude Code 1.0.x sent with it and did not log: of the
    files it watched that changed (``claude_code_files``), among them its hooks' prompt log
    (``claude_code_hooks``). 2.1 logs them as attachments: none."""
    if logs_own_attachments(values):
        return {}
    found = changed_file_reminders(values)
    for at, texts in claude_code_hooks.prompt_log_reminders(values).items():
        found.setdefault(at, []).extend(texts)
    return found


class _Builder:
    """Turns a chain of records into one context's messages, calls and compactions."""

    def __init__(
        self, index: Index, label: str, path: str, lines: list[int], reminders: dict[int, list[str]] | None = None
    ) -> None:
        self.index = index
        self.reminders = reminders or {}  # per tool-result record, the reminders sent with it unlogged
        self.label = label
        self.path = path
        self.lines = lines
        self.messages: list[Message] = []
        self.calls: list[RecordedCall] = []
        self.compactions: list[RecordedCompaction] = []
        self.done_responses: set[str] = set()
        self.done_records: set[int] = set()
        self.uuid_position: dict[str, int] = {}  # record uuid -> index of the first message read from it
        self.copied: dict[str, str] = {}  # message id -> the session that billed it (a fork's copied responses)
        self.shared: dict[str, str] = {}  # message id -> the file of the run that billed it (a 1.x resume's copies)
        self.billed_here = False  # a call of this context is billed here (the copies a resume opens with are over)
        self.edits = Edits(index.values)  # old tool results sent as a stand-in (claude_code_cleared)
        self.passes: list[RecordedCall] = []  # its responses' other billed passes (an advisor's: iterations.py)

    def add(self, message: Message, record: int) -> None:
        key = uuid_of(self.index.values[record])
        if key is not None:
            self.uuid_position.setdefault(key, len(self.messages))
        self.messages.append(message)

    def add_results(self, record: int, replies: list[Message]) -> None:
        """A record's tool results, then what the client sent with them and did not log (claude_code_files)."""
        for reply in replies:
            self.add(reply, record)
        for text in self.reminders.get(record, []) if replies else []:
            self.add({"role": "user", "content": text, "compactctl": {"kind": "harness"}}, record)

    def walk(self, chain: Iterable[int]) -> RecordedContext:
        pending_compaction: dict[str, Any] | None = None
        for at in chain:
            value = self.index.values[at]
            if at in self.done_records:
                continue
            self.edits.note(value, len(self.messages))
            if is_boundary(value):
                pending_compaction = self._boundary(value)
                continue
            if value.get("isCompactSummary"):
                summary = self._user_messages(value, at, add=False)
                compaction = pending_compaction or {"trigger": "", "pre_tokens": None, "preserved": [], "ours": False}
                self._compaction(compaction, summary)
                pending_compaction = None
                continue
            if pending_compaction is not None and is_message(value):
                # A boundary with no summary record after it (not seen, but cheap to honour).
                self._compaction(pending_compaction, [])
                pending_compaction = None
            if is_call_record(value):
                self._response(value["message"].get("id"), at)
            elif value.get("type") == "user" and is_message(value):
                self.done_records.add(at)
                self.add_results(
                    at,
                    [
                        message
                        for message in self._user_messages(value, at, add=False)
                        if not (message.get("role") == "tool" and self._answered(message.get("tool_call_id")))
                    ],
                )
            elif value.get("type") == "attachment":
                self.done_records.add(at)
                renders = self.index.renders_attachments
                sent = attachment_message(value.get("attachment"), value.get("rendered"), renders)
                if sent is not None:
                    self.add(sent, at)
        stand_ins = self.edits.of(self.messages, self.calls, self.compactions)
        resumes = resumes_by_gap(self.calls)
        return RecordedContext(self.label, self.messages, self.calls, self.compactions, resumes, stand_ins)

    def _answered(self, call_id: Any) -> bool:
        return isinstance(call_id, str) and any(
            m.get("role") == "tool" and m.get("tool_call_id") == call_id for m in self.messages[-64:]
        )

    def _user_messages(self, value: dict[str, Any], at: int, add: bool) -> list[Message]:
        content = value["message"].get("content")
        if not isinstance(content, (str, list)):
            raise InputError("user message content must be a string or a list of blocks", self.path, self.lines[at])
        return [message for message, _ in user_messages(content)]

    def _response(self, message_id: Any, at: int) -> None:
        records = self.index.responses.get(message_id, [at]) if isinstance(message_id, str) else [at]
        if isinstance(message_id, str):
            if message_id in self.done_responses:
                return
            self.done_responses.add(message_id)
        self.done_records.update(records)
        blocks: list[Any] = []
        seen_blocks: set[bytes] = set()
        best: dict[str, Any] = {}
        for record in records:
            message = self.index.values[record]["message"]
            content = message.get("content")
            for block in content if isinstance(content, list) else [{"type": "text", "text": str(content or "")}]:
                key = jsonbytes.dumps(block, sort_keys=True)
                if key not in seen_blocks:  # a rewritten copy of a record repeats its block
                    seen_blocks.add(key)
                    blocks.append(block)
            usage = message.get("usage")
            if isinstance(usage, dict) and integer(usage.get("output_tokens")) >= integer(best.get("output_tokens")):
                best = usage
        message = assistant_message(blocks)
        signature_chars = sum(
            len(str(b.get("signature") or b.get("data") or ""))
            for b in blocks
            if isinstance(b, dict) and b.get("type") in ("thinking", "redacted_thinking")
        )
        made_by = self.index.copied_from(message_id) if isinstance(message_id, str) else None
        copy_key = self.index.copy_key(message_id, best) if isinstance(message_id, str) else None
        # Another file's call where it opens this context (a resume's copy comes before the resumed session's own).
        elsewhere = (
            self.index.billed_elsewhere.get(copy_key or "") if made_by is None and not self.billed_here else None
        )
        if made_by is not None:
            self.copied[message_id] = made_by
        elif elsewhere is not None:
            made_by = self.shared[message_id] = elsewhere
        self.billed_here = self.billed_here or made_by is None
        self.edits.response(len(self.calls), records)
        written, bill = _billed(self.index, records, best)
        first = self.index.values[records[0]]
        self.passes += bill.passes if made_by is None else ()  # a copy's passes were billed with it where it was made
        self.calls.append(
            RecordedCall(
                position=len(self.messages),
                model=bill.model,
                timestamp=written,
                usage=bill.usage,
                hidden_output_estimate=round(signature_chars * THINKING_TOKENS_PER_SIGNATURE_CHAR),
                copied=made_by is not None,
                copy_key=copy_key,
                pricing=usage_pricing(best),
                thinking_kept=keeps_thinking(first.get("version"), first.get("entrypoint"), bill.model),
                thinking_flag_unknown=flag_unknown(first.get("version"), bill.model),
                output_counted=bill.output_counted,
            )
        )
        self.add(message, records[0])
        for record in records[1:]:
            if (uid := uuid_of(self.index.values[record])) is not None:
                self.uuid_position.setdefault(uid, len(self.messages) - 1)
        # The results of its calls come next, wherever they were written.
        for call in message.get("tool_calls") or []:
            call_id = call.get("id")
            result = self.index.results.get(call_id) if isinstance(call_id, str) else None
            if result is None or result in self.done_records:
                continue
            value = self.index.values[result]
            self.done_records.add(result)
            self.add_results(
                result,
                [
                    reply
                    for reply in self._user_messages(value, result, add=False)
                    if not (reply.get("role") == "tool" and self._answered(reply.get("tool_call_id")))
                ],
            )

    def _boundary(self, value: dict[str, Any]) -> dict[str, Any]:
        metadata: dict[str, Any] = value["compactMetadata"] if isinstance(value.get("compactMetadata"), dict) else {}
        segment: dict[str, Any] = (
            metadata["preservedSegment"] if isinstance(metadata.get("preservedSegment"), dict) else {}
        )
        return {
            "trigger": str(metadata.get("trigger") or ""),
            "pre_tokens": integer(metadata.get("preTokens")) or None,
            "preserved": segment,
            "ours": is_compactctl_boundary(value),
        }

    def _compaction(self, compaction: dict[str, Any], summary: list[Message]) -> None:
        preserved = compaction["preserved"]
        kept: list[Message] = []
        if preserved:
            # The segment kept verbatim runs from headUuid to tailUuid in the history read so far.
            head = self.uuid_position.get(str(preserved.get("headUuid", "")))
            tail = self.uuid_position.get(str(preserved.get("tailUuid", "")))
            if head is not None and tail is not None and head <= tail:
                end = tail + 1
                while end < len(self.messages) and self.messages[end].get("role") == "tool":
                    end += 1  # the results of the tail's calls go with it
                kept = self.messages[head:end]
        self.compactions.append(
            RecordedCompaction(
                position=len(self.messages),
                before_call=len(self.calls),
                # The kept segment follows the summary (its ``anchorUuid`` is the summary's).
                replacement=[*summary, *kept],
                trigger=COMPACTCTL if compaction["ours"] else compaction_trigger(summary, compaction["trigger"]),
                pre_tokens=compaction["pre_tokens"],
                partial=bool(kept),
            )
        )


def attachment_message(attachment: Any, rendered: Any = None, renders: bool = False) -> Message | None:
    """An attachment as the model gets it: a system reminder in a user turn; None where it is not sent.

    Claude Code 2.1+ logs the text it sent (``rendered``: the reminder blocks); measured with the
    real client against a fake that counts the requests, the attachments without it
    (``prompt_snapshot``, 58 KB of the prompt's own state, ``session_context``) are in no request.
    Older versions log no wording: the attachment's own fields stand for it.
    """
    if isinstance(rendered, list):
        texts = [str(part.get("content") or "") if isinstance(part, dict) else str(part) for part in rendered]
        texts = [text for text in texts if text]
        if not texts:
            return None
        return {"role": "user", "content": "\n".join(texts), "compactctl": {"kind": "harness"}}
    if renders:
        return None
    if isinstance(attachment, dict):
        body = {k: v for k, v in attachment.items() if k != "type"}
        text = body.get("content") if isinstance(body.get("content"), str) else jsonbytes.dumps_text(body)
        kind = attachment.get("type", "attachment")
    else:
        text, kind = str(attachment), "attachment"
    return {
        "role": "user",
        "content": f"<system-reminder>\n{kind}: {text}\n</system-reminder>",
        "compactctl": {"kind": "harness"},
    }


def read(records: list[Record], path: str, run: InRun = ALONE) -> RecordedSession:
    """``run``: what the run's other files tell it (``InRun.billed_elsewhere``)."""
    values: list[dict[str, Any]] = []
    for record in records:
        if not isinstance(record.value, dict):
            raise InputError(
                f"expected a Claude Code record object, got {type(record.value).__name__}", path, record.line
            )
        check_fields(record, path, RECORD_FIELDS)
        values.append(record.value)
    own = next((v["sessionId"] for v in reversed(values) if isinstance(v.get("sessionId"), str)), None)
    index = Index(values, own, billed_elsewhere=run.billed_elsewhere)
    lines = [record.line for record in records]
    calls = [v for v in values if is_call_record(v)]
    only_sidechain = bool(calls) and all(v.get("isSidechain") for v in values if is_message(v))
    contexts: list[RecordedContext] = []
    walked: set[str] = set()  # message ids of the responses a context holds
    copied: dict[str, str] = {}  # message id -> the session that billed it
    shared: dict[str, str] = {}  # message id -> the file of the run that billed it
    passes: list[RecordedCall] = []  # the responses' other billed passes (an advisor's, ...: iterations.py)
    reminders = unlogged_reminders(values)
    for leaf in leaves(index, only_sidechain):
        builder = _Builder(index, "main", path, lines, reminders)
        contexts.append(builder.walk(chain_to(index, leaf, only_sidechain)))
        walked |= builder.done_responses
        copied |= builder.copied
        shared |= builder.shared
        passes += builder.passes
    if not only_sidechain:
        for n, leaf in enumerate(leaves(index, True), start=1):
            builder = _Builder(index, f"sidechain {n}", path, lines, reminders)
            context = builder.walk(chain_to(index, leaf, True))
            walked |= builder.done_responses
            copied |= builder.copied
            shared |= builder.shared
            passes += builder.passes
            if context.calls:
                contexts.append(context)
    # A copied response off the fork's thread was billed where it was made, not here.
    walked |= {m for m in index.responses if index.copied_from(m) is not None}
    contexts = [c for c in contexts if c.calls or c.messages]
    off_thread = tuple(_off_thread_calls(index, walked, passes))
    # Calls another session or file made (a fork's, a resume's copies; not compactctl's of this session's calls).
    foreign = {*shared, *(m for m, made_by in copied.items() if made_by not in (own, "compactctl"))}
    requests = side_requests(values, {*shared, *copied})  # a copy's tools ran where its call was made
    shared_calls, shared_with, forked_from = len(shared), set(shared.values()), set[str]()
    for name, subagent, asked in subagent_sessions(path, run, read, index):
        contexts += [dataclasses.replace(c, label=f"{SUBAGENT} {name}") for c in subagent.contexts if c.calls]
        off_thread += subagent.off_thread
        passes += subagent.passes_apart
        shared_calls += subagent.shared_calls
        shared_with |= set(subagent.shared_with)
        forked_from |= set(subagent.copied_from)  # a forked subagent's copy of this session's call
        # A subagent's WebFetch and WebSearch requests are billed in the session's cost-state, as its own are.
        requests = SideRequests(requests.calls + asked.calls, requests.searches + asked.searches)
    by_model = usage_by_model(values)  # the last cost-state, read once: the total and the side requests' models
    # A fork's cost-state goes on from its parent's total: this file's own share, where the file says it.
    own_share = own_usage_by_model(values, by_model, foreign, shared)
    reported = sum(own_share.values(), ApiUsage(0)) if own_share else None
    paired = RecordedSession(NAME, contexts, off_thread=off_thread, passes_apart=tuple(passes)).usage_total()
    unpaired = None
    if reported is not None and (
        reported.input_tokens > paired.input_tokens or reported.web_searches > paired.web_searches
    ):
        # Calls the producer made that wrote no message: its compaction summaries.
        unpaired = ApiUsage(
            reported.input_tokens - paired.input_tokens,
            max(0, reported.cached_tokens - paired.cached_tokens),
            max(0, reported.cache_write_tokens - paired.cache_write_tokens),
            max(0, reported.cache_write_1h_tokens - paired.cache_write_1h_tokens),
            max(0, reported.output_tokens - paired.output_tokens),
            # The WebSearch tool's own request (a side call with the server tool) writes no message: its
            # searches are in the cost-state alone, billed per search.
            web_searches=max(0, reported.web_searches - paired.web_searches),
        )
    # A model the cost-state bills that no call here names made only side requests (WebFetch's page summary on
    # the small fast model, claude-haiku-4-5): its whole usage is in ``unpaired``, billed at its own price.
    named = {c.model for x in contexts for c in x.calls} | {c.model for c in [*off_thread, *passes]}
    side = tuple((m, u, ()) for m, u in (own_share or {}).items() if m not in named) if unpaired else ()
    # WebSearch's and WebFetch's own requests write no message; where the cost-state's remainder bills them they
    # are billed calls, counted with the bill's (their usage is in ``unpaired``).
    side_calls = requests.calls if unpaired is not None else 0
    stood_in = 0
    if not by_model and requests.searches:
        # No cost-state (versions before it): nothing in the file bills WebSearch's requests. Their searches, as
        # the tool results count them, stand in for the fee; their tokens are in no record.
        stood_in, side_calls = requests.searches, requests.calls
        unpaired = ApiUsage(0, web_searches=stood_in)
    compactions = [
        (c, x) for x in contexts if not x.label.startswith("subagent") for c in x.compactions if c.trigger != COMPACTCTL
    ]  # compactctl's made no call
    own = [(c, x) for c, x in compactions if not any(call.copied for call in x.calls[c.before_call :][:1])]
    version = next((v["version"] for v in values if isinstance(v.get("version"), str)), None)
    estimated = [] if reported is not None else [compaction_estimate(c, x, version) for c, x in own]
    estimates = [e for e in estimated if e is not None]
    counted = [c.output_counted for c in [*(c for x in contexts for c in x.calls if not c.copied), *off_thread]]
    counted = [n for n in counted if n]
    return RecordedSession(
        NAME,
        contexts,
        reported_total=reported,
        unpaired=unpaired,
        off_thread=off_thread,
        passes_apart=tuple(passes),
        compaction_calls=len(own) if reported is not None else len(estimates),
        compaction_estimate=sum(estimates, ApiUsage(0)) if estimates else None,
        compaction_calls_estimated=len(estimates),
        producer_release=release(version),
        copied_from=tuple(sorted({*copied.values(), *forked_from})),
        shared_calls=shared_calls,
        shared_with=tuple(sorted(shared_with)),
        priced_apart=side,
        side_calls=side_calls,
        searches_stood_in=stood_in,
        unheld_calls=dropped_streams(values) if unpaired is not None else 0,  # billed in the cost-state's remainder
        in_bill=(stream_start_note(len(counted), sum(counted)),) if counted else (),
        not_in_bill=bash_queries_note(values, version) if not by_model else (),  # a cost-state bills them
    )


def _billed(index: Index, records: list[int], usage: Any) -> tuple[float | None, Billed]:
    """When a response (its ``records``, ``usage`` its best usage) was written, and what it billed (``iterations``)."""
    first = index.values[records[0]]
    written, messages = timestamp_of(first.get("timestamp")), [index.values[r]["message"] for r in records]
    bill = billed(usage, first["message"].get("model"), written, stop_reason_of(messages))
    return written, with_output_counted(bill, messages, first.get("version"))


def _off_thread_calls(index: Index, walked: set[str], passes: list[RecordedCall]) -> list[RecordedCall]:
    """The responses no walked context holds (an abandoned branch's), each with its billed usage (their other billed
    passes into ``passes``)."""
    calls = []
    for message_id, records in index.responses.items():
        if message_id in walked:
            continue
        best: dict[str, Any] = {}
        for record in records:
            usage = index.values[record]["message"].get("usage")
            if isinstance(usage, dict) and integer(usage.get("output_tokens")) >= integer(best.get("output_tokens")):
                best = usage
        key = index.copy_key(message_id, best)
        if key in index.billed_elsewhere:  # a copy of another file's call (a 1.x resume's), billed there
            continue
        written, bill = _billed(index, records, best)
        passes += bill.passes
        pricing, counted = usage_pricing(best), bill.output_counted
        calls.append(
            RecordedCall(-1, bill.model, written, bill.usage, copy_key=key, pricing=pricing, output_counted=counted)
        )
    return calls
