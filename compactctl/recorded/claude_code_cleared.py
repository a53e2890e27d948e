"""Claude Code's old tool results the model saw as a short stand-in: what each call was sent in their place.

Claude Code 2.1.332 (its bundle, ``strings`` of the binary) edits the context when the user comes back after
``minIdleSeconds`` (3900) idle, behind its flag ``tengu_jiggly_blossom`` ("on", "shadow", "off"), in two ways,
and an older one:

- **Cleared by the API.** The request carries ``context_management.edits`` with ``clear_tool_uses_20250919``
  (``trigger`` and ``keep`` in tool uses, 12 kept, ``clear_at_least`` 20,000 input tokens, ``exclude_tools``
  every tool it does not clear): the API replaces the results of the oldest tool uses with a placeholder and bills
  the edited request. The client writes the API's report into the response's record,
  ``message.context_management.applied_edits`` ``[{type, cleared_tool_uses, cleared_input_tokens}]`` beside its
  own ``client_sent_trigger_tool_uses``, ``client_estimated_cleared_input_tokens``; the request (and so its
  ``exclude_tools``) is in the ``api-request`` record the response's ``requestRef`` names. The file keeps every
  result whole, and each later request sends them whole again, cleared again where its own report says so.
- **Cut by the client** (with ``tengu_wise_pearl`` ``{"write_records": true}``, or for a model the edit is not
  for): a ``tool_results_cut`` attachment (``callIds``, ``standIn`` "[Old tool result content cleared]",
  ``roughTokens``; never rendered) before the request, and every request from there on (a resume's too) sends
  those results as the stand-in (``Ken``/``Yco``: an error result is kept, and a result no longer than its
  stand-in); the responses' ``context_management`` say ``client_cut_tool_uses``. A ``withdrawn_by_tool`` cut is the
  same record with other wording.
- **Microcompacted** (older versions): a ``microcompact_boundary`` system record whose
  ``microcompactMetadata.compactedToolIds`` the client replaced with the same stand-in from there on.

The API's own placeholder is not public: a result it cleared is counted as the client's stand-in.

Every request with thinking on also carries ``clear_thinking_20251015`` (``MHn``), always with ``keep: "all"``: the
API keeps every thinking block, earlier turns' too on the models that otherwise drop them (``claude_code_thinking``
says which releases send it; calibration keeps that thinking in the input).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from compactctl.formats.anthropic import function_of

# The resume's side, in the formats package: the Claude Code reader reads it without this one.
from compactctl.formats.claude_code_cut import STAND_IN, Cut, cut_of, stood_in
from compactctl.recorded import RecordedCall, RecordedCompaction
from compactctl.transcript import Message

CLEAR_TOOL_USES = "clear_tool_uses_20250919"
CLEARED_INPUT = "{}"  # a cleared call's arguments, as counted (the API's form is not public)


@dataclass(frozen=True)
class Cleared:
    """What the API reported it cleared for one call, the tools the request kept out of it, and the tools whose
    inputs it cleared with their results (``clear_tool_inputs``: a list of names, or true for every tool)."""

    tool_uses: int
    input_tokens: int
    excluded: frozenset[str] = frozenset()
    inputs: frozenset[str] | bool = False


def cleared_of(message: dict[str, Any], request: dict[str, Any] | None) -> Cleared | None:
    """The API's ``clear_tool_uses_20250919`` report in a response's ``message``, with the request's
    ``exclude_tools`` (its ``api-request`` record's ``params``); None where it cleared nothing."""
    management = message.get("context_management")
    edits = management.get("applied_edits") if isinstance(management, dict) else None
    found = (
        [e for e in edits if isinstance(e, dict) and e.get("type") == CLEAR_TOOL_USES]
        if isinstance(edits, list)
        else []
    )
    uses = sum(e["cleared_tool_uses"] for e in found if isinstance(e.get("cleared_tool_uses"), int))
    tokens = sum(e["cleared_input_tokens"] for e in found if isinstance(e.get("cleared_input_tokens"), int))
    if uses <= 0:
        return None
    params = request.get("params") if isinstance(request, dict) else None
    sent = (params.get("context_management") or {}).get("edits") if isinstance(params, dict) else None
    excluded: set[str] = set()
    inputs: set[str] | bool = False
    for edit in sent if isinstance(sent, list) else []:
        if isinstance(edit, dict) and edit.get("type") == CLEAR_TOOL_USES:
            excluded |= {t for t in edit.get("exclude_tools") or [] if isinstance(t, str)}
            named = edit.get("clear_tool_inputs")
            if named is True or inputs is True:
                inputs = True
            elif isinstance(named, list):
                inputs = (inputs or set()) | {t for t in named if isinstance(t, str)}
    return Cleared(uses, tokens, frozenset(excluded), inputs if isinstance(inputs, bool) else frozenset(inputs))


def stand_ins(
    messages: Sequence[Message],
    calls: Sequence[RecordedCall],
    compactions: Sequence[RecordedCompaction],
    cuts: Sequence[Cut],
    cleared: Mapping[int, Cleared],
    errors: frozenset[str] = frozenset(),
) -> dict[int, dict[int, Message]]:
    """Per call (index), the history's messages (by index) it sent as a stand-in: the client's cuts written
    before it, then the oldest results the API reported it cleared for it, and the calls of those whose inputs it
    cleared with them (their message, those calls' arguments as ``{}``; ``errors``: the results sent as errors,
    which the client never cuts)."""
    names: dict[str, str] = {}  # call id -> its tool's name
    callers: dict[str, int] = {}  # call id -> the message that made it
    for at, message in enumerate(messages):
        for call in message.get("tool_calls") or []:
            if isinstance(call, dict):
                names[str(call.get("id"))] = str(function_of(call).get("name") or "")
                callers[str(call.get("id"))] = at
    found: dict[int, dict[int, Message]] = {}
    for n, call in enumerate(calls):
        live = _live(messages, compactions, call.position)
        sent: dict[int, Message] = {}
        cut: dict[str, str] = {}
        for each in cuts:
            if each.position <= call.position:  # written before the request (no message between)
                for call_id in each.call_ids:
                    cut.setdefault(call_id, each.stand_in)  # the first record of a result wins, as the client reads
        for at in live:
            call_id = str(messages[at].get("tool_call_id"))
            if call_id in cut and (replaced := stood_in(messages[at], cut[call_id], call_id in errors)) is not None:
                sent[at] = replaced
        report = cleared.get(n)
        if report is not None:
            oldest = [at for at in live if names.get(str(messages[at].get("tool_call_id"))) not in report.excluded]
            for at in oldest[: report.tool_uses]:
                sent[at] = {**messages[at], "content": STAND_IN}
                call_id = str(messages[at].get("tool_call_id"))
                named = names.get(call_id)
                if call_id in callers and (report.inputs is True or (report.inputs and named in report.inputs)):
                    caller = callers[call_id]
                    sent[caller] = _input_cleared(sent.get(caller, messages[caller]), call_id)
        if sent:
            found[n] = sent
    return found


def _input_cleared(message: Message, call_id: str) -> Message:
    """``message`` with its call ``call_id``'s arguments as the API sends a cleared input (its other calls kept)."""
    calls = [
        {**call, "function": {**function_of(call), "arguments": CLEARED_INPUT}}
        if isinstance(call, dict) and str(call.get("id")) == call_id
        else call
        for call in message.get("tool_calls") or []
    ]
    return {**message, "tool_calls": calls}


def _live(messages: Sequence[Message], compactions: Sequence[RecordedCompaction], position: int) -> list[int]:
    """The indices of the tool results the call at ``position`` sent, in order: after the producer's last
    compaction before it, with the results a partial compaction kept."""
    last = next((c for c in reversed(compactions) if c.position <= position), None)
    start = last.position if last is not None else 0
    kept = {id(m) for m in last.replacement} if last is not None else set()
    return [
        at
        for at, message in enumerate(messages[:position])
        if message.get("role") == "tool" and (at >= start or id(message) in kept)
    ]


class Edits:
    """What one context's walk meets of these edits: the cuts on its chain, the API's report per call."""

    def __init__(self, values: Sequence[dict[str, Any]]) -> None:
        self.values = values
        self.cuts: list[Cut] = []
        self.cleared: dict[int, Cleared] = {}
        self._requests: dict[str, dict[str, Any]] | None = None

    def note(self, value: dict[str, Any], position: int) -> None:
        """A record of the chain, met when the context holds ``position`` messages."""
        if value.get("type") in ("attachment", "system") and (cut := cut_of(value, position)) is not None:
            self.cuts.append(cut)

    def response(self, call: int, records: Sequence[int]) -> None:
        """The records of call ``call``'s response: the API's report of what it cleared for it."""
        for record in records:
            value = self.values[record]
            report = cleared_of(value["message"], self._request(value.get("requestRef")))
            if report is not None:
                self.cleared[call] = report
                return

    def of(
        self, messages: Sequence[Message], calls: Sequence[RecordedCall], compactions: Sequence[RecordedCompaction]
    ) -> dict[int, dict[int, Message]]:
        if not self.cuts and not self.cleared:
            return {}
        errors = frozenset(
            str(block.get("tool_use_id"))
            for value in self.values
            if value.get("type") == "user" and isinstance(value.get("message"), dict)
            for block in value["message"].get("content") or []
            if isinstance(block, dict) and block.get("type") == "tool_result" and block.get("is_error") is True
        )
        return stand_ins(messages, calls, compactions, self.cuts, self.cleared, errors)

    def _request(self, ref: Any) -> dict[str, Any] | None:
        if not isinstance(ref, str):
            return None
        if self._requests is None:
            self._requests = {
                str(v.get("id")): v
                for v in self.values
                if v.get("type") == "api-request" and isinstance(v.get("id"), str)
            }
        return self._requests.get(ref)
