"""Earlier turns' thinking on claude-sonnet-4-5 (whose API drops it at a new prompt unless asked to keep it), as the
real Claude Code 2.1.83, 2.1.84 and 2.1.332 wrote six thinking prompts against the loopback fake
(tests/fakes/record_thinking.py; ``.requests.json`` what each model call asked). 2.1.84 and 2.1.332 send
``clear_thinking_20251015`` ``keep: "all"`` and the fake bills the earlier thinking; 2.1.83 sends none and the fake
drops it. Each call is estimated within calibration's tolerance of what the fake billed only where compactctl
keeps the thinking in the input where the client asked to keep it (compactctl/recorded/claude_code_thinking.py)."""

from __future__ import annotations

import dataclasses
import itertools
from pathlib import Path

import orjson
import pytest

from compactctl.calibration import calibrate, read_thinking
from compactctl.formats.records import parse_records
from compactctl.recorded import RecordedSession, claude_code
from compactctl.recorded.claude_code_thinking import flag_unknown, keeps_thinking
from tests.conftest import SHARED_TRANSCRIPTS, needs_transcripts
from tests.fakes.context_edits import clear_thinking

DATA = Path(__file__).parent / "data"
KEPT = ("claude-code-2.1.84-thinking", "claude-code-2.1.332-thinking")
DROPPED = "claude-code-2.1.83-thinking"
TOLERANCE = 0.02  # the held-out per-call median the calibration is held to


def _session(name: str) -> RecordedSession:
    (path,) = (DATA / name).glob("*.jsonl")
    return claude_code.read(parse_records(path.read_bytes(), str(path))[0], str(path))


def _asked(name: str) -> list[dict]:
    return list(orjson.loads((DATA / f"{name}.requests.json").read_bytes()))


def _as_before(session: RecordedSession) -> RecordedSession:
    """The session read as before: every call's earlier thinking dropped at a new prompt, as the model's default."""
    return dataclasses.replace(
        session,
        contexts=[
            dataclasses.replace(c, calls=[dataclasses.replace(call, thinking_kept=False) for call in c.calls])
            for c in session.contexts
        ],
    )


@pytest.mark.parametrize(
    ("version", "entrypoint", "model", "kept"),
    [
        ("2.0.24", "cli", "claude-sonnet-4-5-20250929", False),  # yoavf's session: no such edit yet
        ("2.1.83", "sdk-cli", "claude-sonnet-4-5", False),  # behind a flag the server sets
        ("2.1.84", "sdk-cli", "claude-sonnet-4-5", True),
        ("2.1.85", "cli", "claude-haiku-4-5-20251001", True),
        ("2.1.86", "cli", "claude-sonnet-4-5", False),  # the terminal interface sends redact-thinking instead
        ("2.1.100", "cli", "claude-opus-4-1", False),
        ("2.1.94", "sdk-cli", "claude-sonnet-4-5", True),
        ("2.1.94", None, "claude-sonnet-4-5", False),
        ("2.1.101", "cli", "claude-sonnet-4-5", True),
        ("2.1.332", "cli", "claude-sonnet-4-5", True),
        ("2.1.332", "sdk-cli", "us.anthropic.claude-sonnet-4-5-20250929-v1:0", False),  # no beta on Bedrock
        ("2.1.332", "sdk-cli", "claude-sonnet-4-5@20250929", False),  # nor on Vertex
        (None, "cli", "claude-sonnet-4-5", False),
    ],
)
def test_the_releases_that_send_keep_all(version, entrypoint, model, kept):
    assert keeps_thinking(version, entrypoint, model) is kept


@pytest.mark.parametrize("name", [*KEPT, DROPPED])
def test_each_call_keeps_the_thinking_where_its_request_asked_the_api_to(name):
    asked = _asked(name)
    sent = [
        any(
            e == {"type": "clear_thinking_20251015", "keep": "all"}
            for e in (r["context_management"] or {}).get("edits", [])
        )
        for r in asked
    ]
    assert all(r["thinking"]["type"] == "enabled" for r in asked)  # thinking on in every call
    assert set(sent) == {name in KEPT}
    (context,) = _session(name).contexts
    assert [call.thinking_kept for call in context.calls] == sent


def test_the_fake_billed_the_earlier_thinking_only_where_the_client_asked_to_keep_it():
    """Same script, same replies: at each new prompt 2.1.83's input falls by the last turn's thinking, while the
    kept ones' input only grows."""

    def inputs(name: str) -> list[int]:
        return [r["usage"]["input_tokens"] for r in orjson.loads((DATA / f"{name}.served.json").read_bytes())]

    dropped = inputs(DROPPED)
    assert any(b < a for a, b in itertools.pairwise(dropped))
    for name in KEPT:
        kept = inputs(name)
        assert all(b > a for a, b in itertools.pairwise(kept))
        assert kept[-1] - dropped[-1] > 4_000  # five earlier turns' thinking, about 1k tokens each


@pytest.mark.parametrize("name", [*KEPT, DROPPED])
def test_held_out_per_call_error_is_within_tolerance(name):
    calibration = calibrate(_session(name), "claude-code")
    assert calibration.held_out.median <= TOLERANCE
    assert calibration.held_out.p90 <= 2 * TOLERANCE


