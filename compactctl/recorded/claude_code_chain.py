"""Which of a Claude Code file's records the model saw: the chain, its compactions, its sidechains.

- **The chain.** The model saw the chain from the leaf back to the root by ``parentUuid``.
  Every record with a uuid is a link, so a ``system`` record (an ``api_error``, a hook
  summary) is transparent: the next prompt may hang off it. Tool results hang off the
  record of their call, beside the chain: they are read with their call, by ``tool_use_id``.
- **Compactions.** A ``compact_boundary`` starts a new chain; its ``logicalParentUuid``
  names the leaf before it, so the walk goes on there and the whole history is read. Old
  versions (1.0.x) wrote no boundary: the summary (``isCompactSummary``) is a new root, and
  the history before it ends at the main record written just before it.
- **Sidechains** (subagents, written inline by older versions) are contexts of their own:
  one per sidechain root, each walked the same way.

``recorded/claude_code.py`` turns a walked chain into a context's messages, calls and bill.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from compactctl.formats.claude_code import COPIED_ID_PREFIX, preserved_relinks, relinked_parent
from compactctl.recorded import digest_key

SYNTHETIC_MODEL = "<synthetic>"


def uuid_of(value: dict[str, Any], key: str = "uuid") -> str | None:
    found = value.get(key)
    return found if isinstance(found, str) and found else None


def is_call_record(value: dict[str, Any]) -> bool:
    message = value.get("message")
    return (
        value.get("type") == "assistant"
        and isinstance(message, dict)
        and not value.get("isApiErrorMessage")
        and message.get("model") != SYNTHETIC_MODEL
    )


def is_boundary(value: dict[str, Any]) -> bool:
    return value.get("type") == "system" and value.get("subtype") == "compact_boundary"


def is_message(value: dict[str, Any]) -> bool:
    return value.get("type") in ("user", "assistant") and isinstance(value.get("message"), dict)


def result_ids(value: dict[str, Any]) -> list[str]:
    message = value.get("message")
    content = message.get("content") if value.get("type") == "user" and isinstance(message, dict) else None
    if not isinstance(content, list):
        return []
    # A tool_result without its id (a cut or hand-edited record) answers no call.
    return [
        b["tool_use_id"]
        for b in content
        if isinstance(b, dict) and b.get("type") == "tool_result" and "tool_use_id" in b
    ]


@dataclass
class Index:
    """Lookups over one file's records, built once."""

    values: list[dict[str, Any]]
    session_id: str | None = None  # the file's own session (the last record's ``sessionId``)
    by_uuid: dict[str, int] = field(default_factory=dict)
    responses: dict[str, list[int]] = field(default_factory=dict)  # message.id -> its records, in file order
    results: dict[str, int] = field(default_factory=dict)  # tool_use_id -> the first record answering it
    # Claude Code 2.1+ writes, with each attachment it sends, the text it sent (``rendered``); in a
    # file that has it, an attachment without it (``prompt_snapshot``, ``session_context``) is never sent.
    renders_attachments: bool = False
    # Per record a partial compaction kept: that compaction's boundary and summary (``preserved_relinks``).
    relinks: dict[int, tuple[int, int]] = field(default_factory=dict)
    # The ``copy_key``s of responses another file of the run made and billed, each with that file (``read``'s).
    billed_elsewhere: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.renders_attachments = any(v.get("type") == "attachment" and "rendered" in v for v in self.values)
        for position, value in enumerate(self.values):
            if (key := uuid_of(value)) is not None:
                self.by_uuid.setdefault(key, position)
            if is_call_record(value) and isinstance(value["message"].get("id"), str):
                self.responses.setdefault(value["message"]["id"], []).append(position)
            for call_id in result_ids(value):
                if isinstance(call_id, str):  # a tool_use_id of another type answers no call
                    self.results.setdefault(call_id, position)
        self.relinks = preserved_relinks(self.values, self.by_uuid)

    def copied_from(self, message_id: str) -> str | None:
        """The session that made this response, where it is not this file's own (a fork's copy), or where
        compactctl copied it after its boundary (plain ``compact``'s output keeps the session's id, and the
        response was made, and billed, before the boundary)."""
        record = self.values[self.responses[message_id][0]]
        made_by = record.get("requestSessionId")
        if isinstance(made_by, str) and made_by and made_by != self.session_id:
            return made_by
        if message_id.startswith(COPIED_ID_PREFIX):
            session = record.get("sessionId")
            return session if isinstance(session, str) and session else "compactctl"
        return None

    def copy_key(self, message_id: str, usage: dict[str, Any]) -> str | None:
        """``RecordedCall.copy_key`` of a response: its id, what its records said and its usage, and for 2.x the
        ``uuid`` of its first record. 1.x's ``--resume`` copies the session's records into a new file with new
        uuids and nothing that says so; a file a user copied (a backup, a renamed copy) keeps every record as it
        was, uuids included; 2.x's own copies (``--fork-session``) name the session that made them
        (``copied_from``). The loopback fake's ids (``msg_fake000002``) repeat across 2.x runs of one script, with
        what they said and their usage, but under other uuids (random per record): no copy."""
        records = [self.values[at] for at in self.responses[message_id]]
        said = [[r["message"].get("model"), r["message"].get("content")] for r in records] + [usage]
        if str(records[0].get("version") or "").startswith("1."):
            return digest_key(message_id, said)
        return digest_key(f"{message_id} {uuid_of(records[0])}", said)

    def parent(self, index: int) -> int | None:
        """The record before ``index`` as the client sends it (after a partial compaction's summary where
        ``index`` hangs off a record that compaction kept: ``formats.claude_code.preserved_relinks``)."""
        return relinked_parent(self.values, self.by_uuid, self.relinks, index)


