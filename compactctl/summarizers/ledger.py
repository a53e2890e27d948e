"""What summaries are known to lose, found in text as it was written.

File paths, commands, numbers with units, ids, error lines and names are what the
next turn needs and what prose summaries drop, so they are copied verbatim; the
user's explicit constraints are quoted, never paraphrased.

Noise is what makes a ledger useless on a long session, so each kind has its own
source: paths the agent's tool calls read or wrote come before paths merely
mentioned (and paths are never taken from tool output, where listings and grep
context lines would drown them); commands are the ``cmd``/``command`` arguments of
tool calls, ``$ `` lines and SWE-agent actions, never a tool call's JSON; ids are
ids (not diff hunk markers, hex colours, halves of a UUID or build step numbers);
errors come from tool output only, as error lines, not source lines that mention
an exception. Every fact remembers the message it came from, so the most recent
win when the budget is short.

Which user messages a *person* wrote, and what they asked, is ``writings.py``'s; what a
message yields is remembered (``memo.py``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import partial
from typing import Any

from compactctl import lazyre
from compactctl.message_memo import by_message
from compactctl.summarizers.lines import OTHER_BREAKS
from compactctl.summarizers.memo import MEMO_ENTRIES, Memo, message_key, remembered
from compactctl.summarizers.writings import FENCE, INLINE_CODE, answers_as_tool_output, is_result_line, strip_harness
from compactctl.transcript import Message, annotations_of, content_text, function_of, tool_calls_of

FACT_KINDS = ("path", "command", "id", "error", "number", "name")
_EXTENSIONS = (
    r"(?:py|pyi|js|mjs|cjs|jsx|ts|tsx|json|jsonl|md|rst|txt|toml|ya?ml|cfg|ini|sh"
    r"|c|h|cc|cpp|hpp|rs|go|java|kt|rb|php|html|css|scss|csv|tsv|log|sql|xml|lock|traj|ipynb|env|conf|dcm|zip|tar|gz)\b"
)
_PATH = lazyre.compile(
    r"(?<![\w/:.@#-])(?:~|\.{1,2})?/?(?:[\w.@+-]+/)+[\w.@+-]*[\w@+-]"
    r"|(?<![\w/.@#-])[\w-]+(?:\.[\w-]+)*\." + _EXTENSIONS
)
# Every match of _PATH holds a "/" (the first branch) or ends on a dot and an extension (the second): a
# text with neither is not scanned, which most prose is not (both branches open on a look-behind, tried
# at every character; the gate opens on the dot, which the engine skips to).
_PATH_EXTENSION = lazyre.compile(r"\." + _EXTENSIONS)
_URL = lazyre.compile(r"\bhttps?://[^\s)\]>\"'`]+")
_UNITS = (
    r"%|ms|µs|ns|s|sec|secs|seconds?|min|mins|minutes?|h|hrs?|hours?|days?|weeks?|months?|years?|"
    r"[kKMGT]i?B|bytes?|tokens?|USD|EUR|GBP|dollars?|euros?|€|kg|g|lbs?|km|mi|miles?|m|cm|mm|px|"
    r"passed|failed|errors?|warnings?|tests?|files?|lines?|items?|bags?|passengers?|nights?|rows?|calls?|x|"
    r"seats?|users?|requests?|commits?|records?"
)
# An amount ($12.50) or a number with its unit (412 ms, 13 passed), not inside a word, version or path. Led by
# its first character's class, which the engine skips to, then told apart looking behind: led by two branches
# (the second by a look-behind), it was tried at every character (tests/summarizers/test_redact_prefilter.py).
_NUMBER = lazyre.compile(
    rf"[$€£\d](?:(?<=[$€£])\s?\d[\d,]*(?:\.\d+)?|(?<=\d)(?<![\w.#/-]\d)[\d,]*(?:\.\d+)?\s?(?:{_UNITS}))(?![\w/])"
)
# A match of _NUMBER starts at a currency sign or at a digit with no [\w.#/-] before it, in the text with its
# progress bars blanked out; a digit a bar stood before has its "]" before it in the text as written. So a
# line (or a text) without one of those yields no number: its lines are not each matched as result lines
# (most digits of tool output are inside words: test_42, mod3.py, v1; tests/summarizers/test_prefilters.py).
_NUMBER_GATE = lazyre.compile(r"(?:^|[^\w.#/-])\d|[$€£]")
# The same places in a whole text: a line's first character has a line break before it, which is none of
# [\w.#/-], so a line holds a match of _NUMBER_GATE exactly where the text holds one of this (_result_lines).
# Led by the class the engine skips to, then told apart looking behind (as _NUMBER).
_NUMBER_START_SOURCE = r"[$€£\d](?:(?<=[$€£])|(?<![\w.#/-]\d))"
_NUMBER_START = lazyre.compile(_NUMBER_START_SOURCE)
# The lines (cut at line feeds) holding one, but those is_result_line turns down whatever else they hold: a
# file view's ("  12→x", "12:", "12\tx", "12  x" stripped: LISTING_LINE) and those holding ; { or }. Found by
# the engine, not by a search per line and a look at it in Python: the 1,300 lines of kcosr__chat-to-html's
# 46 KB file view took 1.3 ms, now 0.7. [^\S\n] is what str.strip takes off, within a line; the tab or two
# spaces after the digits have more than space after them, as in the stripped line.
_RESULT_LINE_CANDIDATE = lazyre.compile(
    r"^(?![^\S\n]*\d+(?:[:|→]|(?:\t|[^\S\n]{2})[^\S\n]*\S))(?![^\n]*[;{}])[^\n]*?" + _NUMBER_START_SOURCE + r"[^\n]*",
    re.M,
)
# A few words before a number say what it measures: "p99 latency 412 ms", "13 tests passed".
_NUMBER_LABEL = lazyre.compile(r"(?<![\w'’-])(?:[A-Za-z][\w'’-]*[ :=]+){0,3}$")
_UUID = lazyre.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b", re.I)
_ISSUE_REF = lazyre.compile(r"(?:\b(?:issue|PR|pull request|ticket|bug|order)\s+#?|(?<![\w#&/])#)(\d+)\b", re.I)
_ID_PATTERNS = (
    lazyre.compile(r"\b[A-Z][A-Z0-9]+-\d+\b"),  # ticket ids: PROJ-123
    # booking codes (NO6JO3) and tracking numbers (6A19384756201): a short one needs two letters,
    # so 2700K (a unit) and 08T14 (a piece of a timestamp) are not ids
    lazyre.compile(r"\b(?=[A-Z0-9]*\d)(?=[0-9]*[A-Z])(?=(?:[0-9]*[A-Z]){2}|[A-Z0-9]{8})[A-Z0-9]{5,40}\b"),
    lazyre.compile(r"\b[a-z]+(?:_[a-z]+)*_\d+\b"),  # user ids: mia_li_3668
    # e-mail addresses, not the user:password@host of a URL
    lazyre.compile(r"(?<![\w.+:/-])[\w.+-]+@[\w-]+(?:\.[\w-]+)+\b"),
)
_ID_NEEDS = ("-", "", "_", "@")  # a character every match of each of _ID_PATTERNS holds ("": none)
# A commit sha: 7-40 hex digits with letters and digits mixed, not inside a longer token.
_SHA = lazyre.compile(r"(?<![\w#-])(?=[0-9a-f]*[a-f])(?=[0-9a-f]*\d)[0-9a-f]{7,40}(?![\w-])")
# Necessary conditions led by a literal or a class, which the engine skips to (the patterns above start
# with a look-behind or \b, tried at every character): no gate match, no match (tests/summarizers/test_prefilters.py).
_UUID_GATE = lazyre.compile(r"-[0-9a-f]{4}-[0-9a-f]{4}-", re.I)  # a UUID's second and third groups
# A sha is a run of 7 hex digits or more: its lines hold such a run (the digit and letter it needs are
# left to _SHA). Led by the class, which the engine skips to, each try ending at the first character not
# hex: led by a digit and looking behind and ahead of it, it cost half as much again (1.0 ms, not 0.6 ms,
# on the 46 KB file view of kcosr__chat-to-html's session).
_SHA_GATE = lazyre.compile("[0-9a-f]{7}")
# PROJ-123's "J-1"; a booking code's digit and capital side by side in its run ("O6", "6A": a line
# holding such a run has such a pair, which is looked for, not the run from each of its characters);
# a user id's "_3"; an address's "@": each pattern is tried on the lines holding its gate (_lines_holding).
# (The pair is led by its capital, its digit read ahead or behind it: two alternatives led by classes are
# tried at every character, and led by [\dA-Z] every digit of a file view's line numbers was a try: 0.8 ms,
# not 0.3 ms, on kcosr__chat-to-html's 46 KB file view.)
_ID_GATES = tuple(map(lazyre.compile, (r"-(?<=[A-Z0-9]-)\d", r"[A-Z](?:\d|(?<=\d[A-Z]))", r"_\d", "@")))
_HUNK = lazyre.compile(r"^\d+(?:,\d+)?[acd]\d+(?:,\d+)?$")  # diff's "178d167", "333a310"
# An error line as a tool prints it, not a source line that names an exception.
_ERROR_LINE = lazyre.compile(
    r"^(?:Traceback \(most recent call last\)|(?:[\w.]+\.)?\w*(?:Error|Exception|Failure)(?::|$)|E\s{2,}\S|"
    r"FAILED\b|FAIL\b|ERROR\b|Error\b|error(?:\[\w+\])?:|fatal:|panic:|npm ERR!|✗|×|✕|"
    r".*?(?:Permission denied|No such file or directory|command not found|Segmentation fault)|"
    r".*?\b\d+ (?:failed|errors?)\b|[\w ./-]{0,60}\b(?:failed|error|denied|refused)\b:)"
)
# A word of every branch of _ERROR_LINE (it ignores no case), and E with two spaces after it for
# ``E\s{2,}\S``: a text holding none of them has no error line, so its lines are not each stripped
# and matched, which is most tool output. (Looking for them line by line, lines_with, was slower: the
# look for the words is most of the time, and the texts holding one are short.)
_ERROR_WORDS: tuple[str, ...] = ("Traceback", "Error", "Exception", "Failure", "FAIL", "ERROR", "error", "fatal:")
_ERROR_WORDS += ("panic:", "npm ERR!")
_ERROR_WORDS += ("✗", "×", "✕", "Permission denied", "No such file or directory", "command not found")
_ERROR_WORDS += ("Segmentation fault", "failed", "denied", "refused")
_E_SPACED = lazyre.compile(r"E\s{2}")
_SOURCE_LINE = lazyre.compile(
    r"^\s*(?:raise|except|class|def|import|from|return|throw|catch|if|elif|#|//|\*|\d+[:|-])\b"
)
_NAME = lazyre.compile(
    r"\b(?:[Mm]y name is|I am|I'm|[Jj]e m'appelle|[Nn]ame:)\s+([A-Z][a-zà-ÿ]+(?:\s+[A-Z][a-zà-ÿ]+)?)"
)
_NAME_CUES = ("ame is", "I am", "I'm", "m'appelle", "ame:")  # a string of each branch of _NAME
_ID_KEYS = lazyre.compile(r"(?:^|_)(?:id|email|number|code)$")
PATH_KEYS = ("file_path", "path", "filePath", "notebook_path", "target_file", "filename", "file")
COMMAND_KEYS = ("cmd", "command", "script", "bash", "shell")
_PATCH_FILE = lazyre.compile(r"^\*\*\* (Add|Update|Delete) File: (.+)$", re.M)
_SWE_FILE_ACTION = lazyre.compile(r"^(open|create|edit_file)\s+\"?([^\s\"]+)", re.M)
_COMMAND_WORDS = frozenset((
    "python", "python3", "pytest", "pip", "uv", "git", "npm", "npx", "pnpm", "yarn", "node", "ls", "cd", "cat",
    "grep", "rg", "find", "make", "cargo", "go", "docker", "kubectl", "curl", "wget", "sed", "awk", "bash", "sh",
    "mkdir", "rm", "mv", "cp", "chmod", "tar", "unzip", "head", "tail", "echo", "export", "ruff", "mypy", "tox",
    "nc", "gdb", "objdump", "strings", "ssh", "terraform", "psql", "sqlite3", "compactctl", "gh", "vitest", "jest",
    "tsc", "deno", "bun", "just", "poetry"
))  # fmt: skip
_DIGIT = lazyre.compile(r"\d")
_PROGRESS_BAR = lazyre.compile(r"\[\s*\d{1,3}%\]")  # pytest's "[ 37%]": a position, not a measure


@dataclass(frozen=True)
class Fact:
    """One fact found in the messages (an id, a path, an error line...), and where last seen."""

    kind: str  # one of FACT_KINDS
    text: str  # as written
    at: int = 0  # the index of the message it was last seen in: recent beats old
    touched: bool = False  # a path a tool call read or wrote (not one merely mentioned)


def _parsed(arguments: object) -> object:
    if isinstance(arguments, str):
        try:
            return json.loads(arguments)
        except ValueError:
            return arguments
    return arguments


def command_of(arguments: object) -> str | None:
    """The shell text of a tool call's ``cmd``/``command`` argument (a list is joined as a shell would)."""
    arguments = _parsed(arguments)
    if not isinstance(arguments, dict):
        return None
    for key in COMMAND_KEYS:
        value = arguments.get(key)
        if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
            # Codex's ["bash", "-lc", "make test"]: the script is what was run.
            if len(value) == 3 and value[0] in ("bash", "sh", "zsh") and value[1] in ("-lc", "-c"):
                return value[2].strip() or None
            import shlex  # here: most sessions' commands are strings (Claude Code's), never joined

            return shlex.join(value)
        if isinstance(value, str) and value.strip():
            return value.strip()
    return None


