"""Patterns compiled at their first use: the same answers as ``re``, and nothing compiled before."""

import copy
import pickle
import re

from hypothesis import given
from hypothesis import strategies as st

from compactctl import lazyre

WORDS = r"\b([a-z]+)-(\d+)\b"


def test_nothing_is_compiled_until_the_pattern_is_used():
    pattern = lazyre.compile(WORDS + "-not-in-re-cache-yet", re.I)
    assert "search" not in vars(pattern)
    assert pattern.search("x ABC-12-not-in-re-cache-yet") is not None
    # The compiled pattern's own method now (a pattern equal to re's: made from the cache, it is not re's object).
    assert vars(pattern)["search"].__self__ == re.compile(WORDS + "-not-in-re-cache-yet", re.I)
    assert type(vars(pattern)["search"]) is type(re.compile("x").search)


def test_attributes_of_the_pattern_compile_it_too():
    pattern = lazyre.compile(WORDS, re.M)
    assert pattern.groups == 2 and pattern.pattern == WORDS and pattern.flags & re.M
    assert pattern.groupindex == {}


@given(st.text(alphabet="ab-12 \nX", max_size=60))
def test_every_method_answers_as_re_does(text):
    lazy, eager = lazyre.compile(WORDS), re.compile(WORDS)
    assert [m.span() for m in lazy.finditer(text)] == [m.span() for m in eager.finditer(text)]
    assert lazy.findall(text) == eager.findall(text)
    assert lazy.subn(r"<\2>", text) == eager.subn(r"<\2>", text)
    assert lazy.sub("", text) == eager.sub("", text)
    assert lazy.split(text) == eager.split(text)
    assert bool(lazy.match(text)) == bool(eager.match(text))
    assert bool(lazy.fullmatch(text)) == bool(eager.fullmatch(text))


def test_bytes_patterns_work():
    assert lazyre.compile(rb"\d{3}").findall(b"a 1234 56") == [b"123"]


def test_it_pickles_copies_and_compares_as_what_it_was_made_from():
    pattern = lazyre.compile(WORDS, re.I)
    back = pickle.loads(pickle.dumps(pattern))
    assert back == pattern and hash(back) == hash(pattern)
    assert back.findall("ab-1") == [("ab", "1")]
    assert copy.deepcopy(pattern) is pattern and copy.copy(pattern) is pattern
    assert lazyre.compile(WORDS) != pattern
