"""Redaction's shortcuts, each held to the code it replaced, written out as it was, byte for byte.

The key-body row tried only where a line starts, and not on a text shorter than its shortest match;
the token before a line break read in its last characters first (``_redact_joins``); the ledger's
booking-code gate. Each is compared with the plain computation on generated text and (redaction) on
every string of the real transcripts.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Sequence
from re import _parser

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compactctl.summarizers import ledger, redact
from compactctl.summarizers import secret_rows as rows_module
from compactctl.summarizers.row_index import row_index
from compactctl.summarizers.secret_rows import KEY_BLOCKS, PATTERNS, TOKEN_ROWS, Row
from tests.conftest import SHARED_TRANSCRIPTS, needs_transcripts

TABLES = (KEY_BLOCKS, TOKEN_ROWS, PATTERNS)
KEY_BODY = next(row for row in PATTERNS if row.kind == "key-body")


def rows_as_they_were(text: str, rows: Sequence[Row] = PATTERNS) -> tuple[str, int]:
    """``redact_rows`` as it was: every row run on any length, the key-body row over the whole text
    (``subn``), not at line starts only."""
    table = row_index(rows)
    lowered = text.lower() if table.folded_keys else text
    folded = [key for key in table.folded_keys if key in lowered]
    exact = [key for key in table.exact_keys if key in text]
    total = 0
    done = -1
    todo = table.to_run(folded, exact)
    current: str | None = lowered if table.folded_keys else None
    while todo:
        index = todo.pop(0)
        row = rows[index]
        if row.kind == "key-body":
            text, count = row.pattern.subn(row.replacement, text)
        else:
            if row.starts and current is None:
                current = text.lower()
            text, count = row.sub(text, current)
        total += count
        done = index
        if count:
            current = None
            exact = [key for key in table.exact_keys if key in text]
            todo = [later for later in table.to_run(folded, exact) if later > done]
    return text, total


def joins_as_they_were(text: str) -> tuple[str, int]:
    """``_redact_joins`` before the token before a break was read in its last characters first."""
    total = 0
    position = 0
    while True:
        start = redact._BREAK_START.search(text, position)
        found = None if start is None else redact._BREAK.search(text, start.start())
        if found is None:
            return text, total
        left_start = redact._context_start(text, found.start())
        left = text[left_start : found.start()]
        lead = redact._LEADING_TOKEN.match(text, found.end(), found.end() + redact._JOIN_CONTEXT)
        tail_length = redact._TOKEN_REVERSED.match(left[::-1]).end()  # type: ignore[union-attr]
        position = found.end()
        if (len(lead.group()) if lead else 0) + tail_length < redact._JOIN_MIN or redact._NEXT_LABEL.match(
            text, found.end()
        ):
            continue
        right = text[found.end() : redact._line_end(text, found.end())]
        lowered = left.lower()
        if not any(hint in lowered for hint in redact._LABEL_HINTS):
            left_start = found.start() - tail_length
            left = left[len(left) - tail_length :]
        joined = left + right
        redacted, count = rows_as_they_were(joined)
        if not count:
            continue
        same_head = redact._common_prefix(joined, redacted)
        same_tail = redact._common_prefix(joined[::-1], redacted[::-1])
        same_tail = min(same_tail, len(joined) - same_head, len(redacted) - same_head)
        if not (same_head < len(left) < len(joined) - same_tail):
            continue
        replaced = redacted[same_head : len(redacted) - same_tail]
        after = found.end() + len(right) - same_tail
        text = text[: left_start + same_head] + replaced + found.group() + text[after:]
        position = left_start + same_head + len(replaced) + len(found.group())
        total += count


def redact_as_it_was(text: str) -> tuple[str, int]:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(redact, "redact_rows", rows_as_they_were)
        patch.setattr(redact, "_redact_joins", joins_as_they_were)
        return redact.redact(text)


def assert_alike(text: str) -> None:
    for rows in TABLES:
        assert rows_module.redact_rows(text, rows) == rows_as_they_were(text, rows), text
    assert redact._redact_joins(text) == joins_as_they_were(text), text
    assert redact.redact(text) == redact_as_it_was(text), text


# --- the key-body row ------------------------------------------------------------------------------


def test_the_key_body_row_s_shortest_match_is_what_re_s_parser_says():
    parsed = _parser.parse(KEY_BODY.pattern.pattern, KEY_BODY.pattern.flags)
    assert KEY_BODY.shortest == parsed.getwidth()[0]
    assert all(row.shortest == 0 for row in PATTERNS if row is not KEY_BODY)


_B64_LINE = st.text("ABCxyz019+/", min_size=55, max_size=80)
_JOINER = st.sampled_from(["\n", "\r\n", "\\n", " ", "", "=\n", "\n\n", "x\n"])


@settings(max_examples=400, deadline=None)
@given(st.lists(st.tuples(_B64_LINE, _JOINER), max_size=6), st.text("ab \n=", max_size=5))
def test_the_key_body_row_at_line_starts_is_the_row_over_the_whole_text(lines, head):
    text = head + "".join(line + joiner for line, joiner in lines)
    assert KEY_BODY.sub(text) == KEY_BODY.pattern.subn(KEY_BODY.replacement, text)
    assert_alike(text)


# --- the token before a break ------------------------------------------------------------------

_JOIN_PIECES = [
    "\n",
    "\\n",
    "\r\n",
    " ",
    "password=",
    "token: ",
    "ghp_",
    "sk-ant-api03-",
    "AbCdEfGh12345678",
    "x" * 15,
    "0123456789abcdef",
    "\"'",
    "cat secret.txt",
    "echo ",
]


@settings(max_examples=500, deadline=None)
@given(st.lists(st.one_of(st.sampled_from(_JOIN_PIECES), st.text("aZ9_-:=/ \n", max_size=8)), max_size=12))
def test_joins_read_as_before_on_generated_text(pieces):
    assert_alike("".join(pieces))


def test_a_wrapped_token_is_still_joined_and_a_short_one_is_not():
    key = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    for text in (f"token {key[:10]}\n{key[10:]}", f"x {key[:3]}\n{key[3:]} y", "abc\ndef", "a" * 15 + "\nb"):
        assert_alike(text)
    assert key[10:] not in redact.redact(f"token {key[:10]}\n{key[10:]}")[0]


# --- every string of the real transcripts -------------------------------------------------------


def _strings(value: object) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def real_strings() -> list[str]:
    found: dict[str, None] = {}
    for path in sorted(SHARED_TRANSCRIPTS.rglob("*")):
        if not path.is_file() or path.suffix not in (".json", ".jsonl", ".traj"):
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        lines = text.splitlines() if path.suffix == ".jsonl" else [text]
        for line in lines:
            try:
                value = json.loads(line)
            except ValueError:
                continue
            found.update((string, None) for string in _strings(value) if len(string) >= 16)
    return list(found)


@needs_transcripts
def test_every_string_of_the_real_transcripts_is_redacted_as_before():
    strings = real_strings()
    assert len(strings) > 1000
    for text in strings:
        assert_alike(text)


def test_the_booking_code_gate_says_what_the_run_gate_said():
    old = re.compile(r"\d[A-Z0-9]*[A-Z]|[A-Z][A-Z0-9]*\d")
    for text in ("NO6JO3", "AB CD 12", "6A19384756201", "A-1", "ab1", "1 A", "x9y", "PASSED 12", "", "ZZZZ9"):
        assert (ledger._ID_GATES[1].search(text) is None) == (old.search(text) is None), text


@settings(max_examples=500, deadline=None)
@given(st.text("AZ09a -_\n", max_size=30))
def test_the_booking_code_gate_finds_the_lines_the_run_gate_found(text):
    old = re.compile(r"\d[A-Z0-9]*[A-Z]|[A-Z][A-Z0-9]*\d")
    assert (ledger._ID_GATES[1].search(text) is None) == (old.search(text) is None)
    assert list(ledger._lines_holding(ledger._ID_GATES[1], text)) == list(ledger._lines_holding(old, text))


def _key_pieces() -> list[str]:
    keys = {key for rows in TABLES for table in [row_index(rows)] for key in (*table.folded_keys, *table.exact_keys)}
    return sorted(keys | {key[:n] for key in keys for n in (1, 2, 3)} | {key.upper() for key in keys})


@settings(max_examples=600, deadline=None)
@given(st.lists(st.sampled_from(_key_pieces()) | st.text(max_size=6), max_size=12).map("".join))
def test_keys_held_are_the_keys_looked_for_one_by_one(text: str) -> None:
    # RowIndex.held skips the keys behind a two-character prefix the text lacks: the same keys as every one tried.
    for rows in TABLES:
        table = row_index(rows)
        lowered = text.lower()
        assert sorted(table.held(lowered, folded=True)) == sorted(k for k in table.folded_keys if k in lowered)
        assert sorted(table.held(text, folded=False)) == sorted(k for k in table.exact_keys if k in text)


# The ledger's numbers, led by their first character's class: the matches of the pattern as it was.
_NUMBER_AS_IT_WAS = re.compile(
    rf"(?:[$€£]\s?\d[\d,]*(?:\.\d+)?|(?<![\w.#/-])\d[\d,]*(?:\.\d+)?\s?(?:{ledger._UNITS}))(?![\w/])"
)


_NUMBER_PIECES = ["12", "3.5", "1,000", "$", "€ ", "£", " ms", "s", " passed", "x", ".", "#", "/", "-", "a", " ", "\n"]
_NUMBER_PIECES.append("٣")  # an Arabic-Indic digit: \d is any decimal digit


@settings(max_examples=1000, deadline=None)
@given(st.lists(st.sampled_from(_NUMBER_PIECES), max_size=14).map("".join))
def test_numbers_are_the_matches_of_the_pattern_as_it_was(text):
    spans = [(match.span(), match.group()) for match in ledger._NUMBER.finditer(text)]
    assert spans == [(match.span(), match.group()) for match in _NUMBER_AS_IT_WAS.finditer(text)], text


@needs_transcripts
def test_numbers_in_the_real_transcripts_are_found_as_before():
    for text in real_strings():
        assert [m.span() for m in ledger._NUMBER.finditer(text)] == [m.span() for m in _NUMBER_AS_IT_WAS.finditer(text)]
