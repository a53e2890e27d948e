"""More of replay's shortcuts, each held to the plain computation it stands for.

A short text redaction passes over, a fact matcher's memo, a budget's chosen kinds, a
summary read back once per text, a message that needs no redaction being its own copy, and
the ledger's patterns tried only where a string every match holds is there: each one is
compared here with the code it replaced, written out as it was, on generated input.
"""

from __future__ import annotations

import copy
import re
from re import _parser
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compactctl import facts as facts_module
from compactctl.facts import FactMatcher, fold
from compactctl.message_memo import remembering
from compactctl.summarizers import ledger, redact, sections, writings
from compactctl.summarizers.extractive import Budget, redacted
from compactctl.summarizers.ledger import Fact
from compactctl.summarizers.memo import forget, remembered
from compactctl.summarizers.secret_rows import KEY_BLOCKS, PATTERNS, TOKEN_ROWS, row_index
from compactctl.summarizers.sections import extract, parse_summary
from compactctl.summarizers.writings import CODE_CHARS, LISTING_LINE, is_result_line, strip_harness
from compactctl.tokens import counter_for


def _least_width(pattern: Any) -> int:
    """The shortest match a pattern can make (what re's engine itself uses to skip short texts)."""
    return int(_parser.parse(pattern.pattern, pattern.flags).getwidth()[0])


# --- a text too short to hold a secret ------------------------------------------------------


def test_every_row_that_can_match_a_short_text_is_of_a_short_kind():
    """Fails when a row is added (or changed) whose match can be shorter than the bound, unless its
    kind is listed: then a short text could hold a secret the shortcut lets through."""
    for row in PATTERNS:
        if _least_width(row.pattern) < redact._SHORT_TEXT:
            assert row.kind in redact.SHORT_KINDS, (row.kind, _least_width(row.pattern))
            assert row.keys, row.kind
    for pattern in (redact._BASE64_RUN, redact._BASE64_LINES):
        assert _least_width(pattern) >= redact._SHORT_TEXT
    assert redact._JOIN_MIN + 1 >= redact._SHORT_TEXT  # two halves and the break between them


def test_each_short_kind_has_a_row_that_matches_a_short_text():
    # The list is not wider than it needs to be by much: these are redacted, so not plainly clean.
    for text in ["pwd=hunter22", "pass: s3cr3tpw", "https://u:pw@h", "p=q&password=ab", "%70wd=hunter22"]:
        assert len(text) < redact._SHORT_TEXT
        assert redact.redact(text)[1] == 1
        assert not redact.plainly_clean(text)


_PIECES = sorted(
    {key for rows in (KEY_BLOCKS, TOKEN_ROWS) for key in (*row_index(rows).folded_keys, *row_index(rows).exact_keys)}
    | {"=", ":", "@", "%", "%3D", "\n", "\\n", " ", "'", '"', "-", "_", "/", "pwd", "PASS", "Token", "xoxb-"}
)


@settings(max_examples=400, deadline=None)
@given(st.lists(st.one_of(st.sampled_from(_PIECES), st.text("aZ09x_-=:/@% '\"\n.", max_size=6)), max_size=6))
def test_a_plainly_clean_text_is_one_redaction_leaves_as_it_is(pieces):
    text = "".join(pieces)[:20]
    if not redact.plainly_clean(text):
        return
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(redact, "plainly_clean", lambda text: False)  # the plain computation
        assert redact.redact(text) == (text, 0)


# --- a fact matcher's memo ------------------------------------------------------------------

_WORDS = ["ACC-1", "acc-1", "order 7", "Order  7", "x", "É", "é", "ß", "ss", "a b", "A\tB"]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(_WORDS), min_size=1, max_size=4), st.lists(st.text("aAcC17 -éÉßs\tb", max_size=12)))
def test_what_a_matcher_finds_is_what_looking_for_each_fact_finds(facts, texts):
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(facts_module, "MEMO_MAX_ENTRIES", 3)  # the memo starts afresh often
        for _ in range(2):  # the second pass reads the memo (and matchers made after a clear)
            # Two matchers of the same facts share a memo; one of other facts has its own.
            matcher, same, other = FactMatcher(facts), FactMatcher(list(facts)), FactMatcher([*facts[::-1], "x"])
            for text in texts:
                for one, looked_for in ((matcher, facts), (same, facts), (other, [*facts[::-1], "x"])):
                    plain = [n for n, fact in enumerate(looked_for) if fold(fact) in fold(text)] if text else []
                    assert one.found_in(text) == plain


