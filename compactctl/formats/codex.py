"""``codex``: Codex CLI rollout JSONL (``~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl``).

Each line is ``{timestamp, type, payload}`` (``RolloutItem`` in openai/codex
``codex-rs/protocol/src/protocol.rs``). Only ``response_item`` payloads (Responses items,
read with ``responses.ItemReader``) and ``compacted`` checkpoints are model input; the
``event_msg`` lines repeat prompts and answers for display and are not counted again.
``session_meta.base_instructions`` is the system prompt. ``token_count`` events carry the
usage the API reported for the call before them; it is put on that call's assistant
message as ``usage`` so ``report`` can compare it with its own count.

A ``compacted`` line replaces everything before it with its ``replacement_history``
(``rollout_reconstruction`` in codex-rs/core); older ones carry only ``message``, and
Codex rebuilt the history from the user messages plus that summary, as done here.

Writing: unchanged rollouts come back byte for byte. A compacted rollout keeps every old
line and ends with a ``compacted`` line whose ``replacement_history`` is the compacted
history, which is what ``codex-rs/core/src/compact.rs`` persists, so ``codex resume``
continues from it. New summary messages are user messages prefixed with Codex's
``SUMMARY_PREFIX`` (``templates/compact/summary_prefix.md``), so Codex recognises them
as summaries when it compacts again.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

from compactctl import jsonbytes
from compactctl.digests import uuid5
from compactctl.errors import InputError
from compactctl.formats.api_rules import RESPONSES_CARRIED
from compactctl.formats.base import AutoCompact, Native, Signature, Transcript, is_unchanged, native_of, sources
from compactctl.formats.records import Record, annotate, check_fields, raw_line
from compactctl.formats.responses import ITEM_TYPES, Item, ItemReader, Unit, message_items
from compactctl.transcript import Message, content_text, one_of, resumed_compaction, tool_call_ids

NAME = "codex"
SIGNATURE = Signature((("type",), ("payload",)), "rollout lines with 'type' and 'payload'")
LINE_RECORDS = True
CARRIED_PARTS = RESPONSES_CARRIED
CARRIES_USAGE = True  # token_count events record the API usage (``compactctl.recorded``)
RESUMABLE = True  # ``codex resume`` (``compactctl.sessions.codex``)
# Where Codex compacts on its own: ``ModelInfo::auto_compact_token_limit`` in
# ``codex-rs/protocol/src/openai_models.rs`` (openai/codex @ 8db0700): the model's
# ``auto_compact_token_limit`` if set, else ``(context_window * 9) / 10``;
# ``model_auto_compact_token_limit`` in config.toml overrides it.
AUTO_COMPACT = AutoCompact("Codex", share=0.9, usual_window=272_000, provider="openai")

ROLLOUT_TYPES = frozenset(
    {
        "session_meta",
        "response_item",
        "event_msg",
        "turn_context",
        "compacted",
        "world_state",
        "inter_agent_communication",
        "inter_agent_communication_metadata",
    }
)
ABORTED = "aborted"  # the output Codex gives a call that has none when it sends the history
SUMMARY_PREFIX = (
    "Another language model started to solve this problem and produced a summary of its thinking process. "
    "You also have access to the state of the tools that were used by that language model. Use this to build "
    "on the work that has already been done and avoid duplicating work. Here is the summary produced by the "
    "other language model, use the information in this summary to  assist with your own analysis:"
)


def detect(records: list[Record]) -> bool:
    return any(
        isinstance(r.value, dict) and one_of(r.value.get("type"), ROLLOUT_TYPES) and "payload" in r.value
        for r in records[:5]
    )


def _base_instructions(meta: dict[str, Any]) -> str | None:
    value = meta.get("base_instructions", meta.get("instructions"))
    if isinstance(value, dict):
        value = value.get("text")
    return value if isinstance(value, str) and value else None


@dataclass(frozen=True)
class CodexNative(Native[Unit]):
    """What a Codex rollout was read from: its records, the items after the last message, its session_meta."""

    records: tuple[Record, ...] = ()
    trailing: Unit = ()  # opaque items after the last message
    meta: dict[str, Any] | None = None  # the session_meta the system prompt was read from
    system: int | None = None  # the unit of that system prompt (it lives in session_meta, not in the history)
    resumed_context: tuple[Message, ...] = ()  # the initial context Codex writes again on resume

    def added_on_resume(self) -> tuple[Message, ...]:
        return self.resumed_context

    def resumed(self, messages: list[Message]) -> list[Message]:
        """Codex mends the history it sends (``ContextManager::normalize_history``): a call with no output
        gets an "aborted" one right after it. A call the history goes on past unanswered is one: a turn
        aborted while its tool ran, which a subagent forked with the turns copies (measured on 0.171.0)."""
        return with_aborted_results(super().resumed(messages))


def with_aborted_results(messages: list[Message]) -> list[Message]:
    """``messages`` with an "aborted" tool message after each assistant message's calls that nothing answers
    before the next message of another role; the calls the history ends on stay open (a run in flight)."""
    answered = {message.get("tool_call_id") for message in messages if message.get("role") == "tool"}
    mended: list[Message] = []
    waiting: list[str] = []  # the last assistant message's calls no tool message answers
    for message in messages:
        role = message.get("role")
        if role != "tool":
            mended += [{"role": "tool", "tool_call_id": call_id, "content": ABORTED} for call_id in waiting]
            waiting = [c for c in tool_call_ids(message) if c not in answered] if role == "assistant" else []
        mended.append(message)
    return mended if len(mended) > len(messages) else messages


class _Rollout:
    def __init__(self, path: str) -> None:
        self.path = path
        self.items = ItemReader(path)
        self.meta: dict[str, Any] | None = None
        self.system: int | None = None  # position of the system message among the live messages
        self.call_start = 0  # messages before the current model call's output
        self.last_total: Any = None  # the last token_count's total_token_usage
        # The initial context a compacted line replaced without keeping: Codex writes it again
        # when it resumes the rollout (with no world_state to say the model holds it).
        self.dropped_initial: list[Message] = []
        self.world_state = False

    def session_meta(self, payload: dict[str, Any]) -> None:
        text = _base_instructions(payload)
        if text is not None and self.meta is None:
            self.meta = payload
            self.items.add({"role": "system", "content": text}, [])
            self.items.units[-1] = []  # what came before it is not in the history either
            self.system = len(self.items.messages) - 1

    def compacted(self, payload: dict[str, Any], line: int) -> None:
        history = payload.get("replacement_history")
        kept = [self.system] if self.system is not None else []
        before = [m for m in self.items.messages if client_context(m)] or self.dropped_initial
        kept_initial = isinstance(history, list) and any(
            isinstance(item, dict) and initial_context(item) for item in history
        )
        self.dropped_initial = [] if kept_initial else before
        if isinstance(history, list):
            self.items.restart(kept)
            for item in history:
                self.items.feed(item, None, line)
        else:
            # Older Codex rebuilt history as the user messages so far plus the summary.
            messages = self.items.messages
            users = [i for i, m in enumerate(messages) if m.get("role") == "user" and not _summary(m)]
            self.items.restart([*kept, *users])
            summary = {"role": "user", "content": str(payload.get("message", ""))}
            self.items.add(summary, [Item(payload)])
        self.system = 0 if kept else None
        self.call_start = len(self.items.messages)

    def relayed(self) -> None:
        """The assistant message just read is Codex's own words (a review's findings relayed): context the
        model is sent, but no response of its."""
        annotate(self.items.messages[-1], kind="harness")
        self.items.open_assistant = None

    def token_count(self, payload: dict[str, Any]) -> None:
        info = payload.get("info")
        usage = info.get("last_token_usage") if isinstance(info, dict) else None
        total = info.get("total_token_usage") if isinstance(info, dict) else None
        # Totals that did not move are no response's usage: 0.171 writes the last count again after a broken stream.
        usage, self.last_total = (None if total == self.last_total else usage), total or self.last_total
        call = next((m for m in self.items.messages[self.call_start :] if m.get("role") == "assistant"), None)
        if isinstance(usage, dict) and call is not None and "usage" not in call:
            call["usage"] = usage
        self.call_start = len(self.items.messages)

    def usage_record(self, payload: dict[str, Any]) -> None:
        """0.171's ``token_usage_record``: the usage of the response just written, which a run killed during the
        response's tool call writes no ``token_count`` for; one with no response since the last is a compaction's."""
        usage = payload.get("usage")
        call = next((m for m in self.items.messages[self.call_start :] if m.get("role") == "assistant"), None)
        if isinstance(usage, dict) and call is not None and "usage" not in call:
            call["usage"] = usage
        self.call_start = len(self.items.messages)


# The context Codex writes at the start of a session: AGENTS.md, skills, permissions, environment.
INITIAL_CONTEXT = (
    "<environment_context>",
    "<user_instructions>",
    "# AGENTS.md instructions",
    "<skills_instructions>",
    "<permissions instructions>",
    "<collaboration_mode>",
    "<apps_instructions>",
)


def initial_context(item: dict[str, Any]) -> bool:
    """A message item holding Codex's initial context (observed re-sent: skills, 5.6 KB, and the environment)."""
    if item.get("type") != "message" or item.get("role") not in ("user", "developer"):
        return False
    parts = item.get("content")
    text = next((p.get("text", "") for p in parts if isinstance(p, dict)), "") if isinstance(parts, list) else ""
    return isinstance(text, str) and text.lstrip().startswith(INITIAL_CONTEXT)


