"""Where each message came from is kept beside the messages, never in them."""

from __future__ import annotations

import dataclasses

import pytest

from compactctl.compaction import compact
from compactctl.formats import Native, load
from compactctl.transcript import ANNOTATION_KEY
from tests.formats.fixtures import FILES, lines, read, rewritten


@pytest.mark.parametrize("name", list(FILES))
def test_loaded_messages_carry_nothing_compactctl_did_not_read(name):
    _, _, transcript = read(name)
    annotations = [m[ANNOTATION_KEY] for m in transcript.messages if ANNOTATION_KEY in m]
    assert all(note == {"kind": "harness"} for note in annotations)  # what the reader found, no bookkeeping
    assert isinstance(transcript.native, Native)
    assert len(transcript.origins) == len(transcript.messages)


@pytest.mark.parametrize("name", list(FILES))
def test_native_state_is_frozen(name):
    _, _, transcript = read(name)
    with pytest.raises(dataclasses.FrozenInstanceError):
        transcript.native.units = ()  # type: ignore[misc, union-attr]


@pytest.mark.parametrize("name", list(FILES))
def test_two_rewrites_write_what_one_rewrite_of_both_steps_writes(name):
    data, fmt, transcript = read(name)
    trimmed = compact(transcript.messages, ["trim-tools"], {"tool_max_tokens": 4})
    windowed = compact(trimmed.messages, ["window"], {"keep_recent": 3})
    both = compact(transcript.messages, ["trim-tools", "window"], {"tool_max_tokens": 4, "keep_recent": 3})
    twice = transcript.rewritten(trimmed.messages, trimmed.origins).rewritten(windowed.messages, windowed.origins)
    assert twice.origins == transcript.rewritten(both.messages, both.origins).origins
    assert fmt.write([twice]) == rewritten(fmt, transcript, both.messages, both.origins)
    assert fmt.write([twice]) != data  # something was compacted, and it shows


def test_a_message_with_no_origin_is_written_as_new():
    data, fmt, transcript = read("claude-code")
    first = transcript.messages[0]
    as_new = lines(rewritten(fmt, transcript, [first], [None])[len(data) :])
    as_read = lines(rewritten(fmt, transcript, [first], [0])[len(data) :])
    assert as_new[1]["isCompactSummary"] is True  # a message nobody read: the summary Claude Code expects
    assert "isCompactSummary" not in as_read[1] and as_read[1]["message"]["content"] == first["content"]


def test_origins_must_match_the_messages():
    _, _, transcript = read("codex")
    with pytest.raises(ValueError, match="one origin per message"):
        dataclasses.replace(transcript, messages=transcript.messages[1:])
    with pytest.raises(ValueError, match="one origin per message"):
        transcript.rewritten(transcript.messages, [0])


def test_a_transcript_built_by_hand_has_no_origins_and_writes_plain_messages():
    fmt, (transcript,) = load(b'{"role": "user", "content": "hi"}\n')
    assert transcript.origins == () and transcript.read_as == "chat"
    assert fmt.write([transcript.rewritten([{"role": "user", "content": "bye"}], [None])]) == (
        b'{"role":"user","content":"bye"}\n'
    )
