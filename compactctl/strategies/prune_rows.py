"""What prune's passes read of each message: its ``Row`` (what it says by itself), or, for a
prune outside a replay, the columns straight from one walk (``walked_columns``).

Inside a replay each message's row is kept by the message's identity (``message_memo``), so a
context that is mostly the last compaction's messages costs what is new. A one-shot prune keeps
nothing, and building a row per message to take it apart again is most of its time: there the
columns are filled from the messages in one loop, and only the rare columns' entries are written
one by one. Both give the same columns (tests/strategies/test_prune_replayed.py).
"""

from __future__ import annotations

import itertools
from array import array
from collections.abc import Iterable
from typing import Any, NamedTuple

import orjson

from compactctl import jsonbytes, lazyre
from compactctl.digests import blake2b
from compactctl.facts import fold
from compactctl.message_memo import by_message, values_of
from compactctl.transcript import (
    ANNOTATION_KEY,
    OBSERVATION_KIND,
    Message,
    content_text,
    tool_calls_of,
)

STUB_PREFIX = "[compactctl: "


_STUB = lazyre.compile(r"\[compactctl: (?:superseded by|duplicate of) message #\d+\]")


def is_stub(message: Message) -> bool:
    """True for a message an earlier prune already elided."""
    content = message.get("content")
    text = content if isinstance(content, str) else content_text(message) if isinstance(content, list) else ""
    return text.startswith(STUB_PREFIX) and _STUB.fullmatch(text) is not None


def canonical(value: Any) -> str:
    """A stable spelling of a key or of call arguments (sorted keys; unparsable text as it is)."""
    if isinstance(value, str):
        text = value
        try:
            value = orjson.loads(text)
        except orjson.JSONDecodeError:
            return text
    try:
        return jsonbytes.dumps(value, sort_keys=True).decode()
    except TypeError:
        return repr(value)


def _key_list(value: Any) -> list[str]:
    if value is None:
        return []
    items = value if isinstance(value, list) else [value]
    return [item if isinstance(item, str) else canonical(item) for item in items]


class Note(NamedTuple):
    """What the passes read of a message's annotations (kept small: one per annotated message)."""

    pin: bool
    defines: tuple[str, ...]
    references: tuple[str, ...]
    cites: bool  # it references something (a kept one is checked from the start)


class Row(NamedTuple):
    """What one message says to the passes by itself, whatever comes before it: worked out once
    per message object while a replay runs (``message_memo``), as its contexts are mostly the
    messages of the previous compaction. What depends on the messages before it (the call a tool
    result answers, so its owner and key) is ``Transcript``'s."""

    length: int  # characters of its content text
    filled: bool  # has content (not None, "" or [])
    stub: bool
    tool: bool  # a tool result
    calls: int  # an assistant's number of tool calls
    tool_calls: list[dict[str, Any]]  # an assistant's tool calls ([] for any other message)
    ids: dict[Any, int]  # an assistant's call ids -> the first position holding each
    key: tuple[str, ...] | None  # its annotated key (an assistant with calls has none)
    tool_call_id: Any  # a tool result's
    candidate: bool  # a tool result or a retrieved chunk: may be a duplicate
    observation: bool  # tool output read as a user message (no call to go with it)
    digest_high: int  # a candidate's folded text, digested in two halves (0, 0: no text to compare)
    digest_low: int
    note: Note | None  # where its annotations say something to the passes
    keyed_caller: bool  # an assistant with calls that has a key or is a chunk once it has no call left
    declares: bool  # its annotations declare facts


_NO_IDS: dict[Any, int] = {}  # the call ids of a message without calls (never written to)
_NO_CALLS: list[dict[str, Any]] = []  # its calls (never written to either)


def message_row(message: Message) -> Row:
    """``message``'s ``Row``: a pure function of the message."""
    note = message.get(ANNOTATION_KEY)
    if not isinstance(note, dict):
        note = {}
    pin, defines, references = note.get("pin") is True, note.get("defines"), note.get("references")
    summary = None
    if pin or defines is not None or references is not None:
        summary = Note(pin, tuple(_key_list(defines)), tuple(_key_list(references)), bool(references))
    content = message.get("content")
    text = content_text(message)
    if isinstance(content, str):
        stub = content.startswith(STUB_PREFIX) and _STUB.fullmatch(content) is not None
    else:
        stub = isinstance(content, list) and is_stub(message)
    role = message.get("role")
    calls = tool_calls_of(message) if role == "assistant" else _NO_CALLS
    key, keyed_caller = None, False
    ids: dict[Any, int] = _NO_IDS
    candidate = observation = False
    if role == "tool":
        candidate = True
        if note.get("key") is not None:
            key = annotated_key(note["key"])
        calls = _NO_CALLS
    elif calls:
        # An assistant carrying calls has no key of its own: its calls expire through their results.
        keyed_caller = note.get("key") is not None or note.get("kind") == "retrieval"
        ids = {}
        for at, call in enumerate(calls):
            if isinstance(call, dict) and isinstance(call.get("id"), str):
                ids.setdefault(call["id"], at)
    elif note:
        if note.get("key") is not None:
            key = annotated_key(note["key"])
        # An observation a text-mode agent got as a user message is tool output: a
        # duplicate candidate. It has no key: "scroll_down" twice is two different views.
        observation = role == "user" and note.get("kind") == OBSERVATION_KIND
        candidate = note.get("kind") == "retrieval" or observation
    folded = fold(text) if candidate and text and not stub else ""
    digest = blake2b(folded.encode("utf-8", "surrogatepass"), digest_size=16).digest() if folded else b""
    return tuple.__new__(  # Row's own constructor is a Python function: this is the same tuple, at C speed
        Row,
        (
            len(text),
            content not in (None, "", []),
            stub,
            role == "tool",
            len(calls),
            calls,
            ids,
            key,
            message.get("tool_call_id") if role == "tool" else None,
            candidate,
            observation,
            int.from_bytes(digest[:8]) if digest else 0,
            int.from_bytes(digest[8:]) if digest else 0,
            summary,
            keyed_caller,
            bool(note.get("facts")),
        ),
    )