# --- a budget's chosen kinds ----------------------------------------------------------------


class _PlainBudget(Budget):
    def offer_fact(self, fact: Fact, capped: bool = True) -> bool:  # as it was
        if fact.text in self.chosen._seen_facts:
            return True
        cost = self.counter(fact.text) + (3 if fact.kind == "command" else 1)
        cost += 0 if self.chosen.facts else 6
        if fact.kind != "command" and not any(f.kind == fact.kind for f in self.chosen.facts):
            cost += 4
        if not self._charge("Facts", cost, capped):
            return False
        self.chosen.add_fact(fact)
        return True


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.tuples(st.sampled_from(ledger.FACT_KINDS), st.sampled_from([*_WORDS, "src/a.py", "make"]))),
    st.integers(20, 120),
    st.booleans(),
)
def test_a_budget_charges_a_kind_s_label_once_as_it_did(offers, max_tokens, capped):
    counter = counter_for()
    fast, plain = Budget(counter, max_tokens), _PlainBudget(counter, max_tokens)
    for kind, text in offers:
        fact = Fact(kind, text)
        assert fast.offer_fact(fact, capped) == plain.offer_fact(fact, capped)
        assert (fast.left, fast.shares) == (plain.left, plain.shares)
    assert fast.chosen.facts == plain.chosen.facts


# --- a summary read back once per text -------------------------------------------------------

SUMMARY = "## Goal\n- Current request: fix it\n\n## Facts\n- Paths: src/a.py | src/b.py\n- $ make test"


def test_a_summary_read_back_from_the_memo_is_read_as_it_was_and_left_unchanged():
    span: list[dict[str, Any]] = [
        {"role": "system", "content": SUMMARY},
        {"role": "user", "content": "Fix src/c.py, never touch the API."},
        {"role": "assistant", "content": SUMMARY},
    ]

    def seen(sections: Any) -> Any:
        return sections.items, sections.facts

    forget()
    first = extract(span)
    shared = remembered(parse_summary, SUMMARY)  # the memo's own copy, read by every extract
    kept = copy.deepcopy(seen(shared))
    assert seen(extract(span)) == seen(first)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("compactctl.summarizers.sections.remembered", lambda function, text: function(text))
        assert seen(extract(span)) == seen(first)
    assert seen(shared) == kept == seen(parse_summary(SUMMARY))


# --- a message with nothing to redact is its own copy ----------------------------------------

_TEXTS = ["ok", "Fix src/app.py", "password=hunter2hunter2", "ghp_" + "a" * 36, "call_1", "", "3 passed"]


@st.composite
def _messages(draw: st.DrawFn) -> dict[str, Any]:
    message: dict[str, Any] = {"role": draw(st.sampled_from(["user", "assistant", "tool"]))}
    message["content"] = draw(st.one_of(st.sampled_from(_TEXTS), st.none(), st.lists(st.sampled_from(_TEXTS))))
    if draw(st.booleans()):
        arguments = draw(st.sampled_from(_TEXTS))
        message["tool_calls"] = [{"id": "c1", "function": {"name": "bash", "arguments": arguments}}]
    return message


@settings(max_examples=200, deadline=None)
@given(st.lists(_messages(), max_size=5))
def test_a_span_redacted_with_shared_copies_is_the_span_redacted_whole(span):
    before = copy.deepcopy(span)
    forget()
    with remembering():
        out = redacted(span)
    assert out == redact.redact_messages(span)[0]
    assert span == before  # read, never changed
    for message, copied in zip(span, out, strict=True):
        # Nothing to redact: the message itself (inside a replay, kept by the message object, no digest).
        assert (copied is message) == (copied == message)
    forget()
    out = redacted(span)  # outside a replay: remembered by the message's digest
    assert out == redact.redact_messages(span)[0]
    for message, copied in zip(span, out, strict=True):
        # Nothing to redact: the first equal message (its digest's).
        first = next(m for m in span if m == message)
        assert (copied is first) == (copied == message)