@pytest.mark.parametrize("name", KEPT)
def test_dropping_the_kept_thinking_as_before_is_far_off(name):
    assert calibrate(_as_before(_session(name)), "claude-code").held_out.median > 0.05


def _turns(model: str, edits: list[dict] | None = None) -> dict:
    thinking = {"type": "thinking", "thinking": "weigh it", "signature": "sig"}
    body = {
        "model": model,
        "messages": [
            {"role": "user", "content": "First."},
            {"role": "assistant", "content": [thinking, {"type": "tool_use", "id": "t1", "name": "Read", "input": {}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "x"}]},
            {"role": "assistant", "content": [thinking, {"type": "text", "text": "Done."}]},
            {"role": "user", "content": "Second."},
            {"role": "assistant", "content": [thinking, {"type": "text", "text": "Also."}]},
            {"role": "user", "content": [{"type": "text", "text": "Third."}]},
        ],
    }
    return {**body, "context_management": {"edits": edits}} if edits is not None else body


def _thinking_at(body: dict) -> list[int]:
    return [
        n
        for n, m in enumerate(body["messages"])
        if isinstance(m["content"], list) and any(b.get("type") == "thinking" for b in m["content"])
    ]


@pytest.mark.parametrize(
    ("model", "edits", "kept"),
    [
        ("claude-sonnet-4-5", None, []),  # the ongoing turn (Third.) has none yet
        ("claude-haiku-4-5-20251001", None, []),
        ("claude-opus-4-1-20250805", None, []),
        ("claude-sonnet-4-5", [{"type": "clear_thinking_20251015", "keep": "all"}], [1, 3, 5]),
        (
            "claude-sonnet-4-5",
            [{"type": "clear_thinking_20251015", "keep": {"type": "thinking_turns", "value": 2}}],
            [5],
        ),
        ("claude-opus-4-5-20251101", None, [1, 3, 5]),  # Opus 4.5 and later keep every turn's
        ("claude-sonnet-4-6", None, [1, 3, 5]),
    ],
)
def test_the_fake_drops_earlier_turns_thinking_as_the_api_does(model, edits, kept):
    assert _thinking_at(clear_thinking(_turns(model, edits))) == kept


@needs_transcripts
def test_yoavfs_sonnet_4_5_session_still_drops_the_earlier_thinking_at_each_prompt():
    """Claude Code 2.0.24 sent no edit: its input fell by 1,041 tokens at the second prompt. Held out 0.90 % / 1.08 %
    with the earlier thinking dropped; kept, 2.16 % / 2.30 %."""
    path = SHARED_TRANSCRIPTS / "claude-code" / "yoavf__ai-sessions" / "claude-code-pomodoro-timer.jsonl"
    session = claude_code.read(parse_records(path.read_bytes(), str(path))[0], str(path))
    assert not any(call.thinking_kept for context in session.contexts for call in context.calls)
    held_out = calibrate(session, "claude-code").held_out
    assert held_out.median < 0.01 and held_out.p90 < 0.015


def _as_release(session: RecordedSession, version: str) -> RecordedSession:
    """The session as ``version`` of the client would have written it: the same calls, its reading of the request."""
    return dataclasses.replace(
        session,
        contexts=[
            dataclasses.replace(
                c,
                calls=[
                    dataclasses.replace(
                        call,
                        thinking_kept=keeps_thinking(version, "sdk-cli", call.model),
                        thinking_flag_unknown=flag_unknown(version, call.model),
                    )
                    for call in c.calls
                ],
            )
            for c in session.contexts
        ],
    )


@pytest.mark.parametrize(
    ("version", "model", "unknown"),
    [
        ("2.0.24", "claude-sonnet-4-5", False),
        ("2.0.36", "claude-sonnet-4-5", True),
        ("2.1.83", "claude-sonnet-4-5", True),
        ("2.1.84", "claude-sonnet-4-5", False),
        ("2.1.50", "us.anthropic.claude-sonnet-4-5-20250929-v1:0", False),  # the beta never goes to Bedrock
        (None, "claude-sonnet-4-5", False),
    ],
)
def test_the_releases_whose_request_the_file_cannot_tell(version, model, unknown):
    assert flag_unknown(version, model) is unknown


def test_a_flagged_release_is_read_from_its_usage():
    """2.0.36-2.1.83 sent ``keep: "all"`` only behind the server's per-user flag. The real 2.1.84's session (sent)
    written as 2.1.83 would be read as kept from its usage; the real 2.1.83's (not sent, the flag off) as dropped."""
    (kept,) = KEPT[:1]
    as_flagged = _as_release(_session(kept), "2.1.83")
    assert not any(call.thinking_kept for context in as_flagged.contexts for call in context.calls)
    assert calibrate(as_flagged, "claude-code").held_out.median > 0.05  # the reading by release alone
    read = read_thinking(as_flagged, "claude-code")
    assert all(call.thinking_kept for context in read.contexts for call in context.calls)
    held_out = calibrate(read, "claude-code").held_out
    assert held_out.median <= TOLERANCE and held_out.p90 <= 2 * TOLERANCE
    dropped = _session(DROPPED)
    assert any(call.thinking_flag_unknown for context in dropped.contexts for call in context.calls)
    assert read_thinking(dropped, "claude-code") is dropped
