"""Fixtures of the real Claude Code's and Codex's server tools and other shapes of issue 20's second sweep.

    python -m tests.fakes.record_fixtures claude_code_web_search_fixture

Kept apart from record_fixtures.py, which calls these like its own.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.fakes.anthropic import FakeAnthropic, web_search_reply
from tests.fakes.clients import ClaudeCode, Codex, require_client
from tests.fakes.scenarios import project
from tests.fakes.server import Reply, ToolCall


def claude_code_web_search_fixture(root: Path) -> Path:
    """Two turns on claude-sonnet-4-6, each a WebSearch: Claude Code runs the tool as a request of its own
    whose only tool is the API's ``web_search`` (billed $10 per 1,000 searches beside its tokens); that
    request writes no message, only the session's ``cost-state`` (``webSearchRequests``) and the tool
    result's ``searchCount`` hold it."""
    from tests.fakes.record_fixtures import _claude_print, _version, _written

    client = require_client("claude")
    with FakeAnthropic() as fake:
        claude = ClaudeCode(client, root, project(root), fake)
        session = None
        for n, query in enumerate(["csv rfc", "csv quoting rules"], start=1):
            fake.enqueue(
                Reply(text="Searching.", tool_calls=(ToolCall("WebSearch", {"query": query}),)),
                web_search_reply(query, f"Result {n} says CSV is RFC 4180.", n),
                f"CSV is RFC 4180 [Result {n}](https://example.org/{n}).",
            )
            resume = ("--resume", session) if session else ()
            session = _claude_print(
                claude, f"Search the web: {query}.", "--allowedTools", "WebSearch", "--model", "claude-sonnet-4-6",
                *resume,
            )  # fmt: skip
        assert session and not fake.errors and not fake.script
        data = claude.session_file(session).read_bytes()
    return _written(root, data, f"claude-code-{_version(client.version)}-web-search.jsonl")


def codex_web_search_fixture(root: Path) -> Path:
    """Codex 0.171 with ``web_search = "live"`` on gpt-5.5: a first turn whose response searches twice, then a
    resumed turn that searches once. The rollout keeps each ``web_search_call`` item; no usage counts them."""
    from tests.fakes.record_fixtures import _version, _written
    from tests.fakes.responses import FakeResponses, web_search_call

    client = require_client("codex")
    with FakeResponses() as fake:
        codex = Codex(client, root, project(root), fake, model="gpt-5.5", extra_config='web_search = "live"\n')
        searched = (web_search_call("csv rfc", 1), web_search_call("csv rfc 4180 quoting", 2))
        fake.enqueue(Reply(text="RFC 4180 defines CSV.", blocks=searched))
        codex.run("Search the web for the CSV RFC.")
        (rollout,) = codex.rollouts()
        fake.enqueue(Reply(text="Fields with commas are quoted.", blocks=(web_search_call("csv quoting", 3),)))
        codex.run("And its quoting rules?", resume=_thread_of(rollout))
        assert not fake.errors and not fake.script
        data = rollout.read_bytes()
    return _written(root, data, f"codex-{_version(client.version)}-web-search.jsonl")


def _thread_of(rollout: Path) -> str:
    return rollout.stem[-36:]


def codex_switch_compaction_fixture(root: Path) -> Path:
    """Two turns on gpt-5.5, then one resumed on gpt-5.6-terra: a model of another compaction family (the
    turn_context's ``comp_hash`` 2911, then 3000), so Codex 0.171 compacts first, on gpt-5.5 (the loopback
    fake served that compaction request on it), with no auto-compact limit reached."""
    from tests.fakes.record_fixtures import _version, _written
    from tests.fakes.responses import FakeResponses, _asks_for_compaction

    client = require_client("codex")
    with FakeResponses() as fake:
        codex = Codex(client, root, project(root), fake, model="gpt-5.5")
        fake.enqueue(Reply(thinking="Read it.", tool_calls=(ToolCall("exec_command", {"cmd": "cat notes.txt"}),)),
                     "The notes say results must stay in CSV.")  # fmt: skip
        codex.run("What do the notes say?")
        (rollout,) = codex.rollouts()
        fake.enqueue("The second line keeps the interface.")
        codex.run("And the second line?", resume=_thread_of(rollout))
        codex.model = "gpt-5.6-terra"
        fake.enqueue("Nothing else.")
        codex.run("Anything else?", resume=_thread_of(rollout))
        bodies = [r.body for r in fake.requests if isinstance(r.body, dict) and r.method == "POST"]
        compactions = [body.get("model") for body in bodies if _asks_for_compaction(body)]
        assert compactions == ["gpt-5.5"] and bodies[-1].get("model") == "gpt-5.6-terra", compactions
        assert not fake.errors and not fake.script
        data = rollout.read_bytes()
    return _written(root, data, f"codex-{_version(client.version)}-switch-compaction.jsonl")


