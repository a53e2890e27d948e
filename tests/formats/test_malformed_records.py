"""A malformed producer record is reported with file, line and what is wrong, never dropped unseen."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compactctl.errors import InputError
from compactctl.formats import load
from compactctl.formats.claude_code import RECORD_FIELDS
from compactctl.formats.records import _ABSENT, FIELD_KINDS, Record, SkippedLine, _field, check_fields, shape_of
from tests.properties import examples

DATA = Path(__file__).parent / "data"


def lines_of(name: str) -> list[dict]:
    return [json.loads(line) for line in (DATA / name).read_text().splitlines() if line.strip()]


def as_bytes(records: list[dict]) -> bytes:
    return b"".join(json.dumps(r).encode() + b"\n" for r in records)


def test_a_codex_response_item_without_payload_is_an_error_naming_its_line():
    records = lines_of("codex.jsonl")
    at = next(i for i, r in enumerate(records) if r.get("type") == "response_item" and i > 2)
    del records[at]["payload"]
    with pytest.raises(InputError) as caught:
        load(as_bytes(records), "rollout.jsonl")
    assert caught.value.line == at + 1 and "response_item line has no payload" in str(caught.value)


def test_a_claude_code_record_without_parent_uuid_is_an_error_not_a_shorter_session():
    records = lines_of("claude-code.jsonl")
    _, whole = load(as_bytes(records), "session.jsonl")
    chained = [i for i, r in enumerate(records) if r.get("parentUuid") and r.get("type") in ("user", "assistant")]
    at = chained[len(chained) // 2]
    del records[at]["parentUuid"]
    with pytest.raises(InputError) as caught:
        load(as_bytes(records), "session.jsonl")
    assert caught.value.line == at + 1 and "has no parentUuid" in str(caught.value)
    assert len(whole[0].messages) > 3  # what would have been lost without a word


def test_a_null_parent_uuid_is_a_root_and_reads_as_before():
    records = lines_of("claude-code.jsonl")
    _, transcripts = load(as_bytes(records), "session.jsonl")
    assert any(r.get("parentUuid", "absent") is None for r in records) and transcripts[0].messages


def test_on_error_skip_skips_a_bad_first_line_and_counts_it():
    data = b'{"role": "user", "content": \n{"role":"user","content":"hi"}\n{"role":"assistant","content":"yo"}\n'
    with pytest.raises(InputError):
        load(data, "chat.jsonl")
    skipped: list[SkippedLine] = []
    _, transcripts = load(data, "chat.jsonl", skipped=skipped)
    assert [s.line for s in skipped] == [1] and "malformed JSON" in skipped[0].problem
    assert [m["content"] for m in transcripts[0].messages] == ["hi", "yo"]


@settings(max_examples=examples(300))
@given(st.binary(max_size=80) | st.text(alphabet="0123456789 ,-:x\u0660", max_size=80).map(str.encode))
def test_a_long_number_is_found_where_a_run_of_20_digits_is(line):
    # The reader's check (digits masked, then a run looked for) against the search it replaced.
    from compactctl.formats.records import _DIGIT_MASK, _LONG_NUMBER

    assert (_LONG_NUMBER in line.translate(_DIGIT_MASK)) == bool(re.search(rb"\d{20}", line))


def _first_misfit(value: object, fields: tuple[tuple[str, str], ...]) -> str | None:
    """What check_fields says of a record holding ``value``: None when every field fits."""
    try:
        check_fields(Record(1, value), "x", fields)
    except InputError as error:
        assert (error.path, error.line) == ("x", 1)
        return error.message
    return None


def _field_by_field(value: object, fields: tuple[tuple[str, str], ...]) -> str | None:
    """The first field, in order, present and not null and not of its kind (check_fields before the tree)."""
    for dotted, kind in fields:
        found = _field(value, dotted)
        expected, fits = FIELD_KINDS[kind]
        if found is not _ABSENT and found is not None and not fits(found):
            return f"{dotted} is {shape_of(found)}, expected {expected}"
    return None


_ANY_LEAF = st.none() | st.booleans() | st.integers(-3, 3) | st.text(max_size=3) | st.lists(st.none(), max_size=1)


def _records(keys: list[str]) -> st.SearchStrategy[object]:
    return st.recursive(
        _ANY_LEAF, lambda inner: st.dictionaries(st.sampled_from(keys), inner, max_size=5), max_leaves=12
    )


@settings(max_examples=examples(400))
@given(_records(["type", "uuid", "message", "usage", "role", "model", "id", "input_tokens", "output_tokens", "x"]))
def test_check_fields_walked_as_a_tree_fails_where_field_by_field_fails_on_the_first_field(value):
    fields = (
        *RECORD_FIELDS,
        ("usage.input_tokens", "count"),
        ("message.usage.input_tokens.x", "text"),  # under a field of its own kind
        ("message", "list"),  # a field listed twice, with another kind
    )
    for listed in (RECORD_FIELDS, fields):
        said = _first_misfit(value, listed)
        assert said == _field_by_field(value, listed)
