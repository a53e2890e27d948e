"""A loopback fake of the OpenAI Responses API (``POST /v1/responses``, SSE), as Codex calls it.

Codex first tries a WebSocket on the same path; the fake refuses the upgrade, as a server
without WebSocket support does, and Codex falls back to HTTPS streaming. Each request is
checked as the real API checks it (every call answered and every output matching a call,
by ``call_id``; no duplicate item ids; reasoning items sent with ``store: false`` must carry
their ``encrypted_content``) and answered from the scripted queue as
``response.created`` ... ``response.completed`` with usage.
"""

from __future__ import annotations

import itertools
import json
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

from tests.fakes.server import (
    FakeModelServer,
    OverWindow,
    Recorded,
    RejectedRequest,
    Reply,
    estimate_tokens,
    send_json,
    send_sse,
)

_ids = itertools.count(1)
# The API's refusal of an input over the model's window (code context_length_exceeded, HTTP 400).
CONTEXT_TOO_LONG = "Your input exceeds the context window of this model. Please adjust your input and try again."
CALLS = {
    "function_call": "function_call_output",
    "custom_tool_call": "custom_tool_call_output",
    "local_shell_call": "function_call_output",
}


def validate_input(body: dict[str, Any]) -> None:
    items = body.get("input")
    if isinstance(items, str):
        return
    if not isinstance(items, list):
        raise RejectedRequest("input: expected a string or an array of items")
    calls: dict[str, str] = {}
    answered: set[str] = set()
    ids: set[str] = set()
    for n, item in enumerate(items):
        kind = item.get("type", "message")
        if isinstance(item.get("id"), str):
            if item["id"] in ids:
                raise RejectedRequest(
                    f"Duplicate item found with id {item['id']}. Remove duplicate items from your input and try again."
                )
            ids.add(item["id"])
        if kind == "reasoning" and body.get("store") is False and item.get("id") and not item.get("encrypted_content"):
            raise RejectedRequest(
                f"Item with id '{item['id']}' not found. Items are not persisted when `store` is set to false."
            )
        if kind in CALLS:
            calls[item.get("call_id")] = kind
        elif kind.endswith("_call_output") and item.get("call_id") is None and isinstance(item.get("name"), str):
            # 0.171's own context sent as a named output of no call (an active goal's ``goal_objective``, namespace
            # ``agent``), which the API takes: Codex sends it after each ``create_goal``.
            continue
        elif kind.endswith("_call_output"):
            if item.get("call_id") not in calls:
                raise RejectedRequest(
                    f"No tool call found for function call output with call_id {item.get('call_id')}."
                )
            answered.add(item.get("call_id"))
        elif kind == "message" and item.get("role") not in ("user", "assistant", "system", "developer"):
            raise RejectedRequest(f"input[{n}].role: invalid role {item.get('role')!r}")
    for call_id in calls:
        if call_id not in answered:
            raise RejectedRequest(f"No tool output found for function call {call_id}.")


