"""A loopback fake of the Gemini API (``models/*:generateContent``, ``:streamGenerateContent?alt=sse``).

Gemini CLI points at it with ``GOOGLE_GEMINI_BASE_URL``. Each request is checked as the
real API checks it (roles ``user``/``model``, no empty ``parts``, one data field a part,
``functionCall`` only from the model and ``functionResponse`` only from the user, a
function call turn answered by the next turn with as many responses as it has calls) and
refused with the API's 400 ``INVALID_ARGUMENT`` wording; otherwise the main calls (the
ones carrying tools) take the next scripted :class:`Reply`, as SSE chunks (thought, text,
calls, then ``finishReason`` with ``usageMetadata``) or one JSON body. Calls without tools
(the CLI's model router, its summaries) get a short answer and leave the script alone. A subagent's
calls (they declare ``complete_task``) take the script ``enqueue(..., agent=SUBAGENT)`` where one is given.
A scripted :data:`HELD` is a call the fake never answers (nor bills): the client is interrupted while it waits.
"""

from __future__ import annotations

import itertools
import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

from tests.fakes.server import FakeModelServer, Recorded, RejectedRequest, Reply, estimate_tokens, send_json

_ids = itertools.count(1)
DATA_FIELDS = (
    "text",
    "inlineData",
    "fileData",
    "functionCall",
    "functionResponse",
    "executableCode",
    "codeExecutionResult",
)
MODEL = "gemini-fake"
# The API's refusal of a request over the model's window (400 INVALID_ARGUMENT).
INPUT_TOO_LONG = "The input token count ({tokens}) exceeds the maximum number of tokens allowed ({window})."
# Gemini CLI gives every local subagent (``LocalAgentExecutor``) a ``complete_task`` tool, its only way to finish;
# the main agent has none. The requests name no agent: the fake calls them all by this one name.
SUBAGENT = "subagent"
# A reply the fake holds: the request is read and left unanswered until the fake stops (the model still thinking),
# so the client can be cancelled or killed with a call in flight. Nothing is billed for it.
HELD = Reply(text="(held: never sent)")
# What the real API answers for unequal counts (seen in Gemini CLI's own issue reports).
COUNT_MISMATCH = (
    "Please ensure that the number of function response parts is equal to the number of function call parts "
    "of the function call turn."
)