def paths_of(arguments: object) -> Iterator[tuple[str, str]]:
    """``(path, how)`` of the files a tool call's arguments read or write."""
    arguments = _parsed(arguments)
    if isinstance(arguments, dict):
        for key in PATH_KEYS:
            value = arguments.get(key)
            if isinstance(value, str) and 1 < len(value) <= 300 and "\n" not in value:
                yield value.strip(), ""
        edits = arguments.get("edits")
        if isinstance(edits, list):
            for edit in edits:
                if isinstance(edit, dict):
                    yield from paths_of(edit)
        texts = [v for v in arguments.values() if isinstance(v, str)]
    else:
        texts = [arguments] if isinstance(arguments, str) else []
    for text in texts:
        for how, path in _PATCH_FILE.findall(text) if "*** " in text else ():  # every match opens on it
            yield path.strip(), how.lower()


def _argument_ids(arguments: object) -> Iterator[str]:
    """String values of id-like keys of tool call arguments (user_id, order_id, email...)."""
    stack = [_parsed(arguments)]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            for key, value in item.items():
                if isinstance(value, (str, int)) and _id_key(key) and 2 <= len(str(value)) <= 80:
                    yield str(value)
                elif isinstance(value, (dict, list)):
                    stack.append(value)
        elif isinstance(item, list):
            stack.extend(item)


