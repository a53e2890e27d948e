import functools
import itertools
import os

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from compactctl.errors import InputError
from compactctl.tokens import (
    TOKENS_PER_MESSAGE,
    TOKENS_PER_NAME,
    TOKENS_PER_TOOL_CALL,
    TokenCounter,
)
from tests.conftest import needs_transcripts
from tests.helpers import call
from tests.needs import needs
from tests.properties import examples


@pytest.fixture(scope="module")
def counter():
    return TokenCounter()


def test_cl100k_works_offline_and_counts_like_tiktoken(counter):
    assert counter("hello world") == 2
    assert counter("") == 0
    # Special-token text is ordinary text in a transcript: counted, never an error.
    assert counter("<|endoftext|>") > 1


def test_message_counts_content_tool_calls_and_overhead(counter):
    # In cl100k "user", "assistant", "bob" and each of "hello", " world" are one token each.
    text = {"role": "user", "content": "hello world"}
    assert counter.message(text) == TOKENS_PER_MESSAGE + 1 + 2
    named = {**text, "name": "bob"}
    assert counter.message(named) == counter.message(text) + TOKENS_PER_NAME + 1
    parts = {"role": "user", "content": [{"type": "text", "text": "hello"}, {"type": "text", "text": " world"}]}
    assert counter.message(parts) == TOKENS_PER_MESSAGE + 1 + 1 + 1
    calling = {"role": "assistant", "content": None, "tool_calls": [call("a", "read_file", '{"path": "a.py"}')]}
    expected = TOKENS_PER_MESSAGE + 1 + TOKENS_PER_TOOL_CALL + counter("read_file") + counter('{"path": "a.py"}')
    assert counter.message(calling) == expected


def test_role_and_name_texts_are_counted_as_the_cookbook_does():
    approx = TokenCounter("approx")  # chars/4 rounded up
    assert approx.message({"role": "assistant", "content": "abcd"}) == 3 + 3 + 1
    assert approx.message({"role": "developer", "content": "abcd", "name": "example_user"}) == 3 + 3 + 1 + 1 + 3


def test_the_cookbook_example_costs_what_the_cookbook_says(counter):
    # openai-cookbook "How to count tokens with tiktoken": these messages are 129 prompt tokens
    # for the cl100k models, of which 3 prime the reply (a call's cost, not a message's).
    example = [
        ("system", None, "You are a helpful, pattern-following assistant that translates corporate jargon "
                         "into plain English."),
        ("system", "example_user", "New synergies will help drive top-line growth."),
        ("system", "example_assistant", "Things working well together will increase revenue."),
        ("system", "example_user", "Let's circle back when we have more bandwidth to touch base on "
                                   "opportunities for increased leverage."),
        ("system", "example_assistant", "Let's talk later when we're less busy about how to do better."),
        ("user", None, "This late pivot means we don't have time to boil the ocean for the client deliverable."),
    ]  # fmt: skip
    messages = [{"role": role, **({"name": name} if name else {}), "content": text} for role, name, text in example]
    assert counter.messages(messages) == 129 - 3


