"""The responses Gemini CLI before 0.32 kept inside the record of the response before them, their usage lost.

Before 0.32 (``ChatRecordingService.recordToolCalls`` and ``GeminiChat.processStreamResponse`` in
google-gemini/gemini-cli at v0.20.2; #20419 in 0.32 gave each response a record of its own) a response
that only called tools, with no text and no thought, wrote no record: its calls went into the
``toolCalls`` of the last ``gemini`` record, and its usage waited in ``queuedTokens`` until the next
response's overwrote it. The real 0.20.2 client, a read with a thought, then a command and a read
with none: one record of three calls, 4 of the 6 main calls' usage recorded (the fake served 6).

Which calls came in one response the call ids tell, where the client made them: 0.30's
``<name>_<ms>_<n>`` counts each response's calls from 0 (a ``Turn`` a response), and the older
``<name>-<ms>-<hex>`` carries the time it was read (one response's calls within a tick; the next
response a model call later). Each later response is estimated as the request it was: counted back
from the next recorded call, which the last response's results led to (its input less what each of
those responses and their results added after it), else on from the record's own call; its output
its calls; its cached tokens, where the calls around it had any, the request before it (the
implicit cache holds a repeated prefix).
"""

from __future__ import annotations

from typing import Any

from compactctl import lazyre
from compactctl.recorded import ApiUsage
from compactctl.transcript import Message

_COUNTED_ID = lazyre.compile(r"_(\d{10,})_(\d+)$")  # 0.30-: ``read_file_1796633936532_0``
_TIMED_ID = lazyre.compile(r"-(\d{10,})-[0-9a-f]+$")  # -0.29: ``read_file-1796633827557-612058cd2929e``
# One response's calls are read in one pass over its chunk; the next response comes a model call later.
SAME_RESPONSE_MS = 20


def _clock(call_id: Any) -> tuple[str, int, int] | None:
    """("counted", ms, n) or ("timed", ms, 0) for an id the client made; None for the API's own."""
    if not isinstance(call_id, str):
        return None
    found = _COUNTED_ID.search(call_id)
    if found:
        return "counted", int(found.group(1)), int(found.group(2))
    found = _TIMED_ID.search(call_id)
    return ("timed", int(found.group(1)), 0) if found else None


def batches(tool_calls: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """A record's ``toolCalls`` by the response that made them, in order."""
    out: list[list[dict[str, Any]]] = []
    previous: tuple[str, int, int] | None = None
    for call in tool_calls:
        clock = _clock(call.get("id"))
        starts = previous is not None and clock is not None and previous[0] == clock[0]
        if starts and clock is not None and previous is not None:
            starts = clock[2] <= previous[2] if clock[0] == "counted" else clock[1] - previous[1] > SAME_RESPONSE_MS
        if not out or starts:
            out.append([])
        out[-1].append(call)
        previous = clock
    return out


def _turn(calls: list[dict[str, Any]]) -> Message:
    """A model turn of these ``toolCalls`` entries, as replay counts it."""
    import json

    tool_calls = [
        {"id": c.get("id"), "type": "function",
         "function": {"name": str(c.get("name", "")), "arguments": json.dumps(c.get("args") or {})}}
        for c in calls
    ]  # fmt: skip
    return {"role": "assistant", "content": "", "tool_calls": tool_calls}


def merged_estimates(
    thread: list[dict[str, Any]], messages: list[Message], usage_of: dict[str, ApiUsage]
) -> list[tuple[str, ApiUsage]]:
    """Each response kept in the record before it: that record's id and the response's usage (``usage_of``: a record's
    id -> its call's usage)."""
    import json

    from compactctl.tokens import counter_for

    counter = counter_for()
    results = {m.get("tool_call_id"): m for m in messages if m.get("role") == "tool"}
    sent = [r for r in thread if r.get("type") in ("user", "gemini")]
    estimates: list[tuple[str, ApiUsage]] = []
    for n, record in enumerate(sent):
        entries = (
            [c for c in record.get("toolCalls") or [] if isinstance(c, dict)] if record["type"] == "gemini" else []
        )
        groups = batches(entries)
        own = usage_of.get(record["id"])
        if len(groups) < 2 or own is None:
            continue
        # A response's output is its calls' names and arguments (no turn around them, as the request's parts have).
        outputs = [sum(counter(str(c.get("name", "")) + json.dumps(c.get("args") or {})) for c in g) for g in groups]
        steps = [
            out + sum(counter.message(results[c.get("id")]) for c in group if c.get("id") in results)
            for out, group in zip(outputs, groups, strict=True)
        ]
        following = sent[n + 1] if n + 1 < len(sent) else None
        later = usage_of.get(following["id"]) if following and following["type"] == "gemini" else None
        for k in range(1, len(groups)):
            if later is not None:  # the next call's request holds this one's and what came after it
                prompt, cached_around = later.input_tokens - sum(steps[k:]), later.cached_tokens
            else:
                prompt, cached_around = own.input_tokens + sum(steps[:k]), own.cached_tokens
            prompt = max(prompt, 0)
            cached = max(prompt - steps[k - 1], 0) if cached_around else 0
            estimates.append((record["id"], ApiUsage(prompt, cached, output_tokens=outputs[k])))
    return estimates


def merged_note(estimates: list[ApiUsage]) -> str:
    """What replay says of them: in the bill, estimated."""
    prompt = sum(u.input_tokens for u in estimates)
    output = sum(u.output_tokens for u in estimates)
    return (
        f"{len(estimates)} tool-only response(s) Gemini CLI before 0.32 kept in the record of the response before them "
        f"(their usage lost): estimated from the requests they were ({prompt:,} input, {output:,} output tokens), in "
        "the bill and its calls"
    )