_ID_KEY_MEMO: dict[str, bool] = {}  # an argument's name -> whether it names an id: names repeat, call after call


def _id_key(key: object) -> bool:
    name = key if isinstance(key, str) else str(key)
    found = _ID_KEY_MEMO.get(name)
    if found is None:
        if len(_ID_KEY_MEMO) >= MEMO_ENTRIES:
            _ID_KEY_MEMO.clear()
        found = _ID_KEY_MEMO[name] = _ID_KEYS.search(name) is not None
    return found


def _looks_like_command(line: str) -> bool:
    line = line.strip().removeprefix("$ ").strip()
    return bool(line) and len(line) <= 200 and line.split()[0] in _COMMAND_WORDS


def _is_path(text: str) -> bool:
    """A path, not a ratio, a date, a fraction or two words with a slash ("n/a", "start/end")."""
    if text.replace("/", "").replace(".", "").replace("-", "").isdigit():
        return False
    last = text.rstrip("/").rsplit("/", 1)[-1]
    return text.startswith(("/", "./", "../", "~/")) or "." in last or text.count("/") >= 2


_FOOTER = lazyre.compile(r"^\((?:Open file|Current directory|Interactive session): .*\)\s*$|^bash-\$\s*$", re.M)


def output_text(message: Message) -> str:
    """A tool output as printed: a Codex ``{"output": ..., "metadata": {"exit_code": N}}`` record unwrapped,
    SWE-agent's "(Open file: ...)(Current directory: ...) bash-$" footer cut off."""
    return str(remembered(_printed, content_text(message)))


