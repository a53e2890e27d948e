import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from compactctl.errors import InputError
from compactctl.formats import FORMATS, dump, load
from compactctl.formats.chat import ChatNative

SAMPLE_LINE = b'{"role":"user","content":"hi","zeta":1,"alpha":{"b":2,"a":[1,2.5,null]},"ts":"2026-11-30T04:00:00Z"}\n'


def test_chat_round_trip_keeps_unknown_keys_and_their_order():
    data = SAMPLE_LINE + b'{"role":"assistant","content":"hello","id":"msg_1"}\n'
    fmt, transcripts = load(data, "t.jsonl")
    assert (fmt.name, transcripts[0].native, len(transcripts)) == ("chat", ChatNative(layout="jsonl"), 1)
    assert dump(transcripts, fmt.name) == data


def test_dataset_keeps_the_other_keys_of_each_line_in_place():
    data = (
        b'{"id":"a","messages":[{"role":"user","content":"x"}],"meta":{"k":1}}\n'
        b'{"id":"b","messages":[{"role":"user","content":"y"}],"split":"eval"}\n'
    )
    fmt, transcripts = load(data, "d.jsonl")
    assert fmt.name == "dataset"
    assert [t.label for t in transcripts] == ["line 1", "line 2"]
    assert dump(transcripts, "dataset") == data


def test_auto_detection_tells_chat_from_dataset_from_run_arrays():
    assert load(SAMPLE_LINE, "x")[0].name == "chat"
    assert load(b'{"messages":[]}\n', "x")[0].name == "dataset"
    runs = orjson.dumps([{"task_id": 1, "traj": [{"role": "user", "content": "hi"}]}], option=orjson.OPT_INDENT_2)
    fmt, transcripts = load(runs, "x")
    assert (fmt.name, len(transcripts)) == ("tau-bench", 1)


def test_a_bare_json_array_of_messages_reads_as_chat():
    data = orjson.dumps([{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}])
    fmt, transcripts = load(data, "x.json")
    assert (fmt.name, transcripts[0].native, len(transcripts[0].messages)) == ("chat", ChatNative(layout="json"), 2)


def test_explicit_format_is_checked():
    with pytest.raises(InputError, match="unknown format 'xml'"):
        load(SAMPLE_LINE, "x", "xml")
    assert "chat" in FORMATS and "dataset" in FORMATS


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**53), 2**53) | st.text(max_size=8),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=5), children, max_size=3),
    max_leaves=8,
)
messages = st.builds(
    lambda role, content, extra: {"role": role, "content": content, **extra},
    st.sampled_from(["system", "user", "assistant"]),
    st.text(max_size=30),
    st.dictionaries(
        st.text(min_size=1, max_size=6).filter(lambda k: k not in ("role", "content")), json_values, max_size=4
    ),
)


@given(st.lists(messages, min_size=1, max_size=6))
def test_chat_round_trip_is_byte_identical_for_compact_json(records):
    data = b"".join(orjson.dumps(record) + b"\n" for record in records)
    fmt, transcripts = load(data, "t.jsonl", "chat")
    assert dump(transcripts, fmt.name) == data


@given(st.lists(st.lists(messages, max_size=4), min_size=1, max_size=4))
def test_dataset_round_trip_is_byte_identical_for_compact_json(conversations):
    data = b"".join(orjson.dumps({"id": i, "messages": m, "z": [i]}) + b"\n" for i, m in enumerate(conversations))
    fmt, transcripts = load(data, "d.jsonl", "dataset")
    assert dump(transcripts, fmt.name) == data


def test_a_forced_format_that_reads_nothing_where_another_would_is_an_error():
    with pytest.raises(InputError, match="no codex message in this file; it reads as chat"):
        load(SAMPLE_LINE, "x.jsonl", "codex")
