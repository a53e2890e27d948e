"""A small OpenAI-compatible server on 127.0.0.1 for tests: chat completions and responses.

It records every request and answers with realistic bodies (ids, usage, finish reasons),
or with what the test scripted: a 429, a 500, a slow reply (to trip a timeout), a
summary cut off by the token limit; and the faults a broken proxy or server sends with a
200: an HTML page, malformed JSON, JSON of the wrong shape, a reply trickled one byte at
a time (``slow-bytes``: ``seconds`` between bytes), or no reply at all (``hang``).
"""

from __future__ import annotations

import itertools
import json
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

DEFAULT_SUMMARY = "## Goal\n- Fix the failing test.\n\n## Facts\n- Paths: src/app.py\n\n## Next steps\n- Run pytest -q."

_ids = itertools.count(1)
FAULTY_200 = frozenset({"html", "malformed", "shape", "slow-bytes", "hang"})


@dataclass
class Recorded:
    path: str
    headers: dict[str, str]
    body: dict[str, Any]


@dataclass
class Behaviour:
    # ok | 429 | 500 | slow | length | 400 | 400-echo | 401 | too-large | html | malformed | shape | slow-bytes | hang
    kind: str = "ok"
    seconds: float = 0.0  # for slow, slow-bytes (between bytes) and hang
    body: Any = None  # for shape: the JSON sent with the 200
    text: str | None = None
    tool_calls: list[dict[str, Any]] | None = None  # chat completions: answer with these calls instead of text
    finish: str | None = None  # the finish_reason to send for "length" (servers differ)


# What real servers do with the reply bound: OpenAI refuses max_tokens for reasoning models with this
# error ("openai"); the others accept what they are sent ("any").
FLAVOURS = ("any", "openai")
UNSUPPORTED_MAX_TOKENS = (
    "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead."
)


@dataclass
class FakeOpenAI:
    port: int = 0
    requests: list[Recorded] = field(default_factory=list)
    script: deque[Behaviour] = field(default_factory=deque)
    text: str = DEFAULT_SUMMARY
    lock: threading.Lock = field(default_factory=threading.Lock)
    flavour: str = "any"  # one of FLAVOURS
    stopping: threading.Event = field(default_factory=threading.Event)  # ends a trickling reply at shutdown
    models: dict[str, Any] | None = None  # what GET /v1/models answers; None: 404, as servers without it do
    window: int | None = None  # refuse (400, as OpenAI and vLLM word it) a request whose text is larger
    truncates: bool = False  # with a window: read only that much and answer anyway, as Ollama does

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def enqueue(self, *kinds: str | Behaviour) -> None:
        """Script the next replies; once the script is used up every reply is a plain success."""
        for kind in kinds:
            self.script.append(kind if isinstance(kind, Behaviour) else Behaviour(kind))

    def next_behaviour(self) -> Behaviour:
        with self.lock:
            return self.script.popleft() if self.script else Behaviour()

    def received_text(self) -> str:
        return "\n".join(json.dumps(r.body, ensure_ascii=False) for r in self.requests)


