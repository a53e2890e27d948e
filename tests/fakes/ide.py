"""A fake IDE for Claude Code 1.0.x: the lockfile it looks for and an MCP server over a websocket that
answers ``getDiagnostics`` from the files' own text, as an editor's linter would.

The client finds IDEs by ``~/.claude/ide/<port>.lock`` (JSON: the workspace folders, the IDE's pid,
its name, ``"transport": "ws"`` and a token it sends back as ``X-Claude-Code-Ide-Authorization``),
connects where a folder is its working directory and auto-connect is on, and speaks MCP over the
websocket (subprotocol ``mcp``). Used by ``record_claude_1_0.claude_code_1_0_ide_fixture``."""

from __future__ import annotations

import asyncio
import json
import os
import re
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

Diagnostic = dict[str, Any]
IDE_TOOLS = ("getDiagnostics", "openFile", "openDiff", "close_tab", "closeAllDiffTabs")


def any_warnings(path: Path) -> list[Diagnostic]:
    """An eslint ``no-explicit-any`` warning per ``any``: where lines move, so do the warnings."""
    found = []
    for line_number, line in enumerate(path.read_text().splitlines()):
        for match in re.finditer(r"\bany\b", line):
            span = {"line": line_number, "character": match.start()}, {"line": line_number, "character": match.end()}
            found.append(
                {
                    "message": "Unexpected any. Specify a different type",
                    "severity": "Warning",
                    "source": "eslint",
                    "code": "@typescript-eslint/no-explicit-any",
                    "range": {"start": span[0], "end": span[1]},
                }
            )
    return found


class FakeIde:
    """``with FakeIde(home, folder) as ide:`` serves on a free loopback port and writes the lockfile;
    ``ide.calls`` lists each ``tools/call`` (name, arguments) in order."""

    def __init__(self, home: Path, folder: Path, lint: Callable[[Path], list[Diagnostic]] = any_warnings) -> None:
        self.home, self.folder, self.lint = home, folder, lint
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._stop: asyncio.Future[None] | None = None
        self.port = 0

    def __enter__(self) -> FakeIde:
        threading.Thread(target=self._loop.run_until_complete, args=(self._serve(),), daemon=True).start()
        if not self._ready.wait(10):
            raise RuntimeError("the fake IDE did not start")
        lock = self.home / ".claude" / "ide" / f"{self.port}.lock"
        lock.parent.mkdir(parents=True, exist_ok=True)
        details = {"workspaceFolders": [str(self.folder)], "pid": os.getpid(), "ideName": "Fake IDE", "transport": "ws"}
        lock.write_text(json.dumps({**details, "authToken": "fake-ide-token"}))
        return self

    def __exit__(self, *exc: object) -> None:
        if self._stop is not None:
            self._loop.call_soon_threadsafe(self._stop.set_result, None)

    async def _serve(self) -> None:
        from websockets.asyncio.server import serve

        self._stop = self._loop.create_future()
        async with serve(self._session, "127.0.0.1", 0, subprotocols=["mcp"]) as server:  # type: ignore[list-item]
            self.port = next(iter(server.sockets)).getsockname()[1]
            self._ready.set()
            await self._stop

    async def _session(self, socket: Any) -> None:
        from websockets.exceptions import ConnectionClosed

        try:
            async for raw in socket:
                message = json.loads(raw)
                if "id" in message:
                    await socket.send(json.dumps({"jsonrpc": "2.0", "id": message["id"], **self._answer(message)}))
        except ConnectionClosed:  # the client is killed at the end of a run
            return

    def _answer(self, message: dict[str, Any]) -> dict[str, Any]:
        method, params = message.get("method"), message.get("params") or {}
        if method == "initialize":
            version = params.get("protocolVersion", "2024-11-05")
            info = {"name": "fake-ide", "version": "0.1"}
            return {"result": {"protocolVersion": version, "capabilities": {"tools": {}}, "serverInfo": info}}
        if method == "tools/list":
            schema = {"type": "object", "properties": {"uri": {"type": "string"}}}
            return {"result": {"tools": [{"name": n, "description": n, "inputSchema": schema} for n in IDE_TOOLS]}}
        if method == "tools/call":
            name, arguments = params.get("name", ""), params.get("arguments") or {}
            self.calls.append((name, arguments))
            text = json.dumps(self._diagnostics(arguments.get("uri"))) if name == "getDiagnostics" else "ok"
            return {"result": {"content": [{"type": "text", "text": text}]}}
        return {"error": {"code": -32601, "message": f"no method {method}"}}

    def _diagnostics(self, uri: str | None) -> list[dict[str, Any]]:
        files = [Path(uri.removeprefix("file://"))] if uri else sorted(p for p in self.folder.iterdir() if p.is_file())
        return [{"uri": f"file://{f}", "diagnostics": self.lint(f) if f.exists() else []} for f in files]
