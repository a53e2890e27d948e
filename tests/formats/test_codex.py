"""Codex rollouts: response items are the model input, token_count the usage, compacted lines the checkpoint."""

from __future__ import annotations

import orjson

from compactctl.compaction import compact
from compactctl.formats import load
from compactctl.formats.codex import SUMMARY_PREFIX
from compactctl.transcript import Validator, annotations_of, content_text
from tests.conftest import unchanged
from tests.formats.fixtures import codex_initial_context, lines, read, rewritten, shape


def line(kind: str, payload: dict) -> bytes:
    return orjson.dumps({"timestamp": "2026-03-03T10:00:00.000Z", "type": kind, "payload": payload}) + b"\n"


def message(role: str, text: str, part: str = "input_text") -> dict:
    return {"type": "message", "role": role, "content": [{"type": part, "text": text}]}


def test_base_instructions_are_the_system_prompt():
    data, _, transcript = read("codex")
    meta = lines(data)[0]["payload"]
    assert transcript.messages[0] == {**transcript.messages[0], "role": "system"}
    assert transcript.messages[0]["content"] == meta["base_instructions"]["text"]


def test_event_msg_duplicates_are_not_counted_twice():
    data, _, transcript = read("codex")
    prompt = "Refunds over 100 EUR fail; fix it."
    answer = "Fixed: refunds are now limited by the order total."
    assert data.decode().count(prompt) == 2 and data.decode().count(answer) == 3
    texts = [content_text(m) for m in transcript.messages]
    assert sum(prompt in t for t in texts) == 1
    assert sum(answer in t for t in texts) == 1


def test_calls_pair_with_outputs_including_custom_tool_calls():
    _, _, transcript = read("codex")
    messages = transcript.messages
    patch = next(i for i, m in enumerate(messages) if any(c["id"] == "call_B1" for c in m.get("tool_calls", [])))
    assert messages[patch]["tool_calls"][0]["function"]["name"] == "apply_patch"
    assert messages[patch]["tool_calls"][0]["function"]["arguments"].startswith("*** Begin Patch")
    assert messages[patch + 1]["role"] == "tool" and messages[patch + 1]["tool_call_id"] == "call_B1"
    parallel = next(m for m in messages if m.get("tool_calls") and len(m["tool_calls"]) == 2)
    assert content_text(parallel) == "Looking at the refund code and the tests."
    assert parallel["content"][0]["type"] == "reasoning"  # the item before the call, carried whole
    # An output given as a content-item array reads as text.
    output = next(m for m in messages if m.get("tool_call_id") == "call_A2")
    assert output["content"].endswith("1 failed")


def test_a_rollout_ending_on_an_unanswered_custom_tool_call_is_an_open_call():
    _, _, transcript = read("codex")
    validator = Validator()
    for message in transcript.messages:
        validator.feed(message)
    assert validator.finish() is None and validator.open_call == "call_C1"


def test_harness_messages_are_annotated():
    _, _, transcript = read("codex")
    harness = [content_text(m)[:20] for m in transcript.messages if annotations_of(m).get("kind") == "harness"]
    assert harness == ["<permissions instruc", "<environment_context", "<collaboration_mode>"]


def test_token_count_events_are_the_reported_usage_of_the_call_before_them():
    _, _, transcript = read("codex")
    reported = [(i, m["usage"]["input_tokens"]) for i, m in enumerate(transcript.messages) if "usage" in m]
    calls = [i for i, m in enumerate(transcript.messages) if m["role"] == "assistant"]
    assert [i for i, _ in reported] == calls[:3]
    assert [n for _, n in reported] == [9100, 9500, 9800]


