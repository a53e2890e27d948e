"""SWE-agent ``.traj`` and tau-bench run arrays, on made-up documents and on the real ones."""

from __future__ import annotations

import json

import orjson

from compactctl.compaction import compact
from compactctl.formats import load
from compactctl.transcript import find_violation
from tests.conftest import SHARED_TRANSCRIPTS, needs_transcripts
from tests.helpers import call


def traj(history: list[dict], indent: int = 4) -> bytes:
    return json.dumps(
        {"environment": "swe_main", "trajectory": [], "history": history, "info": {}}, indent=indent
    ).encode()


FUNCTION_CALLING = [
    {
        "role": "system",
        "content": "SETTING: you are an autonomous programmer.",
        "agent": "main",
        "message_type": "system_prompt",
    },
    {
        "role": "user",
        "content": [{"type": "text", "text": "Fix the bug.", "cache_control": {"type": "ephemeral"}}],
        "agent": "main",
    },
    {
        "role": "assistant",
        "content": "Look first.",
        "tool_calls": [call("call_1", "bash", '{"command": "ls"}')],
        "message_type": "action",
    },
    {
        "role": "tool",
        "content": "src\ntests\n(Open file: n/a)\n(Current directory: /repo)\nbash-$",
        "tool_call_ids": ["call_1"],
        "message_type": "observation",
    },
    {
        "role": "assistant",
        "content": "Now the tests.",
        "tool_calls": [call("call_2", "bash", '{"command": "pytest"}')],
        "message_type": "action",
    },
    {
        "role": "tool",
        "content": "1 failed",
        "tool_call_id": "call_2",
        "tool_call_ids": ["call_2"],
        "message_type": "observation",
    },
    {"role": "assistant", "content": "Done.", "message_type": "action"},
]


def test_tool_call_ids_lists_answer_their_call():
    fmt, (transcript,) = load(traj(FUNCTION_CALLING))
    assert fmt.name == "swe-agent"
    assert [m.get("tool_call_id") for m in transcript.messages if m["role"] == "tool"] == ["call_1", "call_2"]
    assert find_violation(transcript.messages) is None


def test_written_back_items_keep_exactly_the_keys_they_had():
    data = traj(FUNCTION_CALLING)
    fmt, (transcript,) = load(data)
    assert fmt.write([transcript]) == data
    result = compact(transcript.messages, ["trim-tools", "window"], {"keep_recent": 4, "tool_max_tokens": 1})
    history = orjson.loads(fmt.write([transcript.rewritten(result.messages, result.origins)]))["history"]
    observations = [item for item in history if item["role"] == "tool"]
    assert [item["tool_call_ids"] for item in observations] == [["call_1"], ["call_2"]]
    assert set(observations[0]) == set(FUNCTION_CALLING[3])  # no tool_call_id added to a trimmed item
    assert observations[0]["content"] != FUNCTION_CALLING[3]["content"]
    by_ids = {tuple(item["tool_call_ids"]): item for item in observations}
    assert set(by_ids[("call_2",)]) == set(FUNCTION_CALLING[5])  # it had tool_call_id and keeps it
    assert all("compactctl" not in item for item in history)


def test_written_documents_keep_the_producers_indent():
    fmt, transcripts = load(traj(FUNCTION_CALLING, indent=4))
    result = compact(transcripts[0].messages, ["window"], {"keep_recent": 2})
    out = fmt.write([transcripts[0].rewritten(result.messages, result.origins)])
    assert out.startswith(b'{\n    "environment"')


def test_tau_bench_runs_read_as_one_transcript_each():
    runs = [
        {
            "task_id": n,
            "reward": 1.0,
            "traj": [{"role": "system", "content": "Airline policy."}, {"role": "user", "content": f"Trip {n}"}],
        }
        for n in range(3)
    ]
    data = json.dumps(runs, indent=2).encode() + b"\n"
    fmt, transcripts = load(data)
    assert fmt.name == "tau-bench" and [t.label for t in transcripts] == ["run 0", "run 1", "run 2"]
    assert fmt.write(transcripts) == data


@needs_transcripts
def test_real_trajectories_round_trip_byte_for_byte():
    found = [*SHARED_TRANSCRIPTS.rglob("*.traj"), *SHARED_TRANSCRIPTS.rglob("*.json")]
    # Claude Code records saved as one JSON array are a session, not a trajectory.
    sources = [path for path in found if "claude-code" not in path.relative_to(SHARED_TRANSCRIPTS).parts]
    assert len(sources) == 19
    for source in sources:
        data = source.read_bytes()
        fmt, transcripts = load(data, str(source))
        assert fmt.write(transcripts).rstrip(b"\n") == data.rstrip(b"\n"), source
        assert all(find_violation(t.messages) is None for t in transcripts), source


@needs_transcripts
def test_real_text_mode_trajectories_read_as_plain_messages():
    source = next(SHARED_TRANSCRIPTS.rglob("ctf/crypto/eps.traj"))
    _, (transcript,) = load(source.read_bytes(), str(source))
    assert not any(m.get("tool_calls") for m in transcript.messages)
    observations = [
        m for m in transcript.messages if m["role"] == "user" and "(Current directory:" in str(m["content"])
    ]
    assert len(observations) >= 3