# --- the ledger's patterns tried only where they can match ---------------------------------


def _plain_ids(text: str, prose: bool = True) -> list[str]:  # as it was
    found: list[str] = []
    uuids = ledger._UUID.findall(text) if "-" in text else []
    found += uuids
    if uuids:
        text = ledger._UUID.sub(" ", text)
    for match in ledger._ISSUE_REF.finditer(text) if prose else ():
        found.append(match.group(0))
    for pattern, needed in zip(ledger._ID_PATTERNS, ledger._ID_NEEDS, strict=True):
        for match in pattern.finditer(text) if needed in text else ():
            found.append(match.group(0))
    for match in ledger._SHA.finditer(text):
        sha = match.group(0)
        if not ledger._HUNK.match(sha) and sum(c.isalpha() for c in sha) >= 2:
            found.append(sha)
    return found


def _plain_numbers(text: str) -> list[str]:  # as it was
    text = ledger._PROGRESS_BAR.sub(" ", text)
    found = []
    for match in ledger._NUMBER.finditer(text):
        label = ledger._NUMBER_LABEL.search(text[max(0, match.start() - 40) : match.start()])
        words = label.group(0).strip() if label else ""
        found.append(f"{words} {match.group(0)}".strip() if words else match.group(0))
    return found


_LEDGER_PIECES = [
    "issue #12",
    "PR 7",
    "#",
    "PROJ-123",
    "NO6JO3",
    "6A19384756201",
    "AB12C",
    "ABCD1",
    "PASSED",
    "A1 B2",
    "1A",
    "ABCDE٣",
    "mia_li_3668",
    "a@b.io",
    "4f9e2ab1c0d",
    "deadbeefcafe",
    "123e4567-e89b-12d3-a456-426614174000",
    "DEADBEEF-DEAD-BEEF-DEAD-BEEFDEADBEEF",
    "[ 37%]",
    "13 passed in 2.1 s",
    "$5",
    "p99 latency 412 ms",
    "٣ tests",
    "My name is Ana",
    "I'm Bo",
    "Name: Cy",
    "je m'appelle Dé",
    "```\n$ make test\n```",
    "`pytest -q`",
    "\n$ git status\n",
    "http://x.io/a",
    "src/app.py",
    "./run.sh",
    " ",
    "\n",
    ". ",
    "x",
]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.one_of(st.sampled_from(_LEDGER_PIECES), st.text("aZ0_-@#.:/%$ `\n", max_size=5)), max_size=6))
def test_ids_numbers_and_result_lines_are_found_as_the_patterns_find_them_everywhere(pieces):
    text = "".join(pieces)
    for prose in (True, False):
        assert list(ledger._ids(text, prose)) == _plain_ids(text, prose)
    assert list(ledger._numbers(text)) == _plain_numbers(text)
    for line in text.splitlines():
        plain = not (LISTING_LINE.match(line) or any(c in line for c in ";{}"))
        plain = plain and len(CODE_CHARS.findall(line)) * 12 <= len(line)
        assert is_result_line(line) == plain


