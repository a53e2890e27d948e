"""The cheap tests run before a slow pattern say "nothing here" only where the pattern finds nothing."""

from hypothesis import given, settings
from hypothesis import strategies as st

from compactctl.summarizers import ledger, sections, writings
from compactctl.summarizers.lines import lines_with

# Pieces that make and break test-result lines, joined with every separator splitlines() knows.
PIECES = [
    *("3 passed", "1 failed", "FAILED", "FAIL", "OK", "OKAY", "Tests: 4", "Tests:\n4", "failures=2", "errors=1"),
    *("Test Files ", "All tests passed", "Ran 2 tests", "xRan 2 tests", "bOK", "word", " ", "-", "_", "é", "7"),
]
SEPARATORS = ["\n", "\r\n", "\r", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029", ""]


def by_lines(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if sections._TEST_RESULT.search(line)]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(PIECES), st.sampled_from(SEPARATORS)), max_size=8))
def test_test_lines_are_those_found_line_by_line(parts):
    text = "".join(piece + separator for piece, separator in parts)
    assert sections._test_lines(text) == by_lines(text)


@settings(max_examples=400, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from([*PIECES, "passed passed", "OK OK\nOK"]), st.sampled_from(SEPARATORS)), max_size=8
    )
)
def test_the_lines_holding_a_word_are_those_found_line_by_line(parts):
    text = "".join(piece + separator for piece, separator in parts)
    for words in (sections._TEST_RESULT_WORDS, ("OK", "K"), ("passed", "ssed p"), ("\u00e9",)):
        assert lines_with(text, words) == [line for line in text.splitlines() if any(w in line for w in words)]


def test_a_test_line_after_any_line_separator_is_found():
    for separator in SEPARATORS[:-1]:
        for line in ("FAIL tests/x.py", "OK", "Ran 3 tests in 0.1s"):
            assert sections._test_lines(f"build{separator}{line}") == [line], repr(separator)


@given(st.text(alphabet=st.sampled_from("ab cd。好的はい네é漢字"), max_size=12))
def test_a_sentence_is_long_enough_as_before(sentence):
    before = len(sentence.split()) >= 3 or len(writings._CJK.findall(sentence)) >= 4
    assert writings._long_enough(sentence) == before


ERROR_PIECES = [
    *("Traceback (most recent call last)", "ValueError: x", "mod.KeyError", "Exception", "AssertionFailure:"),
    *("E   assert 1", "E\t\tx", "FAILED", "FAIL x", "ERROR", "Error here", "error[E0425]: y", "error: z", "fatal: no"),
    *(
        "panic: at",
        "npm ERR! code",
        "✗ bad",
        "× bad",
        "✕ bad",
        "cat: x: Permission denied",
        "No such file or directory",
    ),
    *("sh: foo: command not found", "Segmentation fault", "3 failed", "2 errors", "build failed:", "access denied:"),
    *("connection refused:", "raise Error", "def error(x):", "fine", "word", "E", " ", "  ", ":", "é"),
]


def errors_by_lines(text: str) -> list[str]:
    lines = (line.strip() for line in text.splitlines())
    return [s for s in lines if 4 <= len(s) <= 300 and ledger._ERROR_LINE.match(s) and not ledger._SOURCE_LINE.match(s)]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(ERROR_PIECES), st.sampled_from(SEPARATORS)), max_size=6))
def test_error_lines_are_those_found_line_by_line(parts):
    text = "".join(piece + separator for piece, separator in parts)
    assert list(ledger.error_lines(text)) == errors_by_lines(text)


def test_every_kind_of_error_line_is_still_found():
    for piece in ERROR_PIECES[:-7]:  # the last seven are no error
        found = list(ledger.error_lines(f"ok\n{piece}\n"))
        assert found == errors_by_lines(f"ok\n{piece}\n"), piece
        assert found or ledger._SOURCE_LINE.match(piece), piece


