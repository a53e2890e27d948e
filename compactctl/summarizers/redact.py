"""Secrets found in text are replaced before the text leaves the machine.

The table's rows (``secret_rows.PATTERNS``: issuers' token shapes, labelled values, private
key blocks) run first; then what they alone miss: a secret cut in two by a line break (the
halves joined and tried again), and one base64- or URL-encoded (candidates decoded, bounded,
and tried again). Each hit becomes ``[REDACTED:kind]``. Redaction runs on whole messages
before any chunking (``redact_messages``), so a chunk boundary inside a key cannot let its
body out, and again on the request text. Running it twice changes nothing: a marker matches
no row.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from typing import Any

from compactctl import lazyre
from compactctl.summarizers.memo import known, remembered
from compactctl.summarizers.secret_rows import ASSIGNMENT_KEYS, KEY_BLOCKS, MARKER, PATTERNS, TOKEN_ROWS, redact_rows

__all__ = [
    "MARKER",
    "PATTERNS",
    "mask_known",
    "redact",
    "redact_messages",
    "redact_reply",
    "redact_url",
    "redact_value",
    "redacted_text",
]


# --- a secret cut in two by a line break ------------------------------------------------------
# A terminal or an editor wraps a long token; a JSON string holds the break as \n. A break
# between two characters that are not spaces is tried joined: when a row then matches across it, both
# sides of the break are replaced (the break is kept, after the marker).
# It is led by the break's first character, a class the engine skips to, and the character before that
# is read from there: led by the look-behind, the pattern was tried at every character of the text.
_BREAK = lazyre.compile(r"[\r\n\\](?<=[^\s\\][\r\n\\])(?:(?<=\r)\n|(?<=\n)|(?<=\\)r\\n|(?<=\\)n)(?=[^\s\\])")
# The token a text ends on, matched on the text reversed: searched for forwards, a pattern ending
# in \Z is tried from every position of the three lines before each break.
_TOKEN_REVERSED = lazyre.compile(r"[^\s\"'`]*")
# Every break starts on one of these: the search for the next break starts at the next of them,
# so the line between two breaks is crossed at a character class's speed, not a lookbehind's.
_BREAK_START = lazyre.compile(r"[\r\n\\]")
_LEADING_TOKEN = lazyre.compile(r"(?:[^\s\\]|\\[\"'])*")
# A line that opens on a label (STRIPE_SECRET=..., key: ...) starts an entry of its own: joined to the
# line before, a token there would run on into the label and swallow it.
_NEXT_LABEL = lazyre.compile(
    r"\\?[\"']?[A-Za-z_][A-Za-z0-9_.-]*\\?[\"']?[ \t]*(?:=[ \t]*(?!=)|:[ \t]+)(?:\\?[\"'`])?[A-Za-z0-9_$/.+~-]"
)
_JOIN_CONTEXT = 400  # characters each side a joined candidate may take
_JOIN_MIN = 16  # the two halves together: shorter than any secret the rows look for
# Words one of which a label-led row needs in the lines before a break (else only the token
# across the break is tried, which costs far less).
_LABEL_HINTS = (*ASSIGNMENT_KEYS, "bearer", "basic", "machine", "login", "sig", "://", "cat", "echo", " -p", "key")


def _context_start(text: str, end: int) -> int:
    """Where a joined candidate starts: three lines back at most (a .netrc entry), _JOIN_CONTEXT at most."""
    floor = end - _JOIN_CONTEXT
    # Line ends are looked for in the _JOIN_CONTEXT characters before ``end`` only (searched back to
    # the text's start, a text without the two-character break was scanned whole at every break):
    # a line start found before ``floor``, or none found there, gives ``floor`` either way.
    low = max(0, floor - 2)
    start = end
    for _ in range(3):
        previous = max(text.rfind("\n", low, start - 1) + 1, text.rfind("\\n", low, start - 1) + 2, 0)
        if previous < floor:
            return floor
        start = previous
        if start == 0:
            break
    return max(start, floor)


def _line_end(text: str, start: int) -> int:
    ends = [
        at
        for at in (text.find("\n", start, start + _JOIN_CONTEXT), text.find("\\n", start, start + _JOIN_CONTEXT))
        if at >= 0
    ]
    return min(ends) if ends else min(len(text), start + _JOIN_CONTEXT)


def _redact_joins(text: str) -> tuple[str, int]:
    total = 0
    position = 0
    while True:
        start = _BREAK_START.search(text, position)
        found = None if start is None else _BREAK.search(text, start.start())
        if found is None:
            return text, total
        position = found.end()
        lead = _LEADING_TOKEN.match(text, found.end(), found.end() + _JOIN_CONTEXT)
        lead_length = len(lead.group()) if lead else 0
        # Most breaks end a short word: the token before one is first read in the _JOIN_MIN characters
        # before it (a token shorter than that is all there; a longer one is long enough), so the
        # context is not cut out and turned round at every break of a long text.
        near = text[max(0, found.start() - _JOIN_MIN) : found.start()]
        if lead_length + _TOKEN_REVERSED.match(near[::-1]).end() < _JOIN_MIN:  # type: ignore[union-attr]
            continue
        left_start = _context_start(text, found.start())
        left = text[left_start : found.start()]
        tail_length = _TOKEN_REVERSED.match(left[::-1]).end()  # type: ignore[union-attr]  # * matches empty
        if lead_length + tail_length < _JOIN_MIN or _NEXT_LABEL.match(text, found.end()):
            continue
        # The rest of the line comes too: a row may look past the value (echo 'PW' | docker login).
        right = text[found.end() : _line_end(text, found.end())]
        lowered = left.lower()  # once, not once per hint
        if not any(hint in lowered for hint in _LABEL_HINTS):
            # No label before the break: only a token of its own shape can straddle it.
            left_start = found.start() - tail_length
            left = left[len(left) - tail_length :]
        joined = left + right
        redacted, count = redact_rows(joined)
        if not count:
            continue
        same_head = _common_prefix(joined, redacted)
        same_tail = _common_prefix(joined[::-1], redacted[::-1])
        same_tail = min(same_tail, len(joined) - same_head, len(redacted) - same_head)
        if not (same_head < len(left) < len(joined) - same_tail):
            continue  # nothing spans the break: the rows catch it where it is
        replaced = redacted[same_head : len(redacted) - same_tail]
        after = found.end() + len(right) - same_tail
        text = text[: left_start + same_head] + replaced + found.group() + text[after:]
        position = left_start + same_head + len(replaced) + len(found.group())
        total += count


def _common_prefix(a: str, b: str) -> int:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


# --- a secret base64- or URL-encoded ----------------------------------------------------------
# An encoded run is decoded and the decoded text redacted; when anything is found, the whole
# run is replaced. The cost is bounded: runs longer than _MAX_ENCODED (images) are not tried,
# nor more than _MAX_DECODED characters in all per text.
# A run is all of a run of the class (found from its first character on, it is never entered in the
# middle), holding a character that is not a letter (_BASE64_NEEDS, checked on each run found: a
# look-ahead before it, and a look-behind, were tried at every character of the text).
_BASE64_CLASS = "[A-Za-z0-9+/_-]"
_BASE64_RUN_SOURCE = _BASE64_CLASS + "{16,}={0,2}"
_BASE64_RUN = lazyre.compile(_BASE64_RUN_SOURCE)
_BASE64_NEEDS = lazyre.compile(r"[0-9+/_-]")
# Base64 wrapped over lines (the base64 tool's 76 columns, a terminal's wrap): the lines joined.
_BASE64_LINES_SOURCE = r"(?<![A-Za-z0-9+/_-])[A-Za-z0-9+/_-]{16,}(?:(?:\r?\n|\\n)[ \t]*[A-Za-z0-9+/_-]{4,})+={0,2}"
_BASE64_LINES = lazyre.compile(_BASE64_LINES_SOURCE)
# The same matches, each found by one match from where the last one ended (``_matches``): the text up
# to the next one is crossed a token at a time, possessively (a run of other characters, or a run of
# the class that cannot start one, whole), and the match is group 1. ``finditer`` tried the class at
# every character of a run too short to match, again and again (a word of six letters: six tries;
# the look-behind of _BASE64_LINES at every character of the text), 36 % and 44 % more instructions.
_OTHER = "[^A-Za-z0-9+/_-]"
_TO_BASE64_RUN = lazyre.compile(rf"(?:{_OTHER}++|{_BASE64_CLASS}{{1,15}}+(?!{_BASE64_CLASS}))*+({_BASE64_RUN_SOURCE})")
_TO_BASE64_LINES = lazyre.compile(  # a run that does not start a wrapped one: not 16 long, or no line after it
    rf"(?:{_OTHER}++|(?!{_BASE64_CLASS}{{16,}}(?:\r?\n|\\n)[ \t]*{_BASE64_CLASS}{{4}}){_BASE64_CLASS}++)*+"
    rf"({_BASE64_LINES_SOURCE})"
)


def _matches(to_next: re.Pattern[str], text: str) -> Iterator[tuple[int, int]]:
    """The span of group 1 of each match of ``to_next`` from where the last one ended: what ``finditer``
    of that group's pattern finds, when every match of it starts where ``to_next`` crosses a token."""
    at = 0
    while (found := to_next.match(text, at)) is not None:
        yield found.span(1)
        at = found.end()


