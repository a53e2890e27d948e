"""Gemini CLI's recorded calls: each ``gemini`` record with ``tokens`` is one call, across checkpoints and rewinds.

What Gemini CLI writes (0.61, ``packages/core/src/services/chatRecordingService.ts`` and
``core/geminiChat.ts`` in google-gemini/gemini-cli; the 0.61.0 bundle in .ci/cache is the same):

- **One call per response.** After a main-loop response streams, the client records its
  usage (``recordMessageTokens``) and then the response (``recordMessage``): the usage waits
  in ``queuedTokens`` and goes on the new ``gemini`` record, so each response of the main loop
  is one record with ``tokens``, written again (same id) when its tool calls complete. The
  model's own side calls (the model router, the next-speaker check, loop detection, the
  compression summary) are recorded nowhere: no file holds their usage.
- **Before 0.32** a response that only called tools, with no text or thought, wrote no record of its own: its calls
  went into the record before it and its usage was lost; each is estimated, in the bill (``gemini_merged``).
- **Usage.** ``tokens`` is the API's ``usageMetadata``: ``input`` its ``promptTokenCount``,
  of which ``cached`` (``cachedContentTokenCount``) came from the cache, ``tool``
  (``toolUsePromptTokenCount``) billed as input beside it, ``thoughts``
  (``thoughtsTokenCount``) billed as output beside ``output`` (``candidatesTokenCount``):
  genai-prices' own extractor for Google's usage maps them so. The thoughts are never sent
  again: the client keeps no thought part in its history (``processStreamResponse`` filters
  them out), so a response is re-sent as its ``output`` alone.
- **Copies.** A later copy of a record (a ``$set`` checkpoint on resume) may leave ``tokens``
  out: the call's usage is the first copy's that has it; its content the last copy's.
- **Checkpoints.** A ``$set`` of ``messages`` replaces the client's list. Where it drops messages
  and brings new ones (its compression: a summary in place of the older history), the producer
  compacted there: the history goes on and the new list is the replacement. Where it only cuts
  the end (a turn rolled back when it failed or was cancelled), and at a ``$rewindTo``, the
  messages cut are off the live thread, their calls billed (``off_thread``). Where it sets the list to
  the records it has just written (``/chat resume TAG`` loading a chat ``/chat save`` kept, measured
  with the real 0.61 client: the saved history written as new records, then a ``$set`` of them
  alone), the history is replaced as by a compression, but no call made the new list: no estimate.
  A list of records already written, the history's start cut, that holds a call is compactctl's (``compact -s
  window`` or masking, which write no summary): the client's loaded records carry no usage. A compaction, no call.
- **The compression's own calls** (``chatCompressionService.compress``): a summary of the
  history it folds, sent with its own system prompt, then a second call asking the model to check
  that summary (the history, the summary, and the request again); neither is recorded. Each is
  estimated as the request it was: the replaced messages counted (cl100k) plus the compressor's
  prompt, the summary (the new list's first new user message) as output. The one-document chat (to 0.38)
  records no compression: the fall in its calls' prompts shows it (``gemini_unseen``).
- **The loop detector's stopped turns** (its feedback a user record): the cut response and the answer to the
  feedback, in no record, are estimated off the thread (``gemini_loops``).
- **compactctl's copies.** ``compact --session`` writes a new session opening on a copy of the original's records:
  each ``gemini`` record with usage names the session that made it in ``compactctlCopiedFrom`` (billed there).
  A copy of a chat in the run (a user's, or plain ``compact``'s output, which keeps every line) bills nothing: each
  call is keyed by the session, its record's id and its usage (``replay.copies``).
- **A cancelled turn** (Esc in the interactive client) writes its tool calls, cancelled, on a ``gemini`` record
  of their own with no ``tokens``: context the client keeps, no call (``kind: "harness"``).
- A header record (``sessionId``, ``projectHash``, ``startTime``) written again is a resume:
  the hidden prefix (system prompt, the date and folder listing of ``<session_context>``) may
  change there.
- **Subagents** (``invoke_agent``) record chats of their own, in a folder named by the session's id
  beside its file: their calls are billed with the session's, labelled ``subagent <name>``
  (``gemini_agents``).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from compactctl.errors import InputError
from compactctl.formats.gemini import COPIED_FROM, EARLIER, converted
from compactctl.formats.records import Record, annotate
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
    compaction_trigger,
    digest_key,
    integer,
    marked_shared,
    timestamp_of,
    with_subagents,
)
from compactctl.recorded.gemini_agents import subagent_chats
from compactctl.recorded.gemini_loops import StoppedCall, stopped_calls
from compactctl.recorded.gemini_merged import merged_estimates, merged_note
from compactctl.recorded.gemini_unseen import Unseen, unseen_compressions, unseen_note
from compactctl.transcript import Message

NAME = "gemini"
# The compressor's system prompt and instruction beside the history, and what the check adds to it,
# measured on the real 0.61 client's requests (the loopback fake counting in cl100k): 17,929 tokens
# sent for 17,035 of history; the check 42 more, of which the summary 3.
COMPRESSION_PROMPT_TOKENS = 900
COMPRESSION_CHECK_TOKENS = 40


def usage_of(tokens: Any) -> ApiUsage | None:
    """A record's ``tokens`` as the usage billed."""
    if not isinstance(tokens, dict):
        return None
    thoughts = integer(tokens.get("thoughts"))
    usage = ApiUsage(
        input_tokens=integer(tokens.get("input")) + integer(tokens.get("tool")),
        cached_tokens=integer(tokens.get("cached")),
        output_tokens=integer(tokens.get("output")) + thoughts,
        reasoning_tokens=thoughts,
    )
    return None if usage.is_empty else usage