def claude_code_web_fetch_fixture(root: Path) -> Path:
    """A WebFetch on claude-opus-4-7 of a page served over HTTPS on the loopback (a self-signed certificate;
    ``skipWebFetchPreflight`` leaves out the domain check against claude.ai): Claude Code fetches it and has the
    small fast model (claude-haiku-4-5, as on Anthropic's API) summarize it, a request that writes no message;
    the session's ``cost-state`` bills it under its own model."""
    from tests.fakes.record_fixtures import _claude_print, _version, _written

    site = root / "site"
    site.mkdir(parents=True)
    (site / "spec.html").write_text("<html><body><h1>CSV</h1><p>Results must stay in CSV.</p></body></html>")
    server, cert = _https_site(root, site)
    url = f"https://127.0.0.1:{server.server_address[1]}/spec.html"

    client = require_client("claude")
    try:
        with FakeAnthropic() as fake:
            claude = _fetching(client, root, fake, cert)
            fetch = ToolCall("WebFetch", {"url": url, "prompt": "What format must results stay in?"})
            fake.enqueue(Reply(text="Fetching.", tool_calls=(fetch,)), "The page says CSV.")
            session = _claude_print(claude, f"What does {url} say?", "--allowedTools", "WebFetch", "--model",
                                    "claude-opus-4-7")  # fmt: skip
            models = [r.body.get("model") for r in fake.requests if isinstance(r.body, dict)]
            assert models == ["claude-opus-4-7", "claude-haiku-4-5", "claude-opus-4-7"], models
            assert not fake.errors and not fake.script
            data = claude.session_file(session).read_bytes()
    finally:
        server.shutdown()
    return _written(root, data, f"claude-code-{_version(client.version)}-web-fetch.jsonl")


def codex_tool_search_fixture(root: Path) -> Path:
    """Codex 0.171 on gpt-5.5 with a stdio MCP server (bench/mcp_notes_server.py), whose tools 0.171 defers:
    the model calls ``tool_search``, Codex answers with a ``tool_search_output`` item holding the tools'
    schemas (sent to the model on every later call), the model calls the tool it found, then answers; a
    resumed second turn answers again. The rollout keeps both search items."""
    import sys

    from tests.fakes.record_fixtures import _version, _written
    from tests.fakes.responses import FakeResponses

    server = Path(__file__).resolve().parents[2] / "bench" / "mcp_notes_server.py"
    mcp = f'[mcp_servers.notes]\ncommand = "{sys.executable}"\nargs = ["{server}"]\n'
    client = require_client("codex")
    with FakeResponses() as fake:
        codex = Codex(client, root, project(root), fake, model="gpt-5.5", extra_config=mcp)
        search = {"type": "tool_search_call", "id": "tsc_fake0001", "call_id": "call_ts0001", "status": "completed",
                  "execution": "client", "arguments": {"query": "notes read_note"}}  # fmt: skip
        # The tool it found, called in its namespace as the model calls a loaded deferred tool.
        found = {"type": "function_call", "id": "fc_fake0002", "call_id": "call_rn0001", "status": "completed",
                 "namespace": "mcp__notes", "name": "read_note", "arguments": '{"topic": "format"}'}  # fmt: skip
        fake.enqueue(
            Reply(thinking="Find the tool.", blocks=(search,)),
            Reply(thinking="Read it.", blocks=(found,)),
            "The notes server says results stay in CSV.",
        )
        codex.run("What does the notes server say about the format?")
        (rollout,) = codex.rollouts()
        fake.enqueue("Nothing else.")
        codex.run("Anything else?", resume=_thread_of(rollout))
        assert not fake.errors and not fake.script, (fake.errors, fake.script)
        data = rollout.read_bytes()
    return _written(root, data, f"codex-{_version(client.version)}-tool-search.jsonl")