def base64_runs(text: str) -> Iterator[tuple[int, int]]:
    """The spans ``_BASE64_RUN.finditer(text)`` gives."""
    return _matches(_TO_BASE64_RUN, text)


def wrapped_base64_runs(text: str) -> Iterator[tuple[int, int]]:
    """The spans ``_BASE64_LINES.finditer(text)`` gives (none where ``_WRAP_GATE`` finds nothing)."""
    if _WRAP_GATE.search(text) is None:
        return iter(())
    return _matches(_TO_BASE64_LINES, text)


# Every wrapped run holds a line break (\r\n, \n, or the two characters \\n) right after sixteen of the
# class: looked for first, led by the break's first character (a class the engine skips to), the sixteen
# read behind it. Most texts hold none, and are not crossed a token at a time by _TO_BASE64_LINES.
_WRAP_GATE = lazyre.compile(r"[\r\n\\](?<=[A-Za-z0-9+/_-]{16}[\r\n\\])(?:(?<=\r)\n|(?<=\n)|(?<=\\)n)")


_LINE_BREAK = lazyre.compile(r"(?:\r?\n|\\n)[ \t]*")
_PERCENT_RUN = lazyre.compile(r"[^\s\"'<>&?=]*%[0-9A-Fa-f]{2}[^\s\"'<>&]*")
# Every URL-encoded run holds a % and two hex digits, found by a fast scan for the "%": a text with
# a "%" but none of them (50%, %s) is not tried at every character by _PERCENT_RUN.
_PERCENT_GATE = lazyre.compile(r"%[0-9A-Fa-f]{2}")