def _plain_facts(text: str, role: str) -> list[tuple[str, str, bool]]:
    """``_message_facts`` of a message without tool calls as it was, every pattern tried on every text."""
    found: list[tuple[str, str, bool]] = []

    def add(kind: str, value: str) -> None:
        value = value.strip() if kind == "command" else value.strip().rstrip(".,;:")
        if len(value) >= 2:
            found.append((kind, value, False))

    if role == "tool":
        for line in ledger.error_lines_of(text):
            add("error", line)
        for found_id in _plain_ids(text, prose=False):
            add("id", found_id)
        for line in text.splitlines():
            if ledger._DIGIT.search(line) is not None and is_result_line(line.strip()):
                for number in _plain_numbers(line):
                    add("number", number)
        return found
    if role == "user":
        text = strip_harness(text)
    for block in ledger.FENCE.findall(text):
        lines = [line for line in block.splitlines() if line.strip()]
        if 0 < len(lines) <= 3 and role == "assistant":
            for line in lines:
                if ledger._looks_like_command(line):
                    add("command", line.strip().removeprefix("$ "))
    prose = ledger.FENCE.sub(" ", text)
    for inline in ledger.INLINE_CODE.findall(prose):
        if ledger._looks_like_command(inline):
            add("command", inline)
    for line in prose.splitlines():
        stripped = line.strip()
        if stripped.startswith("$ ") and ledger._looks_like_command(stripped):
            add("command", stripped[2:])
    for match in ledger._NAME.finditer(prose):
        add("name", match.group(1))
    for found_id in _plain_ids(prose):
        add("id", found_id)
    for match in ledger._URL.finditer(prose):
        add("path", match.group(0))
    for match in ledger._PATH.finditer(ledger._URL.sub(" ", prose)):
        if ledger._is_path(match.group(0)):
            add("path", match.group(0))
    for number in _plain_numbers(prose):
        add("number", number)
    return found


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(_LEDGER_PIECES), max_size=6), st.sampled_from(["assistant", "user", "system", "tool"]))
def test_what_a_message_holds_is_what_every_pattern_finds_in_it(pieces, role):
    message = {"role": role, "content": "".join(pieces)}
    text = ledger.output_text(message) if role == "tool" else message["content"]
    assert list(ledger._message_facts(message, role == "tool")) == _plain_facts(text, role)


# --- a case-blind pattern searched on ASCII text lower-cased ---------------------------------

_BLIND = [sections._PROGRESS, sections._DECISION, sections._NEXT, sections._USER_DECISION, writings.CONSTRAINT_CUES]


def test_no_case_blind_pattern_holds_a_character_that_folds_to_an_ascii_one():
    """Fails for a pattern holding, say, the Kelvin sign or a long s, which ignoring case match k and s:
    searched lower-cased without ignoring case, they would not."""
    for blind in _BLIND:
        for char in {c for c in blind.source if not c.isascii()}:
            folds = [chr(a) for a in range(128) if re.fullmatch(re.escape(char), chr(a), re.I)]
            assert not folds, (char, folds)
        assert writings.lowered_source(blind.source).count("\\") == blind.source.count("\\")
    assert writings.lowered_source(r"\S+\\A\b(?:Ne|\W)É") == r"\S+\\a\b(?:ne|\W)É"


def _words(source: str) -> list[str]:
    return sorted({word for word in re.split(r"[^A-Za-zÀ-ÿ'’]+", source) if word} - {"b", "w", "s", "S"})


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_a_case_blind_pattern_is_found_where_ignoring_case_finds_it(data):
    for blind in _BLIND:
        pieces = data.draw(
            st.lists(
                st.one_of(st.sampled_from(_words(blind.source)), st.sampled_from([" ", "  ", "\n", "x", "é", "n'ai"]))
            )
        )
        text = "".join(piece.upper() if data.draw(st.booleans()) else piece for piece in pieces)
        assert blind.search(text) == (re.compile(blind.source, re.I).search(text) is not None), text


# --- a tool call's paths and ids -------------------------------------------------------------


def _plain_paths(arguments: object) -> list[tuple[str, str]]:  # as it was: the patch pattern tried on every value
    found: list[tuple[str, str]] = []
    arguments = ledger._parsed(arguments)
    if isinstance(arguments, dict):
        for key in ledger.PATH_KEYS:
            value = arguments.get(key)
            if isinstance(value, str) and 1 < len(value) <= 300 and "\n" not in value:
                found.append((value.strip(), ""))
        edits = arguments.get("edits")
        if isinstance(edits, list):
            for edit in edits:
                if isinstance(edit, dict):
                    found += _plain_paths(edit)
        texts = [v for v in arguments.values() if isinstance(v, str)]
    else:
        texts = [arguments] if isinstance(arguments, str) else []
    for text in texts:
        for how, path in ledger._PATCH_FILE.findall(text):
            found.append((path.strip(), how.lower()))
    return found