def test_compaction_appends_a_compacted_line_with_the_replacement_history():
    data, fmt, transcript = read("codex")
    original = unchanged(transcript.messages)
    result = compact(transcript.messages, ["window"], {"keep_recent": 3})
    kept, origins = result.messages, result.origins
    summary = {"role": "user", "content": "Refund limit bug in refunds.py; patched to order.total."}
    out = rewritten(fmt, transcript, [kept[0], summary, *kept[1:]], [origins[0], None, *origins[1:]])
    assert transcript.messages == original
    assert out.startswith(data)
    last, *context = lines(out[len(data) :])
    assert last["type"] == "compacted" and set(last["payload"]) == {"message", "replacement_history"}
    # The context the model holds, restated after the checkpoint as Codex does (so it is not re-sent).
    assert [c["type"] for c in context] == [
        *(t for t in ("world_state", "turn_context") if f'"type":"{t}"'.encode() in data),
        *(["event_msg"] if b'"token_count"' in data else []),  # the count after it, as Codex writes one
    ]
    assert last["payload"]["message"] == f"{SUMMARY_PREFIX}\n{summary['content']}"
    history = last["payload"]["replacement_history"]
    assert history[0] == {
        "type": "message",
        "role": "user",
        "content": [{"type": "input_text", "text": last["payload"]["message"]}],
    }
    assert all(item.get("role") != "system" for item in history)  # base instructions stay in session_meta
    _, again = load(out)
    reread = again[0].messages
    assert reread[0]["role"] == "system" and content_text(reread[1]).endswith(summary["content"])
    # Codex writes its initial context again on resume (no world_state here): the old copy is left out.
    assert shape(reread[2:]) == shape([m for m in kept[1:] if not codex_initial_context(m)])


def test_reasoning_items_travel_with_their_message_when_it_is_rebuilt():
    data, fmt, transcript = read("codex")
    index = next(i for i, m in enumerate(transcript.messages) if m["role"] == "assistant")
    reasoning = [p for p in transcript.messages[index]["content"] if p["type"] == "reasoning"]
    edited = {**transcript.messages[index], "content": [*reasoning, {"type": "text", "text": "Reading refunds.py."}]}
    out = rewritten(fmt, transcript, [*transcript.messages[: index + 1 - 1], edited, *transcript.messages[index + 1 :]])
    history = lines(out[len(data) :])[0]["payload"]["replacement_history"]
    kinds = [item["type"] for item in history]
    position = kinds.index("reasoning")
    assert history[position]["encrypted_content"] == lines(data)[7]["payload"]["encrypted_content"]
    assert history[position + 1]["content"][0]["text"] == "Reading refunds.py."
    assert history[position + 1]["phase"] == "commentary"
    assert kinds[position + 2 : position + 4] == ["function_call", "function_call"]


def test_a_compacted_line_replaces_the_history_before_it():
    rollout = b"".join(
        [
            line("session_meta", {"id": "s", "base_instructions": None}),
            line("response_item", message("user", "old question")),
            line("response_item", message("assistant", "old answer", "output_text")),
            line("compacted", {"message": "sum", "replacement_history": [message("user", "kept question")]}),
            line("response_item", message("assistant", "new answer", "output_text")),
        ]
    )
    fmt, (transcript,) = load(rollout)
    assert fmt.name == "codex"
    assert [content_text(m) for m in transcript.messages] == ["kept question", "new answer"]
    assert fmt.write([transcript]) == rollout


def test_an_old_compacted_line_without_history_keeps_user_messages_and_the_summary():
    rollout = b"".join(
        [
            line("session_meta", {"id": "s", "base_instructions": {"text": "You are Codex."}}),
            line("response_item", message("user", "first question")),
            line("response_item", message("assistant", "long answer", "output_text")),
            line("compacted", {"message": "what happened so far"}),
        ]
    )
    _, (transcript,) = load(rollout)
    assert [(m["role"], content_text(m)) for m in transcript.messages] == [
        ("system", "You are Codex."),
        ("user", "first question"),
        ("user", "what happened so far"),
    ]


def test_lines_without_payload_are_read_as_bare_items():
    rollout = b"".join(
        [
            line("session_meta", {"id": "s"}),
            orjson.dumps(message("user", "bare question")) + b"\n",
            line("response_item", message("assistant", "answer", "output_text")),
        ]
    )
    _, (transcript,) = load(rollout)
    assert [content_text(m) for m in transcript.messages] == ["bare question", "answer"]


def test_unchanged_rollout_is_written_back_byte_for_byte():
    data, fmt, transcript = read("codex")
    assert fmt.write([transcript]) == data


def test_text_a_strategy_adds_to_the_base_instructions_goes_in_as_a_developer_message():
    data, fmt, transcript = read("codex")
    system = transcript.messages[0]
    grown = {**system, "content": system["content"] + "\n\nSummary so far: refund bug fixed."}
    last = len(transcript.messages)
    out = rewritten(fmt, transcript, [grown, *transcript.messages[-2:]], [0, last - 2, last - 1])
    history = lines(out[len(data) :])[0]["payload"]["replacement_history"]
    assert history[0] == message("developer", "Summary so far: refund bug fixed.")
    assert len(history) == 3