def percent_runs(text: str) -> Iterator[tuple[int, int]]:
    """The spans ``_PERCENT_RUN.finditer(text)`` gives."""
    if _PERCENT_GATE.search(text) is None:
        return iter(())
    return (run.span() for run in _PERCENT_RUN.finditer(text))


_MAX_ENCODED = 16_384
_MAX_DECODED = 262_144
ENCODED_MARKER = MARKER.format("encoded-secret")


def _decoded_base64(run: str) -> str | None:
    import base64
    import binascii

    body = run.rstrip("=")
    if len(body) % 4 == 1:
        return None
    padded = body + "=" * (-len(body) % 4)
    try:
        if "-" in body or "_" in body:
            data = base64.urlsafe_b64decode(padded)
        else:
            data = base64.b64decode(padded, validate=True)
        decoded = data.decode("utf-8")
    except (binascii.Error, ValueError):
        return None
    printable = sum(c.isprintable() or c in "\r\n\t" for c in decoded)
    return decoded if decoded and printable >= 0.95 * len(decoded) else None


def _decoded_percent(run: str) -> str | None:
    from urllib.parse import unquote

    decoded = unquote(run, errors="strict") if "%" in run else run
    return decoded if decoded != run else None


def _wrapped_base64(text: str, depth: int, budget: int) -> tuple[str, int, int]:
    """Base64 cut over lines, decoded joined: all its lines, or all but the last (a word on the
    line after it); a run is replaced whole when its decoded text holds a secret."""
    pieces: list[str] = []
    last = total = 0
    for start, end in wrapped_base64_runs(text):
        value = text[start:end]
        if len(value) > _MAX_ENCODED or budget <= 0 or "[REDACTED" in value:
            continue
        budget -= len(value)
        lines = _LINE_BREAK.split(value)
        ends = [found.start() for found in _LINE_BREAK.finditer(value)] + [len(value)]  # where each line ends
        for count in (len(lines), len(lines) - 1):
            decoded = _decoded_base64("".join(lines[:count])) if count >= 2 else None
            if decoded is not None and _redact_core(decoded, depth - 1)[1]:
                pieces += [text[last:start], ENCODED_MARKER]
                last = start + ends[count - 1]  # a line left out keeps its break before it
                total += 1
                break
    return ("".join(pieces) + text[last:] if pieces else text), total, budget