def test_images_are_counted_by_detail(counter):
    low = {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA", "detail": "low"}}
    high = {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}
    assert counter.part(low) < counter.part(high)


@pytest.mark.parametrize(
    "text", ["a short tool output", "a long tool output line\n" * 20, "a longer tool output line\n" * 200]
)
def test_identical_texts_are_encoded_once(text):
    counter = TokenCounter("approx")
    calls = []
    real = counter._encode_len
    counter._encode_len = lambda t: calls.append(t) or real(t)
    for _ in range(3):
        assert counter(text) == real(text)
    counter(text + "!")
    assert calls == [text, text + "!"]


def test_the_memo_starts_afresh_past_its_characters_and_counts_as_before(monkeypatch):
    import compactctl.tokens as tokens

    monkeypatch.setattr(tokens, "MEMO_MAX_CHARS", 1000)
    counter, fresh = TokenCounter(), TokenCounter()
    texts = [f"line {n} of a tool output, " * 12 for n in range(40)]  # 300-odd characters each: kept as keys
    assert [counter(text) for text in texts * 2] == [fresh(text) for text in texts] * 2
    assert counter._memo_chars < 1000 + len(texts[0]) and len(counter._memo) < len(texts)
    long = "x " * 5000  # over MEMO_DIGEST_ABOVE: kept by its digest, its characters not counted
    assert counter(long) == fresh(long) and long not in counter._memo


def test_a_long_text_is_hashed_once_per_object_and_an_equal_one_counts_the_same(monkeypatch):
    import compactctl.tokens as tokens

    hashed = []
    real = tokens.blake2b
    monkeypatch.setattr(tokens, "blake2b", lambda data, **kw: hashed.append(len(data)) or real(data, **kw))
    monkeypatch.setattr(tokens, "DIGESTS_HELD", 2)
    counter = TokenCounter("approx")
    long = "a long tool output line\n" * 400
    copy = "".join(["a long tool output line\n" * 200, "a long tool output line\n" * 200])
    assert copy == long and copy is not long
    assert [counter(long) for _ in range(3)] == [counter(copy)] * 3
    assert len(hashed) == 2  # once for each object, not at each count
    others = ["other text, " * 400 + str(n) for n in range(3)]  # past DIGESTS_HELD: held afresh
    assert [counter(t) for t in others] == [TokenCounter("approx")(t) for t in others]
    assert len(counter._digests) <= 2 and counter(long) == counter(copy)


def test_approx_is_chars_over_four():
    counter = TokenCounter("approx")
    assert counter("abcdefgh") == 2
    assert counter("abcdefghi") == 3


def test_an_encoding_that_cannot_load_is_a_clear_error():
    with pytest.raises(InputError) as error:
        TokenCounter("no_such_encoding")
    assert "cannot load tiktoken encoding 'no_such_encoding'" in str(error.value)
    assert "approx" in str(error.value)


def test_an_encoding_whose_table_cannot_be_fetched_says_so(monkeypatch):
    import tiktoken

    def offline(name):
        raise OSError("Name or service not known")

    monkeypatch.setattr(tiktoken, "get_encoding", offline)
    with pytest.raises(InputError, match=r"'p50k_base' .*could not be fetched or read: OSError; offline"):
        TokenCounter("p50k_base")


def test_o200k_loads_offline_from_a_table_whose_hash_is_tiktokens_own(monkeypatch):
    import ast
    import inspect

    import tiktoken
    from tiktoken_ext import openai_public

    from compactctl.encodings import O200K_PATTERN, O200K_SHA256

    source = inspect.getsource(openai_public.o200k_base)
    assert O200K_SHA256 in source  # the hash tiktoken pins for the official table
    (pieces,) = [node for node in ast.walk(ast.parse(source)) if isinstance(node, ast.List)]
    assert "|".join(ast.literal_eval(piece) for piece in pieces.elts) == O200K_PATTERN

    def offline(name):
        raise OSError("Name or service not known")

    monkeypatch.setattr(tiktoken, "get_encoding", offline)
    counter = TokenCounter("o200k_base")
    assert counter("hello world") == 2


def test_models_are_counted_in_their_own_encoding():
    from compactctl.tokens import encoding_for_model

    assert encoding_for_model("gpt-5.1-codex") == "o200k_base"
    assert encoding_for_model("gpt-4o-mini") == "o200k_base"
    assert encoding_for_model("gpt-4-turbo") == "cl100k_base"


def test_images_are_priced_by_each_providers_rule():
    from compactctl.tokens import image_tokens_for_size

    assert image_tokens_for_size(1024, 1024, "openai") == 765  # 4 tiles of 512 + 85
    assert image_tokens_for_size(512, 512, "openai", "low") == 85
    assert image_tokens_for_size(1000, 1000, "anthropic") == 1333  # w*h/750
    assert image_tokens_for_size(4000, 3000, "anthropic") == pytest.approx(1_150_000 / 750, rel=0.02)


needs_ctok = pytest.mark.needs("ctok")


@pytest.mark.slow  # loads both of ctok's tokenizers
@needs_ctok
def test_claude_tokenizer_families_count_through_ctok_without_its_frame():
    v3, v47 = TokenCounter("claude-v3"), TokenCounter("claude-v4.7")
    assert v3("hello, world") == 3  # ctok: content 3 + frame 7
    assert v47("hello, world") > v3("hello, world")  # the 4.7 family splits it finer
    assert v3.message({"role": "user", "content": "hello, world"}) == 3 + 1 + 3


def test_claude_encodings_without_ctok_say_how_to_install_it(monkeypatch):
    import builtins

    real_import = builtins.__import__

    def no_ctok(name, *args, **kwargs):
        if name == "ctok":
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_ctok)
    with pytest.raises(InputError, match=r"needs ctok: pip install 'compactctl\[claude\]'"):
        TokenCounter("claude-v3")