def _printed(text: str) -> str:
    text = _FOOTER.sub("", text).rstrip()
    if text.startswith('{"output"'):
        try:
            value = json.loads(text)
        except ValueError:
            return text
        if isinstance(value, dict) and isinstance(value.get("output"), str):
            metadata = value.get("metadata")
            code = metadata.get("exit_code") if isinstance(metadata, dict) else None
            return value["output"] + (f"\nProcess exited with code {code}" if isinstance(code, int) else "")
    return text


def error_lines(text: str) -> Iterator[str]:
    """Lines of tool output that report an error, as printed."""
    if not any(word in text for word in _ERROR_WORDS) and _E_SPACED.search(text) is None:
        return
    for line in text.splitlines():
        stripped = line.strip()
        if 4 <= len(stripped) <= 300 and _ERROR_LINE.match(stripped) and not _SOURCE_LINE.match(stripped):
            yield stripped


def _ids(text: str, prose: bool = True) -> Iterator[str]:
    """Ids in text; issue numbers (#12) only in prose, where a build log's step "#12" is not."""
    # A pattern is not tried on a text lacking a character every match of it holds (most tool output).
    uuids = _UUID.findall(text) if "-" in text and _UUID_GATE.search(text) else []
    yield from uuids
    if uuids:
        text = _UUID.sub(" ", text)
    # Every match but an e-mail address's or a UUID's holds a digit, which most prose lacks.
    digits = _DIGIT.search(text) is not None
    for match in _ISSUE_REF.finditer(text) if prose and digits else ():
        yield match.group(0)
    for pattern, needed, gate in zip(_ID_PATTERNS, _ID_NEEDS, _ID_GATES, strict=True):
        for start, end in _lines_holding(gate, text) if needed in text and (digits or needed == "@") else ():
            for match in pattern.finditer(text, start, end):
                yield match.group(0)
    for start, end in _lines_holding(_SHA_GATE, text) if digits else ():
        for match in _SHA.finditer(text, start, end):
            sha = match.group(0)
            # A hunk marker (178d167) is digits around one letter; a real sha has letters spread out.
            if not _HUNK.match(sha) and sum(c.isalpha() for c in sha) >= 2:
                yield sha


