"""Token counting: one narrow callable, injected wherever tokens are counted.

The tables and the text counters are loaded by ``encodings.py``.

A message costs what the OpenAI cookbook's ``num_tokens_from_messages`` charges
for it: the chat format's per-message overhead, the text of its role and of its
name (both are sent as text), its content, and its tool call names and
arguments, so a count is close to what the API bills. The cookbook's +3 per
request (the reply is primed with ``<|start|>assistant<|message|>``) belongs to
a call, not to a message: a message count stays additive, and whoever prices a
call adds it (``REPLY_PRIMING_TOKENS``, used by replay and by report's API comparison).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from compactctl import lazyre
from compactctl.digests import blake2b
from compactctl.encodings import APPROX as APPROX
from compactctl.encodings import DEFAULT_ENCODING as DEFAULT_ENCODING
from compactctl.encodings import FAST_ENCODINGS, PIECES_ABOVE, TABLE_SHA256, encoder_for
from compactctl.encodings import claude_tokens_available as claude_tokens_available
from compactctl.transcript import THINKING_PARTS, Message, part_text, thinking_text, tool_calls_of

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
# The memo must not grow with the file (a report streams files larger than memory):
# long texts are remembered by a digest, and the memo starts afresh past this many entries
# or this many characters of the texts it keeps as they are. A text up to a few thousand
# characters is its own key: looking it up costs a hash the string keeps, where a digest
# costs hashing every character again at every count (a replay counts each tool output at
# every compaction that trims, and every summary item at every offer).
MEMO_MAX_ENTRIES = 100_000
MEMO_MAX_CHARS = 16_000_000  # about 64 MB of kept texts at most
MEMO_DIGEST_ABOVE = 4096  # characters
# The long texts whose digests are held by the text (``TokenCounter._digests``): a few, and a few MB.
DIGESTS_HELD = 256
DIGEST_CHARS_HELD = 4_000_000
# A line that starts with spaces or tabs, then a printable ASCII character but "/": cl100k's and o200k's
# split never puts it and the line feed before it in one piece (a piece holding a line feed ends on its
# last one, where the line feeds and white space after it run out; o200k's punctuation piece takes a
# "/" after them too). So the text before the line and the text from it on are counted apart, no
# differently than in the whole (``TokenCounter.piece``; tests/test_tokens.py checks it against counting).
_CUT_LINE_START = lazyre.compile(r"[ \t]*[!-.0-~]")


class TokenCounter:
    """Counts tokens of texts and messages; identical texts are counted once per counter."""

    def __init__(self, encoding: str = DEFAULT_ENCODING, provider: str = "openai") -> None:
        self.encoding = encoding
        self.provider = provider  # whose rule prices images: "openai" (tiles) or "anthropic" (pixels)
        # A bundled table is loaded at the first count, so a command that counts nothing never loads
        # it; any other encoding is loaded now, so an unknown or unreachable one fails at once.
        self._encode_len = self._load_then_encode if encoding in TABLE_SHA256 else encoder_for(encoding)
        self._memo: dict[str | bytes, int] = {}
        self._memo_chars = 0  # characters of the texts the memo keeps as keys
        # A long text's digest by the text object itself (kept alive beside it, so its id is its own):
        # a file's long texts are counted again and again (before, trimmed, after, as the client resumes
        # them), each time encoded and hashed whole for the memo's key (bastion's session: 292 K characters
        # hashed for 122 K of texts).
        self._digests: dict[int, tuple[str, bytes]] = {}
        self._digest_chars = 0

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
            held = self._digests.get(id(text))
            if held is not None and held[0] is text:
                key = held[1]
            else:
                key = blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()
                if len(self._digests) >= DIGESTS_HELD or self._digest_chars + len(text) > DIGEST_CHARS_HELD:
                    self._digests.clear()
                    self._digest_chars = 0
                self._digests[id(text)] = (text, key)
                self._digest_chars += len(text)
        count = self._memo.get(key)
        if count is None:
            if len(self._memo) >= MEMO_MAX_ENTRIES or self._memo_chars >= MEMO_MAX_CHARS:
                self._memo.clear()
                self._memo_chars = 0
            count = self._memo[key] = self._encode_len(text) if text else 0
            if key is text:
                self._memo_chars += len(text)
        return count

    def piece(self, text: str, tokens: int, start: int, end: int) -> int:
        """Tokens of ``text[start:end]``, ``tokens`` being those of ``text``: the whole's count less those
        of the text before the piece and of the text from its last line's start on, plus its last line's,
        when the piece and its last line start lines the encoding's split cuts before (``_CUT_LINE_START``):
        what lies between is not counted again. Trimming counts a tool output whole, then the lines it
        elides (kcosr__chat-to-html's session chained 8 times: 363 K of the 510 K characters it counts)."""
        last = text.rfind("\n", start, end) + 1
        if (
            self.encoding not in FAST_ENCODINGS
            or len(text) > PIECES_ABOVE  # tiktoken counts longer texts in pieces of its own
            or last <= start
            or start + (len(text) - last) + (end - last) >= end - start  # the pieces counted: fewer characters
            or (start > 0 and (text[start - 1] != "\n" or not _CUT_LINE_START.match(text, start)))
            or not _CUT_LINE_START.match(text, last)
        ):
            return self(text[start:end])
        return tokens - self(text[:start]) - self(text[last:]) + self(text[last:end])

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

    def __init__(self, inner: TokenCounter, known: Mapping[int, int]) -> None:
        self.encoding, self.provider = inner.encoding, inner.provider
        self.inner = inner
        self.known = known

    def __call__(self, text: str) -> int:
        return self.inner(text)

    def piece(self, text: str, tokens: int, start: int, end: int) -> int:
        # A stand-in inner counter (replay's calibrated one) scales its counts: they do not add up.
        if isinstance(self.inner, TokenCounter):
            return self.inner.piece(text, tokens, start, end)
        return self(text[start:end])

    def message(self, message: Message) -> int:
        count = self.known.get(id(message))
        return self.inner.message(message) if count is None else count

    def messages(self, messages: Iterable[Message]) -> int:
        # ``message`` inline: a compaction's steps count the whole context again and again.
        known, inner = self.known.get, self.inner
        total = 0
        for message in messages:
            count = known(id(message))
            total += inner.message(message) if count is None else count
        return total


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


# Claude as another cloud serves it: Bedrock (``anthropic.claude-sonnet-4-20250514-v1:0``, behind a
# region's prefix ``us.``, ``eu.``, ``global.``..., or inside an inference profile's ARN) and Vertex
# (``claude-3-7-sonnet@20250219``). Read as Anthropic's own id, ``claude-sonnet-4-20250514``.
_BEDROCK_CLAUDE = lazyre.compile(r"(?:[a-z-]{2,12}\.)?anthropic\.(claude-[a-z0-9.-]+?)(?:-v\d+(?::\d+)?)?")
_VERTEX_CLAUDE = lazyre.compile(r"(claude-[a-z0-9.-]+)@(\d{8})?[a-z-]*")
_VERSION_DOT = lazyre.compile(r"(?<=-)(\d)\.(\d)(?=$|-|@|\[)")


def bare_model(model: str | None) -> str:
    """A model id without the gateway's prefix, lower-cased: ``anthropic/claude-sonnet-4.6``
    (OpenRouter, the Vercel AI Gateway), ``litellm/openai/gpt-5.5`` (the Agents SDK over LiteLLM),
    ``google/gemini-3.5-flash`` and a Bedrock ARN name the model after their last slash."""
    return (model or "").lower().rpartition("/")[2]


def claude_model(model: str | None) -> str | None:
    """Anthropic's own id of a Claude model however a log spells it (Anthropic's API, Bedrock,
    Vertex, a gateway), lower-cased; None for a model that is not Claude's."""
    # A gateway writes the version with a dot (OpenRouter's ``claude-sonnet-4.5``); Anthropic's id has a dash.
    name = _VERSION_DOT.sub(r"\1-\2", bare_model(model))
    if name.startswith("claude"):
        vertex = _VERTEX_CLAUDE.fullmatch(name)
        if vertex is None:
            return name
        return f"{vertex.group(1)}-{vertex.group(2)}" if vertex.group(2) else vertex.group(1)
    bedrock = _BEDROCK_CLAUDE.fullmatch(name)
    return bedrock.group(1) if bedrock is not None else None


def served_by(model: str | None) -> str | None:
    """The cloud a model id names, where it is not the maker's own API: ``aws`` (Bedrock), ``google``
    (Vertex), as genai-prices lists their prices; None for the maker's own spelling (behind a
    gateway's prefix too: a gateway's listing is the maker's list price)."""
    name = bare_model(model)
    if claude_model(model) is None or (name.startswith("claude") and "@" not in name):
        return None
    return "google" if "@" in name else "aws"


def provider_of(model: str | None) -> str:
    name = bare_model(model)
    if claude_model(model) is not None:
        return "anthropic"
    return "google" if name.startswith("gemini") else "openai"


def encoding_for_model(model: str | None) -> str:
    """The encoding a model's text is counted in: o200k for gpt-4o and later, cl100k for older.

    Claude models are counted in cl100k, which calibration scales by a ratio fitted on the
    file's usage; ctok's families (``claude-v3``, ``claude-v4.7``) are fitted beside it on
    request (``--claude-tokens ctok``): two sessions naming one model used different ones.
    """
    name = bare_model(model)
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
        import base64  # here: a run whose messages hold no image data spares it (and struct, binascii)

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