def client_context(message: Message) -> bool:
    """Codex's own initial context: written again on resume when a compacted line left it out, and
    needed as Codex wrote it when one kept it; a summary never folds it (``ClientView.owned``)."""
    return message.get("role") in ("user", "developer") and content_text(message).lstrip().startswith(INITIAL_CONTEXT)


def not_sampled(metadata: Any) -> bool:
    """An item the model did not sample: 0.171 writes each item's ``metadata``, whose
    ``sampled_through_sequence`` is the history the model had read when it wrote the item (the one
    before it) and 0 for what the client wrote itself, as the message relaying ``codex review``'s
    findings into the thread that asked for it (tests/fakes/record_fixtures.py)."""
    return isinstance(metadata, dict) and metadata.get("sampled_through_sequence") == 0


def written_summary(message: Message) -> Message:
    """A new summary as ``compacted_line`` writes it: the user's turn behind Codex's ``SUMMARY_PREFIX``."""
    return {"role": "user", "content": f"{SUMMARY_PREFIX}\n{content_text(message)}"}


def _summary(message: Message) -> bool:
    return content_text(message).startswith(SUMMARY_PREFIX)


_USAGE_COUNTS = ("input_tokens", "cached_input_tokens", "output_tokens", "reasoning_output_tokens", "total_tokens")
# The fields the reader and the recorded-usage reader rely on, with the type each must have.
ROLLOUT_FIELDS = (
    ("type", "text"), ("timestamp", "text"), ("payload", "object"), ("payload.type", "text"),
    ("payload.role", "text"), ("payload.model", "text"), ("payload.info", "object"),
    ("payload.info.total_token_usage", "object"), ("payload.info.last_token_usage", "object"),
    *((f"payload.info.{total}.{count}", "count") for total in ("total_token_usage", "last_token_usage")
      for count in _USAGE_COUNTS),
)  # fmt: skip