def _lines_holding(gate: re.Pattern[str], text: str) -> Iterator[tuple[int, int]]:
    """Where each line of ``text`` (cut at line feeds) holding a match of ``gate`` starts and ends, in order.

    Most lines of tool output hold no gate's match. No match of an id pattern (or of a gate) holds a
    line break, nor do their look-arounds tell one from the text's end, so each finds in a line searched
    in place what it finds there in the whole text (tests/summarizers/test_prefilters.py)."""
    at = 0
    while (hit := gate.search(text, at)) is not None:
        start = text.rfind("\n", 0, hit.start()) + 1
        end = text.find("\n", hit.end())
        end = len(text) if end < 0 else end
        yield start, end
        at = end + 1


def _result_lines(text: str) -> list[str]:
    """The lines of ``text.splitlines()`` a number may start in (_NUMBER_GATE) that are result lines."""
    if _NUMBER_START.search(text) is None:
        return []
    if OTHER_BREAKS.search(text) is not None:  # lines cut where a line feed is not: each line tried
        lines = [line for line in text.splitlines() if _NUMBER_GATE.search(line) is not None]
    else:
        lines = _RESULT_LINE_CANDIDATE.findall(text)
    return [line for line in lines if is_result_line(line.strip())]


def _numbers(text: str) -> Iterator[str]:
    if _DIGIT.search(text) is None:  # every number, and every progress bar, holds a digit
        return
    text = _PROGRESS_BAR.sub(" ", text)
    for match in _NUMBER.finditer(text):
        label = _NUMBER_LABEL.search(text[max(0, match.start() - 40) : match.start()])
        words = label.group(0).strip() if label else ""
        yield f"{words} {match.group(0)}".strip() if words else match.group(0)