@dataclass
class _Call:
    usage: ApiUsage
    model: str | None
    timestamp: float | None
    made_in: str | None = None  # the session that made and billed it, where this one holds a copy (COPIED_FROM)


@dataclass
class _Chat:
    """The client's message list as the records go, and the thread the calls were made on."""

    path: str
    live: dict[str, dict[str, Any]] = field(default_factory=dict)  # id -> its last copy, in the client's order
    thread: list[str] = field(default_factory=list)  # ids of the history, in the order they came
    latest: dict[str, dict[str, Any]] = field(default_factory=dict)  # id -> its last copy, live or not
    calls: dict[str, _Call] = field(default_factory=dict)  # id -> the call its record answered
    cut: list[str] = field(default_factory=list)  # ids off the thread (rewound, rolled back)
    # (messages of the thread before it, ids of the new list) per compression
    compressions: list[tuple[int, list[str]]] = field(default_factory=list)
    loads: set[int] = field(default_factory=set)  # the compressions that are a saved chat loaded (no call)
    resumes: list[int] = field(default_factory=list)  # thread lengths at which the client was started again
    headers: int = 0
    starting: bool = False  # a resume's header came and no list yet
    named: bool = False  # a ``$set`` of the session id came and no list yet (a resume, or a compression's new chat)
    session_id: str | None = None  # the header's: with a record's id, what tells a call in a copy of the file
    # The compressions that are compactctl's list with no summary (``compact -s window``, masking): only the history
    # already written, cut at its start; the client writes such a list only when it loads a saved chat, whose records
    # it has just written with no usage.
    ours: set[int] = field(default_factory=set)
    one_document: bool = False  # the older layout (to 0.38), whose compressions change no record
    kind_written: bool = False  # its header has ``kind`` (0.31 on): the release checks its summaries (0.26 on)

    def message(self, value: dict[str, Any]) -> None:
        identifier = value["id"]
        self.latest[identifier] = value
        usage = usage_of(value.get("tokens"))
        if usage is not None and identifier not in self.calls and value.get("type") == "gemini":
            model, made_in = value.get("model"), value.get(COPIED_FROM)
            self.calls[identifier] = _Call(usage, model if isinstance(model, str) else None, _time(value),
                                           made_in if isinstance(made_in, str) else None)  # fmt: skip

    def append(self, value: dict[str, Any]) -> None:
        self.message(value)
        if value["id"] not in self.live:
            self.thread.append(value["id"])
        self.live[value["id"]] = value

    def rewind(self, to: str) -> None:
        ids = list(self.live)
        gone = ids[ids.index(to) :] if to in self.live else ids
        self._drop(gone)

    def checkpoint(self, messages: list[Any]) -> None:
        values = [m for m in messages if isinstance(m, dict) and isinstance(m.get("id"), str)]
        for value in values:
            self.message(value)
        new = [v["id"] for v in values]
        starting, self.starting = self.starting, False
        named, self.named = self.named, False
        if starting and len(new) < len(self.live) and all(i in self.latest for i in new):
            # A resumed client lists its start-up context alone (``<session_context>``), then the whole history
            # loaded: the first list is no change to what was sent. After a list compactctl wrote without that
            # context (compact --session), it would otherwise read as a compression.
            return
        # Only what the client sends: its lists leave out the ``info`` records it writes beside them (a compression's
        # "Chat history compressed"), which a resume's list would otherwise read as cut from the middle.
        old = [i for i, v in self.live.items() if v.get("type") in SENT]
        listed, threaded = set(new), set(self.thread)  # once, not once per id: a long chat's lists are long
        removed = [i for i in old if i not in listed]
        fresh = [i for i in new if i not in self.live and i not in threaded]
        if removed and not fresh and new == old[: len(new)]:
            self._drop(removed)  # the end cut: a turn rolled back
        elif removed and not fresh and new == old[-len(new) :] and not any(i in self.calls for i in new):
            # A saved chat loaded (``/chat resume TAG``): its messages written as new records, then the list
            # set to them alone. They replace the history, as a compression's do, but no call made them.
            self.thread = self.thread[: len(self.thread) - len(new)]
            self.compressions.append((len(self.thread), new))
            self.loads.add(len(self.compressions) - 1)
        elif removed:
            self.compressions.append((len(self.thread), new))  # the history replaced: a compression
            if not fresh:
                self.ours.add(len(self.compressions) - 1)
        else:
            self.thread += fresh  # only added (a resume's first list, an older chat's one document)
            if named and not fresh and len(self.thread) not in self.resumes:
                # The whole history listed again after the session named: a resume in a later minute, whose header
                # went to a file of that minute (``_Chat.header``); a compression's list after it always changes.
                self.resumes.append(len(self.thread))
        self.live = {v["id"]: v for v in values}

    def _drop(self, ids: list[str]) -> None:
        for identifier in ids:
            self.live.pop(identifier, None)
            if identifier in self.thread:
                self.thread.remove(identifier)
                self.cut.append(identifier)

    def header(self) -> None:
        self.headers += 1
        if self.headers > 1:
            self.resumes.append(len(self.thread))
            self.starting = True


