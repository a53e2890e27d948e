"""The Messages API's advisor tool (``advisor_20260301``, beta ``advisor-tool-2026-03-01``) as the loopback fake
serves it.

Claude Code 2.1.332 offers it when ``CLAUDE_CODE_ENABLE_EXPERIMENTAL_ADVISOR_TOOL=1`` is set (without it a
feature gate decides, off here) and an advisor model is named (``--advisor MODEL`` or the ``advisorModel``
setting): one more tool, ``{"type": "advisor_20260301", "name": "advisor", "model": <the advisor's id>}``. The
executor (the request's model) emits a ``server_tool_use`` named ``advisor`` with an empty input; the server runs
the advisor model on the whole transcript and answers with an ``advisor_tool_result`` (``content``:
``{"type": "advisor_result", "text": ...}``), then the executor goes on in the same response.

One response is then several sampling passes, each an entry of ``usage.iterations``: a ``message`` per pass of
the executor and an ``advisor_message`` (with its own ``model``) per advice. The top-level usage is the sum of
the ``message`` entries: the advisor's are billed on top of it, at the advisor model's prices (the client's own
cost: each ``advisor_message`` priced at its ``model`` and added, compactctl/recorded/iterations.py).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

from tests.fakes.server import Reply, ToolCall

TOOL_TYPE = "advisor_20260301"
_ids = itertools.count(1)


def advisor_blocks(advice: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """The executor's call of the advisor and the server's answer, as the API streams them."""
    called = f"srvtoolu_fakeadv{next(_ids):04d}"
    return (
        {"type": "server_tool_use", "id": called, "name": "advisor", "input": {}},
        {"type": "advisor_tool_result", "tool_use_id": called, "content": {"type": "advisor_result", "text": advice}},
    )


def advised_reply(advice: str, text: str = "", tool_calls: tuple[ToolCall, ...] = ()) -> Reply:
    """A response that consults the advisor first, then writes ``text`` and makes ``tool_calls``."""
    return Reply(text=text, tool_calls=tool_calls, blocks=advisor_blocks(advice))


def offered_advisor(body: dict[str, Any]) -> str | None:
    """The advisor model the request offers (its ``advisor_20260301`` tool's ``model``), or None."""
    for tool in body.get("tools") or []:
        if isinstance(tool, dict) and tool.get("type") == TOOL_TYPE and isinstance(tool.get("model"), str):
            return str(tool["model"])
    return None


def is_advised(blocks: list[dict[str, Any]]) -> bool:
    return any(block.get("type") == "advisor_tool_result" for block in blocks)


def advised_usage(
    body: dict[str, Any],
    blocks: list[dict[str, Any]],
    count: Callable[[Any], int],
    scale: Callable[[str, int], int],
    advisor_thinking: int = 0,
) -> dict[str, Any]:
    """The usage of a response that consulted the advisor: an executor pass up to each ``server_tool_use``, the
    advisor's pass on the transcript so far (its request, the executor's output up to the call; ``advisor_thinking``
    tokens of thinking billed beside the advice, which the API strips), the executor's pass after the advice, and the
    top-level usage the sum of the executor's passes. ``scale(model, tokens)``: a model's tokens of the fake's count
    (its tokenizer). No cache is reported (the fake's default)."""
    model, advisor = str(body.get("model")), offered_advisor(body)
    assert advisor is not None, "the script has the advisor answer a request that offers no advisor tool"
    request = [body.get("system"), body.get("messages"), body.get("tools")]
    iterations: list[dict[str, Any]] = []
    start = 0
    for n, block in enumerate(blocks):
        if block.get("type") != "advisor_tool_result":
            continue
        # The executor's pass ends at its call; the advisor reads the transcript up to it; the next pass of the
        # executor reads the advice too.
        call = next(k for k in range(n) if blocks[k].get("id") == block.get("tool_use_id")) + 1
        iterations.append(_pass("message", scale(model, count([*request, *blocks[:start]])), count(blocks[start:call])))
        seen = scale(advisor, count([*request, *blocks[:call]]))
        advice = str(block["content"].get("text", ""))
        iterations.append({**_pass("advisor_message", seen, count(advice) + advisor_thinking), "model": advisor})
        start = n + 1
    iterations.append(_pass("message", scale(model, count([*request, *blocks[:start]])), count(blocks[start:])))
    executor = [entry for entry in iterations if entry["type"] == "message"]
    return {
        **{key: sum(entry[key] for entry in executor) for key in _TOKENS},
        "cache_creation": {"ephemeral_5m_input_tokens": 0, "ephemeral_1h_input_tokens": 0},
        "iterations": iterations,
    }


_TOKENS = ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens", "output_tokens")


def _pass(kind: str, input_tokens: int, output_tokens: int) -> dict[str, Any]:
    return {
        "type": kind,
        "input_tokens": input_tokens,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
        "output_tokens": output_tokens,
        "cache_creation": {"ephemeral_5m_input_tokens": 0, "ephemeral_1h_input_tokens": 0},
    }