def read(records: list[Record], path: str) -> list[Transcript]:
    rollout = _Rollout(path)
    for index, record in enumerate(records):
        value = record.value
        if not isinstance(value, dict):
            raise InputError(f"expected a rollout line object, got {type(value).__name__}", path, record.line)
        check_fields(record, path, ROLLOUT_FIELDS)
        kind, payload = value.get("type"), value.get("payload")
        if payload is None and kind in ("response_item", "compacted", "event_msg", "turn_context"):
            # Said, not skipped: a model-input line read as nothing would shrink the session unseen.
            raise InputError(f"a {kind} line has no payload", path, record.line)
        if payload is None:
            # Early rollouts: bare session metadata first, then bare ResponseItems.
            if one_of(kind, ITEM_TYPES):
                rollout.items.feed(value, None, record.line)
            elif index == 0 and "id" in value:
                rollout.session_meta(value)
            continue
        if not isinstance(payload, dict):
            raise InputError(f"{kind} payload must be an object", path, record.line)
        if kind == "session_meta":
            rollout.session_meta(payload)
        elif kind == "response_item":
            rollout.items.feed(payload, None, record.line)
            if payload.get("role") == "assistant" and not_sampled(value.get("metadata")):
                rollout.relayed()
        elif kind == "compacted":
            rollout.compacted(payload, record.line)
        elif kind == "world_state":
            rollout.world_state = True
        elif kind == "event_msg" and payload.get("type") == "token_count":
            rollout.token_count(payload)
        elif kind == "token_usage_record":
            rollout.usage_record(payload)
    reader = rollout.items
    units, originals = reader.finish()
    system = reader.origins[rollout.system] if rollout.system is not None else None
    live_initial = any(client_context(m) for m in reader.messages)
    resumed = () if rollout.world_state or live_initial else tuple(rollout.dropped_initial)
    native = CodexNative(
        units, originals, tuple(records), tuple(reader.pending), rollout.meta, system, resumed_context=resumed
    )
    return [Transcript(reader.messages, native=native, origins=tuple(reader.origins))]