def test_the_cl100k_hash_is_the_one_tiktoken_pins():
    import inspect

    from tiktoken_ext import openai_public

    from compactctl.encodings import CL100K_SHA256

    assert CL100K_SHA256 in inspect.getsource(openai_public.cl100k_base)


@pytest.mark.slow  # parses each table from scratch
@pytest.mark.parametrize("encoding", ["cl100k_base", "o200k_base"])
def test_a_parsed_table_is_cached_once_and_read_back_the_same(tmp_path, monkeypatch, encoding):
    from compactctl.encodings import encoding_arguments, table_cache_path

    monkeypatch.setenv("COMPACTCTL_TOKENIZER_CACHE", str(tmp_path))
    parsed = encoding_arguments(encoding, cached=False)
    assert not table_cache_path(encoding).exists()  # uncached: nothing written
    built = encoding_arguments(encoding)
    path = table_cache_path(encoding)
    assert path.is_file() and encoding[:6] in path.name
    stamp = path.stat().st_mtime_ns
    again = encoding_arguments(encoding)
    assert path.stat().st_mtime_ns == stamp  # read, not rebuilt
    assert again == built == parsed


@pytest.mark.slow  # parses the table from scratch
def test_a_damaged_or_foreign_cache_file_is_rebuilt_not_trusted(tmp_path, monkeypatch):
    from compactctl.encodings import encoding_arguments, table_cache_path

    monkeypatch.setenv("COMPACTCTL_TOKENIZER_CACHE", str(tmp_path))
    good = encoding_arguments("cl100k_base")
    path = table_cache_path("cl100k_base")
    whole = path.read_bytes()
    damaged = bytearray(whole)
    damaged[-1000] ^= 0xFF  # one byte of the payload changed
    for broken in (bytes(damaged), whole[: len(whole) // 2], whole.replace(whole[23:87], b"0" * 64, 1), b""):
        path.write_bytes(broken)
        assert encoding_arguments("cl100k_base") == good
        assert path.read_bytes() == whole  # written anew


def test_an_unwritable_cache_folder_only_costs_the_parse(tmp_path, monkeypatch):
    from compactctl.encodings import encoding_arguments

    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("COMPACTCTL_TOKENIZER_CACHE", str(blocker / "tokenizers"))
    assert len(encoding_arguments("cl100k_base")["mergeable_ranks"]) == 100256


def test_a_counter_loads_its_table_at_the_first_count_not_before(tmp_path):
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from compactctl.tokens import TokenCounter\n"
        "counter = TokenCounter()\n"
        "loaded = lambda: any(name in sys.modules for name in ('tiktoken', 'bpe_openai._bindings'))\n"
        "print(loaded())\n"
        "print(counter('hello world'), loaded())\n"
    )
    env = {**os.environ, "COMPACTCTL_TOKENIZER_CACHE": str(tmp_path)}
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env)
    assert result.stdout.split() == ["False", "2", "True"]


# --- bpe-openai (the fast extra): tiktoken's counts, sooner --------------------------------------------


def tiktokens(encoding):
    import tiktoken

    from compactctl.encodings import encoding_arguments

    return tiktoken.Encoding(**encoding_arguments(encoding))


@pytest.fixture(scope="module")
def both_counters():
    """Per encoding: bpe-openai's count (needs the fast extra) and tiktoken's."""
    needs("fast")
    from compactctl.encodings import FAST_ENCODINGS, fast_counter

    return {name: (fast_counter(name), tiktokens(name).encode_ordinary) for name in FAST_ENCODINGS}


def texts_of(value, found):
    if isinstance(value, str):
        found.add(value)
    elif isinstance(value, dict):
        for item in value.values():
            texts_of(item, found)
    elif isinstance(value, list):
        for item in value:
            texts_of(item, found)
    return found