_FACTS_MEMO, _LINES_MEMO, _ARGUMENTS_MEMO = Memo(MEMO_ENTRIES), Memo(MEMO_ENTRIES), Memo(MEMO_ENTRIES)


def read_arguments(arguments: object) -> object:
    """A tool call's arguments parsed, remembered by their text: shared, so read, never changed."""
    if not isinstance(arguments, str):
        return arguments
    return _ARGUMENTS_MEMO.found(arguments, _parsed, arguments)


def error_lines_of(text: str) -> tuple[str, ...]:
    """``error_lines`` of a text, remembered by the text."""
    return _LINES_MEMO.found(text, lambda text: tuple(error_lines(text)), text)


def facts(messages: list[Message]) -> list[Fact]:
    """Every fact in the messages, each text once, at the message it was last seen in.

    The order is the order of first appearance; ``at`` says how recent each one is. What one
    message yields does not depend on where it stands (only on whether it is tool output), so
    it is found once and remembered (``_message_facts``).
    """
    # text -> [kind, at, touched], made Facts at the end: a fact seen again is updated in place
    # (the dict keeps where it was first seen), not a new frozen Fact at every sighting.
    seen: dict[str, list[Any]] = {}
    previous: Message | None = None
    for at, message in enumerate(messages):
        if message.get("is_demo") is True:  # writings.is_demonstration, inline: run for every message of every span
            previous = message
            continue
        role = message.get("role")
        output = role == "tool" or (role == "user" and answers_as_tool_output(message, previous))
        previous = message
        for kind, text, touched in by_message(_facts_as_output if output else _facts_as_said, message):
            old = seen.get(text)
            if old is None:
                seen[text] = [kind, at, touched]
            else:
                if touched:
                    old[0] = kind
                old[1] = at
                old[2] = old[2] or touched
    return [Fact(kind, text, at, touched) for text, (kind, at, touched) in seen.items()]


def _digest_facts(message: Message, output: bool) -> tuple[tuple[str, str, bool], ...]:
    """``_message_facts``, remembered by the message's digest (and whether it is read as tool output)."""
    key = message_key(message)
    return _FACTS_MEMO.found(None if key is None else (key, output), _message_facts, message, output)  # type: ignore[no-any-return]


# A message read as tool output, and as what was said: two functions, kept apart by the replay's memo.
_facts_as_output, _facts_as_said = partial(_digest_facts, output=True), partial(_digest_facts, output=False)