def _time(value: dict[str, Any]) -> float | None:
    return timestamp_of(value.get("timestamp"))


def _chat(records: list[Record], path: str) -> _Chat:
    chat = _Chat(path)
    for record in records:
        value = record.value
        if not isinstance(value, dict):
            raise InputError(f"expected a Gemini CLI chat record object, got {type(value).__name__}", path, record.line)
        if isinstance(value.get("$rewindTo"), str):
            chat.rewind(value["$rewindTo"])
        elif isinstance(value.get("id"), str):
            chat.append(value)
        elif isinstance(value.get("$set"), dict):
            if isinstance(value["$set"].get("messages"), list):
                chat.checkpoint(value["$set"]["messages"])
            elif isinstance(value["$set"].get("sessionId"), str):
                chat.named = True
        elif isinstance(value.get("sessionId"), str):
            chat.header()
            chat.session_id = chat.session_id or value["sessionId"]
            if isinstance(value.get("messages"), list):  # the older one-document chat
                chat.one_document, chat.kind_written = True, "kind" in value
                earlier = value.get(EARLIER)  # compactctl's compaction keeps the lists before it there
                for messages in earlier if isinstance(earlier, list) else []:
                    if isinstance(messages, list):
                        chat.checkpoint(messages)
                chat.checkpoint(value["messages"])
    return chat


