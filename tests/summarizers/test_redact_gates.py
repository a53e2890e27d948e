"""Patterns led by a class the engine skips to, or found behind a gate, held to the code they replaced,
written out here as it was, byte for byte: on generated text and on every string of the real transcripts.

The line break between two token characters (``redact._BREAK``), a base64 run (``_BASE64_RUN`` and the
check beside it) and a wrapped one (``_BASE64_LINES``), each found a token at a time (``redact.base64_runs``,
``redact.wrapped_base64_runs``, the latter behind a gate), a URL-encoded run behind a gate
(``redact.percent_runs``), the booking-code pair gate of the ledger, the gates of the AWS secret row and of
the key-body row, the Discord and CLI-token rows tried near their gates only (``Row.lead``), and the
exit-code gate of the sections.
"""

from __future__ import annotations

import dataclasses
import re
from re import _parser  # type: ignore[attr-defined]

from hypothesis import given, settings
from hypothesis import strategies as st

from compactctl.summarizers import ledger, redact, sections
from compactctl.summarizers.secret_rows import _CASE_BLIND_EXTRA, _START, PATTERNS, redact_rows
from tests.conftest import needs_transcripts
from tests.summarizers.test_redact_prefilter import real_strings

OLD_BREAK = re.compile(r"(?<=[^\s\\])(?:\r?\n|\\r\\n|\\n)(?=[^\s\\])")
OLD_BASE64_RUN = re.compile(r"(?<![A-Za-z0-9+/_-])(?=[A-Za-z0-9+/_-]*[0-9+/_-])[A-Za-z0-9+/_-]{16,}={0,2}")
OLD_BASE64_LINES = re.compile(
    r"(?<![A-Za-z0-9+/_-])[A-Za-z0-9+/_-]{16,}(?:(?:\r?\n|\\n)[ \t]*[A-Za-z0-9+/_-]{4,})+={0,2}"
)
OLD_PAIR_GATE = re.compile(r"\d[A-Z]|[A-Z]\d")
GATED_ROWS = tuple(row for row in PATTERNS if row.kind in ("aws-secret-key", "key-body", "discord-token", "cli-token"))
# The issuers' tokens tried where their keys start (secret_rows._issued): the only rows whose starts are their keys.
ISSUED = tuple(row for row in PATTERNS if row.starts and row.starts == tuple(key.lower() for key in row.keys))
UNGATED = tuple(
    dataclasses.replace(row, gate=None, lead=None, starts=()) if row in GATED_ROWS + ISSUED else row for row in PATTERNS
)


def _starts(pattern: re.Pattern[str], text: str) -> list[tuple[int, int]]:
    """Every match ``search`` can give, whatever position it starts from: the match at each start."""
    spans, position = [], 0
    while (found := pattern.search(text, position)) is not None:
        spans.append(found.span())
        position = found.start() + 1
    return spans


def _runs_now(text: str) -> list[tuple[int, int]]:
    runs = redact.base64_runs(text)
    return [(start, end) for start, end in runs if redact._BASE64_NEEDS.search(text, start, end) is not None]


def _exit_code(text: str) -> tuple[int, int] | None:
    found = sections._EXIT_CODE.search(text) if sections._EXIT_GATE.search(text) else None
    return None if found is None else found.span()


def _capitals_beside_digits(text: str) -> list[int]:
    digits = {i for i, char in enumerate(text) if re.fullmatch(r"\d", char)}
    return [i for i, char in enumerate(text) if "A" <= char <= "Z" and (i - 1 in digits or i + 1 in digits)]


def assert_alike(text: str) -> None:
    assert _starts(redact._BREAK, text) == _starts(OLD_BREAK, text), text
    assert _runs_now(text) == [run.span() for run in OLD_BASE64_RUN.finditer(text)], text
    assert list(redact.base64_runs(text)) == [run.span() for run in redact._BASE64_RUN.finditer(text)], text
    assert list(redact.wrapped_base64_runs(text)) == [run.span() for run in OLD_BASE64_LINES.finditer(text)], text
    assert list(redact.percent_runs(text)) == [run.span() for run in redact._PERCENT_RUN.finditer(text)], text
    has_16 = redact._BASE64_16_FIRST.match(text) is not None or redact._BASE64_16.search(text) is not None
    assert has_16 == (re.search("[A-Za-z0-9+/_-]{16}", text) is not None), text
    assert list(ledger._lines_holding(ledger._ID_GATES[1], text)) == list(ledger._lines_holding(OLD_PAIR_GATE, text))
    # Led by the capital now: it matches at each capital beside a digit (the line is what _lines_holding reads).
    assert [start for start, _ in _starts(ledger._ID_GATES[1], text)] == _capitals_beside_digits(text), text
    for row in GATED_ROWS:
        assert row.sub(text) == dataclasses.replace(row, gate=None, lead=None).sub(text), (row.kind, text)
    for row in ISSUED:
        assert row.sub(text) == row.pattern.subn(row.replacement, text), (row.kind, text)
    assert redact_rows(text) == redact_rows(text, UNGATED), text
    old_exit = sections._EXIT_CODE.search(text)
    assert _exit_code(text) == (None if old_exit is None else old_exit.span()), text


def _case_blind(pattern: str) -> set[str]:
    """Every character ``pattern`` (one character's class) matches under re.I."""
    blind = re.compile(pattern, re.I)
    return {chr(c) for c in range(0x110000) if blind.fullmatch(chr(c))}


def test_the_letters_re_i_adds_to_a_to_z_are_the_ones_the_gates_spell_out():
    plain = {chr(c) for c in range(0x110000) if re.fullmatch("[A-Za-z]", chr(c))}
    assert _case_blind("[A-Za-z]") - plain == set(_CASE_BLIND_EXTRA)
    # The AWS row's gate is led by its label's last letter in both cases only.
    assert [_case_blind(letter) for letter in "yn"] == [{"y", "Y"}, {"n", "N"}]