def annotated_key(key: Any) -> tuple[str, ...]:
    return ("key", key if isinstance(key, str) else canonical(key))


def call_key(call: Any) -> tuple[str, ...] | None:
    """A call's key: its tool's name and its arguments, canonical and digested."""
    function = call.get("function") if isinstance(call, dict) else None
    if not isinstance(function, dict):
        return None
    # The arguments digested: an edit's arguments hold a whole file, and the key outlives the message.
    spelled = canonical(function.get("arguments", "")).encode("utf-8", "surrogatepass")
    return ("call", str(function.get("name", "")), blake2b(spelled, digest_size=16).hexdigest())


class Columns(NamedTuple):
    """A transcript's columns, as ``Transcript`` holds them (see there)."""

    notes: dict[int, Note]
    keys: list[tuple[str, ...] | None]
    owner: array[int]
    call_at: array[int]
    keyed_callers: set[int]
    declaring: list[tuple[int, Message, list[dict[str, Any]]]]
    length: array[int]
    filled: bytearray
    stub: bytearray
    tool: bytearray
    calls: array[int]
    candidate: bytearray
    observation: bytearray
    digest_high: array[int]
    digest_low: array[int]


_EMPTY: tuple[Any, ...] = (None, "", [])  # content that is no content (``Row.filled``)


def walked_columns(messages: Iterable[Message], call_keys: dict[tuple[str, ...], tuple[str, ...]]) -> Columns:
    """The columns of ``messages`` from one walk, no row built: ``message_row``'s rules, written out
    for a prune outside a replay (see the module's text). ``call_keys`` holds each call key once."""
    notes: dict[int, Note] = {}
    keys: dict[int, tuple[str, ...]] = {}  # only where there is one
    owners: list[tuple[int, int, int]] = []  # (tool result, its assistant, its call's position)
    keyed_callers: set[int] = set()
    declaring: list[tuple[int, Message, list[dict[str, Any]]]] = []
    length = array("i")
    empty: list[int] = []  # the rare entries of the other columns, by index
    stubs: list[int] = []
    tools: list[int] = []
    calls: list[tuple[int, int]] = []
    candidates: list[int] = []
    observations: list[int] = []
    digests: list[tuple[int, int]] = []
    add_length = length.append
    current, ids, calls_there = -1, _NO_IDS, _NO_CALLS
    for i, message in enumerate(messages):
        content = message.get("content")
        text = content if isinstance(content, str) else content_text(message)
        add_length(len(text))
        if content in _EMPTY:
            empty.append(i)
        stub = text.startswith(STUB_PREFIX) and _STUB.fullmatch(text) is not None
        if stub:
            stubs.append(i)
        note = message.get(ANNOTATION_KEY)
        if note is not None and (not isinstance(note, dict) or not note):
            note = None
        role = message.get("role")
        candidate = False
        if note is not None:
            pin, defines, references = note.get("pin") is True, note.get("defines"), note.get("references")
            if pin or defines is not None or references is not None:
                notes[i] = Note(pin, tuple(_key_list(defines)), tuple(_key_list(references)), bool(references))
        if role == "tool":
            tools.append(i)
            candidate = True
            key = annotated_key(note["key"]) if note is not None and note.get("key") is not None else None
            call_id = message.get("tool_call_id")
            found = ids.get(call_id) if current >= 0 and isinstance(call_id, str) else None
            if found is not None:
                owners.append((i, current, found))
                if key is None:
                    key = by_message(call_key, calls_there[found])  # only for a call answered
                    if key is not None:
                        key = call_keys.setdefault(key, key)  # one tuple per distinct call
            if key is not None:
                keys[i] = key
        else:
            there = tool_calls_of(message) if role == "assistant" else _NO_CALLS
            if there:
                # An assistant carrying calls has no key of its own: its calls expire through their results.
                current, calls_there = i, there
                calls.append((i, len(there)))
                ids = {}
                for at, call in enumerate(there):
                    if isinstance(call, dict) and isinstance(call.get("id"), str):
                        ids.setdefault(call["id"], at)
                if note is not None and (note.get("key") is not None or note.get("kind") == "retrieval"):
                    keyed_callers.add(i)
            else:
                current = -1
                if note is not None:
                    if note.get("key") is not None:
                        keys[i] = annotated_key(note["key"])
                    kind = note.get("kind")
                    if role == "user" and kind == OBSERVATION_KIND:
                        observations.append(i)
                        candidate = True
                    elif kind == "retrieval":
                        candidate = True
        if candidate:
            candidates.append(i)
            if text and not stub:
                folded = fold(text)
                if folded:
                    whole = int.from_bytes(blake2b(folded.encode("utf-8", "surrogatepass"), digest_size=16).digest())
                    digests.append((i, whole))
        if note is not None and note.get("facts"):
            owned = bool(owners) and owners[-1][0] == i
            declaring.append((i, message, calls_there if owned else []))
    n = len(length)
    owner, call_at = array("i", [-1]) * n, array("i", [-1]) * n
    for i, a, position in owners:
        owner[i], call_at[i] = a, position
    number = array("i", bytes(4 * n))
    for i, count in calls:
        number[i] = count
    high, low = array("Q", bytes(8 * n)), array("Q", bytes(8 * n))
    for i, whole in digests:
        high[i], low[i] = whole >> 64, whole & _LOW
    filled = bytearray(b"\1") * n
    for i in empty:
        filled[i] = 0
    return Columns(
        notes,
        list(map(keys.get, range(n))),
        owner,
        call_at,
        keyed_callers,
        declaring,
        length,
        filled,
        _flags(n, stubs),
        _flags(n, tools),
        number,
        _flags(n, candidates),
        _flags(n, observations),
        high,
        low,
    )


