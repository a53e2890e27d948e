"""Codex's recorded calls: a run of model-output items is one call, its usage the next changed ``token_count``.

- **Calls.** The model's output items (``reasoning``, an assistant ``message``, function, custom and local-shell calls,
  web searches) written one after another are one response; anything the harness adds (a tool output, a user or
  developer message) ends it.
- **Usage.** A call's usage is the ``last_token_usage`` of the first ``token_count`` event after it whose ``info`` is
  not null and whose ``total_token_usage`` changed: some versions write each event twice, and one with ``info: null``
  first. The last changed total is the session total the producer reports, which the paired calls must add up to.
- **Compactions.** A ``compacted`` line replaced the history with its ``replacement_history`` (remote compaction: the
  user messages, context items and an encrypted ``compaction`` item); old ones carry only a summary ``message``, and
  Codex rebuilt the history from the user messages plus it. The whole history goes on past it; the replacement is what
  the ``recorded`` row continues from.
- **The producer's compaction calls** are billed and write no response item. What the rollout keeps of them depends on
  the kind (openai/codex, ``codex-rs/core/src/compact.rs`` and ``compact_remote.rs``): a local (inline) compaction
  streams a summary whose ``Completed`` usage goes through ``update_token_usage_info``, so a changed ``token_count``
  with no response of its own (paired as ``unpaired``); a remote one (``/responses/compact``) writes only the
  ``compacted`` line, no usage, up to 0.133 at least (the real 0.133 rollout in shared/: the total does not move
  across it). From 0.171 every response, the compaction's too, has a ``token_usage_record`` (``response_id``,
  ``usage``, ``thread_token_usage``): a record with no model output since the previous one is a compaction call,
  billed as recorded. Where none is recorded it is estimated as the request it was: the last call's input and output
  sent again (its cached part as cached), the encrypted summary's length as output; up to 0.114, which sent it no
  tools, less the tools and with what was written since the last call (``codex_compaction.ToollessCompactions``).
- **Forks** (``codex exec fork``, 0.171): the new rollout copies no item of the parent; its ``session_meta`` names it
  (``forked_from_id``, ``history_base``) and its running totals (``total_token_usage``, ``thread_token_usage``) go on
  from the parent's, so they are no session total of the fork's own calls (measured on the real client:
  tests/fakes/record_fixtures.py).
- ``session_meta.base_instructions`` is the system prompt (written again on a resume: once is enough);
  ``turn_context.model`` names the model of the calls that follow.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from compactctl import jsonbytes
from compactctl.errors import InputError
from compactctl.formats.codex import ROLLOUT_FIELDS, not_sampled
from compactctl.formats.records import Record, check_fields
from compactctl.formats.responses import (
    AGENT_MESSAGE,
    TOOL_SEARCH,
    TOOL_SEARCH_NAME,
    content_to_canonical,
    context_output,
    is_harness,
    output_content,
)
from compactctl.recorded import (
    ALONE,
    COMPACTCTL,
    ApiUsage,
    InRun,
    Pricing,
    RecordedCall,
    RecordedCompaction,
    RecordedContext,
    RecordedSession,
    integer,
    service_tier_pricing,
    timestamp_of,
    with_subagents,
)
from compactctl.recorded.codex_agents import child_rollouts, first_meta, kind_of, side_calls_said
from compactctl.recorded.codex_compaction import (
    ToollessCompactions,
    compaction_estimate,
    encrypted_estimate,
    local_compaction_count,
    rebuilt_history,
)
from compactctl.recorded.codex_copies import copied_unpaired, history_id, with_copy_keys
from compactctl.recorded.codex_unrecorded import carries_memories, memories_note, title_note
from compactctl.transcript import Message, is_compactctl_summary

NAME = "codex"
OUTPUT_ITEMS = frozenset(
    {
        "reasoning",
        "function_call",
        "custom_tool_call",
        "local_shell_call",
        "web_search_call",
        "image_generation_call",
        "tool_search_call",
    }
)
ARGUMENTS = {"function_call": "arguments", "custom_tool_call": "input", "local_shell_call": "action"}
# A tool_search_output's ``tools`` (the schemas it loaded) are model input from there on, as the reader counts them.
RESULT_ITEMS = frozenset(
    {"function_call_output", "custom_tool_call_output", "local_shell_call_output", "tool_search_output"}
)


def usage_of(raw: Any) -> ApiUsage | None:
    if not isinstance(raw, dict):
        return None
    usage = ApiUsage(
        input_tokens=integer(raw.get("input_tokens")),
        cached_tokens=integer(raw.get("cached_input_tokens")),
        # 0.171 and later: the writes the API reported (``input_tokens_details.cache_write_tokens``), billed as
        # writes where the model lists a write price (the gpt-5.6 family), as plain input elsewhere.
        cache_write_tokens=integer(raw.get("cache_write_input_tokens")),
        output_tokens=integer(raw.get("output_tokens")),
        reasoning_tokens=integer(raw.get("reasoning_output_tokens")),
    )
    return None if usage.is_empty else usage


class _Rollout:
    def __init__(self, path: str) -> None:
        self.path = path
        self.messages: list[Message] = []
        self.calls: list[RecordedCall] = []
        self.compactions: list[RecordedCompaction] = []
        self.model: str | None = None
        self.system_seen = False
        self.open_call: Message | None = None  # the assistant message of the response being written
        self.open_estimate = 0
        self.counts: list[tuple[int, ApiUsage | None]] = []  # (calls begun before it, usage) per changed count
        self.last_total: dict[str, Any] | None = None
        self.reported_total: ApiUsage | None = None
        self.unheld: list[tuple[int, ApiUsage]] = []  # responses counted, never written: (calls before, usage)
        self.resumes: list[int] = []
        # token_usage_record (0.171+): calls begun at the last one, the compaction calls it showed.
        self.records_begun: int | None = None
        self.recorded_thread_total: ApiUsage | None = None
        self.compaction_usage: list[ApiUsage] = []  # recorded (token_usage_record)
        self.compaction_at: list[int] = []  # the calls made before each of those
        # The model a turn's settings name before its turn_context (Codex 0.171's thread_settings_applied):
        # a compaction at the turn's start runs on it, as a model switched for the turn does.
        self.next_model: str | None = None
        # The service tier the thread's settings name (0.171's thread_settings_applied: "priority" for the
        # config's "fast" or "priority", "flex"): its calls are billed at that tier's prices.
        self.pricing: Pricing = ()
        self.compaction_models: list[tuple[str | None, ApiUsage, Pricing]] = []  # each one's model, tier (as turns')
        self.estimated_models: list[tuple[str | None, ApiUsage, Pricing]] = []  # each estimated one
        self.recorded_usage: dict[int, ApiUsage] = {}  # call index -> its token_usage_record's usage
        self.compaction_estimates: list[ApiUsage] = []  # not recorded: estimated
        self.toolless = ToollessCompactions()  # those sent without the tools, by session_meta's cli_version
        self.context_window: int | None = None  # the window Codex says it works with (token_count info)
        self.forked_from: str | None = None
        self.thread: str | None = None  # the history id of its lines (history_id: session_meta's id or its own)
        self.continues: tuple[str, int] | None = None  # (thread, end ordinal) of the rollout this one goes on from
        self.live_end: tuple[int, int, int] | None = None  # (messages, calls, compactions) before ``reverted_at``
        # call index -> its web_search_call items: the hosted search is billed per call beside the tokens
        # (the Responses usage counts none of them).
        self.searches: dict[int, int] = {}
        # A switch to a model of another compaction family (turn_context's ``comp_hash``, both named and
        # different) compacts first on the model switched from: measured on 0.171, gpt-5.5 (2911) to
        # gpt-5.6-terra (3000) and back. A compaction at a turn's start waits for that turn's context.
        self.comp_hash: str | None = None
        self.turn_start_compactions: list[tuple[int, str | None, str | None]] = []  # (index, model, comp_hash)

    # -- model output ----------------------------------------------------------------
    def _call_message(self, timestamp: float | None, inherited: bool = False) -> Message:
        if self.open_call is None:
            self.open_call = {"role": "assistant", "content": None}
            self.open_estimate = 0
            call = RecordedCall(len(self.messages), self.model, timestamp, None, copied=inherited, pricing=self.pricing)
            self.calls.append(call)
            self.messages.append(self.open_call)
        return self.open_call

    def _end_call(self) -> None:
        if self.open_call is not None and self.open_estimate:
            call = self.calls[-1]
            self.calls[-1] = dataclasses.replace(call, hidden_output_estimate=self.open_estimate)
            self.open_estimate = 0
        self.open_call = None

    def item(self, item: dict[str, Any], timestamp: float | None, line: int, metadata: Any = None) -> None:
        kind = item.get("type", "message" if "role" in item else None)
        # A subagent spawned with the parent's turns (``fork_turns``) starts its rollout with a copy of the
        # parent's, each item marked inherited: those calls were made, and billed, in the parent's.
        inherited = isinstance(metadata, dict) and metadata.get("inherited_user_message") is True
        if kind == "message" and item.get("role") == "assistant" and not_sampled(metadata):
            # Codex's own words in the thread (a review's findings relayed into it): context, no model call.
            self._end_call()
            content = content_to_canonical(item.get("content"))
            self.messages.append({"role": "assistant", "content": content, "compactctl": {"kind": "harness"}})
        elif kind == "message" and item.get("role") == "assistant":
            message = self._call_message(timestamp, inherited)
            text = content_to_canonical(item.get("content"))
            message["content"] = _joined(message.get("content"), text)
        elif kind in OUTPUT_ITEMS:
            message = self._call_message(timestamp, inherited)
            if kind == "reasoning":
                self.open_estimate += encrypted_estimate(item)
                return
            if kind == "web_search_call":
                self.searches[len(self.calls) - 1] = self.searches.get(len(self.calls) - 1, 0) + 1
            arguments = item.get(ARGUMENTS.get(str(kind), "arguments"), item.get("action"))
            message.setdefault("tool_calls", []).append(
                {
                    "id": item.get("call_id") or item.get("id"),
                    "type": "function",
                    "function": {
                        "name": str(item.get("name") or (TOOL_SEARCH_NAME if kind == TOOL_SEARCH else kind)),
                        "arguments": arguments if isinstance(arguments, str) else jsonbytes.dumps_text(arguments),
                    },
                }
            )
        elif kind == AGENT_MESSAGE or context_output(item):  # another agent's task or answer, Codex's context: input
            self._end_call()
            sent = content_to_canonical(item.get("content")) if kind == AGENT_MESSAGE else output_content(item)
            self.messages.append({"role": "user", "content": sent})
        elif kind in RESULT_ITEMS:
            self._end_call()
            self.messages.append({"role": "tool", "tool_call_id": item.get("call_id"), "content": output_content(item)})
        elif kind == "message":
            self._end_call()
            role = item.get("role")
            if role not in ("user", "developer", "system"):
                raise InputError(f"message item has unknown role {role!r}", self.path, line)
            content = content_to_canonical(item.get("content"))
            said: Message = {"role": role, "content": content}
            if is_harness(content):
                said["compactctl"] = {"kind": "harness"}
            self.messages.append(said)
        elif kind in ("compaction", "compaction_summary"):
            # Outside a compacted line: the compaction a subagent opens on, its parent's (the approvals reviewer's
            # after a compaction: ``codex_agents``), sent as it is. Opaque: its length is the estimate.
            self._end_call()
            self.messages.append({"role": "user", "content": "", "encrypted_chars": encrypted_estimate(item)})
        # ghost snapshots: not model input here

    def token_count(self, payload: dict[str, Any]) -> None:
        info: dict[str, Any] = payload["info"] if isinstance(payload.get("info"), dict) else {}
        self.context_window = integer(info.get("model_context_window")) or self.context_window
        self.toolless.counted(info.get("last_token_usage"), self.calls)
        total = info.get("total_token_usage")
        if not info or total == self.last_total:  # none yet, the same event written twice, or the rate limits alone
            # 0.171 writes one after a broken stream's response (no usage), ending it; 0.133 one after a first reasoning
            said = self.open_call is not None and (self.open_call.get("content") or self.open_call.get("tool_calls"))
            if self.records_begun is not None and said:
                self._end_call()
            return
        self.last_total = total if isinstance(total, dict) else None
        self.reported_total = usage_of(total) or self.reported_total
        last = usage_of(info.get("last_token_usage"))
        if last is None and self.forked_from is not None and not self.calls:
            # A fork's opening count (after the compaction it began with): the parent's totals, no call's
            # usage; paired, it would take the fork's first call and leave that call's own count unpaired.
            return
        self.counts.append((len(self.calls), last))
        self._end_call()

    def usage_record(self, payload: dict[str, Any]) -> None:
        """A ``token_usage_record``: one response's usage; one with no output since the last is the producer's."""
        usage = usage_of(payload.get("usage"))
        self.recorded_thread_total = usage_of(payload.get("thread_token_usage")) or self.recorded_thread_total
        # A record is written after its response's items, so one with no call since the last record (or, in
        # a fork that compacts before its first turn, with no call in the file yet) is the compaction's.
        if usage is not None and len(self.calls) == (self.records_begun or 0):
            self.compaction_usage.append(usage)  # wrote no response item: the compaction's summarizing call
            self.compaction_at.append(len(self.calls))
            if self.next_model is not None:
                self.turn_start_compactions.append((len(self.compaction_models), self.model, self.comp_hash))
            self.compaction_models.append((self.next_model or self.model, usage, self.pricing))
        elif usage is not None and self.calls:
            # The last response's: written as it completes, before its token_count, which a run killed during
            # the response's tool call never writes (``pair`` gives it to a call no count was paired with).
            self.recorded_usage[len(self.calls) - 1] = usage
        self.records_begun = len(self.calls)

    def turn_context(self, payload: dict[str, Any]) -> None:
        comp_hash = payload.get("comp_hash") if isinstance(payload.get("comp_hash"), str) else None
        for index, model, before in self.turn_start_compactions:
            if before and comp_hash and before != comp_hash:  # the switch's own compaction, on the model before it
                self.compaction_models[index] = (model, *self.compaction_models[index][1:])
        self.turn_start_compactions = []
        self.model, self.next_model, self.comp_hash = payload["model"], None, comp_hash

    def estimate_compaction(self, payload: dict[str, Any]) -> None:
        """A remote compaction the rollout recorded no usage for: the request it was, estimated."""
        estimate = compaction_estimate(payload, self.counts)
        if estimate is not None:
            self.toolless.compacted(len(self.compaction_estimates), payload, self.messages, self.calls)
            self.compaction_estimates.append(estimate)
            self.estimated_models.append((self.next_model or self.model, estimate, self.pricing))

    def pair(self) -> None:
        """Give each response the one changed count written beside it.

        Versions differ in where they write it: 0.5x-0.6x just before the items of the
        response it counts, later ones after the response (and after its tool outputs).
        One changed count per response either way, so the first count tells the side: written
        before any response, each count is the next response's; else the previous one's.
        """
        before = bool(self.counts) and self.counts[0][0] == 0
        for begun, usage in self.counts:
            index = begun if before else begun - 1
            if 0 <= index < len(self.calls) and self.calls[index].usage is None:
                self.calls[index] = dataclasses.replace(self.calls[index], usage=usage)
            elif usage is not None:
                # A count whose response was never written (the session was cut after it).
                self.unheld.append((begun, usage))
        for index, usage in self.recorded_usage.items():
            call = self.calls[index]
            if call.usage is None:  # no token_count for it: the run stopped first
                self.calls[index] = dataclasses.replace(call, usage=usage)
        for index, searches in self.searches.items():
            call = self.calls[index]
            if call.usage is not None:
                self.calls[index] = dataclasses.replace(
                    call, usage=dataclasses.replace(call.usage, web_searches=searches)
                )

    def compacted(self, payload: dict[str, Any]) -> None:
        self._end_call()
        history = payload.get("replacement_history")
        replacement: list[Message] = [m for m in self.messages[:1] if m.get("role") == "system"]
        if isinstance(history, list):
            for item in history:
                if not isinstance(item, dict):
                    continue
                kind = item.get("type", "message" if "role" in item else None)
                if kind == "message":
                    replacement.append({"role": item.get("role"), "content": content_to_canonical(item.get("content"))})
                elif kind in ("compaction", "compaction_summary"):
                    # Opaque: what it costs is known only from the next call's usage; its length is the estimate.
                    replacement.append({"role": "user", "content": "", "encrypted_chars": encrypted_estimate(item)})
        else:
            replacement += rebuilt_history(self.messages)
            replacement.append({"role": "user", "content": str(payload.get("message", ""))})
        # The client's own write their summary as the message or an opaque item; compactctl's neither, or its own.
        said = {"role": "user", "content": str(payload.get("message") or "")}
        ours = isinstance(history, list) and not any("encrypted_chars" in m for m in replacement)
        trigger = COMPACTCTL if ours and (not said["content"] or is_compactctl_summary(said)) else ""
        counted = trigger != COMPACTCTL and self.records_begun is None
        if counted and local_compaction_count(self.counts, len(self.calls)):
            # The summarizing call's count (codex_compaction): billed as the compaction's, no response's.
            usage = self.counts.pop()[1]
            assert usage is not None
            self.compaction_usage.append(usage)
            self.compaction_at.append(len(self.calls))
            self.compaction_models.append((self.model, usage, self.pricing))
        elif counted and isinstance(history, list):
            self.estimate_compaction(payload)  # remote, from a version that records no usage for it
        self.compactions.append(RecordedCompaction(len(self.messages), len(self.calls), replacement, trigger=trigger))


def _joined(before: Any, text: Any) -> Any:
    if not before:
        return text
    if isinstance(before, str) and isinstance(text, str):
        return f"{before}\n\n{text}"
    parts = lambda c: c if isinstance(c, list) else [{"type": "text", "text": str(c or "")}]  # noqa: E731
    return [*parts(before), *parts(text)]


def read(records: list[Record], path: str, run: InRun = ALONE) -> RecordedSession:
    """``run.reverted_at``: the 0-based line a later rollout of the thread keeps this one up to (a revert)."""
    reverted_at = run.reverted_at
    rollout = _Rollout(path)
    meta_id: str | None = None  # the thread's id, which its subagents' rollouts name as their parent
    meta: dict[str, Any] = {}  # the first session_meta
    memories = False  # its instructions carry Codex's memory summary (``codex_unrecorded``)
    last_stamp: float | None = None
    for record in records:
        if reverted_at is not None and rollout.live_end is None and record.line - 1 >= reverted_at:
            rollout._end_call()
            rollout.live_end = (len(rollout.messages), len(rollout.calls), len(rollout.compactions))
        value = record.value
        if not isinstance(value, dict):
            raise InputError(f"expected a rollout line object, got {type(value).__name__}", path, record.line)
        check_fields(record, path, ROLLOUT_FIELDS)
        kind, payload = value.get("type"), value.get("payload")
        timestamp = timestamp_of(value.get("timestamp"))
        last_stamp = timestamp or last_stamp
        if payload is None and kind is not None and kind != "session_meta":
            payload, kind = value, "response_item"  # early rollouts: bare ResponseItems
        if not isinstance(payload, dict):
            continue
        if kind == "session_meta" and rollout.calls:
            rollout.resumes.append(len(rollout.calls))  # `codex resume` writes the metadata again
        if kind == "session_meta" and isinstance(payload.get("forked_from_id"), str) and not rollout.calls:
            rollout.forked_from = payload["forked_from_id"]
        if kind == "session_meta" and not rollout.calls and rollout.thread is None:
            meta, thread_id = payload, payload.get("id")
            rollout.toolless.version = payload.get("cli_version")
            meta_id = thread_id if isinstance(thread_id, str) else None
            rollout.thread = history_id(path, thread_id) if isinstance(thread_id, str) else None
            rollout.continues = _continued(payload)
        if kind == "session_meta" and not rollout.system_seen:
            instructions = payload.get("base_instructions", payload.get("instructions"))
            if isinstance(instructions, dict):
                instructions = instructions.get("text")
            if isinstance(instructions, str) and instructions and not rollout.messages:
                rollout.messages.append({"role": "system", "content": instructions})
                rollout.system_seen = True
        elif kind == "turn_context" and isinstance(payload.get("model"), str):
            rollout.turn_context(payload)
        elif kind == "event_msg" and payload.get("type") == "thread_settings_applied":
            settings = payload.get("thread_settings")
            model = settings.get("model") if isinstance(settings, dict) else None
            rollout.next_model = model if isinstance(model, str) else rollout.next_model
            tier = settings.get("service_tier") if isinstance(settings, dict) else None
            rollout.pricing = service_tier_pricing(tier)
        elif kind == "response_item":
            rollout.item(payload, timestamp, record.line, value.get("metadata"))
            memories = memories or carries_memories(payload)
        elif kind == "compacted":
            rollout.compacted(payload)
        elif kind == "event_msg" and payload.get("type") == "token_count":
            rollout.token_count(payload)
        elif kind == "token_usage_record":
            rollout.usage_record(payload)
    rollout._end_call()
    rollout.pair()
    rollout.toolless.correct(rollout.compaction_estimates, rollout.estimated_models, rollout.calls, rollout.messages)
    calls, shared = with_copy_keys(rollout.calls, meta_id, run.billed_elsewhere)  # a copy's calls billed there
    messages, compactions = rollout.messages, rollout.compactions
    off_thread: tuple[RecordedCall, ...] = ()
    if rollout.live_end is not None:  # the turns a revert dropped: billed, off the live thread
        kept, live, compacted = rollout.live_end
        messages, calls, off_thread = messages[:kept], calls[:live], tuple(calls[live:])
        compactions = compactions[:compacted]
    resumes = sorted(r for r in set(rollout.resumes) if r < len(calls))
    # A revert's rollout goes on from the thread's first, which reads the thread's subagents.
    children = _subagents(path, meta_id, last_stamp, run) if meta_id and rollout.continues is None else []
    context = RecordedContext("main", messages, calls, compactions, resumes)
    # A compaction, or a response never written, among the calls another file of the run bills is that file's too (a
    # copy holds its lines).
    copies = copied_unpaired(rollout.compaction_at, calls, shared)
    compaction_usage = [u for n, u in enumerate(rollout.compaction_usage) if n not in copies]
    copied_unheld = copied_unpaired([at for at, _ in rollout.unheld], calls, shared)
    unheld = [u for n, (_, u) in enumerate(rollout.unheld) if n not in copied_unheld]
    unpaired = sum([*unheld, *compaction_usage], ApiUsage(0)) if unheld or compaction_usage else None
    own = RecordedSession(
        NAME,
        [context],
        # The records' thread total holds the compaction calls; token_count's total leaves them out.
        # A fork's and a revert's totals go on from the rollout they continue, a copy's are another file's.
        reported_total=None
        if rollout.forked_from or rollout.continues or shared
        else rollout.recorded_thread_total or rollout.reported_total,
        shared_calls=len(shared),
        shared_with=tuple(sorted(set(shared.values()))),
        unpaired=unpaired,
        unheld_calls=len(unheld),
        compaction_calls=len(compaction_usage) + len(rollout.compaction_estimates),
        compaction_estimate=sum(rollout.compaction_estimates, ApiUsage(0)) if rollout.compaction_estimates else None,
        compaction_calls_estimated=len(rollout.compaction_estimates),
        priced_apart=tuple(m for n, m in enumerate(rollout.compaction_models) if n not in copies),
        estimated_apart=tuple(rollout.estimated_models),
        context_window=rollout.context_window,
        forked_from=rollout.forked_from,
        copied_from=(rollout.forked_from,) if rollout.forked_from and any(c.copied for c in calls) else (),
        off_thread=off_thread,
        off_thread_why=f"the turns a thread/revert dropped: a later rollout of the thread keeps this one's first "
        f"{reverted_at} lines",
        thread=rollout.thread,
        continues=rollout.continues,
        not_in_bill=tuple(
            n for n in [memories_note(path, meta_id, memories), title_note(path, meta_id, meta.get("source"))] if n
        ),
    )
    return side_calls_said(with_subagents(own, [(name, child) for name, child, _ in children]), children, meta)


def _subagents(
    path: str, thread: str, last: float | None, run: InRun = ALONE
) -> list[tuple[str, RecordedSession, str | None]]:
    """The rollouts of the agents the thread spawned (``codex_agents``), each read, by its agent path (Codex's own
    subagents by their kind: ``guardian``), with that kind; ``run``: a copy's subagents are copies too."""
    from datetime import UTC, datetime

    from compactctl.formats.records import parse_records

    last_day = datetime.fromtimestamp(last, UTC).date() if last is not None else None
    found = []
    for child in child_rollouts(path, thread, last_day):
        try:
            records = parse_records(child.read_bytes(), str(child))[0]
        except (OSError, InputError):
            continue  # a subagent's rollout that does not read is left out, not the session
        meta = first_meta(child)
        kind = kind_of(meta)
        name = meta.get("agent_path") if isinstance(meta.get("agent_path"), str) else kind or meta.get("id", child.stem)
        found.append((str(name), read(records, str(child), run), kind))
    return found


def _continued(meta: dict[str, Any]) -> tuple[str, int] | None:
    """The rollout this one goes on from after a revert (its ``history_id``: the thread's first rollout, or a later
    one after a second revert) and the thread's line that one is kept up to (``history_base``; lines are counted
    along the thread, each rollout's from the end of the one it goes on from); a fork's base is its parent's
    thread, which goes on: None there."""
    base = meta.get("history_base")
    if not isinstance(base, dict) or isinstance(meta.get("forked_from_id"), str):
        return None
    thread, end = base.get("thread_id"), base.get("end_ordinal_exclusive")
    if not isinstance(thread, str) or not isinstance(end, int) or isinstance(end, bool):
        return None
    return thread, end