def read(records: list[Record], path: str, run: InRun = ALONE) -> RecordedSession:
    chat = _chat(records, path)
    thread = [chat.latest[i] for i in chat.thread]
    messages, units = converted(thread)
    if chat.calls:
        # A ``gemini`` record no copy of which has usage, where the chat's responses record theirs: the client's own.
        # Esc in the interactive 0.61 client writes the turn's cancelled tool calls so, on a record of their own after
        # its ``Request cancelled.`` info record (the response that asked for them has its record, with ``tokens``).
        for message, unit in zip(messages, units, strict=True):
            if message.get("role") == "assistant" and unit.record["id"] not in chat.calls:
                annotate(message, kind="harness")  # in the context, but no call: replay counts none for it
    # Where each record's messages start: compactions and resumes are at the thread's records.
    first_at: dict[str, int] = {}
    for n, unit in enumerate(units):
        first_at.setdefault(unit.record["id"], n)
    calls: list[RecordedCall] = []
    unpaired: ApiUsage | None = None
    unheld = 0  # the responses in ``unpaired``
    for n, (message, unit) in enumerate(zip(messages, units, strict=True)):
        call = chat.calls.get(unit.record["id"])
        if message.get("role") == "assistant" and call is not None and first_at[unit.record["id"]] == n:
            key = copy_key(chat.session_id, unit.record["id"], call.usage)
            copied = call.made_in is not None  # compactctl's --session copy: billed where it was made
            calls.append(RecordedCall(n, call.model, call.timestamp, call.usage, copied=copied, copy_key=key))
    calls, shared = marked_shared(calls, run.billed_elsewhere)  # a copy of the file in the run bills them
    placed = {units[c.position].record["id"] for c in calls}
    for identifier in chat.thread:
        if identifier in chat.calls and identifier not in placed:
            # A billed response the client sends nothing of (thoughts only): no message to hold it.
            usage = chat.calls[identifier].usage
            unpaired = usage if unpaired is None else unpaired + usage
            unheld += 1

    # Responses a record before 0.32 holds the calls of, their usage lost (``gemini_merged``): in the bill, estimated.
    merged = merged_estimates(thread, messages, {i: c.usage for i, c in chat.calls.items()})
    billed_here = {units[c.position].record["id"] for c in calls if not c.copied}  # not a copy's, billed elsewhere
    merged = [(i, usage) for i, usage in merged if i in billed_here]
    for _, usage in merged:
        unpaired = usage if unpaired is None else unpaired + usage
        unheld += 1
    # The turns the loop detector stopped: the response it cut and the answer to its feedback (``gemini_loops``), off
    # the thread (the client rolls the turn back), keyed by the feedback's record so a copy of the file bills none.
    stopped = stopped_calls((r.value for r in records), usage_of)
    stopped_off = []
    for loop in stopped:
        key = copy_key(chat.session_id, loop.record, loop.usage)
        elsewhere = key is not None and key in run.billed_elsewhere
        stopped_off.append(RecordedCall(-1, loop.model, loop.timestamp, loop.usage, copied=elsewhere, copy_key=key))

    def position(thread_length: int) -> int:
        """The message index where the thread's record number ``thread_length`` starts."""
        later = [first_at[i] for i in chat.thread[thread_length:] if i in first_at]
        return min(later, default=len(messages))

    def calls_before(at: int) -> int:
        return sum(1 for c in calls if c.position < at)

    compactions: list[RecordedCompaction] = []
    estimates: list[ApiUsage] = []
    apart: list[tuple[str | None, ApiUsage, Pricing]] = []
    for n, (length, new) in enumerate(chat.compressions):
        at = position(length)
        loaded = [_sent_of_saved(chat.latest[i]) if n in chat.loads else chat.latest[i] for i in new]
        replacement = _replacement(loaded, messages, units)
        before = compactions[-1] if compactions else None
        folded = [*(before.replacement if before else []), *messages[before.position if before else 0 : at]]
        trigger = "load" if n in chat.loads else compaction_trigger(replacement[:2], "")  # after the start-up context
        trigger = COMPACTCTL if n in chat.ours else trigger
        if not trigger:  # the client's compression call (a load or compactctl's summary made none)
            made = compression_estimate([m for m in folded if not any(m is k for k in replacement)], replacement)
            estimates += made
            # The client compresses on the model in force (the served calls of a session switched from Pro to Flash
            # were on Flash), not the session's first: the call it made room for, else the last before it.
            model = next((c.model for c in calls if c.position >= at), None)
            model = model or next((c.model for c in reversed(calls) if c.position < at), None)
            apart += [(model, usage, ()) for usage in made]
        compactions.append(RecordedCompaction(at, calls_before(at), replacement, trigger=trigger))
    unseen: list[str] = []  # what replay says of each compression the usage shows
    if chat.one_document:  # up to 0.38 a compression changes no record: the usage shows it (``gemini_unseen``)
        for found in unseen_compressions(messages, calls, compactions):
            if isinstance(found, Unseen):
                unseen.append(unseen_note(found, calls, chat.kind_written))
                made = compression_estimate(found.folded, [], found.summary_tokens, checked=chat.kind_written)
                estimates += made
                model = calls[found.compaction.before_call].model
                apart += [(model, usage, ()) for usage in made]
                found = found.compaction
            compactions.append(found)
        compactions.sort(key=lambda c: c.position)
    resumes = sorted({calls_before(position(length)) for length in chat.resumes} - {0, len(calls)})
    off_thread = (
        *(
            RecordedCall(-1, chat.calls[i].model, chat.calls[i].timestamp, chat.calls[i].usage)
            for i in dict.fromkeys(chat.cut)
            if i in chat.calls and i not in chat.thread
        ),
        *stopped_off,
    )
    context = RecordedContext("main", messages, calls, compactions, resumes)
    own = RecordedSession(
        NAME,
        [context],
        unpaired=unpaired,
        unheld_calls=unheld,
        off_thread=off_thread,
        off_thread_why=_off_thread_why(len(off_thread) - len(stopped), len(stopped)),
        compaction_calls=len(estimates),
        compaction_estimate=sum(estimates, ApiUsage(0)) if estimates else None,
        compaction_calls_estimated=len(estimates),
        estimated_apart=tuple(apart),
        priced_apart=tuple((chat.calls[i].model, usage, ()) for i, usage in merged),
        in_bill=(*((merged_note([u for _, u in merged]),) if merged else ()), *_loops_note(stopped)),
        not_in_bill=(side_calls(messages, calls), *unseen),
        copied_from=tuple(sorted({c.made_in for c in chat.calls.values() if c.made_in is not None})),
        shared_calls=len(shared),
        shared_with=tuple(sorted(set(shared.values()))),
    )
    return with_subagents(own, _subagents(path, records, run))