def chain_to(index: Index, leaf: int, sidechain: bool) -> list[int]:
    """Record indices from the first root to ``leaf``, walking back through compactions."""
    values = index.values
    chain: list[int] = []
    seen: set[int] = set()
    at: int | None = leaf
    while at is not None and at not in seen:
        chain.append(at)
        seen.add(at)
        value = values[at]
        parent = index.parent(at)
        if parent is None and is_boundary(value):
            parent = index.by_uuid.get(uuid_of(value, "logicalParentUuid") or "")
        if parent is None and value.get("isCompactSummary"):
            # 1.0.x: the summary is a new root; the history before it ends just before it in the file.
            parent = next(
                (
                    j
                    for j in range(at - 1, -1, -1)
                    if uuid_of(values[j]) is not None
                    and bool(values[j].get("isSidechain")) == sidechain
                    and j not in seen
                    and not _is_summary_record(values[j])
                ),
                None,
            )
        at = parent
    return chain[::-1]


def _is_summary_record(value: dict[str, Any]) -> bool:
    return value.get("type") == "summary"


def leaves(index: Index, sidechain: bool) -> list[int]:
    """The leaf of the main conversation, or (for sidechains) one per sidechain tree."""
    values = index.values
    members = [
        i
        for i, v in enumerate(values)
        if (is_message(v) or v.get("type") in ("attachment", "system"))
        and bool(v.get("isSidechain")) == sidechain
        and uuid_of(v) is not None
    ]
    if not members:
        return []
    if not sidechain:
        pointer = next((v for v in reversed(values) if v.get("type") == "last-prompt"), None)
        anchor = index.by_uuid.get(uuid_of(pointer or {}, "leafUuid") or "")
        last = max((i for i in members if is_message(values[i]) or is_boundary(values[i])), default=None)
        if last is None:  # records with uuids, none of them a message: no chain to walk
            return []
        # The last-prompt pointer is written as a prompt is sent: what follows it continues its thread.
        return [last if anchor is None or anchor < last else anchor]
    root_of: dict[int, int] = {}
    for i in members:
        j, hops = i, 0
        while hops < len(values):
            parent = index.parent(j)
            if parent is None and is_boundary(values[j]):
                # A compaction's boundary is a new root going on from the tree it compacted (its logical parent):
                # one sidechain, walked once (chain_to crosses it), not a tree of its own.
                parent = index.by_uuid.get(uuid_of(values[j], "logicalParentUuid") or "")
            if parent is None:
                break
            j, hops = parent, hops + 1
        root_of[i] = j
    last_per_root: dict[int, int] = {}
    for i in members:
        if is_message(values[i]):
            last_per_root[root_of[i]] = i
    return sorted(last_per_root.values())