def write(transcripts: list[Transcript]) -> bytes:
    out: list[bytes] = []
    for transcript in transcripts:
        native = native_of(transcript, CodexNative)
        if native is None:
            out.extend(jsonbytes.dumps(line) + b"\n" for line in new_rollout(transcript.messages))
            continue
        out.extend(raw_line(record) for record in native.records)
        if not is_unchanged(transcript, native):
            compacted = compacted_line(transcript, native)
            out.extend(jsonbytes.dumps(line) + b"\n" for line in (compacted, *context_after(native, compacted)))
    return b"".join(out)


def context_after(native: CodexNative, compacted: dict[str, Any]) -> list[dict[str, Any]]:
    """The rollout's last ``world_state`` and ``turn_context`` again, as Codex writes them after compacting.

    They tell Codex on resume what context the model already holds. Without them after a
    ``compacted`` line, Codex 0.171 writes its initial context again (skills, environment),
    and the copies the replacement history kept went twice. (A rollout with no world_state
    gets none here: its initial context is left out of the replacement history instead.)
    """
    lines = []
    ordinal = compacted.get("ordinal")
    for kind in ("world_state", "turn_context"):
        values = (r.value for r in reversed(native.records) if isinstance(r.value, dict))
        last = next((v for v in values if v.get("type") == kind), None)
        if last is None:
            continue
        line = {**last, "timestamp": compacted["timestamp"]} if "timestamp" in compacted else dict(last)
        if isinstance(ordinal, int) and "ordinal" in line:
            ordinal += 1
            line["ordinal"] = ordinal
        lines.append(line)
    counted = _token_count_after(native, compacted)
    if counted is not None:
        if isinstance(ordinal, int):
            counted["ordinal"] = ordinal + 1
        lines.append(counted)
    return lines