def copy_key(session: str | None, record: str, usage: ApiUsage) -> str | None:
    """``RecordedCall.copy_key`` of a response: the chat's session, the record's id and its usage, which a copy of the
    file (a user's, or plain ``compact``'s output, which keeps every line and appends its list) repeats."""
    return None if session is None else digest_key(f"gemini {session} {record}", dataclasses.astuple(usage))


def _subagents(path: str, records: list[Record], run: InRun = ALONE) -> list[tuple[str, RecordedSession]]:
    """The chats of the subagents the session's calls started (``gemini_agents``), each read, by its agent's name."""
    from compactctl.formats.records import parse_records

    found = []
    for name, chat in subagent_chats(path, [r.value for r in records]):
        try:
            found.append((name, read(parse_records(chat.read_bytes(), str(chat))[0], str(chat), run)))
        except (OSError, InputError):
            continue  # a subagent's chat that does not read is left out, not the session
    return found


# The records a chat's message lists hold: what the client sends (``converted`` reads these alone).
SENT = ("user", "gemini")

OFF_THREAD_WHY = RecordedSession.off_thread_why  # what replay says left the calls off the thread


def _off_thread_why(cut: int, stopped: int) -> str:
    """What left the calls off the live thread, as replay's note says: turns cut, the loop detector's."""
    loops = f"{stopped} call(s) of turns the loop detector stopped, estimated"
    if not stopped:
        return OFF_THREAD_WHY
    return f"{OFF_THREAD_WHY}; {loops}" if cut else loops


def _loops_note(stopped: list[StoppedCall]) -> tuple[str, ...]:
    """What replay says of the loop detector's stopped turns' calls: in the bill, estimated."""
    if not stopped:
        return ()
    prompt, output = sum(c.usage.input_tokens for c in stopped), sum(c.usage.output_tokens for c in stopped)
    return (
        f"{len(stopped)} call(s) of the turns Gemini CLI's loop detector stopped (the response it cut, the answer to "
        f"its feedback; the chat keeps neither): estimated from the requests they were ({prompt:,} input, "
        f"{output:,} output tokens), off the live thread, in the bill and its calls",
    )


