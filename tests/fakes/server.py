"""What the loopback fake model APIs share: a threaded HTTP server on 127.0.0.1 that records
every request and answers the main model calls from a scripted reply queue.

A reply is written once, as :class:`Reply`, and each fake renders it in its own API's
shape (Anthropic content blocks, Responses output items), so one script drives either
client through the same turns.
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class ToolCall:
    """A call to one of the client's own tools (``Bash``, ``Read``; ``exec_command``, ``apply_patch``)."""

    name: str
    arguments: dict[str, Any] | str  # a string for Responses custom tools (apply_patch's patch text)


@dataclass(frozen=True)
class Reply:
    """One scripted model response: optional thinking, optional text, any number of tool calls."""

    text: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    thinking: str = ""
    output_tokens: int | None = None  # reported usage; estimated from the text when None
    # Seconds the stream waits before its final usage (``message_delta``), as a real one may after its
    # last block: a client that writes each block as it stops writes the usage of the stream's start.
    usage_after: float = 0.0
    # Blocks sent as given before the text (server tools' server_tool_use / *_tool_result, redacted_thinking),
    # and more usage keys (``server_tool_use``: the searches and fetches the API bills apart).
    blocks: tuple[dict[str, Any], ...] = ()
    usage: tuple[tuple[str, Any], ...] = ()


@dataclass
class Recorded:
    method: str
    path: str
    headers: dict[str, str]
    body: Any
    error: str | None = None  # what the fake rejected the request for, as the real API would
    status: int = 200  # the HTTP status answered: a scripted failure (529 overloaded, 500) is not a refusal


class RejectedRequest(ValueError):
    """A request the real API would answer with 400 invalid_request_error."""


class OverWindow(RejectedRequest):
    """A request larger than the model's context window."""

    def __init__(self, message: str, tokens: int, window: int) -> None:
        super().__init__(message)
        self.tokens = tokens
        self.window = window


class _QuietServer(ThreadingHTTPServer):
    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # a client dropping its connection (Codex after a stream ends) is not a test failure


@dataclass
class FakeModelServer:
    """Records requests; the model calls that carry tools take the next scripted reply."""

    requests: list[Recorded] = field(default_factory=list)
    script: deque[Reply] = field(default_factory=deque)
    # HTTP statuses to answer the next main calls with before the script goes on (529 overloaded, 500, 429):
    # the real API bills no tokens for them, and the client retries.
    failures: deque[int] = field(default_factory=deque)
    default: Reply = field(default_factory=lambda: Reply(text="Done."))
    # The model's context window in the fake's tokens (:func:`estimate_tokens` of the request): a
    # request over it is refused with the API's own error, as a real one over the model's window is.
    window: int | None = None
    # How the fake counts a request's tokens (for its usage and its window): four characters a token
    # of the JSON by default; ``text_tokens`` counts the texts in a real encoding, as an API would.
    count: Callable[[Any], int] = field(default_factory=lambda: estimate_tokens)
    lock: threading.Lock = field(default_factory=threading.Lock)
    port: int = 0
    _server: ThreadingHTTPServer | None = None
    _thread: threading.Thread | None = None

    # Scripts of their own for the calls of a client's other agents, by the name the client sends (Codex's
    # ``agent_name`` in ``x-codex-turn-metadata``: "/root/reader" for a subagent): they run at once with the root's.
    agent_scripts: dict[str, deque[Reply]] = field(default_factory=dict)

    def enqueue(self, *replies: Reply | str, agent: str | None = None) -> None:
        script = self.script if agent is None else self.agent_scripts.setdefault(agent, deque())
        for reply in replies:
            script.append(Reply(text=reply) if isinstance(reply, str) else reply)

    def next_reply(self, agent: str | None = None) -> Reply:
        with self.lock:
            script = self.agent_scripts.get(agent or "", self.script)
            return script.popleft() if script else self.default

    def peek_reply(self, agent: str | None = None) -> Reply:
        """The reply the next call takes, left in the script (a broken stream's: the retry gets it again)."""
        with self.lock:
            script = self.agent_scripts.get(agent or "", self.script)
            return script[0] if script else self.default

    def next_failure(self) -> int | None:
        with self.lock:
            return self.failures.popleft() if self.failures else None

    def record(self, entry: Recorded) -> None:
        with self.lock:
            self.requests.append(entry)

    def over_window(self, tokens: int, message: str) -> OverWindow | None:
        """The refusal of a request of ``tokens`` when it is over the window, else None."""
        if self.window is None or tokens <= self.window:
            return None
        return OverWindow(message.format(tokens=tokens, window=self.window), tokens, self.window)

    @property
    def errors(self) -> list[str]:
        return [r.error for r in self.requests if r.error]

    def handle(self, handler: BaseHTTPRequestHandler, method: str, body: Any) -> None:  # pragma: no cover
        raise NotImplementedError

    def start(self) -> FakeModelServer:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:  # keep test output clean
                pass

            def _dispatch(self, method: str) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body = json.loads(raw) if raw else None
                except ValueError:
                    body = raw.decode("utf-8", "replace")
                fake.handle(self, method, body)

            def do_POST(self) -> None:
                self._dispatch("POST")

            def do_GET(self) -> None:
                self._dispatch("GET")

            def do_HEAD(self) -> None:
                self._dispatch("HEAD")

        self._server = _QuietServer(("127.0.0.1", self.port), Handler)
        self._server.daemon_threads = True
        self.port = self._server.server_address[1]
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> FakeModelServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"