def test_the_exit_gate_holds_every_spelling_re_i_takes_of_xit():
    classes = re.findall(r"\[([^\]]*)\]", sections._EXIT_GATE.pattern)
    assert [_case_blind(letter) for letter in "xit"] == [set(allowed) for allowed in classes]


def test_the_break_at_every_position_is_the_old_break():
    for text in ("a\nb", "a\r\nb", "a\\nb", "a\\r\\nb", "a \nb", "a\\\nb", "a\n b", "\nb", "a\n", "a\rb", "x\\\\nb"):
        for position in range(len(text) + 1):
            new, old = redact._BREAK.search(text, position), OLD_BREAK.search(text, position)
            assert (new and new.span()) == (old and old.span()), (text, position)


_PIECES = [
    "\n",
    "\r",
    "\\",
    "\\n",
    "\\r\\n",
    " ",
    "=",
    "==",
    "aws_secret_access_key",
    "secret_key: ",
    "SESSION_TOKEN='",
    "_token=",
    "Key = ",
    '\\"',
    "A" * 16,
    "Ab9/" * 10,
    "x" * 39,
    "Q" * 60,
    "ſ",
    "K",
    "İ",
    "ı",
    "Exit code: 3",
    "exİt code 1",
    "NO6JO3",
    "-----BEGIN",
    "M" + "a1" * 11 + "b",
    "N" + "Zz_-" * 6 + "Q",
    "O" + "x" * 22,
    ".abcdef.",
    ".a1B2c3.",
    "y" * 27,
    "K" * 40,
    "A" * 15,
    "b" * 17 + "\\n  cdef",
    "\\n\t",
    "==x",
    "%",
    "%2F",
    "50% ",
    "%zz",
    "a%4",
    "\r\n",
    " --token=",
    "\t-t ",
    " -storepass ",
    "\n-passin pass:",
    "--api-key ",
    " -",
]


def _alternatives(pattern: str) -> list[str]:
    """``pattern`` cut at its top-level ``|`` (not inside a group or a class, not escaped)."""
    parts, depth, start, at, in_class = [], 0, 0, 0, False
    while at < len(pattern):
        char = pattern[at]
        if char == "\\":
            at += 1
        elif in_class:
            in_class = char != "]"
        elif char == "[":
            in_class = True
        elif char in "()":
            depth += 1 if char == "(" else -1
        elif char == "|" and depth == 0:
            parts.append(pattern[start:at])
            start = at + 1
        at += 1
    return [*parts, pattern[start:]]


def test_every_match_of_an_issued_row_starts_with_one_of_its_keys():
    assert {"npm-token", "notion-token", "slack-token", "jwt"} <= {row.kind for row in ISSUED}
    for row in ISSUED:
        for alternative in _alternatives(row.pattern.pattern):
            assert alternative.startswith(_START), (row.kind, alternative)
            # What every match of the alternative starts with: the literal characters after _START.
            literal = ""
            for op, value in _parser.parse(alternative[len(_START) :]):
                if op is not _parser.LITERAL:
                    break
                literal += chr(value)
            assert any(literal.startswith(key) for key in row.keys), (row.kind, alternative)
        assert not row.folded and row.gate is None and row.lead is None, row.kind  # tried as written, at the starts


_ISSUER_PIECES = [
    *("npm_", "ntn_", "secret_", "xoxb-", "xapp-1-", "eyJ", ".eyJ", "EAA", "EAAA", "GR1348941", "sk.eyJ", "dp.pt."),
    *("NPM_", "Npm_", "\\n", "\n", " ", "_", "-", ".", "x", "a1B2" * 3, "9" * 11, "Z" * 40, "İ", "ſ", "K"),
]


@settings(max_examples=800, deadline=None)
@given(st.lists(st.sampled_from(_ISSUER_PIECES), max_size=14))
def test_an_issued_row_finds_at_its_keys_what_it_finds_everywhere(pieces):
    text = "".join(pieces)
    for row in ISSUED:
        assert row.sub(text) == row.pattern.subn(row.replacement, text), (row.kind, text)
    assert redact_rows(text) == redact_rows(text, UNGATED), text


def test_the_discord_row_s_lead_is_the_width_before_its_gate():
    row = next(row for row in PATTERNS if row.kind == "discord-token")
    token = "M" + "a" * 27 + ".bcdefg." + "h" * 27
    assert row.gate is not None and row.gate.search(token).start() == row.lead  # type: ignore[union-attr]
    for text in (token, "x " + token, "\\n" + token, "a" + token, token + "\n" + token, "." + token[1:]):
        assert row.sub(text) == row.pattern.subn(row.replacement, text), text


@settings(max_examples=600, deadline=None)
@given(st.lists(st.one_of(st.sampled_from(_PIECES), st.text("aZ09+/_-=:\"' \n\r\\.é→", max_size=8)), max_size=12))
def test_generated_text_is_read_as_before(pieces):
    assert_alike("".join(pieces))


@settings(max_examples=300, deadline=None)
@given(st.text("AZaz09+/_-=\n\r\\ n", max_size=60))
def test_short_runs_and_breaks_at_every_position_are_read_as_before(text):
    for position in range(len(text) + 1):
        new, old = redact._BREAK.search(text, position), OLD_BREAK.search(text, position)
        assert (new and new.span()) == (old and old.span()), (text, position)
    assert_alike(text)


@needs_transcripts
def test_every_string_of_the_real_transcripts_is_read_as_before():
    strings = real_strings()
    assert len(strings) > 1000
    for text in strings:
        assert_alike(text)