def side_calls(messages: list[Message], calls: list[RecordedCall]) -> str:
    """What replay says of the billed calls Gemini CLI makes beside the main loop and records nowhere.

    From the 0.61 client's code (``routing/strategies/classifierStrategy.ts``, ``core/client.ts``,
    ``services/loopDetectionService.ts``): with the model set to ``auto``, the router asks its
    classifier (``flash-lite``, up to 1,024 output tokens) once per prompt, sent the last 4 turns
    that hold no tool call and the prompt; the loop detector asks the model after 30 turns of one
    prompt and every 10 after. No record says whether the router ran (a fixed model skips it), so
    they are named, not estimated; calls naming both a Pro and a Flash model show it did, or that the
    user switched the model (``/model``, ``--model``: the real 0.61 client switched from Pro to Flash
    writes nothing else of it). The calls of a turn the detector stopped are in the bill (``gemini_loops``).
    """
    copied = max((c.position for c in calls if c.copied), default=-1)  # the router ran there for those prompts
    prompts = sum(1 for m in messages[copied + 1 :] if m.get("role") == "user")
    models = sorted({str(c.model) for c in calls if c.model})
    routed = any("pro" in m for m in models) and any("flash" in m for m in models)
    shown = f"; the calls name {' and '.join(models)}: the router ran here, or the model was switched" if routed else ""
    return (
        "not in the bill: Gemini CLI's side calls, which its session file records nothing of: the model router's "
        f"classifier (one flash-lite call per prompt when the model is auto: {prompts} prompt(s) here{shown}) and "
        "the loop check (a model call after 30 turns of one prompt)"
    )


def compression_estimate(
    folded: list[Message], replacement: list[Message], summary_tokens: int | None = None, checked: bool = True
) -> list[ApiUsage]:
    """The compression's calls, as the requests they were: the summary, then its check (``checked``: from 0.26).
    ``summary_tokens``: the summary's size where the file holds no summary (``gemini_unseen``)."""
    from compactctl.tokens import counter_for

    counter = counter_for()
    kept = [m for m in replacement if m.get("role") == "user"]
    summary = summary_tokens if summary_tokens is not None else counter.message(kept[0]) if kept else 0
    history = counter.messages([m for m in folded if m not in kept[:1]]) + COMPRESSION_PROMPT_TOKENS
    check = history + summary + COMPRESSION_CHECK_TOKENS
    # The check repeats the summary request's prefix: the API's implicit cache holds it.
    made = [ApiUsage(history, output_tokens=summary), ApiUsage(check, history, output_tokens=summary)]
    return made if checked else made[:1]


def _sent_of_saved(record: dict[str, Any]) -> dict[str, Any]:
    """A loaded chat's record as the client sent it: a saved chat's first user turn holds the
    ``<session_context>`` and the compression's summary as two parts of one record (a compression
    writes them as two), which the reader would skip whole as the client's own context. The summary was
    sent (the real 0.61 client's next request had it); the context is the hidden prefix, as elsewhere."""
    parts = record.get("content")
    if record.get("type") != "user" or not isinstance(parts, list) or len(parts) < 2:
        return record
    first = parts[0]
    if isinstance(first, dict) and str(first.get("text", "")).startswith("<session_context>"):
        return {**record, "content": parts[1:]}
    return record


def _replacement(records: list[dict[str, Any]], history: list[Message], units: list[Any]) -> list[Message]:
    """The new list's messages; a message kept as it was is the history's own (counted as it was sent)."""
    kept: dict[tuple[str, int], Message] = {}
    seen: dict[str, int] = {}
    for message, unit in zip(history, units, strict=True):
        n = seen[unit.record["id"]] = seen.get(unit.record["id"], -1) + 1
        kept[(unit.record["id"], n)] = message
    replacement: list[Message] = []
    seen = {}
    new_messages, new_units = converted(records)
    for message, unit in zip(new_messages, new_units, strict=True):
        n = seen[unit.record["id"]] = seen.get(unit.record["id"], -1) + 1
        old = kept.get((unit.record["id"], n))
        same = old is not None and old.get("content") == message.get("content") and old.get("role") == message["role"]
        replacement.append(old if same and old is not None else message)
    return replacement