# Sixteen characters of a base64 run in a row: every match of _BASE64_RUN and _BASE64_LINES holds them.
# Looked for first, where a run starts: at the text's start, or after another character (a class the
# engine skips to). Led by the run's own class, the search was tried at every character of every shorter run.
_BASE64_16_FIRST = lazyre.compile(r"[A-Za-z0-9+/_-]{16}")
_BASE64_16 = lazyre.compile(r"[^A-Za-z0-9+/_-][A-Za-z0-9+/_-]{16}")


def _redact_encoded(text: str, depth: int) -> tuple[str, int]:
    budget = _MAX_DECODED
    runs = _BASE64_16_FIRST.match(text) is not None or _BASE64_16.search(text) is not None
    text, total, budget = _wrapped_base64(text, depth, budget) if runs else (text, 0, budget)
    for base64 in (True, False):
        if (not base64 and "%" not in text) or (base64 and not runs):
            continue
        decode = _decoded_base64 if base64 else _decoded_percent
        spans = base64_runs(text) if base64 else percent_runs(text)
        pieces: list[str] = []
        last = 0
        for start, end in spans:
            if base64 and _BASE64_NEEDS.search(text, start, end) is None:
                continue  # letters only: a word, not an encoding
            value = text[start:end]
            if len(value) > _MAX_ENCODED or budget <= 0 or "[REDACTED" in value:
                continue
            budget -= len(value)
            try:
                decoded = decode(value)
            except (UnicodeDecodeError, ValueError):
                decoded = None
            if decoded is None or not _redact_core(decoded, depth - 1)[1]:
                continue
            pieces += [text[last:start], ENCODED_MARKER]
            last = end
            total += 1
        if pieces:
            text = "".join(pieces) + text[last:]
    return text, total


# --- a text too short to hold a secret -----------------------------------------------------------
# Most strings of a transcript are short (call ids, tool names, "ok"). No row's match is shorter than
# _SHORT_TEXT characters but those of the SHORT_KINDS rows (each pattern's least width, which the
# regular expression engine itself trusts; tests/summarizers/test_redact_short.py checks the list),
# no joined candidate is (two halves of _JOIN_MIN), nor an encoded run but a URL-encoded one (a "%").
# So a shorter text holding none of those rows' keys, and no "%", has nothing to redact.
_SHORT_TEXT = 16
SHORT_KINDS = frozenset(
    {"url-password", "connection-password", "query-password", "cli-password", "cli-token", "pgpass-password"}
    | {"secret-assignment", "slack-token"}
)
_short_keys: tuple[tuple[str, ...], tuple[str, ...]] | None = None  # (lower-case keys, exact keys), on first use


def _short_row_keys() -> tuple[tuple[str, ...], tuple[str, ...]]:
    global _short_keys
    if _short_keys is None:
        rows = [row for row in PATTERNS if row.kind in SHORT_KINDS]
        if not all(row.keys for row in rows):  # a row tried on every text: no text is plainly clean
            raise AssertionError("a short-match row without keys")
        folded = {key for row in rows if row.folded for key in row.keys}
        exact = {key for row in rows if not row.folded for key in row.keys} | {"%"}
        _short_keys = tuple(sorted(folded)), tuple(sorted(exact))
    return _short_keys


def plainly_clean(text: str) -> bool:
    """Whether ``text`` is too short for any row, join or encoded run that could match it (see above)."""
    if len(text) >= _SHORT_TEXT:
        return False
    folded, exact = _short_row_keys()
    lowered = text.lower()
    for key in folded:  # loops, not any() over generators: asked of every short string of a transcript
        if key in lowered:
            return False
    for key in exact:  # noqa: SIM110 (all() over a generator is the slower form here)
        if key in text:
            return False
    return True