def _chat_body(
    request: dict[str, Any], text: str, finish: str, tool_calls: list[dict[str, Any]] | None = None
) -> dict[str, Any]:
    prompt = sum(len(str(m.get("content", ""))) // 4 for m in request.get("messages", []))
    completion = max(1, len(text) // 4)
    message: dict[str, Any] = {"role": "assistant", "content": text, "refusal": None}
    if tool_calls:
        message, finish = (
            {"role": "assistant", "content": None, "refusal": None, "tool_calls": tool_calls},
            "tool_calls",
        )
    return {
        "id": f"chatcmpl-test{next(_ids)}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": request.get("model", "?"),
        "system_fingerprint": "fp_test",
        "choices": [
            {
                "index": 0,
                "message": message,
                "logprobs": None,
                "finish_reason": finish,
            }
        ],
        "usage": {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion},
    }


def _responses_body(request: dict[str, Any], text: str, incomplete: bool) -> dict[str, Any]:
    prompt = (len(str(request.get("instructions", ""))) + len(str(request.get("input", "")))) // 4
    completion = max(1, len(text) // 4)
    return {
        "id": f"resp_test{next(_ids)}",
        "object": "response",
        "created_at": int(time.time()),
        "status": "incomplete" if incomplete else "completed",
        "incomplete_details": {"reason": "max_output_tokens"} if incomplete else None,
        "error": None,
        "model": request.get("model", "?"),
        "instructions": request.get("instructions"),
        "max_output_tokens": request.get("max_output_tokens"),
        "output": [
            {
                "id": f"msg_test{next(_ids)}",
                "type": "message",
                "status": "incomplete" if incomplete else "completed",
                "role": "assistant",
                "content": [{"type": "output_text", "text": text, "annotations": []}],
            }
        ],
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
        "usage": {
            "input_tokens": prompt,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": completion,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": prompt + completion,
        },
    }


def _handler(state: FakeOpenAI) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:  # keep test output clean
            pass

        def _send(self, status: int, body: dict[str, Any], headers: dict[str, str] | None = None) -> None:
            data = json.dumps(body).encode()
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.send_header("x-request-id", f"req_test{next(_ids)}")
                for key, value in (headers or {}).items():
                    self.send_header(key, value)
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):  # the client gave up (timeout)
                pass

        def _send_fault(self, behaviour: Behaviour) -> None:
            """A 200 that is not a conforming reply, or one that never finishes arriving."""
            kind = behaviour.kind
            if kind == "hang":
                state.stopping.wait(behaviour.seconds)
                return
            if kind == "html":
                data, content_type = b"<html><body><h1>502 Bad Gateway</h1></body></html>", "text/html"
            elif kind == "malformed":
                data, content_type = b'{"id": "chatcmpl-x", "choices": [{"message": {"content": "cu', "application/json"
            elif kind == "shape":
                data, content_type = json.dumps(behaviour.body).encode(), "application/json"
            else:  # slow-bytes: a valid reply, one byte at a time
                text = behaviour.text or state.text
                data, content_type = json.dumps(_chat_body({}, text, "stop")).encode(), "application/json"
            try:
                self.send_response(200)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                if kind != "slow-bytes":
                    self.wfile.write(data)
                    return
                for byte in data:
                    self.wfile.write(bytes([byte]))
                    self.wfile.flush()
                    if state.stopping.wait(behaviour.seconds):
                        return
            except (BrokenPipeError, ConnectionResetError):  # the client gave up
                pass

        def do_GET(self) -> None:
            if self.path.endswith("/models") and state.models is not None:
                self._send(200, state.models)
                return
            self._send(404, {"error": {"message": f"no route {self.path}", "type": "invalid_request_error"}})

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = json.loads(self.rfile.read(length) or b"{}")
            with state.lock:
                state.requests.append(Recorded(self.path, {k.lower(): v for k, v in self.headers.items()}, body))
            behaviour = state.next_behaviour()
            if behaviour.kind == "429":
                error = {
                    "message": "Rate limit reached for requests",
                    "type": "requests",
                    "code": "rate_limit_exceeded",
                }
                self._send(429, {"error": error}, {"retry-after": "0"})
                return
            if behaviour.kind == "500":
                self._send(500, {"error": {"message": "The server had an error", "type": "server_error"}})
                return
            size = sum(len(str(m.get("content", ""))) // 4 for m in body.get("messages", []))
            if state.truncates and state.window is not None and size > state.window:
                reply = _chat_body(body, behaviour.text or state.text, "length")
                reply["usage"]["prompt_tokens"] = state.window  # what it read of the prompt, not what was sent
                self._send(200, reply)
                return
            if behaviour.kind == "too-large" or (state.window is not None and size > state.window):
                window = state.window or 2048
                message = (
                    f"This model's maximum context length is {window} tokens. However, you requested "
                    f"{size + 200} tokens ({size} in the messages, 200 in the completion). Please reduce "
                    "the length of the messages or completion."
                )
                error = {"message": message, "type": "invalid_request_error", "code": "context_length_exceeded"}
                self._send(400, {"error": error})
                return
            if behaviour.kind == "401":  # a proxy that echoes the key it refused, whole
                key = self.headers.get("Authorization", "").removeprefix("Bearer ")
                message = f"Incorrect API key provided: {key}. You can find your API key at https://example.com/keys."
                self._send(401, {"error": {"message": message, "type": "invalid_request_error"}})
                return
            if behaviour.kind == "400-echo":  # a validation error quoting what it was sent, from behaviour.text on
                sent = json.dumps(body.get("messages", body.get("input", "")))
                quoted = sent[max(0, sent.find(behaviour.text or "")) :][:4000]
                self._send(400, {"error": {"message": f"Invalid value for 'messages': {quoted}", "type": "invalid"}})
                return
            if behaviour.kind == "400":
                self._send(400, {"error": {"message": "Invalid model", "type": "invalid_request_error"}})
                return
            if behaviour.kind in FAULTY_200:
                self._send_fault(behaviour)
                return
            if behaviour.kind == "slow":
                time.sleep(behaviour.seconds)
            chat = self.path.endswith("/chat/completions")
            if chat and state.flavour == "openai" and "max_tokens" in body:
                error = {"message": UNSUPPORTED_MAX_TOKENS, "type": "invalid_request_error", "param": "max_tokens"}
                self._send(400, {"error": {**error, "code": "unsupported_parameter"}})
                return
            text = behaviour.text or state.text
            truncated = behaviour.kind == "length"
            if chat:
                finish = (behaviour.finish or "length") if truncated else "stop"
                self._send(200, _chat_body(body, text, finish, behaviour.tool_calls))
            elif self.path.endswith("/responses"):
                self._send(200, _responses_body(body, text, truncated))
            else:
                self._send(404, {"error": {"message": f"no route {self.path}", "type": "invalid_request_error"}})

    return Handler


class ServerThread:
    """Starts the fake server on a free 127.0.0.1 port; ``stop()`` shuts it down."""

    def __init__(self) -> None:
        self.state = FakeOpenAI()
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self.state))
        self.httpd.daemon_threads = True
        self.state.port = self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
        self.thread.start()

    def stop(self) -> None:
        self.state.stopping.set()
        self.httpd.shutdown()
        self.httpd.server_close()