def test_a_url_secret_beside_urls_without_one_is_still_redacted():
    from compactctl.summarizers.redact import redact

    plain = "see https://cdn.jsdelivr.net/npm/icons@1.11 and http://example.com:8080/x "
    for secret, kind in (("https://admin:hunter2hunter2@db.example.com/x", "url-password"),
                         ("https://ghx9Zk2LmQ7rT4vB1nW8@host.example.com", "url-token")):  # fmt: skip
        text, count = redact(plain + secret)
        assert count == 1 and f"[REDACTED:{kind}]" in text and "example.com" in text, text
    assert redact(plain) == (plain, 0)


# Pieces of ids and near-misses: UUIDs and their halves, shas and hunk markers, tickets, emails, and
# characters re.I folds onto letters (the Kelvin sign, the long s, a dotted capital I).
ID_PIECES = [
    *("123e4567-e89b-12d3-a456-426614174000", "123E4567-E89B-12D3-A456-426614174000", "-e89b-12d3-", "e89b-12d3"),
    *("abc1234", "deadbeefcafe", "178d167", "a1b2c3d", "0123456", "abcdefa", "PROJ-123", "J-1", "-1", "A1-23"),
    *("V2", "AB12CD"),
    *("NO6JO3", "6A19384756201", "mia_li_3668", "x@y.io", "a.b+c@d-e.org", "@scope/pkg", "@ x", "#12", "issue 7"),
    *("\u212a", "\u017f", "\u0130", "é", "-", "_", " ", "\n", "/", "#", ".", ":", "a", "F", "9"),
]


def ids_without_gates(text: str, prose: bool = True) -> list[str]:
    """``ledger._ids`` as it was before its gates: every pattern tried on every text that may hold it."""
    found = ledger._UUID.findall(text) if "-" in text else []
    if found:
        text = ledger._UUID.sub(" ", text)
    found += [m.group(0) for m in ledger._ISSUE_REF.finditer(text)] if prose else []
    for pattern, needed in zip(ledger._ID_PATTERNS, ledger._ID_NEEDS, strict=True):
        found += [m.group(0) for m in pattern.finditer(text)] if needed in text else []
    shas = (m.group(0) for m in ledger._SHA.finditer(text))
    return found + [s for s in shas if not ledger._HUNK.match(s) and sum(c.isalpha() for c in s) >= 2]


@settings(max_examples=600, deadline=None)
@given(st.lists(st.sampled_from(ID_PIECES), max_size=10), st.booleans())
def test_the_id_gates_leave_the_ids_found_as_they_were(pieces, prose):
    text = "".join(pieces)
    assert list(ledger._ids(text, prose)) == ids_without_gates(text, prose)


@settings(max_examples=600, deadline=None)
@given(st.lists(st.sampled_from(ID_PIECES), max_size=10))
def test_each_id_gate_matches_wherever_its_pattern_does(pieces):
    text = "".join(pieces)
    gated = [(ledger._UUID, ledger._UUID_GATE), (ledger._SHA, ledger._SHA_GATE)]
    gated += [(p, g) for p, g in zip(ledger._ID_PATTERNS, ledger._ID_GATES, strict=True) if g is not None]
    for pattern, gate in gated:
        if pattern.search(text):
            assert gate.search(text), (pattern.pattern, text)


@settings(max_examples=600, deadline=None)
@given(st.lists(st.one_of(st.sampled_from(ID_PIECES), st.text("aF9Z0_-@.:/#\n\r ", max_size=4)), max_size=10))
def test_an_id_pattern_finds_on_the_lines_holding_its_gate_what_it_finds_in_the_whole_text(pieces):
    text = "".join(pieces)
    gated = [*zip(ledger._ID_PATTERNS, ledger._ID_GATES, strict=True), (ledger._SHA, ledger._SHA_GATE)]
    for pattern, gate in gated:
        lines = list(ledger._lines_holding(gate, text))
        found = [m.group(0) for start, end in lines for m in pattern.finditer(text, start, end)]
        assert found == [m.group(0) for m in pattern.finditer(text)], (pattern.pattern, text)
        assert all(text[start:end].count("\n") == 0 for start, end in lines)


