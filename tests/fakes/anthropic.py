"""A loopback fake of the Anthropic Messages API (``POST /v1/messages``, streaming and not).

It checks each request as the real API does (roles, empty content, tool_use/tool_result
pairing, unique tool_use ids) and answers 400 ``invalid_request_error`` where the real one
would; otherwise the next scripted :class:`Reply`, as SSE (``message_start`` ...
``message_stop``) or one JSON body. Model calls that carry no tools (Claude Code's title
and side queries) get a short text and leave the script alone.
"""

from __future__ import annotations

import itertools
import json
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

from tests.fakes import advisor
from tests.fakes.context_edits import clear_thinking, clear_tool_uses
from tests.fakes.server import FakeModelServer, Recorded, RejectedRequest, Reply, send_json, send_sse

_ids = itertools.count(1)
# The API's refusal of a request over the model's window (invalid_request_error, HTTP 400).
PROMPT_TOO_LONG = "prompt is too long: {tokens} tokens > {window} maximum"


def _blocks(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []


def validate_messages(body: dict[str, Any]) -> None:
    """Raise :class:`RejectedRequest` with the real API's wording where it would reject ``body``."""
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise RejectedRequest("messages: at least one message is required")
    if messages[0].get("role") != "user":
        raise RejectedRequest('messages: first message must use the "user" role')
    seen_tool_ids: set[str] = set()
    for n, message in enumerate(messages):
        role, content = message.get("role"), message.get("content")
        if role not in (
            "user",
            "assistant",
            "system",
        ):  # Claude Code sends "system" messages (beta) and the API takes them
            raise RejectedRequest(f"messages.{n}.role: Input should be 'user', 'assistant' or 'system'")
        final_assistant = role == "assistant" and n == len(messages) - 1
        # Claude Code itself sends an empty "system" message after its own compact summary, so the
        # API takes those; the rule is for user and assistant turns.
        if not final_assistant and role != "system" and (content == "" or content == []):
            raise RejectedRequest(
                f"messages.{n}: all messages must have non-empty content"
                " except for the optional final assistant message"
            )
        for k, block in enumerate(_blocks(content)):
            if block.get("type") == "text" and not block.get("text"):
                raise RejectedRequest(f"messages.{n}.content.{k}.text: text content blocks must be non-empty")
            if block.get("type") == "tool_use":
                if role != "assistant":
                    raise RejectedRequest(
                        f"messages.{n}.content.{k}: tool_use blocks can only be in assistant messages"
                    )
                if block.get("id") in seen_tool_ids:
                    raise RejectedRequest(f"messages.{n}.content.{k}: `tool_use` ids must be unique")
                seen_tool_ids.add(block.get("id"))
            if block.get("type") == "tool_result" and role != "user":
                raise RejectedRequest(f"messages.{n}.content.{k}: tool_result blocks can only be in user messages")
            if block.get("type") == "advisor_tool_result" and block.get("tool_use_id") not in {
                b.get("id") for b in _blocks(content)[:k] if b.get("type") == "server_tool_use"
            }:  # the API's wording (anthropics/claude-code#66944, a 2.1.170 session)
                raise RejectedRequest(
                    f"messages.{n}.content.{k}: unexpected `tool_use_id` found in `advisor_tool_result` blocks: "
                    f"{block.get('tool_use_id')}. "
                    "Each `advisor_tool_result` block must have a corresponding `server_tool_use` block before it."
                )
        calls = [b.get("id") for b in _blocks(content) if b.get("type") == "tool_use"] if role == "assistant" else []
        following = messages[n + 1] if n + 1 < len(messages) else None
        answered = (
            {b.get("tool_use_id") for b in _blocks(following.get("content")) if b.get("type") == "tool_result"}
            if following and following.get("role") == "user"
            else set()
        )
        missing = [c for c in calls if c not in answered]
        if missing and following is not None:
            raise RejectedRequest(
                f"messages.{n}: `tool_use` ids were found without `tool_result` blocks immediately after: "
                f"{', '.join(missing)}. "
                "Each `tool_use` block must have a corresponding `tool_result` block in the next message."
            )
        if role == "user":
            previous = messages[n - 1] if n else None
            offered = (
                {b.get("id") for b in _blocks(previous.get("content")) if b.get("type") == "tool_use"}
                if previous and previous.get("role") == "assistant"
                else set()
            )
            for k, block in enumerate(_blocks(content)):
                if block.get("type") == "tool_result" and block.get("tool_use_id") not in offered:
                    raise RejectedRequest(
                        f"messages.{n}.content.{k}: unexpected `tool_use_id` found in `tool_result` blocks: "
                        f"{block.get('tool_use_id')}. "
                        "Each `tool_result` block must have a corresponding `tool_use` block in the previous message."
                    )


def repeated_blocks(messages: list[dict[str, Any]]) -> list[tuple[int, dict[str, Any]]]:
    """Blocks that occur twice in one message, as (message index, block).

    The real API takes them; a resumed session must not send any."""
    found = []
    for n, message in enumerate(messages):
        seen: set[str] = set()
        for block in _blocks(message.get("content")):
            key = json.dumps(block, sort_keys=True)
            if key in seen:
                found.append((n, block))
            seen.add(key)
    return found


def reply_blocks(reply: Reply) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    if reply.thinking:
        blocks.append({"type": "thinking", "thinking": reply.thinking, "signature": f"sig-{next(_ids)}"})
    blocks.extend(reply.blocks)
    if reply.text:
        blocks.append({"type": "text", "text": reply.text})
    for call in reply.tool_calls:
        blocks.append(
            {"type": "tool_use", "id": f"toolu_fake{next(_ids):04d}", "name": call.name, "input": call.arguments}
        )
    return blocks


def _sse_events(message: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    usage = {key: value for key, value in message["usage"].items() if key != "iterations"}
    if message["usage"].get("iterations"):  # a response of several passes opens on its first pass's input
        usage["input_tokens"] = message["usage"]["iterations"][0]["input_tokens"]
    start = {**message, "content": [], "stop_reason": None, "usage": {**usage, "output_tokens": 1}}
    start.pop("context_management", None)  # known only at the end of the stream
    events: list[tuple[str, dict[str, Any]]] = [("message_start", {"type": "message_start", "message": start})]
    for index, block in enumerate(message["content"]):
        kind = block["type"]
        if kind == "thinking":
            opening, deltas = (
                {"type": "thinking", "thinking": "", "signature": ""},
                [
                    {"type": "thinking_delta", "thinking": block["thinking"]},
                    {"type": "signature_delta", "signature": block["signature"]},
                ],
            )
        elif kind == "text":
            opening, deltas = {"type": "text", "text": ""}, [{"type": "text_delta", "text": block["text"]}]
        elif kind in ("tool_use", "server_tool_use"):
            opening = {"type": kind, "id": block["id"], "name": block["name"], "input": {}}
            deltas = [{"type": "input_json_delta", "partial_json": json.dumps(block["input"])}]
        else:  # a server tool's result, redacted thinking: the API sends these whole in their start
            opening, deltas = block, []
        events.append(
            ("content_block_start", {"type": "content_block_start", "index": index, "content_block": opening})
        )
        events.extend(
            ("content_block_delta", {"type": "content_block_delta", "index": index, "delta": d}) for d in deltas
        )
        events.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
    delta = {"stop_reason": message["stop_reason"], "stop_sequence": None}
    final: dict[str, Any] = {"type": "message_delta", "delta": delta, "usage": _delta_usage(message["usage"])}
    if "context_management" in message:  # the API reports the context edits it applied with the final usage
        final["context_management"] = message["context_management"]
    events.append(("message_delta", final))
    events.append(("message_stop", {"type": "message_stop"}))
    return events


def _delta_usage(usage: dict[str, Any]) -> dict[str, Any]:
    """The final usage of a stream: the output, and the server tools' requests where there were any; for a response
    of several passes (the advisor's), the whole input and every pass (``usage.iterations``)."""
    passes = ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens", "iterations")
    return {
        "output_tokens": usage["output_tokens"],
        **({"server_tool_use": usage["server_tool_use"]} if "server_tool_use" in usage else {}),
        **({key: usage[key] for key in passes} if usage.get("iterations") else {}),
    }


COMPACT_SUMMARY = (
    "<analysis>The user asked for a fix in app.py; it was made and run.</analysis>\n"
    "<summary>1. Primary Request: fix the bug in app.py; results must stay in CSV.\n"
    "2. Work done: add() now returns a + b; python3 app.py prints 5.\n"
    "3. Next step: none pending.</summary>"
)


def _last_text(body: dict[str, Any]) -> str:
    messages = body.get("messages") or [{}]
    return " ".join(str(b.get("text", "")) for b in _blocks(messages[-1].get("content")))


def _asks_for_summary(body: dict[str, Any]) -> bool:
    """Claude Code's own /compact (and auto-compact) request: answered with a summary, off the script."""
    return "create a detailed summary of the conversation" in _last_text(body)


def _side_reply(body: dict[str, Any]) -> Reply:
    if _asks_for_summary(body):
        return Reply(text=COMPACT_SUMMARY)
    if "Extract any file paths that this command reads or modifies" in json.dumps(body.get("system")):
        return _file_paths(_last_text(body))
    return Reply(text="Fake title")


def _file_paths(text: str) -> Reply:
    """Claude Code 1.0.x's query after each Bash command for the files it showed (their paths join the
    files the client watches for changes): the files a ``cat`` names, as Haiku answers for such a command."""
    command = text.split("\n", 1)[0].removeprefix("Command: ")
    paths = command.split()[1:] if command.startswith("cat ") else []
    shows = "true" if paths else "false"
    return Reply(
        text=f"<is_displaying_contents>\n{shows}\n</is_displaying_contents>\n\n<filepaths>\n"
        + "".join(f"{path}\n" for path in paths)
        + "</filepaths>"
    )


@dataclass
class FakeAnthropic(FakeModelServer):
    """``ANTHROPIC_BASE_URL=fake.url`` points Claude Code (or the ``anthropic`` SDK) here."""

    # Report prompt caching as the real API does for Claude Code's cache breakpoints: what the previous
    # call of the model sent is read from the cache, the rest written with this TTL ("5m" or "1h", split
    # in ``cache_creation``), a few tokens plain. None: no cache, every input token plain.
    cache_writes: str | None = None
    # A model's tokens per token of ``count``: a model of another tokenizer counts the same request in
    # other tokens (Anthropic: Opus 4.7's tokenizer uses up to 1.35x the tokens of earlier models).
    tokenizer: dict[str, float] = field(default_factory=dict)
    # The model a response names for the model requested: the API answers an alias (``claude-haiku-4-5``)
    # with the dated model it serves (``claude-haiku-4-5-20251001``); a model not here is named as asked.
    served_names: dict[str, str] = field(default_factory=dict)
    # Tokens of thinking the advisor bills beside each advice (the API strips its thinking: tests/fakes/advisor.py).
    advisor_thinking: int = 0
    _cached: dict[str, int] = field(default_factory=dict)

    def _cache_usage(self, model: str, input_tokens: int) -> dict[str, Any]:
        with self.lock:
            read = min(self._cached.get(model, 0), max(0, input_tokens - 3))
            self._cached[model] = input_tokens
        written = max(0, input_tokens - 3 - read)
        split = {f"ephemeral_{ttl}_input_tokens": written if ttl == self.cache_writes else 0 for ttl in ("5m", "1h")}
        return {
            "input_tokens": input_tokens - read - written,
            "cache_creation_input_tokens": written,
            "cache_read_input_tokens": read,
            "cache_creation": split,
        }

    def _scaled(self, model: str, tokens: int) -> int:
        return round(tokens * self.tokenizer.get(model, 1.0))

    def model_calls(self) -> list[dict[str, Any]]:
        """The accepted requests that carried tools: the client's turns, not its side queries."""
        return [
            r.body
            for r in self.requests
            if r.path.split("?")[0] == "/v1/messages"
            and r.error is None
            and r.status == 200
            and isinstance(r.body, dict)
            and r.body.get("tools")
        ]

    def handle(self, handler: BaseHTTPRequestHandler, method: str, body: Any) -> None:
        path = handler.path.split("?")[0]
        entry = Recorded(method, handler.path, dict(handler.headers), body)
        self.record(entry)
        if method == "POST" and path == "/v1/messages/count_tokens":
            send_json(handler, 200, {"input_tokens": self.count(body)})
            return
        if method != "POST" or path != "/v1/messages" or not isinstance(body, dict):
            send_json(
                handler,
                404,
                {"type": "error", "error": {"type": "not_found_error", "message": f"no route {method} {path}"}},
            )
            return
        try:
            validate_messages(body)
            too_long = self.over_window(
                self.count([body.get("system"), body.get("messages"), body.get("tools")]),
                PROMPT_TOO_LONG,
            )
            if too_long is not None:
                raise too_long
        except RejectedRequest as error:
            entry.error = str(error)
            send_json(
                handler, 400, {"type": "error", "error": {"type": "invalid_request_error", "message": str(error)}}
            )
            return
        failure = self.next_failure() if body.get("tools") and not _asks_for_summary(body) else None
        if failure is not None:
            entry.status = failure
            kind = {529: "overloaded_error", 429: "rate_limit_error"}.get(failure, "api_error")
            send_json(handler, failure, {"type": "error", "error": {"type": kind, "message": kind.replace("_", " ")}})
            return
        reply = self.next_reply() if body.get("tools") and not _asks_for_summary(body) else _side_reply(body)
        blocks = reply_blocks(reply)
        # The model sees (and the API bills) the request after the context edits it asked for.
        seen, applied = clear_tool_uses(clear_thinking(body), self.count)
        input_tokens = self.count([seen.get("system"), seen.get("messages"), seen.get("tools")])
        input_tokens = round(input_tokens * self.tokenizer.get(str(body.get("model")), 1.0))
        output_tokens = reply.output_tokens or self.count(blocks)
        message = {
            "id": f"msg_fake{next(_ids):06d}",
            "type": "message",
            "role": "assistant",
            "model": self.served_names.get(str(body.get("model")), body.get("model", "claude-fake")),
            "content": blocks,
            "stop_reason": "tool_use" if reply.tool_calls else "end_turn",
            "stop_sequence": None,
            "usage": {
                "input_tokens": input_tokens,
                "cache_creation_input_tokens": 0,
                "cache_read_input_tokens": 0,
                "output_tokens": output_tokens,
                "service_tier": "standard",
                **dict(reply.usage),
            },
        }
        if applied is not None:
            message["context_management"] = {"applied_edits": [applied] if applied["cleared_tool_uses"] else []}
        if self.cache_writes and body.get("tools"):
            message["usage"].update(self._cache_usage(message["model"], input_tokens))
        if advisor.is_advised(blocks):
            if advisor.offered_advisor(body) is None:
                entry.error = "the script has the advisor answer a request that offers no advisor tool"
                refusal = {"type": "invalid_request_error", "message": entry.error}
                send_json(handler, 400, {"type": "error", "error": refusal})
                return
            message["usage"].update(
                advisor.advised_usage(body, blocks, self.count, self._scaled, self.advisor_thinking)
            )
        if body.get("stream"):
            send_sse(handler, _sse_events(message), {"message_delta": reply.usage_after})
        else:
            send_json(handler, 200, message, {"request-id": f"req_fake{next(_ids)}"})


def web_search_reply(query: str, text: str, n: int) -> Reply:
    """The server tool's answer to Claude Code's WebSearch request (a request whose only tool is
    ``web_search``): a ``server_tool_use``, its ``web_search_tool_result``, the model's text, and the
    search counted in ``usage.server_tool_use`` as the API bills it (per search, beside the tokens)."""
    called = f"srvtoolu_fake{n:04d}"
    result = {
        "type": "web_search_result",
        "url": f"https://example.org/{n}",
        "title": f"Result {n}",
        "encrypted_content": f"EqgfCioIARgBIiQ{n:04d}",
        "page_age": "2026",
    }
    return Reply(
        text=text,
        blocks=(
            {"type": "server_tool_use", "id": called, "name": "web_search", "input": {"query": query}},
            {"type": "web_search_tool_result", "tool_use_id": called, "content": [result]},
        ),
        usage=(("server_tool_use", {"web_search_requests": 1, "web_fetch_requests": 0}),),
    )
