"""Claude Code's side requests: the tools it runs as a request of their own, which writes no message.

WebSearch is a request whose only tool is the API's ``web_search`` (billed per search beside its tokens), WebFetch
has the small fast model summarize the page (claude-haiku-4-5 on Anthropic's API). Measured on the real 2.1.332
against the loopback fake (tests/fakes/record_server_tools.py): one request per WebSearch result and per WebFetch
of a page it got (none for an HTTP error, a redirect to another host, a refused URL); the session's
``cost-state`` bills their tokens and searches, and nothing else in the file does. The same holds for its other
requests that write no message: a compaction's summarizing request (estimated where no cost-state bills it) and a
response whose stream the connection dropped before it was written (``dropped_streams``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Collection
from typing import Any

from compactctl.recorded import ApiUsage, integer
from compactctl.recorded.claude_code_chain import is_call_record

# The tools Claude Code runs as a request of their own, which writes no message: WebSearch (a request whose only
# tool is the API's web_search) and WebFetch (the small fast model summarizing the page).
SIDE_REQUEST_TOOLS = frozenset({"WebSearch", "WebFetch"})


@dataclasses.dataclass(frozen=True)
class SideRequests:
    """The side requests a session's tool results show: how many, and the searches they made."""

    calls: int = 0
    searches: int = 0  # WebSearch's ``toolUseResult.searchCount``, each billed per search


def side_requests(values: list[dict[str, Any]], made_elsewhere: Collection[str] = ()) -> SideRequests:
    """One side request per WebSearch tool result with a ``toolUseResult`` (the tool ran) and per WebFetch result
    whose page was summarized (``summarized``), on any branch of the file, and a WebSearch's searches
    (``searches_of``); not of the calls ``made_elsewhere`` (message ids: another file's, which ran their tools)."""
    tools: dict[str, str] = {}  # tool_use id -> its tool's name
    counted: set[str] = set()  # the tool_use ids whose result was counted
    calls = searches = 0
    for value in values:
        message = value.get("message")
        content = message.get("content") if isinstance(message, dict) else None
        for block in content if isinstance(content, list) else ():
            if not isinstance(block, dict):
                continue
            name = block.get("name")
            if block.get("type") == "tool_use" and isinstance(name, str) and name in SIDE_REQUEST_TOOLS:
                if isinstance(message, dict) and message.get("id") in made_elsewhere:
                    continue
                tools[str(block.get("id"))] = name
            elif block.get("type") == "tool_result" and str(block.get("tool_use_id")) in counted:
                continue  # a copy of a result (compactctl's after its boundary): its request was made once
            elif block.get("type") == "tool_result" and isinstance(value.get("toolUseResult"), dict):
                name = tools.get(str(block.get("tool_use_id")))
                if name is not None and (name != "WebFetch" or summarized(value["toolUseResult"])):
                    counted.add(str(block.get("tool_use_id")))
                    calls += 1
                    if name == "WebSearch":
                        searches += searches_of(value["toolUseResult"])
            elif block.get("type") == "tool_result" and value.get("isSidechain") is True and value["type"] == "user":
                # A subagent's file (2.1.332) writes its tool results with no toolUseResult: an error (a tool it was
                # not allowed) made no request; the result's text says whether a WebFetch got its page.
                name = tools.get(str(block.get("tool_use_id")))
                if name is not None and not block.get("is_error") and (name != "WebFetch" or fetched_page(block)):
                    counted.add(str(block.get("tool_use_id")))
                    calls += 1
                    searches += name == "WebSearch"
    return SideRequests(calls, searches)


# How 2.1.332 words a WebFetch result it did not summarize: an HTTP error, a redirect to another host.
_NOT_FETCHED = ("The server returned HTTP ", "REDIRECT DETECTED")


def fetched_page(result: dict[str, Any]) -> bool:
    """Whether a WebFetch ``tool_result`` block with no ``toolUseResult`` beside it (a subagent's, not an error)
    holds the small model's summary of a page it got: not an HTTP error's or a redirect's text."""
    content = result.get("content")
    text = content if isinstance(content, str) else " ".join(str(b.get("text", "")) for b in content or ()
                                                             if isinstance(b, dict))  # fmt: skip
    return not text.startswith(_NOT_FETCHED)