# Pieces of numbers with units and of what is not one: progress bars (which are blanked before the numbers
# are read), digits inside words, versions and paths, currency signs, other scripts' digits and separators.
NUMBER_PIECES = [
    *("13 passed", "in 2.1 s", "412 ms", "$12.50", "€ 3", "£4", "[ 37%]", "[100%]", "5[ 37%]ms", "]7 s", "x"),
    *("test_42", "mod3.py", "v1.2", "/9 files", "#12 rows", "-3 kB", ".5 s", "٣ tests", "p99 latency 412 ms", "ms"),
    *(" ", "_", ".", "/", "#", "-", ":", "=", ";", "{", "é", "7", "passed", "tests/test_5.py::test_3 PASSED"),
]


def numbers_of_lines_without_gates(text: str) -> list[str]:
    """The result lines' numbers of a tool output, as ``_message_facts`` read them before the gate."""
    found = []
    for line in text.splitlines() if ledger._DIGIT.search(text) is not None else ():
        if ledger._DIGIT.search(line) is not None and writings.is_result_line(line.strip()):
            found += ledger._numbers(line)
    return found


@settings(max_examples=800, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(NUMBER_PIECES), st.sampled_from([*SEPARATORS, "", "", ""])), max_size=8))
def test_the_number_gate_leaves_the_numbers_of_tool_output_as_they_were(parts):
    text = "".join(piece + separator for piece, separator in parts)
    message = {"role": "tool", "tool_call_id": "c", "content": text}
    numbers = [fact for kind, fact, _ in ledger._message_facts(message, True) if kind == "number"]
    assert numbers == [n.strip().rstrip(".,;:") for n in numbers_of_lines_without_gates(text) if len(n.strip()) >= 2]
    if list(ledger._numbers(text)):
        assert ledger._NUMBER_GATE.search(text), text


# Pieces of a numbered file view's lines and of lines like them that are not one (whitespace str.strip takes
# off, other scripts' digits), for the lines the engine passes over.
LISTING_PIECES = [
    *NUMBER_PIECES,
    "  12→x",
    "12:",
    "12|",
    "3\t",
    "\tx",
    "4  ",
    "  x",
    "٣:",
    "\xa0",
    "\x1f",
    "\u3000",
    "}",
]


@settings(max_examples=800, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(LISTING_PIECES), st.sampled_from([*SEPARATORS, "", "", ""])), max_size=8))
def test_the_result_lines_are_those_found_line_by_line(parts):
    text = "".join(piece + separator for piece, separator in parts)
    lines = [
        line for line in text.splitlines() if ledger._NUMBER_GATE.search(line) and writings.is_result_line(line.strip())
    ]
    assert ledger._result_lines(text) == lines


def test_a_file_view_has_no_result_line_but_the_lines_like_one():
    view = "     1→13 passed\n    2:4 s\n3\t5 s\n4  6 s\n"
    assert ledger._result_lines(view) == []
    assert ledger._result_lines("4  \n5\t\n1 passed\n") == ["4  ", "5\t", "1 passed"]


PATH_PIECES = [
    *("src/pkg/mod3.py", "./run.sh", "../a", "~/x/y", "notes.md", "a.pyi", "a.py", "a.pyx", "x.tar.gz", "setup.cfg"),
    *("n/a", "1/2", "https://example.com/a/b.py", "a@b/c", "file", ".py", "py", "/", ".", "-", "@", " ", "\n", "é"),
]


@settings(max_examples=800, deadline=None)
@given(st.lists(st.sampled_from(PATH_PIECES), max_size=10))
def test_a_text_the_path_gate_passes_over_holds_no_path(pieces):
    text = "".join(pieces)
    if ledger._PATH.search(text):
        assert "/" in text or ledger._PATH_EXTENSION.search(text), text