@pytest.mark.slow  # every text of every real transcript, counted twice
@needs_transcripts
def test_fast_counts_are_tiktokens_on_every_text_of_the_real_transcripts(both_counters):
    import orjson

    found: set[str] = set()
    for path in sorted(needs("transcripts").rglob("*.json*")):
        data = path.read_bytes()
        found.add(data.decode("utf-8", "replace")[:100_000])  # a whole file as one text too
        for line in data.splitlines():
            try:
                texts_of(orjson.loads(line), found)
            except orjson.JSONDecodeError:
                continue
    assert len(found) > 5000
    for name, (fast, tiktoken_encode) in both_counters.items():
        differing = [text[:60] for text in found if fast(text) != len(tiktoken_encode(text))]
        assert differing == [], name


TEXT = st.text(
    alphabet=st.one_of(
        st.characters(codec="utf-8"),
        st.sampled_from(
            list(" \n\t\r's'd'll0123456789.,!?-_()[]<>|\\\"`@#$%&*+=/:;ßéñİı😀👍🏽日本語한국어العربية\u200b\u00a0")
        ),
    ),
    max_size=120,
)


@given(TEXT)
def test_fast_counts_are_tiktokens_on_any_text(both_counters, text):
    for fast, tiktoken_encode in both_counters.values():
        assert fast(text) == len(tiktoken_encode(text))


def test_fast_counts_special_token_text_and_lone_surrogates_as_tiktoken_does(both_counters):
    for fast, tiktoken_encode in both_counters.values():
        for text in ("<|endoftext|>", "<|fim_prefix|>x<|im_start|>", "a\ud800b", "\udfff" * 3):
            assert fast(text) == len(tiktoken_encode(text))


def test_the_tokenizer_can_be_told_to_be_tiktoken():
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from compactctl.tokens import TokenCounter\n"
        "print(TokenCounter()('hello world'), 'tiktoken' in sys.modules, 'bpe_openai._bindings' in sys.modules)\n"
    )
    env = {**os.environ, "COMPACTCTL_TOKENIZER": "tiktoken"}
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env)
    assert result.stdout.split() == ["2", "True", "False"]


# --- a long text is counted in pieces ------------------------------------------------------------

PIECE_TEXT = st.lists(
    st.sampled_from([*"abcXYZ019", " ", "  ", "\n", "\t", ".", "'s", "é", "日本", "(", "\r\n", "/", "word", " the"]),
    max_size=150,
).map("".join)


_bundled = functools.cache(tiktokens)  # tiktoken's own encoder over the bundled table: a text counted whole


def _safe(text: str, at: int) -> bool:
    """A cut tiktoken's split makes too: before a space that follows a non-space."""
    return text[at] == " " and not text[at - 1].isspace()


@settings(max_examples=examples(300), deadline=None)
@given(text=PIECE_TEXT, encoding=st.sampled_from(["cl100k_base", "o200k_base"]))
@example(text="aaaaaaaa's\t\r\n\r\naa", encoding="cl100k_base")  # a cut inside the line breaks: 3 off
def test_a_text_counted_in_pieces_counts_as_the_whole_text_where_it_is_cut_at_spaces(text, encoding):
    from compactctl import encodings

    encode = _bundled(encoding).encode_ordinary
    pieces: list[str] = []

    def count(piece: str) -> int:
        pieces.append(piece)
        return len(encode(piece))

    with pytest.MonkeyPatch.context() as patch:  # small pieces: many cuts in every example
        patch.setattr(encodings, "PIECES_ABOVE", 16)
        patch.setattr(encodings, "PIECE", 12)
        counted = encodings.counted_in_pieces(count, text)
    assert "".join(pieces) == text  # nothing lost or doubled
    cuts = list(itertools.accumulate(len(piece) for piece in pieces))[:-1]
    forced = sum(1 for at in cuts if not _safe(text, at))  # a run of 12 with no such space: cut inside
    whole = len(encode(text))
    assert abs(counted - whole) <= 2 * forced  # a cut inside a run: a token or two more or less
    if not forced:  # cut only before a space that follows a non-space: the whole text's count
        assert counted == whole


