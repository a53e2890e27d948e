"""Producer-shaped sessions built in the tests, with usage computed from a known truth.

The truth is what a fake provider would bill: a hidden prefix, the log's text in a known
tokenizer times a known ratio, and every earlier response's output tokens re-sent. Tests
then check that pairing and calibration recover it.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any

import orjson

from compactctl.formats.records import Record, parse_records
from compactctl.tokens import counter_for


@dataclass
class Truth:
    prefix: int = 20_000
    ratio: float = 1.3
    encoding: str = "cl100k_base"
    hidden_per_call: int = 0  # tokens the API saw that the log never shows (unexplained by design)


@dataclass
class ClaudeSession:
    """Builds Claude Code JSONL records; each call's usage follows ``truth`` over the context sent."""

    truth: Truth = field(default_factory=Truth)
    model: str = "claude-sonnet-4-5-20250929"
    records: list[dict[str, Any]] = field(default_factory=list)
    context_tokens: float = 0.0  # ratio * text of the messages sent so far
    resent: int = 0
    last_uuid: str | None = None
    calls: int = 0
    previous_total: int = 0
    clock: int = 0
    _ids: itertools.count = field(default_factory=itertools.count)

    def _count(self, message: dict[str, Any]) -> float:
        return self.truth.ratio * counter_for(self.truth.encoding, "anthropic").message(message)

    def _envelope(self, kind: str, **extra: Any) -> dict[str, Any]:
        self.clock += 5
        uid = f"u{next(self._ids)}"
        record = {
            "parentUuid": self.last_uuid,
            "isSidechain": False,
            "sessionId": "s1",
            "type": kind,
            "uuid": uid,
            "timestamp": f"2026-01-01T00:{self.clock // 60 % 60:02d}:{self.clock % 60:02d}.000Z",
            **extra,
        }
        self.records.append(record)
        self.last_uuid = uid
        return record

    def user(self, text: str) -> dict[str, Any]:
        self.context_tokens += self._count({"role": "user", "content": text})
        return self._envelope("user", message={"role": "user", "content": text})

    def image(self, png: bytes) -> dict[str, Any]:
        """A user turn holding one image, billed by Anthropic's pixel rule (not scaled by the ratio)."""
        import base64

        from compactctl.formats.anthropic import user_messages

        data = base64.b64encode(png).decode()
        block = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": data}}
        ((message, _),) = user_messages([block])
        counter = counter_for(self.truth.encoding, "anthropic")
        image = counter.part(message["content"][0])
        self.context_tokens += self.truth.ratio * (counter.message(message) - image) + image
        return self._envelope("user", message={"role": "user", "content": [block]})

    def attachment(self, content: str) -> dict[str, Any]:
        from compactctl.recorded.claude_code import attachment_message

        self.context_tokens += self._count(attachment_message({"type": "todo_reminder", "content": content}))
        return self._envelope("attachment", attachment={"type": "todo_reminder", "content": content})

    def usage(self, output_tokens: int) -> dict[str, Any]:
        total = round(self.truth.prefix + self.context_tokens + self.resent + self.truth.hidden_per_call)
        # The prompt cache holds what the previous call sent; the rest is written to it.
        read = min(self.previous_total, total - 3)
        self.previous_total = total
        return {
            "input_tokens": 3,
            "cache_creation_input_tokens": total - 3 - read,
            "cache_read_input_tokens": read,
            "cache_creation": {"ephemeral_5m_input_tokens": total - 3 - read, "ephemeral_1h_input_tokens": 0},
            "output_tokens": output_tokens,
        }

    def response(
        self, text: str = "", tools: list[tuple[str, dict[str, Any], str]] = (), thinking: str = "", output: int = 0
    ) -> str:
        """One API response: thinking, text and tool calls written one block per record, results after each."""
        message_id = f"msg_{next(self._ids)}"
        blocks: list[dict[str, Any]] = []
        if thinking:
            blocks.append({"type": "thinking", "thinking": thinking, "signature": "S" * 400})
        if text:
            blocks.append({"type": "text", "text": text})
        for n, (name, arguments, _) in enumerate(tools):
            blocks.append({"type": "tool_use", "id": f"toolu_{message_id}_{n}", "name": name, "input": arguments})
        from compactctl.formats.anthropic import assistant_message

        visible = counter_for(self.truth.encoding, "anthropic").message(assistant_message(blocks))
        output = output or visible + (len(thinking) // 2 if thinking else 0)
        usage = self.usage(output)
        self.calls += 1
        for block in blocks:
            self._envelope(
                "assistant",
                requestId=f"req_{message_id}",
                message={
                    "id": message_id,
                    "type": "message",
                    "role": "assistant",
                    "model": self.model,
                    "content": [block],
                    "usage": {**usage, "output_tokens": 1},
                },
            )
        self.records[-1]["message"]["usage"] = usage  # the last record of a response carries the final output
        self.resent += output
        for n, (_, _, result) in enumerate(tools):
            self.tool_result(f"toolu_{message_id}_{n}", result)
        return message_id

    def tool_result(self, call_id: str, result: str) -> dict[str, Any]:
        self.context_tokens += self._count({"role": "tool", "tool_call_id": call_id, "content": result})
        return self._envelope(
            "user",
            message={"role": "user", "content": [{"type": "tool_result", "tool_use_id": call_id, "content": result}]},
        )

    def compact(self, summary: str, metadata: dict[str, Any] | None = None, boundary: bool = True) -> None:
        """What Claude Code's auto-compaction writes: a boundary (1.0.x wrote none), then the summary as a new
        root; the provider then sees only the summary (and the prefix)."""
        leaf, self.last_uuid = self.last_uuid, None
        if boundary:
            self._envelope("system", subtype="compact_boundary", logicalParentUuid=leaf, compactMetadata=metadata or {})
        self.context_tokens, self.resent = 0.0, 0
        self.user(f"This session is being continued from a previous conversation. {summary}")["isCompactSummary"] = True

    def last_context(self) -> int:
        """The input and output of the last call: what Claude Code records as ``preTokens``."""
        usage = [r for r in self.records if r["type"] == "assistant"][-1]["message"]["usage"]
        keys = ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens", "output_tokens")
        return sum(usage[k] for k in keys)

    def parsed(self) -> list[Record]:
        data = b"".join(orjson.dumps(r) + b"\n" for r in self.records)
        return parse_records(data, "session.jsonl")[0]


WORDS = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota", "kappa", "lambda"]


def prose(n: int, seed: int = 0) -> str:
    """Deterministic text of about ``n`` words, varied so the tokenizer's share is identifiable."""
    return " ".join(WORDS[(i * 7 + seed) % len(WORDS)] + ("," if i % 5 == 0 else "") for i in range(n))


def working_session(truth: Truth | None = None, calls: int = 12) -> ClaudeSession:
    """A coding session: a prompt, then tool rounds of growing outputs, then an answer."""
    session = ClaudeSession(truth or Truth())
    session.user("Please fix the failing test in src/app.py and keep the public interface.")
    for n in range(calls - 1):
        session.response(
            text=f"Step {n}.", tools=[("Bash", {"command": f"pytest -q -k t{n}"}, prose(100 + 150 * n, n))]
        )
    session.response(text="Done: the test passes.")
    return session