_LOW = (1 << 64) - 1


def _flags(n: int, at: list[int]) -> bytearray:
    column = bytearray(n)
    for i in at:
        column[i] = 1
    return column


# The columns a transcript takes from an earlier one up to where they share messages, row by row.
_ROW_COLUMNS = ("length", "filled", "stub", "tool", "calls", "candidate", "observation", "digest_high", "digest_low")


def remembered_columns(
    messages: list[Message], earlier: Columns | None, start: int, call_keys: dict[tuple[str, ...], tuple[str, ...]]
) -> Columns:
    """The columns of ``messages`` inside a replay: ``earlier``'s up to ``start`` (a transcript
    sharing those leading messages), then one row per message, kept by the message's identity."""
    notes: dict[int, Note] = {}
    keys: list[tuple[str, ...] | None] = []
    owners, positions = array("i"), array("i")
    keyed_callers: set[int] = set()
    declaring: list[tuple[int, Message, list[dict[str, Any]]]] = []
    if earlier is not None:
        notes = {i: note for i, note in earlier.notes.items() if i < start}
        keys = earlier.keys[:start]
        owners, positions = earlier.owner[:start], earlier.call_at[:start]
        keyed_callers = {i for i in earlier.keyed_callers if i < start}
        declaring = [declared for declared in earlier.declaring if declared[0] < start]
    rows: list[Row] = []
    current, ids, calls_there = -1, dict[Any, int](), list[dict[str, Any]]()
    tail = messages if not start else itertools.islice(messages, start, None)
    # A replay's contexts are mostly the messages of the previous compaction: their rows are kept.
    for i, (message, row) in enumerate(values_of(message_row, tail), start):
        rows.append(row)
        _, _, _, answers, calling, tool_calls, row_ids, key, call_id, _, _, _, _, note, keyed_caller, declares = row
        if note is not None:
            notes[i] = note
        owner, position = -1, -1
        if answers:
            found = ids.get(call_id) if current >= 0 and isinstance(call_id, str) else None
            if found is not None:
                owner, position = current, found
                if key is None:
                    key = by_message(call_key, calls_there[found])  # only for a call answered
                    if key is not None:
                        key = call_keys.setdefault(key, key)  # one tuple per distinct call
        else:
            current = i if calling else -1
            if calling:
                ids, calls_there = row_ids, tool_calls
                if keyed_caller:
                    keyed_callers.add(i)
        keys.append(key)
        owners.append(owner)
        positions.append(position)
        if declares:
            declaring.append((i, message, calls_there if owner >= 0 else []))
    # The other columns are the rows' own fields, one entry per message: machine integers and
    # bytes, not Python objects (turned into columns at C speed).
    fields = zip(*rows, strict=True) if rows else [()] * len(Row._fields)
    length, filled, stub, tool, calls, _, _, _, _, candidate, observation, high, low, *_ = fields
    own = Columns(
        notes,
        keys,
        owners,
        positions,
        keyed_callers,
        declaring,
        array("i", length),
        bytearray(filled),
        bytearray(stub),
        bytearray(tool),
        array("i", calls),
        bytearray(candidate),
        bytearray(observation),
        array("Q", high),
        array("Q", low),
    )
    if earlier is None:
        return own
    return own._replace(**{column: getattr(earlier, column)[:start] + getattr(own, column) for column in _ROW_COLUMNS})