def _https_site(root: Path, site: Path, handler: type | None = None) -> tuple[Any, Path]:
    """``site`` served over HTTPS on the loopback (a self-signed certificate for 127.0.0.1), in a thread: the
    server (``shutdown()`` it) and the certificate."""
    import functools
    import ssl
    import subprocess
    import threading
    from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer

    key, cert = root / "key.pem", root / "cert.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key), "-out", str(cert),
         "-days", "1", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"],
        check=True, capture_output=True,
    )  # fmt: skip
    base = handler or SimpleHTTPRequestHandler
    quiet = type("Quiet", (base,), {"log_message": lambda *a: None})
    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(quiet, directory=str(site)))
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(str(cert), str(key))
    server.socket = context.wrap_socket(server.socket, server_side=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, cert


def _fetching(client: Any, root: Path, fake: FakeAnthropic, cert: Path) -> ClaudeCode:
    """Claude Code trusting the site's certificate, its small fast model claude-haiku-4-5 (as on Anthropic's API),
    the WebFetch domain check against claude.ai left out (``skipWebFetchPreflight``)."""
    import json

    class Fetching(ClaudeCode):
        def env(self) -> dict[str, str]:
            trusted = {"NODE_EXTRA_CA_CERTS": str(cert), "NODE_TLS_REJECT_UNAUTHORIZED": "0"}
            return {**super().env(), **trusted, "ANTHROPIC_SMALL_FAST_MODEL": "claude-haiku-4-5"}

    (root / ".claude").mkdir(parents=True, exist_ok=True)
    (root / ".claude" / "settings.json").write_text(json.dumps({"skipWebFetchPreflight": True}))
    return Fetching(client, root, project(root), fake)


def claude_code_web_fetch_outcomes_fixture(root: Path) -> Path:
    """Four WebFetch calls in one turn on claude-opus-4-7: a page it gets (200), a 404, a redirect to another host
    (302: the client hands the model the new URL) and a URL it refuses (``Error: Invalid URL``). Only the page it
    got is summarized by the small fast model: one side request for four tool results (the fake served exactly
    one claude-haiku-4-5 request)."""
    from http.server import SimpleHTTPRequestHandler

    from tests.fakes.record_fixtures import _claude_print, _version, _written

    site = root / "site"
    site.mkdir(parents=True)
    (site / "spec.html").write_text("<html><body><p>Results must stay in CSV.</p></body></html>")

    class Redirecting(SimpleHTTPRequestHandler):
        def do_GET(self) -> None:
            if self.path == "/moved":
                self.send_response(302)
                self.send_header("Location", f"https://localhost:{self.server.server_address[1]}/spec.html")
                self.end_headers()
                return
            super().do_GET()

    server, cert = _https_site(root, site, Redirecting)
    base = f"https://127.0.0.1:{server.server_address[1]}"
    client = require_client("claude")
    try:
        with FakeAnthropic() as fake:
            claude = _fetching(client, root, fake, cert)
            urls = [f"{base}/spec.html", f"{base}/missing.html", f"{base}/moved", "file:///etc/hostname"]
            fake.enqueue(
                *(Reply(text="Fetching.", tool_calls=(ToolCall("WebFetch", {"url": u, "prompt": "Format?"}),))
                  for u in urls),
                "The page says CSV; the others gave nothing.",
            )  # fmt: skip
            session = _claude_print(claude, "What do these pages say?", "--allowedTools", "WebFetch", "--model",
                                    "claude-opus-4-7")  # fmt: skip
            models = [r.body.get("model") for r in fake.requests if isinstance(r.body, dict)]
            assert models.count("claude-haiku-4-5") == 1 and models.count("claude-opus-4-7") == 5, models
            assert not fake.errors and not fake.script
            data = claude.session_file(session).read_bytes()
    finally:
        server.shutdown()
    return _written(root, data, f"claude-code-{_version(client.version)}-web-fetch-outcomes.jsonl")


def gemini_compress_and_saved_chat(gemini: Any, fake: Any) -> str:
    """The interactive Gemini CLI (on a pseudo-terminal): a turn that reads a file, ``/compress`` (its two
    compressor calls, recorded nowhere), ``/chat save snap``, a turn, ``/chat resume snap`` (the saved, compressed
    history loaded in place of the chat's), a turn; the session id."""
    from tests.fakes.terminal import Terminal

    gemini.configure()
    known = set(gemini.chats())
    screen = Terminal([str(gemini.client.binary), "--yolo"], gemini.cwd, gemini.env())
    try:
        screen.wait_for(lambda: b"Type your message" in screen.screen)
        served = len(fake.served)

        def turn(line: str, calls: int) -> None:
            screen.type(line)
            screen.wait_for(lambda: len(fake.served) >= served + calls)

        fake.enqueue(Reply(text="Reading.", tool_calls=(ToolCall("read_file", {"file_path": "notes.txt"}),)),
                     "The notes say results must stay in CSV.")  # fmt: skip
        turn("What do the notes say?", 2)
        turn("/compress", 4)  # the summary and its check
        screen.type("/chat save snap")
        screen.wait_for(lambda: any(gemini.home.glob(".gemini/tmp/*/checkpoint-snap.json")))
        fake.enqueue("After the compression: CSV.")
        turn("Anything else?", 5)
        chat = next(iter(set(gemini.chats()) - known))

        def lists() -> int:  # the chat's message lists set whole: the load writes one
            return chat.read_bytes().count(b'{"$set":{"messages"')

        loaded = lists() + 1
        screen.type("/chat resume snap")
        screen.wait_for(lambda: lists() >= loaded, 30)
        fake.enqueue("From the saved chat: CSV.")
        turn("And now?", 6)
        screen.type("/quit")
        screen.wait_for(lambda: screen.process.poll() is not None, 30)
    finally:
        screen.close()
    (chat,) = set(gemini.chats()) - known
    return str(__import__("json").loads(chat.read_bytes().splitlines()[0])["sessionId"])


def gemini_compress_chat_resume_fixture(root: Path) -> Path:
    """Gemini CLI 0.61 on gemini-3.1-pro-preview, interactive: ``/compress``, ``/chat save``, ``/chat resume``."""
    from tests.fakes.clients import Gemini
    from tests.fakes.gemini import FakeGemini
    from tests.fakes.record_fixtures import _version, _written

    client = require_client("gemini")
    with FakeGemini() as fake:
        gemini = Gemini(client, root, project(root), fake, {"model": {"name": "gemini-3.1-pro-preview"}})
        session = gemini_compress_and_saved_chat(gemini, fake)
        assert not fake.errors and not fake.script, (fake.errors, fake.script)
        data = gemini.chat(session).read_bytes()
    return _written(root, data, f"gemini-cli-{_version(client.version)}-compress-chat-resume.jsonl")


def claude_code_subagent_web_fetch_fixture(root: Path) -> Path:
    """A subagent (the Agent tool, ``run_in_background`` false) on claude-opus-4-7 fetches a page it gets (200:
    the small model's summary, a side request of its own), one it does not (404) and one it may not (localhost: the
    tool refused), and searches the web (the search's own request): the subagent's file writes its tool results
    with no ``toolUseResult``; the session's cost-state bills both side requests (the fake served 8 opus calls and 1
    claude-haiku-4-5)."""
    import shutil

    from tests.fakes.record_fixtures import OUT, _claude_print, _version

    site = root / "site"
    site.mkdir(parents=True)
    (site / "spec.html").write_text("<html><body><p>Results must stay in CSV.</p></body></html>")
    server, cert = _https_site(root, site)
    base = f"https://127.0.0.1:{server.server_address[1]}"
    client = require_client("claude")
    try:
        with FakeAnthropic() as fake:
            claude = _fetching(client, root, fake, cert)
            # A third fetch, of localhost, is not allowed (only 127.0.0.1 is): the tool is refused, no request made.
            denied = ToolCall("WebFetch", {"url": base.replace("127.0.0.1", "localhost") + "/spec.html", "prompt": "?"})
            replies = list(subagent_fetches(base))
            replies.insert(3, Reply(text="And by name.", tool_calls=(denied,)))
            fake.enqueue(*replies, "The subagent says the page asks for CSV.")
            allowed = "Agent WebSearch WebFetch(domain:127.0.0.1)"
            tools = ("--allowedTools", allowed, "--model", "claude-opus-4-7")
            session = _claude_print(claude, "Have a subagent fetch the two pages and search the web.", *tools)
            models = [r.body.get("model") for r in fake.requests if isinstance(r.body, dict)]
            assert models.count("claude-haiku-4-5") == 1 and models.count("claude-opus-4-7") == 8, models
            assert not fake.errors and not fake.script
            main_file = claude.session_file(session)
            out = OUT / f"claude-code-{_version(client.version)}-subagent-web-fetch"
            shutil.rmtree(out, ignore_errors=True)
            (out / session / "subagents").mkdir(parents=True)
            for source in [main_file, *sorted((main_file.with_suffix("") / "subagents").glob("*.jsonl"))]:
                target = out / source.relative_to(main_file.parent)
                target.write_bytes(source.read_bytes().replace(str(root).encode(), b"/home/user"))
    finally:
        server.shutdown()
    return out


def subagent_fetches(base: str) -> tuple[Reply, ...]:
    """A subagent that fetches ``base``/spec.html (200) and ``base``/missing.html (404), searches the web, then
    answers: the main thread waits for it (``run_in_background`` false), so the replies go in this order (with the
    agent in the background, the default, the main thread takes the next reply while it runs)."""
    task = {"description": "Fetch", "prompt": f"Fetch {base}/spec.html and {base}/missing.html.",
            "subagent_type": "general-purpose", "run_in_background": False}  # fmt: skip
    pages = ("spec.html", "missing.html")
    fetch = [ToolCall("WebFetch", {"url": f"{base}/{page}", "prompt": "Format?"}) for page in pages]
    return (
        Reply(text="Delegating.", tool_calls=(ToolCall("Agent", task),)),
        Reply(text="Fetching.", tool_calls=(fetch[0],)),
        Reply(text="And the other.", tool_calls=(fetch[1],)),
        Reply(text="Searching too.", tool_calls=(ToolCall("WebSearch", {"query": "csv rfc"}),)),
        web_search_reply("csv rfc", "Result 1 says CSV is RFC 4180.", 1),  # the search's own request
        Reply(text="The first page says CSV; the second is missing; the web says RFC 4180."),
    )