def _message_facts(message: Message, output: bool) -> tuple[tuple[str, str, bool], ...]:
    """``(kind, text, touched)`` of every fact one message holds, in the order they are met.

    ``output``: the message is tool output (a tool result, or an observation sent back as a user message).
    Its text's facts are found once per text: an agent reads a file, runs tests again and again (1,357
    outputs, 476 texts in the 2,000-turn tool agent)."""
    found: list[tuple[str, str, bool]] = []
    role = message.get("role")
    text = output_text(message) if role == "tool" else content_text(message)
    for call in tool_calls_of(message):
        raw = function_of(call).get("arguments")  # found once per arguments text: an agent repeats its calls
        found += remembered(_call_facts, raw) if isinstance(raw, str) else _call_facts(raw)
    action = message.get("action")
    if isinstance(action, str) and action.strip():
        _add(found, "command", action.strip().splitlines()[0][:200])
        for _, path in _SWE_FILE_ACTION.findall(action):
            _add(found, "path", path, touched=True)
    if output:
        return (*found, *remembered(_output_facts, text))
    if role == "user":
        # A producer's own summary (kind "summary") holds facts; harness text holds none.
        text = "" if annotations_of(message).get("kind") == "harness" else strip_harness(text)
    return (*found, *remembered(_SAID_BY_AGENT if role == "assistant" else _SAID, text))


def _call_facts(raw: object) -> tuple[tuple[str, str, bool], ...]:
    """A tool call's facts, in order: its command, the paths it touched, its id-like argument values."""
    found: list[tuple[str, str, bool]] = []
    arguments = read_arguments(raw)
    if command := command_of(arguments):
        _add(found, "command", command.splitlines()[0][:200])
    for path, _ in paths_of(arguments):
        _add(found, "path", path, touched=True)
    for value in _argument_ids(arguments):
        _add(found, "id", value)
    return tuple(found)


def _add(found: list[tuple[str, str, bool]], kind: str, text: str, touched: bool = False) -> None:
    # Sentence punctuation is not part of a path or an id; a command's last character is its own.
    text = text.strip() if kind == "command" else text.strip().rstrip(".,;:")
    if len(text) >= 2:
        found.append((kind, text, touched))


def _output_facts(text: str) -> tuple[tuple[str, str, bool], ...]:
    """The facts a tool output's text holds: its error lines, ids and the numbers of its result lines."""
    found: list[tuple[str, str, bool]] = []
    for line in error_lines_of(text):
        _add(found, "error", line)
    for found_id in _ids(text, prose=False):
        _add(found, "id", found_id)
    # Numbers from result lines ("13 passed in 2.1 s"), not from the code a file view shows.
    for line in _result_lines(text):
        for number in _numbers(line):
            _add(found, "number", number)
    return tuple(found)  # listings, grep hits and file views are not what the session is about


def _prose_facts(text: str, agent: bool) -> tuple[tuple[str, str, bool], ...]:
    """The facts said in ``text`` (by the agent: a short fenced block is a command it ran)."""
    found: list[tuple[str, str, bool]] = []
    # Each pattern is tried only where a string every match of it holds is there (most prose has none).
    for block in FENCE.findall(text) if "```" in text else ():
        lines = [line for line in block.splitlines() if line.strip()]
        if 0 < len(lines) <= 3 and agent:
            for line in lines:
                if _looks_like_command(line):
                    _add(found, "command", line.strip().removeprefix("$ "))
    prose = FENCE.sub(" ", text) if "```" in text else text
    for inline in INLINE_CODE.findall(prose) if "`" in prose else ():
        if _looks_like_command(inline):
            _add(found, "command", inline)
    for line in prose.splitlines() if "$ " in prose else ():
        stripped = line.strip()
        if stripped.startswith("$ ") and _looks_like_command(stripped):
            _add(found, "command", stripped[2:])
    for match in _NAME.finditer(prose) if any(cue in prose for cue in _NAME_CUES) else ():
        _add(found, "name", match.group(1))
    for found_id in _ids(prose):
        _add(found, "id", found_id)
    urls = "http" in prose
    for match in _URL.finditer(prose) if urls else ():
        _add(found, "path", match.group(0))
    scanned = _URL.sub(" ", prose) if urls else prose
    for match in _PATH.finditer(scanned) if "/" in scanned or _PATH_EXTENSION.search(scanned) else ():
        if _is_path(match.group(0)):
            _add(found, "path", match.group(0))
    for number in _numbers(prose):
        _add(found, "number", number)
    return tuple(found)


_SAID_BY_AGENT, _SAID = partial(_prose_facts, agent=True), partial(_prose_facts, agent=False)  # remembered apart