def send_json(handler: BaseHTTPRequestHandler, status: int, body: Any, headers: dict[str, str] | None = None) -> None:
    data = json.dumps(body).encode()
    handler.send_response(status)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", str(len(data)))
    for key, value in (headers or {}).items():
        handler.send_header(key, value)
    handler.end_headers()
    handler.wfile.write(data)


def send_sse(
    handler: BaseHTTPRequestHandler,
    events: list[tuple[str, dict[str, Any]]],
    pauses: dict[str, float] | None = None,
    cut: bool = False,
) -> None:
    """Server-sent events, one ``event:``/``data:`` pair each, chunked so the client reads them as they come;
    ``pauses`` waits that many seconds before the first event of each name given. ``cut`` drops the connection
    after the events, without the chunked body's end: a stream broken mid-way, as a proxy's reset breaks one."""
    handler.send_response(200)
    handler.send_header("Content-Type", "text/event-stream")
    handler.send_header("Cache-Control", "no-cache")
    handler.send_header("Transfer-Encoding", "chunked")
    handler.end_headers()
    waits = dict(pauses or {})
    for name, data in events:
        if waits.get(name):
            handler.wfile.flush()
            time.sleep(waits.pop(name))
        chunk = f"event: {name}\ndata: {json.dumps(data)}\n\n".encode()
        handler.wfile.write(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
    if cut:
        handler.wfile.flush()
        handler.close_connection = True
        return
    handler.wfile.write(b"0\r\n\r\n")
    handler.wfile.flush()


def estimate_tokens(value: Any) -> int:
    """About four characters a token: the fakes report usage the way the APIs do, not exactly."""
    return max(1, len(json.dumps(value, ensure_ascii=False)) // 4)


# Keys whose values the APIs do not count as text: ids, signatures, opaque blobs, markup.
UNCOUNTED_KEYS = frozenset(
    {
        "id",
        "call_id",
        "tool_use_id",
        "signature",
        "thoughtSignature",
        "encrypted_content",
        "type",
        "role",
        "cache_control",
        "status",
    }
)
MESSAGE_OVERHEAD = 4  # tokens an API adds per message or item (its chat template's framing)


def text_tokens(value: Any, encoding: str = "cl100k_base") -> int:
    """A request's tokens as an API counts them: the tokens of its texts in ``encoding`` (cl100k;
    o200k for OpenAI's current models), ids and markup left out, plus the framing of each message.
    Numbers and booleans count one token."""
    from compactctl.tokens import counter_for

    counter = counter_for(encoding)

    def walk(node: Any, key: str = "") -> int:
        if key in UNCOUNTED_KEYS:
            return 0
        if isinstance(node, str):
            return counter(node)
        if isinstance(node, dict):
            framing = MESSAGE_OVERHEAD if "role" in node or "type" in node else 0
            return framing + sum(walk(v, k) for k, v in node.items())
        if isinstance(node, list):
            return sum(walk(item) for item in node)
        return 0 if node is None else 1

    return max(1, walk(value))