def _token_count_after(native: CodexNative, compacted: dict[str, Any]) -> dict[str, Any] | None:
    """The ``token_count`` Codex writes after compacting: the thread's totals as they were, the last call's usage
    none, its ``total_tokens`` the new history's estimated size. Codex resuming a rollout checks its auto-compact
    limit against the last count: left at the old call's (the history before compactctl compacted), it compacted
    again at once (0.171 with a limit between the two: a compaction call of 10,228 tokens for a history of 10.3k)."""
    values = (r.value for r in reversed(native.records) if isinstance(r.value, dict))
    last = next((v for v in values if v.get("type") == "event_msg" and _is_token_count(v.get("payload"))), None)
    info = last["payload"].get("info") if last is not None else None
    if last is None or not isinstance(info, dict) or not isinstance(info.get("last_token_usage"), dict):
        return None
    # Codex's own estimate counts four bytes a token; the last call's count less what compactctl took out keeps what
    # the history does not hold (instructions, tools) in it.
    after = len(jsonbytes.dumps(compacted["payload"].get("replacement_history") or []))
    before = sum(len(jsonbytes.dumps(item.value)) for unit in native.units for item in unit)
    last_total = _integer(info["last_token_usage"].get("total_tokens"))
    estimate = max((after + 3) // 4, last_total - max(before - after, 0) // 4)
    usage = {key: 0 for key in info["last_token_usage"]} | {"total_tokens": estimate}
    line = {**last, "payload": {**last["payload"], "info": {**info, "last_token_usage": usage}}}
    if "timestamp" in compacted:
        line["timestamp"] = compacted["timestamp"]
    return line


def _integer(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _is_token_count(payload: Any) -> bool:
    return isinstance(payload, dict) and payload.get("type") == "token_count"


_NAMESPACE = uuid.UUID("2c4f7a5e-9b1d-4e3a-8f60-1d2c3b4a5e6f")
NEW_ROLLOUT_TIME = "1970-01-01T00:00:00.000Z"  # no time to take from another format; the same bytes each run


def new_rollout(messages: list[Message]) -> list[dict[str, Any]]:
    """A rollout for messages from another format: session_meta with the system prompt, then the items.

    Codex 0.171 reads a rollout's session_meta only with a thread id and a timestamp (with ``"id": ""``
    it calls the rollout empty), and resumes without a word none of the items of lines that carry no
    ``ordinal`` and ``timestamp``: so every line has both, as Codex writes them.
    """
    system = next((m for m in messages if m.get("role") == "system"), None)
    meta: dict[str, Any] = {
        "id": str(uuid5(_NAMESPACE, "session")),
        "timestamp": NEW_ROLLOUT_TIME,
        "cwd": "",
        "originator": "compactctl",
        "cli_version": "",
        "source": "exec",
    }
    meta["base_instructions"] = {"text": content_text(system)} if system is not None else None
    rest = [m for m in messages if m is not system]
    items = [item for m in rest for item in message_items(m, None, system_role="developer")]
    lines = [{"type": "session_meta", "payload": meta}, *({"type": "response_item", "payload": i} for i in items)]
    return [{"timestamp": NEW_ROLLOUT_TIME, "ordinal": n, **line} for n, line in enumerate(lines)]


def _holding_initial_context(history: list[dict[str, Any]], native: CodexNative) -> list[dict[str, Any]]:
    """``history`` with all of the live initial context as Codex wrote it, first, where it left any out.

    The world_state restated after the line tells Codex the model holds that context, so Codex
    does not send it again: a step that dropped it (``window`` keeps only the tail) would leave
    the model without its environment and permissions. ``resumed_compaction`` is also what replay's
    rows count, so ``compact``'s written rollout sends what replay counted.
    """
    held = [
        item.value
        for unit, original in zip(native.units, native.originals, strict=False)
        if original is not None and client_context(original)
        for item in unit
    ]
    return resumed_compaction(held, history, initial_context)


def compacted_line(transcript: Transcript, native: CodexNative) -> dict[str, Any]:
    """The ``compacted`` rollout line Codex writes after compacting: summary plus replacement history."""
    history: list[dict[str, Any]] = []
    summaries: list[str] = []
    for position, (message, unit, same) in enumerate(sources(transcript, native)):
        origin = transcript.origin(position)
        if message.get("role") == "system" and origin is not None and origin == native.system:
            # The base instructions live in session_meta, not in the history; what a strategy
            # added to them can only go in as a developer message.
            if not same:
                base, text = _base_instructions(native.meta or {}) or "", content_text(message)
                added = text[len(base) :].strip() if text.startswith(base) else text
                if added:
                    history.extend(message_items({"role": "developer", "content": added}, None))
            continue
        if unit is None and message.get("role") in ("user", "system", "developer"):
            text = content_text(message)
            summaries.append(text)
            message = {**message, "role": "user", "content": f"{SUMMARY_PREFIX}\n{text}"}
            history.extend(message_items(message, None))
            continue
        if same and unit is not None:
            history.extend(item.value for item in unit)
        else:
            history.extend(message_items(message, unit, system_role="developer"))
    history.extend(item.value for item in native.trailing)
    if not any(isinstance(r.value, dict) and r.value.get("type") == "world_state" for r in native.records):
        # No world_state to restate after the line (rollouts before Codex wrote one): Codex
        # 0.171 then writes its initial context again, current, when it resumes from it.
        history = [item for item in history if not initial_context(item)]
    else:
        history = _holding_initial_context(history, native)
    message_text = f"{SUMMARY_PREFIX}\n" + "\n\n".join(summaries) if summaries else ""
    records = native.records
    timestamp = next((r.value.get("timestamp") for r in reversed(records) if isinstance(r.value, dict)), None)
    line: dict[str, Any] = {"timestamp": timestamp} if timestamp else {}
    # Recent Codex numbers every rollout line and refuses to resume a rollout whose last line has no number.
    ordinals = [
        r.value["ordinal"] for r in records if isinstance(r.value, dict) and isinstance(r.value.get("ordinal"), int)
    ]
    if ordinals:
        line["ordinal"] = max(ordinals) + 1
    return {**line, "type": "compacted", "payload": {"message": message_text, "replacement_history": history}}
