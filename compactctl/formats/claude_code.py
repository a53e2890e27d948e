"""``claude-code``: Claude Code session JSONL (``~/.claude/projects/<dir>/<session>.jsonl``).

Reading: ``user``/``assistant`` records carry Anthropic messages. Claude Code writes one
content block per assistant record, so consecutive assistant records sharing
``message.id`` are merged back into one message (non-message records in between are
skipped over); each ``tool_result`` becomes its own ``tool`` message, so parallel
results written as separate records are joined by simply following each other.
Attachments, snapshots, titles, queue operations, hook summaries, API error stubs and
(in a main session file) interleaved subagent sidechain records are not model input:
they stay in the file, untouched, in place. A subagent's own file (only sidechain
records) reads as that subagent's conversation. ``isMeta`` texts and user messages made
only of harness markup (``<command-...>``, ``<system-reminder>``, ``<ide_opened_file>``, ...)
are annotated ``kind: "harness"``, and compact summaries (``isCompactSummary``)
``kind: "summary"``: neither is something the user typed.

Records form a tree by ``uuid``/``parentUuid``: a rewind (an earlier prompt edited) or a
resume starts a new branch, and the abandoned one stays in the file. The model saw only
the active chain, from the leaf back to the root, so only that is read, in chain order;
records off it are kept aside like any other non-message record. A chain stops at a
``compact_boundary`` record (the model saw only what follows it), at a parent missing from
the file, or where it would loop. Parallel tool results, which Claude Code hangs off the
record holding each call rather than on the chain, are read with their call. Files without
``parentUuid`` links are read in line order, from the last compact boundary on.

Writing: unchanged sessions come back byte for byte. A compacted session is written as
Claude Code's own ``/compact`` does: every old record stays, then a ``system`` record with
``subtype: "compact_boundary"``, then the summary as a ``user`` record with
``isCompactSummary: true``, then the kept messages as new records chained by
``parentUuid`` (one content block per assistant record, as Claude Code writes them).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Literal

from compactctl import jsonbytes
from compactctl.digests import uuid5
from compactctl.errors import InputError
from compactctl.formats.anthropic import (
    assistant_blocks,
    assistant_message,
    content_to_blocks,
    tool_result_block,
    user_messages,
)
from compactctl.formats.api_rules import ANTHROPIC_CARRIED
from compactctl.formats.base import AutoCompact, Native, Signature, Transcript, is_unchanged, native_of, sources
from compactctl.formats.records import Record, annotate, check_fields, raw_line
from compactctl.transcript import ANNOTATION_KEY, Message, content_text, one_of

NAME = "claude-code"
SIGNATURE = Signature(
    (("type",), ("sessionId", "uuid", "leafUuid", "messageId"), ("message", "summary")),
    "records with a 'type' and a 'sessionId' or 'uuid'",
)
LINE_RECORDS = True
# Claude Code sends the messages after the last compact boundary to the Messages API as they are: one
# that opens on the model's turn is refused ("first message must use the user role"; 2.1.332, resuming
# a window that kept a tail opening on the assistant), so a cut keeps the request before it.
OPENS_ON_USER = True
UNIQUE_CALL_IDS = True  # the Messages API: "`tool_use` ids must be unique", across the request
CARRIED_PARTS = ANTHROPIC_CARRIED
CARRIES_USAGE = True  # each assistant line records its API usage (``compactctl.recorded``)
RESUMABLE = True  # ``claude --resume`` (``compactctl.sessions.claude_code``)
# Where Claude Code compacts on its own (shipped minified in the native binary; ``grep -a`` in
# ``.ci/cache/npm/node_modules/@anthropic-ai/claude-code/bin/claude.exe``): the threshold function is the
# effective window less a 13,000 buffer (2.1.332's ``$Ue``, 2.1.337's ``xKe``), the effective window the model's
# less min(its max output, 20,000) (``kfo``, ``F4r``): 167,000 on a 200,000-token window as the code reads.
# Measured, the real 2.1.337 against the loopback fake compacts 10,000 later, at the window less 23,000, on
# every model it compacts on: claude-sonnet-4-6 and claude-opus-4-6 after a call of 177,063 and not of 175,840
# (200k), claude-opus-4-7 after 977,041 and not 975,209, claude-sonnet-5, claude-haiku-5-5 and claude-mythos-5
# in the same bracket (1M, native: the window of ``replay.price_source.catalog_window``). Its older models it does
# not compact before the API refuses a call over the window (none of them did up to 188k-198k, nor
# claude-sonnet-4-5 and claude-haiku-4-5 up to 1.06M; claude-sonnet-4-5 did once the fake refused): their point
# is the window. ``CLAUDE_AUTOCOMPACT_PCT_OVERRIDE`` and ``CLAUDE_CODE_AUTO_COMPACT_WINDOW`` move it; a file
# does not record them. It runs a model on 200,000 unless its catalog says 1M native or a call went past it.
# Earlier releases compact every model, claude-opus-4-1 included, at the window less 45,000 (its 32,000 output
# room and the 13,000 buffer): measured on 1.0.69 (after 155,631, not 151,963), 2.0.0 (156,017; not 154,794) and
# 2.1.0 (155,451; not 154,853). 2.1.1-2.1.331 are not measured: read as 2.1.332's.
AUTO_COMPACT_OUTPUT_ROOM = 20_000  # kfo: min(maxOutputTokens, 20000) kept for the reply
AUTO_COMPACT_BUFFER = 13_000  # $Ue
AUTO_COMPACT_RESERVE = 23_000  # measured (above): 10,000 less than the code's two reserves read as
AUTO_COMPACT_OLD_OUTPUT_ROOM = 32_000  # releases up to 2.1.0: claude-opus-4-1's whole max output, not capped at 20,000
AUTO_COMPACT_BEFORE = AutoCompact(
    "Claude Code",
    reserve=AUTO_COMPACT_OLD_OUTPUT_ROOM + AUTO_COMPACT_BUFFER,
    runs_at_most=200_000,
    provider="anthropic",
)
AUTO_COMPACT = AutoCompact(
    "Claude Code",
    reserve=AUTO_COMPACT_RESERVE,
    earlier=((2, 1, 1), AUTO_COMPACT_BEFORE),
    runs_at_most=200_000,
    provider="anthropic",
    when_refused=frozenset(
        {
            "claude-3-5-haiku",
            "claude-3-5-sonnet",
            "claude-3-7-sonnet",
            "claude-haiku-4-5",
            "claude-opus-4-0",
            "claude-opus-4-1",
            "claude-opus-4-5",
            "claude-sonnet-4-0",
            "claude-sonnet-4-5",
        }
    ),
)

RECORD_TYPES = frozenset(
    {
        "user",
        "assistant",
        "system",
        "attachment",
        "summary",
        "queue-operation",
        "last-prompt",
        "ai-title",
        "custom-title",
        "file-history-snapshot",
    }
)
HARNESS_MARKUP = (
    "<command-",
    "<local-command-",
    "<system-reminder>",
    "<bash-input>",
    "<bash-stdout>",
    "<bash-stderr>",
    "<task-notification>",
    "<ide_opened_file>",
    "<ide_selection>",
    "<ide_diagnostics>",
    "[Request interrupted by user",
    "Caveat: The messages below were generated by the user while running local commands",
)
SUMMARY_INTRO = (
    "This session is being continued from a previous conversation that ran out of context. "
    "The conversation is summarized below:\n"
)
# The envelope keys of a record, in the order Claude Code writes them.
ENVELOPE = ("parentUuid", "isSidechain", "userType", "cwd", "sessionId", "version", "gitBranch", "entrypoint", "slug")
COPIED_ID_PREFIX = "msg_compactctl_"  # the ids of the assistant records compactctl writes after its boundary
_NAMESPACE = uuid.UUID("6f1c9b1e-2f5a-4a55-9a8e-63a1d1c0c7e1")


def detect(records: list[Record]) -> bool:
    return any(
        isinstance(r.value, dict)
        and one_of(r.value.get("type"), RECORD_TYPES)
        and any(key in r.value for key in ("sessionId", "uuid", "leafUuid", "messageId"))
        for r in records[:20]
    )


def _is_message_record(value: dict[str, Any], sidechain: bool = False) -> bool:
    """A user/assistant record of the conversation being read (the main one, or a subagent's own file)."""
    return (
        value.get("type") in ("user", "assistant")
        and isinstance(value.get("message"), dict)
        and bool(value.get("isSidechain")) == sidechain
        and not value.get("isApiErrorMessage")
    )


def _is_subagent_file(records: list[Record]) -> bool:
    """Subagent transcripts (``subagents/agent-<id>.jsonl``) hold only sidechain records."""
    values = [r.value for r in records if isinstance(r.value, dict) and r.value.get("type") in ("user", "assistant")]
    return bool(values) and all(v.get("isSidechain") for v in values)


def _is_boundary(value: dict[str, Any]) -> bool:
    return value.get("type") == "system" and value.get("subtype") == "compact_boundary"


def is_compactctl_boundary(value: dict[str, Any]) -> bool:
    """A ``compact_boundary`` compactctl wrote: its uuid is the one the writer derives from the session and the record
    it follows (``_Chain``), where Claude Code's are random. A strategy that writes no summary (masking, trimming)
    leaves no other mark on it."""
    name = f"{value.get('sessionId')}/{value.get('logicalParentUuid')}/0"
    return _is_boundary(value) and value.get("uuid") == str(uuid5(_NAMESPACE, name))


def harness_kind(record: dict[str, Any], content: Any) -> str | None:
    """``"summary"`` for a compact summary, ``"harness"`` for text the harness wrote, else None.

    A message is the harness's when every text part of it is harness markup: an
    ``<ide_opened_file>`` block before the prompt the person typed does not make the prompt harness.
    """
    texts = [content] if isinstance(content, str) else []
    if isinstance(content, list):
        texts = [str(p.get("text", "")) for p in content if isinstance(p, dict) and p.get("type") == "text"]
    if record.get("isCompactSummary") or (texts and texts[0].startswith(SUMMARY_INTRO[:60])):
        return "summary"
    if record.get("isMeta"):
        return "harness"
    return "harness" if texts and all(t.lstrip().startswith(HARNESS_MARKUP) for t in texts) else None


@dataclass
class _Group:
    """Consecutive records that make one message."""

    kind: str  # "assistant" or "user"
    records: list[int]
    message_id: Any = None
    blocks: list[Any] = field(default_factory=list)


def _uuid(value: dict[str, Any], key: str = "uuid") -> str | None:
    found = value.get(key)
    return found if isinstance(found, str) else None


def _ends_context(value: dict[str, Any], sidechain: bool) -> bool:
    """A record a conversation can end at: a message, or a compact boundary nothing followed yet."""
    return _is_message_record(value, sidechain) or (_is_boundary(value) and bool(value.get("isSidechain")) == sidechain)


def _last_message(records: list[Record], sidechain: bool) -> int | None:
    return next((i for i in reversed(range(len(records))) if _ends_context(records[i].value, sidechain)), None)


def _leaf(records: list[Record], by_uuid: dict[str, int], sidechain: bool) -> int | None:
    """The record the conversation ends at: where the last ``last-prompt`` points, else the last message.

    ``last-prompt`` is written as a prompt is sent, so records written after it continue
    its thread: the leaf is the last message (or compact boundary) descending from the one
    it names. A compact boundary written after it joins the thread whatever it links to:
    only the live conversation is compacted, and a prompt sent since would have written a
    newer ``last-prompt``.
    """
    pointer: dict[str, Any] = next((r.value for r in reversed(records) if r.value.get("type") == "last-prompt"), {})
    anchor = by_uuid.get(_uuid(pointer, "leafUuid") or "")
    if anchor is None or bool(records[anchor].value.get("isSidechain")) != sidechain:
        return _last_message(records, sidechain)
    leaf, thread = anchor, {records[anchor].value["uuid"]}
    for index in range(anchor + 1, len(records)):
        value = records[index].value
        joins = _is_boundary(value) and _ends_context(value, sidechain)
        if (joins or _uuid(value, "parentUuid") in thread) and _uuid(value) is not None:
            thread.add(value["uuid"])
            leaf = index if _ends_context(value, sidechain) else leaf
    return leaf


def _active_chain(records: list[Record], sidechain: bool, path: str = "<input>") -> list[int] | None:
    """Indices of the records on the chain from the root (or a compact boundary) to the leaf.

    None when no message record's ``parentUuid`` names a record in the file: there is no
    tree to follow, so the file is read in line order.
    """
    by_uuid: dict[str, int] = {}
    for position, record in enumerate(records):
        if (key := _uuid(record.value)) is not None:
            by_uuid.setdefault(key, position)
    if not any(_uuid(r.value, "parentUuid") in by_uuid and _is_message_record(r.value, sidechain) for r in records):
        return None
    for record in records:
        # A root says so with "parentUuid": null; a message record without the key cuts the chain
        # in two, and reading on would drop one side of it without a word.
        if _is_message_record(record.value, sidechain) and "parentUuid" not in record.value:
            kind = record.value.get("type")
            raise InputError(
                f"a {kind} record has no parentUuid: the conversation chain breaks here", path, record.line
            )
    chain: list[int] = []
    seen: set[int] = set()
    values = [r.value for r in records]
    relinks = preserved_relinks(values, by_uuid)
    index: int | None = _leaf(records, by_uuid, sidechain)
    while index is not None and index not in seen:  # a cycle ends the chain instead of looping
        chain.append(index)
        seen.add(index)
        if _is_boundary(records[index].value):
            break
        index = relinked_parent(values, by_uuid, relinks, index)
    return _with_preserved(records, by_uuid, chain[::-1])


def preserved_relinks(values: list[dict[str, Any]], by_uuid: dict[str, int]) -> dict[int, tuple[int, int]]:
    """Per record a partial compaction kept verbatim: that compaction's boundary and summary (its anchor).

    Claude Code 2.1 leaves the kept records where they were, before the boundary, with their old
    ``parentUuid``; on resume it reads them after the summary. A prompt written after the boundary that
    hangs off one of them (``--resume-session-at`` a kept message: a rewind that looks to be to before
    the compaction) is sent after the summary too, not after the whole history (seen on 2.1.332)."""
    relinks: dict[int, tuple[int, int]] = {}
    for position, value in enumerate(values):
        metadata = value.get("compactMetadata") if _is_boundary(value) else None
        if not isinstance(metadata, dict):
            continue
        anchor, kept = _kept(metadata, by_uuid, values)
        summary = by_uuid.get(anchor) if isinstance(anchor, str) else None
        for record in kept if summary is not None else []:
            relinks[record] = (position, summary)  # type: ignore[assignment]
    return relinks


def _kept(metadata: dict[str, Any], by_uuid: dict[str, int], values: list[dict[str, Any]]) -> tuple[Any, list[int]]:
    """A partial compaction's summary uuid (``anchorUuid``) and the records it kept, in order: its
    ``preservedMessages`` list, else its ``preservedSegment`` walked from ``tailUuid`` back to ``headUuid``."""
    segment, listed = metadata.get("preservedSegment"), metadata.get("preservedMessages")
    if isinstance(listed, dict) and isinstance(listed.get("uuids"), list):
        return listed.get("anchorUuid"), [by_uuid[u] for u in listed["uuids"] if isinstance(u, str) and u in by_uuid]
    if not isinstance(segment, dict):
        return None, []
    walked: list[int] = []
    current = segment.get("tailUuid")
    while isinstance(current, str) and current in by_uuid and by_uuid[current] not in walked:
        walked.append(by_uuid[current])
        if current == segment.get("headUuid"):
            return segment.get("anchorUuid"), walked[::-1]
        current = _uuid(values[by_uuid[current]], "parentUuid")
    return segment.get("anchorUuid"), []


def relinked_parent(
    values: list[dict[str, Any]], by_uuid: dict[str, int], relinks: dict[int, tuple[int, int]], at: int
) -> int | None:
    """The record before ``at`` on the chain the client sends: its parent, or, where ``at`` was written after a
    partial compaction and hangs off a record that compaction kept, the compaction's summary."""
    parent = by_uuid.get(_uuid(values[at], "parentUuid") or "")
    boundary, summary = relinks.get(parent, (None, None)) if parent is not None else (None, None)
    return summary if boundary is not None and boundary < at else parent


def _with_preserved(records: list[Record], by_uuid: dict[str, int], chain: list[int]) -> list[int]:
    """The chain with the messages a partial compaction kept verbatim, read right after its summary.

    Recent Claude Code keeps the last messages before a ``/compact`` where they are, before
    the boundary, and names them in ``compactMetadata``: ``preservedSegment`` (``headUuid``
    to ``tailUuid``, walked by ``parentUuid``, read after ``anchorUuid``, the summary) or
    ``preservedMessages`` (a ``uuids`` list). On resume it sends them after the summary.
    """
    boundary = records[chain[0]].value if chain else {}
    metadata = boundary.get("compactMetadata") if _is_boundary(boundary) else None
    if not isinstance(metadata, dict):
        return chain
    anchor, preserved = _kept(metadata, by_uuid, [r.value for r in records])
    at = next((n for n, i in enumerate(chain) if _uuid(records[i].value) == anchor), None)
    if at is None or not preserved:
        return chain
    return [*chain[: at + 1], *(i for i in preserved if i not in chain), *chain[at + 1 :]]


def _result_ids(value: dict[str, Any]) -> set[Any]:
    """The call ids a user record answers."""
    message = value.get("message") if value.get("type") == "user" else None
    content = message.get("content") if isinstance(message, dict) else None
    blocks = content if isinstance(content, list) else []
    return {
        b["tool_use_id"]
        for b in blocks
        if isinstance(b, dict) and b.get("type") == "tool_result" and isinstance(b.get("tool_use_id"), str)
    }


def _with_parallel_results(records: list[Record], chain: list[int], sidechain: bool) -> list[int]:
    """The chain plus what a single-parent walk misses around a response split over records.

    Claude Code chains a response's blocks one record after another but hangs each tool
    result off the record holding its call (``sourceToolAssistantUUID``), and the next
    record continues from the last result written. With parallel calls the walk back from
    the leaf passes through one result only; the other results (and, when results came
    back out of order, the later blocks) hang beside the chain. They belong to the same
    API call, so they are read right after its last block on the chain, in file order.
    """
    blocks_of: dict[Any, list[int]] = {}  # message.id -> its assistant records, in file order
    results_of: dict[str, list[int]] = {}  # parent uuid -> tool-result records hanging off it
    for index, record in enumerate(records):
        value = record.value
        if not _is_message_record(value, sidechain):
            continue
        if value["type"] == "assistant" and isinstance(value["message"].get("id"), str):
            blocks_of.setdefault(value["message"]["id"], []).append(index)
        elif _result_ids(value) and (parent := _uuid(value, "parentUuid")) is not None:
            results_of.setdefault(parent, []).append(index)
    last_block: dict[Any, int] = {}  # message.id -> position of its last record on the chain
    for position, index in enumerate(chain):
        value = records[index].value
        assistant = value.get("type") == "assistant" and _is_message_record(value, sidechain)
        if assistant and isinstance(message_id := value["message"].get("id"), str):
            last_block[message_id] = position
    taken = set(chain)
    answered = {call for index in chain for call in _result_ids(records[index].value)}
    after: dict[int, list[int]] = {}
    for message_id, position in last_block.items():
        # A sibling block counts only if it chains from a block already taken (not a copy elsewhere).
        response = {_uuid(records[i].value) for i in blocks_of.get(message_id, []) if i in taken}
        siblings = []
        for index in blocks_of.get(message_id, []):
            if index not in taken and _uuid(records[index].value, "parentUuid") in response:
                siblings.append(index)
                response.add(_uuid(records[index].value))
        taken.update(siblings)
        results = []
        for index in sorted(i for uid in response if uid for i in results_of.get(uid, [])):
            calls = _result_ids(records[index].value)
            if index not in taken and not calls & answered:
                results.append(index)
                taken.add(index)
                answered |= calls
        if siblings or results:
            after[position] = siblings + results
    return [index for position, first in enumerate(chain) for index in (first, *after.get(position, []))]


def _groups(records: list[Record], order: Iterable[int], sidechain: bool, path: str) -> list[_Group]:
    """API messages (assistant records merged by ``message.id``) from the records in ``order``.

    Only what follows the last compact boundary in ``order`` is live context.
    """
    groups: list[_Group] = []
    open_assistant: _Group | None = None
    for index in order:
        record = records[index]
        value = record.value
        if _is_boundary(value) and bool(value.get("isSidechain")) == sidechain:
            groups, open_assistant = [], None
            continue
        if not _is_message_record(value, sidechain):
            continue
        message = value["message"]
        content = message.get("content")
        if not isinstance(content, (str, list)):
            raise InputError(f"{value['type']} message content must be a string or a list of blocks", path, record.line)
        if value["type"] == "assistant":
            blocks = content if isinstance(content, list) else [{"type": "text", "text": content}]
            if (
                open_assistant is not None
                and message.get("id") is not None
                and open_assistant.message_id == message.get("id")
            ):
                open_assistant.records.append(index)
                open_assistant.blocks.extend(blocks)
                continue
            message_id = message.get("id") if isinstance(message.get("id"), str) else None
            open_assistant = _Group("assistant", [index], message_id, list(blocks))
            groups.append(open_assistant)
        else:
            open_assistant = None
            groups.append(_Group("user", [index]))
    return groups


@dataclass(frozen=True)
class Source:
    """The records one canonical message was read from."""

    role: Literal["assistant", "user"]
    records: tuple[int, ...]  # an assistant response's records (one per block), or the user record
    blocks: tuple[int, ...] | None = None  # the user content blocks it holds; None: the whole content


@dataclass(frozen=True)
class ClaudeCodeNative(Native[Source]):
    """What a Claude Code session holds besides the messages: its records, the active leaf."""

    records: tuple[Record, ...] = ()
    leaf: int | None = None  # the record new records continue from (the active leaf); None: no message

    def resumed(self, messages: list[Message]) -> list[Message]:
        # The old tool results the client cut after an idle hour (``tool_results_cut``) go as their stand-in again.
        from compactctl.formats.claude_code_cut import resumed_cut

        return super().resumed(resumed_cut(messages, [record.value for record in self.records]))

    def continues_another(self) -> bool:
        # A forked subagent's file (2.1.332, ``subagent_type: "fork"``) opens on a ``fork-context-ref``: the client
        # sends the session's context up to ``parentLastUuid`` first, then this file's copy of the Agent call.
        return any(isinstance(r.value, dict) and r.value.get("type") == FORK_REF for r in self.records[:1])


FORK_REF = "fork-context-ref"  # the first record of a forked subagent's file: whose context it goes on from

# The fields the reader and the recorded-usage reader rely on, with the type each must have.
RECORD_FIELDS = (
    ("type", "text"), ("uuid", "text"), ("parentUuid", "text"), ("message", "object"), ("message.role", "text"),
    ("message.model", "text"), ("message.id", "text"), ("message.usage", "object"), ("timestamp", "text"),
    ("message.usage.input_tokens", "count"), ("message.usage.output_tokens", "count"),
    ("message.usage.cache_creation_input_tokens", "count"), ("message.usage.cache_read_input_tokens", "count"),
)  # fmt: skip


def read(records: list[Record], path: str) -> list[Transcript]:
    for record in records:
        if not isinstance(record.value, dict):
            kind = type(record.value).__name__
            raise InputError(f"expected a Claude Code record object, got {kind}", path, record.line)
        check_fields(record, path, RECORD_FIELDS)
    sidechain = _is_subagent_file(records)
    chain = _active_chain(records, sidechain, path)
    order = range(len(records)) if chain is None else _with_parallel_results(records, chain, sidechain)
    groups = _groups(records, order, sidechain, path)
    messages: list[Message] = []
    units: list[Source] = []
    counted: set[Any] = set()
    for group in groups:
        if group.kind == "assistant":
            message = assistant_message(group.blocks)
            usage = records[group.records[-1]].value["message"].get("usage")
            # A response whose records a tool result interrupted is still one call: count its usage once.
            if isinstance(usage, dict) and (group.message_id is None or group.message_id not in counted):
                message["usage"] = usage  # the API-reported usage of this call, for report
                counted.add(group.message_id)
            messages.append(message)
            units.append(Source("assistant", tuple(group.records)))
            continue
        value = records[group.records[0]].value
        content = value["message"].get("content")
        for message, blocks in user_messages(content):
            written_by = harness_kind(value, content) if message["role"] == "user" else None
            annotations = {"kind": written_by} if written_by else {}
            messages.append(annotate(message, **annotations))
            units.append(Source("user", tuple(group.records), tuple(blocks) if isinstance(content, list) else None))
    leaf = chain[-1] if chain else _last_message(records, sidechain)
    native = ClaudeCodeNative(tuple(units), tuple(dict(m) for m in messages), tuple(records), leaf)
    return [Transcript(messages, native=native, origins=tuple(range(len(messages))))]


# -- writing --------------------------------------------------------------------------


def write(transcripts: list[Transcript]) -> bytes:
    out: list[bytes] = []
    for transcript in transcripts:
        native = native_of(transcript, ClaudeCodeNative)
        records = native.records if native is not None else ()
        out.extend(raw_line(record) for record in records)
        if not is_unchanged(transcript, native):
            new = compacted_records(transcript, native) if native and records else session_records(transcript.messages)
            out.extend(jsonbytes.dumps(record) + b"\n" for record in new)
    return b"".join(out)


class _Chain:
    """New records chained by ``parentUuid``, with deterministic uuids (reruns give the same file)."""

    def __init__(self, base: dict[str, Any], parent: str | None, seed: str) -> None:
        self.base = base
        self.parent = parent
        self.seed = seed
        self.records: list[dict[str, Any]] = []
        self.renamed: dict[str, str] = {}  # old uuid -> new uuid

    def add(self, record: dict[str, Any], old_uuid: Any = None) -> dict[str, Any]:
        new_uuid = str(uuid5(_NAMESPACE, f"{self.seed}/{len(self.records)}"))
        envelope = {key: self.base[key] for key in ENVELOPE if key in self.base}
        merged = {**envelope, **record, "parentUuid": self.parent, "uuid": new_uuid}
        merged.setdefault("timestamp", self.base.get("timestamp"))
        if isinstance(old_uuid, str):
            self.renamed[old_uuid] = new_uuid
        self.records.append(merged)
        self.parent = new_uuid
        return merged


def compacted_records(transcript: Transcript, native: ClaudeCodeNative) -> list[dict[str, Any]]:
    """The records Claude Code's ``/compact`` would append: boundary, summary, then the kept messages."""
    records = list(native.records)
    values = [r.value for r in records if isinstance(r.value, dict)]
    sidechain = _is_subagent_file(records)
    leaf = native.leaf
    # The new context continues the active branch, not whatever was written last (an abandoned one).
    last = records[leaf].value if leaf is not None else (values[-1] if values else {})
    last_uuid = _uuid(last) or next((v.get("uuid") for v in reversed(values) if _uuid(v)), None)
    base = {key: last[key] for key in (*ENVELOPE, "timestamp") if key in last}
    base.setdefault("sessionId", str(uuid5(_NAMESPACE, "session")))
    base["isSidechain"] = sidechain
    chain = _Chain(base, None, f"{base.get('sessionId')}/{last_uuid}")
    chain.add(
        {
            "type": "system",
            "subtype": "compact_boundary",
            "content": "Conversation compacted",
            "isMeta": False,
            "timestamp": base.get("timestamp"),
            "level": "info",
            "compactMetadata": {"trigger": "manual", "preTokens": _pre_tokens(native)},
            "logicalParentUuid": last_uuid,
        }
    )
    chain.records[0]["parentUuid"] = None
    written = list(sources(transcript, native))
    summary, kept = (written[0][0], written[1:]) if written and _is_new_summary(written[0]) else (None, written)
    if summary is not None:
        chain.add(
            {
                "type": "user",
                "message": {"role": "user", "content": SUMMARY_INTRO + content_text(summary)},
                "isVisibleInTranscriptOnly": True,
                "isCompactSummary": True,
            }
        )
    # The kept messages are copied after the summary. (Claude Code's own partial /compact
    # leaves them in place and names them in compactMetadata.preservedSegment; written that
    # way by compactctl, Claude Code 2.1.332 resumed with the summary alone, so not that.)
    for message, unit, same in kept:
        if message.get("role") == "assistant":
            _add_assistant(chain, records, message, unit, same)
        else:
            _add_user(chain, records, message, unit, same)
    # As Claude Code does after compacting: the leaf to resume from, named explicitly.
    pointer: dict[str, Any] = {"type": "last-prompt"}
    prompt = next(
        (m for m in reversed(transcript.messages) if m.get("role") == "user" and not _annotated_harness(m)), None
    )
    if prompt is not None and prompt is not summary:
        pointer["lastPrompt"] = content_text(prompt)[:200]
    pointer.update({"leafUuid": chain.records[-1]["uuid"], "explicit": True, "sessionId": base.get("sessionId")})
    return [*chain.records, pointer]


def written_summary(message: Message) -> Message:
    """A new summary as the writer writes it: the user's ``isCompactSummary`` turn behind ``SUMMARY_INTRO``."""
    return {"role": "user", "content": SUMMARY_INTRO + content_text(message)}


def _is_new_summary(written: tuple[Message, Source | None, bool]) -> bool:
    message, unit, _ = written
    return unit is None and message.get("role") not in ("assistant", "tool")


def _annotated_harness(message: Message) -> bool:
    annotations = message.get(ANNOTATION_KEY)
    return isinstance(annotations, dict) and annotations.get("kind") == "harness"


def session_records(messages: list[Message]) -> list[dict[str, Any]]:
    """A session for messages from another format (no compaction boundary: nothing came before)."""
    base = {"isSidechain": False, "userType": "external", "sessionId": str(uuid5(_NAMESPACE, "session"))}
    chain = _Chain(base, None, "new")
    for message in messages:
        if message.get("role") == "assistant":
            _add_assistant(chain, [], message, None, False)
        else:
            _add_user(chain, [], message, None, False)
    return chain.records


def _pre_tokens(native: ClaudeCodeNative) -> int:
    """What the context held before: the last API-reported input, else a chars/4 estimate."""
    for message in reversed(native.originals):
        usage = message.get("usage") if message else None
        if isinstance(usage, dict) and "input_tokens" in usage:
            return sum(
                int(usage.get(k) or 0)
                for k in ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
            )
    return sum(len(content_text(m)) for m in native.originals if m) // 4


def _add_assistant(chain: _Chain, records: list[Record], message: Message, unit: Source | None, same: bool) -> None:
    templates = [records[i].value for i in unit.records] if unit else []
    blocks = [block for t in templates for block in (t["message"].get("content") or [])] if templates else []
    if not same:
        blocks = assistant_blocks(message, blocks or None)
    first = templates[0] if templates else {}
    native = dict(first.get("message") or {}) or {"type": "message", "role": "assistant", "model": "<synthetic>"}
    # A new id, never the old record's: Claude Code joins the assistant records of one
    # message.id across the whole file when it resumes, so a copy keeping the id pulls the
    # old records (still before the boundary) back in and sends their blocks twice.
    native["id"] = COPIED_ID_PREFIX + uuid5(_NAMESPACE, f"{chain.seed}/message/{len(chain.records)}").hex[:24]
    by_block = {id(t["message"]["content"][0]): t for t in templates if len(t["message"].get("content") or []) == 1}
    # Its usage is the old call's, of the history before compactctl compacted: Claude Code resuming the file takes the
    # last usage after the boundary for the context's size, and would compact again at once where the old one was
    # near its threshold. Marked as the client marks a response whose usage is no metered call (``isUnmetered``).
    unmetered = {"isUnmetered": True} if "usage" in native else {}
    for n, block in enumerate(blocks):
        # A block written back as read keeps its own record's envelope (uuid, timestamp).
        template = by_block.get(id(block)) or (templates[n] if n < len(templates) else first)
        record = {k: v for k, v in template.items() if k not in ("uuid", "parentUuid", "message")}
        record.setdefault("type", "assistant")
        chain.add({**record, **unmetered, "message": {**native, "content": [block]}}, template.get("uuid"))


def _add_user(chain: _Chain, records: list[Record], message: Message, unit: Source | None, same: bool) -> None:
    template = records[unit.records[0]].value if unit else {}
    record = {k: v for k, v in template.items() if k not in ("uuid", "parentUuid", "message")}
    if not same:
        record.pop("toolUseResult", None)  # the tool's own copy of the output no longer matches it
    if isinstance(record.get("sourceToolAssistantUUID"), str):
        record["sourceToolAssistantUUID"] = chain.renamed.get(
            record["sourceToolAssistantUUID"], record["sourceToolAssistantUUID"]
        )
    record["type"] = "user"
    if message.get("role") == "tool":
        blocks = unit.blocks if unit and unit.blocks else None
        block_template = template["message"]["content"][blocks[0]] if blocks else None
        content: Any = [block_template if same and block_template else tool_result_block(message, block_template)]
    elif same and unit:
        native = template["message"]["content"]
        content = [native[j] for j in unit.blocks] if unit.blocks is not None else native
    else:
        content = message.get("content")
        content = content if isinstance(content, str) else content_to_blocks(content)
    chain.add({**record, "message": {**(template.get("message") or {"role": "user"}), "content": content}})