def _kinds(content: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    return [p[kind] for p in content.get("parts") or [] if isinstance(p, dict) and isinstance(p.get(kind), dict)]


def validate_contents(body: dict[str, Any]) -> None:
    """Raise :class:`RejectedRequest` where the real API answers 400 INVALID_ARGUMENT."""
    contents = body.get("contents")
    if not isinstance(contents, list) or not contents:
        raise RejectedRequest("* GenerateContentRequest.contents: contents is not specified")
    for n, content in enumerate(contents):
        where = f"* GenerateContentRequest.contents[{n}]"
        if content.get("role") not in ("user", "model"):
            raise RejectedRequest("Please use a valid role: user, model.")
        parts = content.get("parts")
        if not isinstance(parts, list) or not parts:
            raise RejectedRequest(f"{where}.parts: contents.parts must not be empty.")
        for k, part in enumerate(parts):
            fields = [f for f in DATA_FIELDS if isinstance(part, dict) and part.get(f) is not None]
            if len(fields) != 1:
                raise RejectedRequest(
                    f"{where}.parts[{k}].data: required oneof field 'data' must have one initialized field"
                )
        calls, responses = _kinds(content, "functionCall"), _kinds(content, "functionResponse")
        if (calls and content["role"] != "model") or (responses and content["role"] != "user"):
            raise RejectedRequest(f"{where}: function calls come from the model and function responses from the user")
        previous = contents[n - 1] if n else None
        if calls and previous is not None and previous.get("role") == "model":
            raise RejectedRequest(
                "Please ensure that function call turn comes immediately after a user turn or after a "
                "function response turn."
            )
        asked = _kinds(previous, "functionCall") if previous else []
        if responses and not asked:
            raise RejectedRequest(
                "Please ensure that function response turn comes immediately after a function call turn."
            )
        if asked and (responses or content["role"] == "user") and len(responses) != len(asked):
            raise RejectedRequest(COUNT_MISMATCH)


def repeated_parts(contents: list[dict[str, Any]]) -> list[Any]:
    """What a request carries twice: a part twice in one turn, or a call / response id twice in the request."""
    found: list[Any] = []
    ids: set[tuple[str, str]] = set()
    for content in contents:
        seen: set[str] = set()
        for part in content.get("parts") or []:
            key = json.dumps(part, sort_keys=True)
            if key in seen:
                found.append(part)
            seen.add(key)
            for kind in ("functionCall", "functionResponse"):
                call_id = part.get(kind, {}).get("id") if isinstance(part.get(kind), dict) else None
                if isinstance(call_id, str):
                    if (kind, call_id) in ids and key not in {json.dumps(p, sort_keys=True) for p in found}:
                        found.append(part)
                    ids.add((kind, call_id))
    return found


def reply_parts(reply: Reply) -> list[dict[str, Any]]:
    """A reply's parts as Gemini 3 streams them: the thought summary, the text, the calls (the first signed)."""
    parts: list[dict[str, Any]] = []
    if reply.thinking:
        parts.append({"text": reply.thinking, "thought": True})
    if reply.text:
        parts.append({"text": reply.text})
    for n, call in enumerate(reply.tool_calls):
        part: dict[str, Any] = {"functionCall": {"name": call.name, "args": call.arguments}}
        if n == 0:
            part["thoughtSignature"] = f"c2lnLWZha2Ut{next(_ids):04d}"
        parts.append(part)
    return parts or [{"text": "Done."}]


def agent_of(body: dict[str, Any]) -> str | None:
    """``SUBAGENT`` for a request that declares ``complete_task``, else None (the main agent)."""
    tools = body.get("tools") or []
    names = {d.get("name") for t in tools if isinstance(t, dict) for d in t.get("functionDeclarations") or []}
    return SUBAGENT if "complete_task" in names else None


def _router_answer(body: dict[str, Any]) -> str:
    """The CLI's model router asks for JSON naming a model; anything else gets plain text."""
    config = body.get("generationConfig") or {}
    if "json" in str(config.get("responseMimeType", "")):
        return json.dumps({"reasoning": "a loopback test", "model_choice": "flash"})
    return "Loopback."


@dataclass
class FakeGemini(FakeModelServer):
    """``GOOGLE_GEMINI_BASE_URL=fake.url`` points Gemini CLI here.

    With ``implicit_cache`` a main call reports the prefix it shares with the previous main
    request (the same system instruction and tools, then the contents both start with) as
    ``cachedContentTokenCount``, as the API's implicit caching does for a repeated prefix.
    """

    implicit_cache: bool = False
    served: list[tuple[str, dict[str, Any], bool]] = field(default_factory=list)
    _last_main: tuple[Any, Any, list[Any]] | None = None  # (system, tools, contents) of the last main request
    # Set once a HELD reply's request came in (the recorder interrupts the client then); ``stop`` releases it.
    holding: threading.Event = field(default_factory=threading.Event)
    _released: threading.Event = field(default_factory=threading.Event)

    def stop(self) -> None:
        self._released.set()  # a held request's thread ends, its connection closed with the server
        super().stop()

    def model_calls(self, rejected: bool = False) -> list[dict[str, Any]]:
        """The main-loop requests (they carry the CLI's tools) the fake accepted (or all), in order."""
        return [
            r.body
            for r in self.requests
            if r.method == "POST"
            and "enerateContent" in r.path
            and (rejected or r.error is None)
            and isinstance(r.body, dict)
            and r.body.get("tools")
        ]

    def _cached(self, body: dict[str, Any], prompt: int) -> int:
        """The tokens of the prefix this request shares with the previous main one; 0 where none."""
        system, tools, contents = body.get("systemInstruction"), body.get("tools"), body.get("contents") or []
        last, self._last_main = self._last_main, (system, tools, contents)
        if last is None or (last[0], last[1]) != (system, tools):
            return 0
        shared = 0
        while shared < min(len(contents), len(last[2])) and contents[shared] == last[2][shared]:
            shared += 1
        return min(prompt, self.count([system, contents[:shared], tools]))

    def bill(self, model: str, usage: dict[str, Any], tools: bool, response_id: str) -> None:
        """One call billed: the model the request named, its usage, whether it carried tools (``response_id``
        for a recorder that keeps what was served: ``record_copies._serving``)."""
        with self.lock:
            self.served.append((model, usage, tools))

    def handle(self, handler: BaseHTTPRequestHandler, method: str, body: Any) -> None:
        entry = Recorded(method, handler.path, dict(handler.headers), body)
        self.record(entry)
        path = handler.path.split("?")[0]
        if method != "POST" or not isinstance(body, dict) or ":" not in path:
            missing = {"code": 404, "message": f"no route {method} {path}", "status": "NOT_FOUND"}
            send_json(handler, 404, {"error": missing})
            return
        action = path.rsplit(":", 1)[1]
        if action == "countTokens":
            send_json(handler, 200, {"totalTokens": self.count(body.get("contents"))})
            return
        try:
            # The token count first: a request over the window is refused as that, whatever else is wrong in it.
            too_long = self.over_window(
                self.count([body.get("systemInstruction"), body.get("contents"), body.get("tools")]),
                INPUT_TOO_LONG,
            )
            if too_long is not None:
                raise too_long
            validate_contents(body)
        except RejectedRequest as error:
            entry.error = str(error)
            status = {"code": 400, "message": str(error), "status": "INVALID_ARGUMENT"}
            send_json(handler, 400, {"error": status})
            return
        if body.get("tools"):
            reply = self.next_reply(agent_of(body))
            if reply is HELD:
                self.holding.set()
                self._released.wait(600)
                handler.close_connection = True
                return
            parts = reply_parts(reply)
        else:
            reply = Reply(text=_router_answer(body))
            parts = [{"text": reply.text}]
        prompt = self.count([body.get("systemInstruction"), body.get("contents"), body.get("tools")])
        prompt = int(dict(reply.usage).get("promptTokenCount", prompt))  # a long context reported, not sent
        thoughts = estimate_tokens(reply.thinking) if reply.thinking else 0
        output = reply.output_tokens or self.count(parts)
        usage = {
            "promptTokenCount": prompt,
            "candidatesTokenCount": output,
            "totalTokenCount": prompt + output + thoughts,
            **({"thoughtsTokenCount": thoughts} if thoughts else {}),
        }
        cached = self._cached(body, prompt) if self.implicit_cache and body.get("tools") else 0
        if cached:
            usage["cachedContentTokenCount"] = cached
        response_id = f"fake-{next(_ids):06d}"
        self.bill(path.rsplit("/", 1)[-1].split(":")[0], usage, bool(body.get("tools")), response_id)
        if action == "generateContent":
            candidate = {"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}
            send_json(
                handler,
                200,
                {"candidates": [candidate], "usageMetadata": usage, "modelVersion": MODEL, "responseId": response_id},
            )
            return
        # streamGenerateContent?alt=sse: one chunk per part, the last with the finish reason and the usage.
        chunks = []
        for n, part in enumerate(parts):
            candidate: dict[str, Any] = {"content": {"role": "model", "parts": [part]}, "index": 0}
            chunk: dict[str, Any] = {"candidates": [candidate], "modelVersion": MODEL, "responseId": response_id}
            if n == len(parts) - 1:
                candidate["finishReason"] = "STOP"
                chunk["usageMetadata"] = usage
            chunks.append(chunk)
        handler.send_response(200)
        handler.send_header("Content-Type", "text/event-stream")
        handler.send_header("Transfer-Encoding", "chunked")
        handler.end_headers()
        for chunk in chunks:
            data = f"data: {json.dumps(chunk)}\r\n\r\n".encode()
            handler.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        handler.wfile.write(b"0\r\n\r\n")
        handler.wfile.flush()