def summarized(fetched: dict[str, Any]) -> bool:
    """Whether a WebFetch had the small model summarize the page: only a page it got (``code`` 2xx, a redirect on
    the same host followed). Measured on 2.1.332 against the loopback fake: one summary request for a 200 (a 2.4 MB
    page too, one per fetch, the same page fetched twice summarized twice), none for a 302 to another host (the
    result says to fetch that), a 404, a 500, or a URL it refuses (``Error: Invalid URL``, a text result). A
    result with no code (not seen) counts, as before."""
    code = fetched.get("code")
    return not isinstance(code, int) or 200 <= code < 300


def searches_of(result: dict[str, Any]) -> int:
    """The searches a WebSearch result says its request made: ``searchCount`` (2.1), else one per server tool result
    among its ``results`` (1.0.x writes no count: ``{tool_use_id, content}`` per search, the model's text beside),
    else one."""
    if "searchCount" in result:
        return integer(result.get("searchCount"))
    results = result.get("results")
    found = sum(isinstance(r, dict) and "tool_use_id" in r for r in results) if isinstance(results, list) else 0
    return found or 1


def usage_by_model(values: list[dict[str, Any]]) -> dict[str, ApiUsage]:
    """The session's own running total per model (its last ``cost-state``'s ``modelUsage``, Claude Code 2.1+)."""
    state = next((v for v in reversed(values) if v.get("type") == "cost-state"), None)
    models = state.get("modelUsage") if state is not None else None
    found: dict[str, ApiUsage] = {}
    for model, figures in (models if isinstance(models, dict) else {}).items():
        if isinstance(figures, dict):
            read = integer(figures.get("cacheReadInputTokens"))
            written = integer(figures.get("cacheCreationInputTokens"))
            found[str(model)] = ApiUsage(
                integer(figures.get("inputTokens")) + read + written,
                read,
                written,
                integer(figures.get("cacheCreationEphemeral1hInputTokens")),
                integer(figures.get("outputTokens")),
                web_searches=integer(figures.get("webSearchRequests")),
            )
    return found


def own_usage_by_model(
    values: list[dict[str, Any]], by_model: dict[str, ApiUsage], foreign: Collection[str], shared: Collection[str]
) -> dict[str, ApiUsage] | None:
    """The share of the session's running total (``usage_by_model``) its own calls made, where the file says it:
    all of it in a file of no call made elsewhere. A file that copies another session's responses (``foreign``)
    goes on from that session's total: where the copies came with its cost-states (compactctl's new session copies
    the original's records, and the client resuming it counts on from the last), the last one before the last
    copied response is what it inherited, and the rest is its own (the summary of a ``/compact`` there included,
    which writes no message). None where the inherited total is not in the file: the client's own fork copies no
    cost-state, and a copy of another file of the run (``shared``) holds that file's."""
    if not foreign:
        return by_model
    if shared:
        return None
    copied = [n for n, v in enumerate(values) if is_call_record(v) and v["message"].get("id") in foreign]
    inherited = usage_by_model(values[: copied[-1]]) if copied else {}
    if not inherited:
        return None
    return {model: usage.less(inherited.get(model)) for model, usage in by_model.items()}


def dropped_streams(values: list[dict[str, Any]]) -> int:
    """Requests whose connection dropped, each then sent again: 2.1.332 writes a ``system`` ``api_error`` record with
    ``error.connection`` (ECONNRESET) for each, and no message of what it had received. Where the stream had begun
    the response was billed, and the client's ``cost-state`` counts it (its input, the output it got: the real
    2.1.332 against the loopback fake, tests/fakes/record_long_sessions.py's stream cut); an HTTP error (529, 500:
    ``connection`` null) has no usage and is billed nothing."""
    return sum(
        1
        for value in values
        if value.get("type") == "system"
        and value.get("subtype") == "api_error"
        and isinstance(value.get("error"), dict)
        and isinstance(value["error"].get("connection"), dict)
    )