def test_a_long_line_with_no_space_is_counted_in_pieces_within_a_token_a_cut():
    import random
    import string

    from compactctl import encodings

    text = "".join(random.Random(3).choices(string.ascii_lowercase, k=100_000))  # one piece of the split
    tiktoken_encode = _bundled("cl100k_base").encode_ordinary
    counted = encodings.counted_in_pieces(lambda piece: len(tiktoken_encode(piece)), text)
    whole = len(_bundled("cl100k_base").encode_ordinary(text))
    cuts = len(text) // encodings.PIECE
    assert cuts >= 10 and abs(counted - whole) <= 2 * cuts
    with pytest.MonkeyPatch.context() as patch:  # tiktoken's counter (no fast extra) counts so itself
        patch.setenv("COMPACTCTL_TOKENIZER", "tiktoken")
        assert encodings._load_encoder("cl100k_base")(text) == counted


def test_a_text_under_the_bound_is_counted_whole():
    from compactctl import encodings

    seen: list[str] = []
    text = "word " * (encodings.PIECES_ABOVE // 5)
    assert encodings.counted_in_pieces(lambda piece: seen.append(piece) or 1, text) == 1 and seen == [text]


def test_a_counter_sent_to_another_process_counts_as_it_did():
    import pickle

    counter = TokenCounter("cl100k_base")
    counter("load the table first")  # bpe-openai's compiled tokenizer, when installed, cannot be pickled
    copy = pickle.loads(pickle.dumps(counter))
    assert (copy.encoding, copy.provider) == ("cl100k_base", "openai")
    assert copy("the same text, the same count") == counter("the same text, the same count")


# Lines of what the two encodings' splits treat apart: white space of each kind, a "/" that o200k's
# punctuation piece takes after a line feed, punctuation, letters and digits, a lone surrogate.
_LINE_PIECES = [" ", "\t", "\r", "/", "//", ";", "}", "a", "Z", "1", "12345", "é", "→", "\x0b", "\xa0", "'s", "\x1c"]
_LINE_PIECES += ["\u2028", "\ud800", "🙂", "the", "!"]
_LINES = st.lists(st.lists(st.sampled_from(_LINE_PIECES), max_size=6).map("".join), min_size=3, max_size=12)


@functools.cache
def _loaded(encoding):
    counter = TokenCounter(encoding)
    counter.load()  # once: a table loaded inside an example would pass Hypothesis's deadline
    counter.encoder = counter._encode_len  # counts without the memo
    return counter


@pytest.mark.parametrize("encoding", ["cl100k_base", "o200k_base"])
@settings(max_examples=examples(400), deadline=None)  # the first example loads the table (tiktoken's: 0.6 s)
@given(lines=_LINES, cut=st.tuples(st.integers(0, 11), st.integers(0, 11)))
@example(lines=["x;", "//y", "z"], cut=(1, 2))  # o200k's ";\n//" is one piece: not cut before the "/"
@example(lines=["x", "", "  z", "w"], cut=(1, 3))  # a line of white space runs on into the next
@example(lines=["h", "  1→ code;", "  2→ more code;", "  3→ }", "t"], cut=(1, 3))  # a file view: read off the whole's
def test_a_piece_of_lines_counts_what_it_counts_alone(encoding, lines, cut):
    counter = _loaded(encoding)
    first, last = sorted(min(n, len(lines) - 1) for n in cut)
    text = "\n".join(lines)
    start = sum(len(line) + 1 for line in lines[:first])
    end = len(text) - sum(len(line) + 1 for line in lines[last + 1 :])
    assert text[start:end] == "\n".join(lines[first : last + 1])
    assert counter.piece(text, counter(text), start, end) == _loaded(encoding).encoder(text[start:end])


def test_a_piece_whose_lines_start_where_the_split_cuts_is_not_counted_again():
    counter = TokenCounter()
    counter.load()  # the table: else the first count puts the loaded encoder in place of the recorder
    counted: list[str] = []
    real = counter._encode_len
    counter._encode_len = lambda text: counted.append(text) or real(text)
    lines = ["$ npm test", *(f"  {n:4}→ const value{n} = compute({n});" for n in range(200)), "done"]
    text = "\n".join(lines)
    middle = "\n".join(lines[1:-1])
    start = len(lines[0]) + 1
    tokens = counter(text)
    assert counter.piece(text, tokens, start, start + len(middle)) == TokenCounter()(middle)
    assert max(map(len, counted[1:])) < 100  # the head, the last line and what follows it: never the middle