def repeated_items(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Items sent twice in one request (the same JSON): a resume must not send any."""
    seen: set[str] = set()
    found = []
    for item in items:
        key = json.dumps(item, sort_keys=True)
        if key in seen:
            found.append(item)
        seen.add(key)
    return found


def output_items(reply: Reply) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    if reply.thinking:
        items.append(
            {
                "type": "reasoning",
                "id": f"rs_fake{next(_ids):04d}",
                "summary": [{"type": "summary_text", "text": reply.thinking}],
                "encrypted_content": f"enc-{next(_ids)}",
            }
        )
    items.extend(reply.blocks)  # hosted tools' items (web_search_call), sent as given
    if reply.text:
        items.append(
            {
                "type": "message",
                "id": f"msg_fake{next(_ids):04d}",
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": reply.text, "annotations": []}],
            }
        )
    for call in reply.tool_calls:
        call_id = f"call_fake{next(_ids):04d}"
        if isinstance(call.arguments, str):
            items.append(
                {
                    "type": "custom_tool_call",
                    "id": f"ctc_fake{next(_ids):04d}",
                    "status": "completed",
                    "call_id": call_id,
                    "name": call.name,
                    "input": call.arguments,
                }
            )
        else:
            items.append(
                {
                    "type": "function_call",
                    "id": f"fc_fake{next(_ids):04d}",
                    "status": "completed",
                    "call_id": call_id,
                    "name": call.name,
                    "arguments": json.dumps(call.arguments),
                }
            )
    return items


def _asks_for_compaction(body: dict[str, Any]) -> bool:
    items = body.get("input")
    return isinstance(items, list) and bool(items) and items[-1].get("type") == "compaction_trigger"


@dataclass
class FakeResponses(FakeModelServer):
    """``openai_base_url = fake.url + "/v1"`` in Codex's config.toml points Codex here."""

    # Report prompt caching with writes, as OpenAI's gpt-5.6 family bills them: what the previous response of
    # the model took in is read (``input_tokens_details.cached_tokens``), the rest written (``cache_write_tokens``).
    cache_writes: bool = False
    # How the next main calls' streams break before their ``response.completed``, before the script goes on (each
    # such call answers from the next reply, which the retry then gets whole): "cut", the connection dropped after
    # the output items (no usage: the API bills nothing); "failed", a ``response.failed`` (a server error) that
    # carries the usage of what was generated, as the API reports and bills a failed response.
    broken: deque[str] = field(default_factory=deque)
    _cached: dict[str, int] = field(default_factory=dict)

    def _cache_details(self, model: str, input_tokens: int) -> dict[str, int]:
        with self.lock:
            read = min(self._cached.get(model, 0), input_tokens)
            self._cached[model] = input_tokens
        return {"cached_tokens": read, "cache_write_tokens": input_tokens - read}

    def model_calls(self) -> list[dict[str, Any]]:
        return [
            r.body
            for r in self.requests
            if r.path.split("?")[0] == "/v1/responses"
            and r.method == "POST"
            and r.error is None
            and r.status == 200
            and isinstance(r.body, dict)
        ]

    def _agent_of(self, handler: BaseHTTPRequestHandler) -> str | None:
        """The script a request takes: its agent's ("/root", "/root/reader"), or, for Codex's own model calls that
        run as "/root" too or as no agent, that kind's where one is queued: the approvals reviewer's
        (``x-openai-subagent: guardian``), the memory consolidation agent's (``memory_consolidation``), the memory
        extraction's (turn metadata ``request_kind: "memory"``, no subagent header)."""
        kind = own_call_kind(handler.headers)
        return kind if kind in self.agent_scripts else _agent_name(handler.headers.get("x-codex-turn-metadata"))

    def handle(self, handler: BaseHTTPRequestHandler, method: str, body: Any) -> None:
        path = handler.path.split("?")[0]
        entry = Recorded(method, handler.path, dict(handler.headers), body)
        self.record(entry)
        if method == "GET" and path == "/v1/models":
            send_json(handler, 200, {"object": "list", "data": []})
            return
        if handler.headers.get("Upgrade", "").lower() == "websocket":
            send_json(handler, 426, {"error": {"message": "WebSocket not supported", "type": "invalid_request_error"}})
            return
        if method == "POST" and path == "/v1/responses/compact" and isinstance(body, dict):
            self._compact(entry, handler, body)
            return
        if method != "POST" or path != "/v1/responses" or not isinstance(body, dict):
            # Includes Codex's WebSocket upgrade: no WebSocket here, so it falls back to HTTPS.
            send_json(
                handler, 404, {"error": {"message": f"no route {method} {path}", "type": "invalid_request_error"}}
            )
            return
        try:
            validate_input(body)
            too_long = self.over_window(
                self.count([body.get("instructions"), body.get("input"), body.get("tools")]), CONTEXT_TOO_LONG
            )
            if too_long is not None:
                raise too_long
        except RejectedRequest as error:
            entry.error = str(error)
            code = "context_length_exceeded" if isinstance(error, OverWindow) else None
            send_json(
                handler,
                400,
                {"error": {"message": str(error), "type": "invalid_request_error", "param": "input", "code": code}},
            )
            return
        failure = None if _asks_for_compaction(body) else self.next_failure()
        if failure is not None:
            entry.status = failure
            send_json(handler, failure, {"error": {"message": "The server is overloaded.", "type": "server_error"}})
            return
        breaking: str | None = None  # a compaction's stream never breaks
        if _asks_for_compaction(body):
            # Codex's remote compaction: one opaque compaction item replaces the history.
            reply = Reply()
            items = [
                {"type": "compaction", "id": f"cmp_fake{next(_ids):04d}", "encrypted_content": "enc-compacted-history"}
            ]
        else:
            with self.lock:
                breaking = self.broken.popleft() if self.broken else None
            agent = self._agent_of(handler)
            reply = self.next_reply(agent) if breaking is None else self.peek_reply(agent)
            items = output_items(reply)
        # A reply may report more input than the fake counts (``Reply.usage``'s ``input_tokens``): a long context.
        counted = self.count([body.get("instructions"), body.get("input"), body.get("tools")])
        input_tokens = int(dict(reply.usage).get("input_tokens", counted))
        output_tokens = reply.output_tokens or self.count(items)
        reasoning_tokens = estimate_tokens(reply.thinking) if reply.thinking else 0
        response_id = f"resp_fake{next(_ids):06d}"
        base = {
            "id": response_id,
            "object": "response",
            "model": body.get("model", "gpt-fake"),
            "output": [],
            # The tier the request asked for, as the API answers it (the one it was processed and billed at).
            "service_tier": body.get("service_tier") or "default",
        }
        events: list[tuple[str, dict[str, Any]]] = [
            ("response.created", {"type": "response.created", "response": {**base, "status": "in_progress"}})
        ]
        for index, item in enumerate(items):
            events.append(
                (
                    "response.output_item.added",
                    {"type": "response.output_item.added", "output_index": index, "item": item},
                )
            )
            if item["type"] == "message":
                events.append(
                    (
                        "response.output_text.delta",
                        {
                            "type": "response.output_text.delta",
                            "item_id": item["id"],
                            "output_index": index,
                            "content_index": 0,
                            "delta": reply.text,
                        },
                    )
                )
            events.append(
                (
                    "response.output_item.done",
                    {"type": "response.output_item.done", "output_index": index, "item": item},
                )
            )
        usage = {
            "input_tokens": input_tokens,
            "input_tokens_details": self._cache_details(base["model"], input_tokens)
            if self.cache_writes
            else {"cached_tokens": 0},
            "output_tokens": output_tokens,
            "output_tokens_details": {"reasoning_tokens": reasoning_tokens},
            "total_tokens": input_tokens + output_tokens,
        }
        if breaking == "cut":
            send_sse(handler, events, None, True)
            return
        if breaking == "failed":
            error = {"code": "server_error", "message": "The server had an error while processing your request."}
            failed = {**base, "status": "failed", "error": error, "output": items, "usage": usage}
            events.append(("response.failed", {"type": "response.failed", "response": failed}))
            send_sse(handler, events)
            return
        completed = {**base, "status": "completed", "output": items, "usage": usage}
        events.append(("response.completed", {"type": "response.completed", "response": completed}))
        send_sse(handler, events)

    def _compact(self, entry: Recorded, handler: BaseHTTPRequestHandler, body: dict[str, Any]) -> None:
        """``POST /v1/responses/compact``, the unary endpoint Codex's remote compaction called before 0.171's
        ``compaction_trigger``: the history's user messages kept and one opaque compaction item, with usage."""
        try:
            validate_input(body)
        except RejectedRequest as error:
            entry.error = str(error)
            send_json(handler, 400, {"error": {"message": str(error), "type": "invalid_request_error"}})
            return
        items = [
            item
            for item in body.get("input") or ()
            if item.get("type", "message") == "message" and item.get("role") == "user"
        ]
        items.append(
            {"type": "compaction", "id": f"cmp_fake{next(_ids):04d}", "encrypted_content": "enc-compacted-history"}
        )
        input_tokens = self.count([body.get("instructions"), body.get("input"), body.get("tools")])
        output_tokens = self.count(items[-1:])
        usage = {
            "input_tokens": input_tokens,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": output_tokens,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": input_tokens + output_tokens,
        }
        response = {
            "id": f"resp_fake{next(_ids):06d}",
            "object": "response.compaction",
            "model": body.get("model", "gpt-fake"),
            "output": items,
            "usage": usage,
        }
        send_json(handler, 200, response)


def web_search_call(query: str, n: int) -> dict[str, Any]:
    """A hosted ``web_search`` call as the Responses API returns it (an output item; OpenAI bills each one
    beside the tokens, and the usage counts none)."""
    action = {"type": "search", "query": query, "sources": [{"type": "url", "url": f"https://example.org/{n}"}]}
    return {"type": "web_search_call", "id": f"ws_fake{n:04d}", "status": "completed", "action": action}


def own_call_kind(headers: Any) -> str | None:
    """Which of Codex's own model calls a request is, beside the thread's turns: the subagent it names
    (``x-openai-subagent``: ``guardian``, ``memory_consolidation``), ``memory`` for the memory extraction (turn
    metadata ``request_kind: "memory"``, no subagent header), ``thread_title`` for the terminal UI's title of a new
    thread (``thread_source: "thread_title"``); None for a turn's call."""
    subagent = headers.get("x-openai-subagent")
    if isinstance(subagent, str) and subagent:
        return subagent
    metadata = _metadata(headers.get("x-codex-turn-metadata"))
    if metadata.get("request_kind") == "memory":
        return "memory"
    return "thread_title" if metadata.get("thread_source") == "thread_title" else None


def _metadata(metadata: str | None) -> dict[str, Any]:
    """A Codex request's turn metadata header, read; {} where it has none or it does not read."""
    try:
        value = json.loads(metadata or "{}")
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _agent_name(metadata: str | None) -> str | None:
    """The agent a Codex request is of ("/root", "/root/reader"), from its turn metadata header."""
    name = _metadata(metadata).get("agent_name")
    return name if isinstance(name, str) else None