def _plain_argument_ids(arguments: object) -> list[str]:  # as it was: the id pattern tried on every name
    found, stack = [], [ledger._parsed(arguments)]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            for key, value in item.items():
                if isinstance(value, (str, int)) and ledger._ID_KEYS.search(str(key)) and 2 <= len(str(value)) <= 80:
                    found.append(str(value))
                elif isinstance(value, (dict, list)):
                    stack.append(value)
        elif isinstance(item, list):
            stack.extend(item)
    return found


_PATCH_PIECES = ["*** Add File: a.py", "*** Update File: b.py", "***Delete File: c", "** ", "*** ", "\n", "x", " "]
_VALUES = st.lists(st.sampled_from(_PATCH_PIECES), max_size=5).map("".join)
_NAMES = st.sampled_from(["path", "patch", "input", "user_id", "id", "email", "order_number", "code", "ID", "xid"])


@settings(max_examples=300, deadline=None)
@given(
    st.recursive(
        st.one_of(_VALUES, st.integers(0, 99999)),
        lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(_NAMES, inner, max_size=4)),
        max_leaves=8,
    )
)
def test_a_call_s_paths_and_ids_are_what_trying_every_value_and_name_finds(arguments):
    for given_as in (arguments, ledger.json.dumps(arguments)):
        assert list(ledger.paths_of(given_as)) == _plain_paths(given_as)
        assert list(ledger._argument_ids(given_as)) == _plain_argument_ids(given_as)


# --- encoded runs looked for only where sixteen of their characters stand in a row -----------

_SECRET_B64 = "cGFzc3dvcmQ9aHVudGVyMmh1bnRlcjJodW50ZXIy"  # base64 of password=hunter2hunter2hunter2
_ENCODED_PIECES = [
    _SECRET_B64,
    "cHdkPWh1bnRlcjIy",
    _SECRET_B64[:20],
    _SECRET_B64[20:],
    "\n",
    "\\n",
    " ",
    "==",
    "aGVsbG8gd29ybGQ=",
]
_ENCODED_PIECES += ["%70assword%3Dhunter2hunter2", "%", "abcdefghijklmno", "p", "-_+/", "[REDACTED:x]"]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(_ENCODED_PIECES), max_size=7))
def test_encoded_secrets_are_found_as_when_every_text_is_tried(pieces):
    text = "".join(pieces)
    found = redact._redact_encoded(text, 2)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(redact, "_BASE64_16", re.compile(""))  # the plain computation: every text tried
        assert found == redact._redact_encoded(text, 2)


def _redacted_value_as_it_was(value: object) -> object:
    """``extractive._redacted_value`` before a dict's strings were redacted inline, in one pass."""
    from compactctl.summarizers.redact import redacted_text

    if isinstance(value, str):
        out = redacted_text(value)
        return value if out == value else out
    if isinstance(value, dict):
        copied = {key: _redacted_value_as_it_was(item) for key, item in value.items()}
        return value if all(copied[key] is item for key, item in value.items()) else copied
    if isinstance(value, list):
        items = [_redacted_value_as_it_was(item) for item in value]
        return value if all(new is old for new, old in zip(items, value, strict=True)) else items
    return value


_SECRETISH = st.sampled_from(
    ["sk-" + "a1B2" * 8, "password: hunter2hunter2", "ghp_" + "x9" * 18, "ok", "", "path/a.py"]
)
_LEAVES = st.one_of(_SECRETISH, st.text(max_size=12), st.integers(), st.none(), st.booleans())
_VALUES = st.recursive(
    _LEAVES,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner, max_size=4),
    max_leaves=12,
)


@settings(max_examples=300, deadline=None)
@given(_VALUES)
def test_a_value_is_redacted_as_before_and_shared_where_unchanged(value: object) -> None:
    from compactctl.summarizers.extractive import _redacted_value

    new, old = _redacted_value(value), _redacted_value_as_it_was(value)
    assert new == old
    assert (new is value) == (old is value)  # a copy exactly where the old code made one
    if isinstance(value, dict):
        assert all((new[key] is item) == (old[key] is item) for key, item in value.items())  # type: ignore[index]