def _redact_core(text: str, depth: int) -> tuple[str, int]:
    if plainly_clean(text):
        return text, 0
    # Key blocks first: their lines are meant to be broken, and are replaced whole.
    text, blocks = redact_rows(text, KEY_BLOCKS)
    text, joined = _redact_joins(text)
    text, rows = redact_rows(text, TOKEN_ROWS)
    encoded = 0
    if depth > 0:
        text, encoded = _redact_encoded(text, depth)
    return text, blocks + joined + rows + encoded


def redact(text: str) -> tuple[str, int]:
    """The text with secrets replaced, and how many were.

    Four passes: breaks between token characters tried joined (a wrapped key), the table's
    rows, then base64 and URL-encoded runs decoded and tried (twice nested at most).
    """
    return _redact_core(text, 2)


def redacted_text(text: str) -> str:
    """``redact(text)[0]``, remembered by the text; the result is remembered as its own redaction
    too, as running it twice changes nothing. A summary is built from redacted text, redacted, then
    redacted again with the request it quotes, and read back as the next compaction's earlier
    summary: a replay redacts it once."""
    out: str = remembered(_redacted, text)
    if out is not text:
        known(_redacted, out, out)
    return out


def _redacted(text: str) -> str:
    return redact(text)[0]


def mask_known(text: str, secrets: Sequence[str | None], window: int = 8) -> str:
    """``text`` with every piece of ``window`` or more characters of a known secret (the API key) masked.

    For replies that echo the key back, whole or cut ("Incorrect API key provided: sk-...xyz").
    """
    covered = [False] * len(text)
    for secret in secrets:
        if not secret or len(secret) < window:
            continue
        for start in range(len(secret) - window + 1):
            piece = secret[start : start + window]
            at = text.find(piece)
            while at >= 0:
                covered[at : at + window] = [True] * window
                at = text.find(piece, at + 1)
    if not any(covered):
        return text
    out: list[str] = []
    for index, char in enumerate(text):
        if covered[index]:
            if index == 0 or not covered[index - 1]:
                out.append(MARKER.format("api-key"))
        else:
            out.append(char)
    return "".join(out)


def redact_reply(text: str, secrets: Sequence[str | None] = (), limit: int = 200) -> str:
    """A server's error text as an error line shows it: the first line, redacted whole, then cut."""
    first = mask_known(redact(text)[0], secrets).splitlines()
    line = first[0] if first else ""
    return line if len(line) <= limit else line[:limit] + "..."


def redact_value(value: Any) -> tuple[Any, int]:
    """Every string inside ``value`` (a message, a part, a list, arguments) redacted; keys are kept."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        total = 0
        out: dict[Any, Any] = {}
        for key, item in value.items():
            out[key], count = redact_value(item)
            total += count
        return out, total
    if isinstance(value, list):
        items = [redact_value(item) for item in value]
        return [item for item, _ in items], sum(count for _, count in items)
    return value, 0


def redact_messages(messages: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], int]:
    """Whole messages redacted (content, parts, tool-call arguments, every string): before any chunking."""
    redacted = [redact_value(message) for message in messages]
    return [message for message, _ in redacted], sum(count for _, count in redacted)


_USERINFO = lazyre.compile(r"^([a-z][a-z0-9+.-]*://)([^/?#\s]*)@", re.I)
_QUERY_VALUE = lazyre.compile(r"([?&;][^=&;#\s]+=)([^&;#\s]+)")


def _masked_userinfo(match: re.Match[str]) -> str:
    userinfo = match.group(2)
    return match.group(1) + (userinfo if "[REDACTED" in userinfo else MARKER.format("url-userinfo")) + "@"


def _masked_query_value(match: re.Match[str]) -> str:
    value = match.group(2)
    return match.group(0) if value.startswith("[REDACTED") else match.group(1) + MARKER.format("url-query")


def redact_url(url: str, secrets: Sequence[str | None] = ()) -> str:
    """A URL as error lines and dry runs print it: redacted as text is, then whatever sits before the
    host (user:password@, TOKEN@) and every query value masked, as a base URL holds no other kind."""
    text = mask_known(redact(url)[0], secrets)
    return _QUERY_VALUE.sub(_masked_query_value, _USERINFO.sub(_masked_userinfo, text))
