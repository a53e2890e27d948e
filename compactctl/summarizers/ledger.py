"""What summaries are known to lose, found in text as it was written.

File paths, commands, numbers with units, ids, error lines and names are what the
next turn needs and what prose summaries drop, so they are copied verbatim; the
user's explicit constraints are quoted, never paraphrased.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass

from compactctl.transcript import Message, annotations_of, content_text, tool_calls_of

FACT_KINDS = ("id", "name", "error", "path", "command", "number")

_PATH = re.compile(
    r"(?<![\w/:.-])(?:~|\.{1,2})?/?(?:[\w.@+-]+/)+[\w.@+-]*[\w@+-]"
    r"|(?<![\w/.-])[\w-]+(?:\.[\w-]+)*\.(?:py|pyi|js|jsx|ts|tsx|json|jsonl|md|rst|txt|toml|ya?ml|cfg|ini|sh|c|h|cc|cpp|hpp|rs|go"
    r"|java|kt|rb|php|html|css|csv|tsv|log|sql|xml|lock|traj|ipynb|env|conf|dcm|zip|tar|gz)\b"
)
_URL = re.compile(r"\bhttps?://[^\s)\]>\"'`]+")
_UNITS = (
    r"%|ms|µs|ns|s|sec|secs|seconds?|min|mins|minutes?|h|hrs?|hours?|days?|weeks?|months?|years?|"
    r"[kKMGT]i?B|bytes?|B|tokens?|USD|EUR|GBP|dollars?|euros?|€|kg|g|lbs?|km|mi|miles?|m|cm|mm|px|"
    r"passed|failed|errors?|warnings?|tests?|files?|lines?|items?|bags?|passengers?|nights?|rows?|calls?|x"
)
_NUMBER = re.compile(rf"(?:[$€£]\s?\d[\d,]*(?:\.\d+)?|(?<![\w.])\d[\d,]*(?:\.\d+)?\s?(?:{_UNITS}))(?![\w])")
_ID_PATTERNS = (
    re.compile(r"(?<![\w#])#\d+\b"),  # issue / order numbers
    re.compile(r"\b[A-Z][A-Z0-9]+-\d+\b"),  # ticket ids: PROJ-123
    # booking codes (NO6JO3) and tracking numbers (6A19384756201): a short one needs two letters,
    # so 2700K (a unit) and 08T14 (a piece of a timestamp) are not ids
    re.compile(r"\b(?=[A-Z0-9]*\d)(?=[0-9]*[A-Z])(?=(?:[0-9]*[A-Z]){2}|[A-Z0-9]{8})[A-Z0-9]{5,40}\b"),
    re.compile(r"\b[a-z]+(?:_[a-z]+)*_\d+\b"),  # user ids: mia_li_3668
    re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b"),  # uuid
    re.compile(r"\b(?=[0-9a-f]*[a-f])(?=[0-9a-f]*\d)[0-9a-f]{7,40}\b"),  # commit shas
    re.compile(r"\b[\w.+-]+@[\w-]+(?:\.[\w-]+)+\b"),  # e-mail addresses
)
_ERROR = re.compile(
    r"Traceback|\b\w*(?:Error|Exception)\b|\bERROR\b|\bFAILED\b|\bFAIL:|\bfatal:|\berror:|\bpanic:|Permission denied"
    r"|No such file|command not found|\bnot found\b|\bfailed\b",
)
_NAME = re.compile(r"\b(?:[Mm]y name is|I am|I'm|[Jj]e m'appelle|[Nn]ame:)\s+([A-Z][a-zà-ÿ]+(?:\s+[A-Z][a-zà-ÿ]+)?)")
_NAME_KEYS = re.compile(r"(?:^|_)(?:id|name|email|path|file|filename|file_name|number|code)$")
_COMMAND_KEYS = ("cmd", "command", "script", "bash", "shell")
_COMMAND_WORDS = (
    "python",
    "python3",
    "pytest",
    "pip",
    "uv",
    "git",
    "npm",
    "npx",
    "yarn",
    "node",
    "ls",
    "cd",
    "cat",
    "grep",
    "rg",
    "find",
    "make",
    "cargo",
    "go",
    "docker",
    "kubectl",
    "curl",
    "wget",
    "sed",
    "awk",
    "bash",
    "sh",
    "open",
    "edit",
    "create",
    "search_dir",
    "search_file",
    "find_file",
    "goto",
    "scroll_down",
    "scroll_up",
    "submit",
    "mkdir",
    "rm",
    "mv",
    "cp",
    "chmod",
    "tar",
    "unzip",
    "head",
    "tail",
    "echo",
    "export",
    "ruff",
    "mypy",
    "tox",
    "nc",
    "gdb",
    "objdump",
    "strings",
    "file",
    "ssh",
    "terraform",
    "psql",
    "sqlite3",
    "compactctl",
    "decompile",
    "disassemble",
    "connect_start",
    "connect_sendline",
    "debug_start",
    "str_replace_editor",
)
_PROGRESS_BAR = re.compile(r"\[\s*\d{1,3}%\]")  # pytest's "[ 37%]": a position, not a measure
_LISTING_LINE = re.compile(r"^\s*\d+:")  # a line of a numbered file view, not prose or an error
_CODE_CHARS = re.compile(r"[(){}\[\]=;<>_`\\]")
_FENCE = re.compile(r"```[\w+-]*\n(.*?)```", re.S)
_INLINE_CODE = re.compile(r"`([^`\n]{2,200})`")
_SENTENCE_END = re.compile(r"(?<=[.!?;])\s+(?=[\"'(\[A-ZÀ-Ý0-9])")

# Negations in French take "ne ... pas"; a past tense ("je n'ai rien reçu") is a statement, not a rule.
# Likewise "I don't have the reservation id" says what the speaker lacks, not what to do.
CONSTRAINT_CUES = re.compile(
    r"\b(?:never|always|must|mustn't|(?:do not|don't)(?!\s+(?:have|know|see|remember|recall|think|understand)\b)|"
    r"does not|should not|shouldn't|only|make sure|ensure|avoid|"
    r"no more than|at most|at least|required?|please keep|keep the|not allowed|forbidden|prefer|rather than|"
    r"jamais|toujours|il faut|il ne faut|uniquement|seulement|doit|doivent|devez|interdit|obligatoire|surtout|"
    r"évite[rz]?|au plus|au moins|préf[èé]r\w*|plutôt que)\b"
    r"|\bne\s+(?:\S+\s+)?(?:pas|jamais|plus|rien)\b"
    r"|\bn'(?!(?:ai|as|a|avons|avez|ont|avait|avaient|était|étaient|est)\b)\S+\s+(?:pas|jamais|plus|rien)\b",
    re.I,
)


@dataclass(frozen=True)
class Fact:
    kind: str  # one of FACT_KINDS
    text: str  # as written


def sentences(text: str) -> Iterator[str]:
    """Sentences of prose, line by line; code fences are not prose."""
    text = _FENCE.sub("\n", text)
    for line in text.splitlines():
        line = line.strip().lstrip("-*>• ").strip()
        if line:
            yield from (part.strip() for part in _SENTENCE_END.split(line) if part.strip())


_OBSERVATION_MARKS = ("(Open file:", "(Current directory:", "bash-$")


def is_observation(message: Message, previous: Message | None) -> bool:
    """Tool output sent back in a user message (SWE-agent style), not something a person wrote.

    SWE-agent marks its task message as an observation too; only what answers the
    agent (a user message right after an assistant one) is taken for tool output.
    """
    if message.get("role") != "user" or previous is None or previous.get("role") not in ("assistant", "tool"):
        return False
    if message.get("message_type") == "observation":
        return True
    text = content_text(message)
    return any(mark in text for mark in _OBSERVATION_MARKS)


def people(messages: list[Message]) -> list[Message]:
    """The user messages a person wrote: not tool output sent back as a user message, and
    not text a harness injected (``kind: "harness"``, as the Claude Code and Codex readers mark it)."""
    return [
        message
        for previous, message in zip([None, *messages], messages, strict=False)
        if message.get("role") == "user"
        and not is_observation(message, previous)
        and annotations_of(message).get("kind") != "harness"
    ]


def is_prose(sentence: str) -> bool:
    """A sentence a person wrote, not a line of code or of a file listing."""
    if _LISTING_LINE.match(sentence) or sentence.startswith(("#", "//", "'", '"')):
        return False
    return len(_CODE_CHARS.findall(sentence)) * 25 <= len(sentence)  # at most 1 code character in 25


def constraints(messages: list[Message]) -> list[str]:
    """The user's explicit constraints, sentence by sentence, verbatim and deduplicated."""
    found: dict[str, None] = {}
    for message in people(messages):
        for sentence in sentences(content_text(message)):
            if (
                len(sentence.split()) >= 3
                and len(sentence) <= 400
                and is_prose(sentence)
                and CONSTRAINT_CUES.search(sentence)
            ):
                found.setdefault(sentence, None)
    return list(found)


def _command_of(arguments: object) -> str | None:
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except ValueError:
            return None
    if isinstance(arguments, dict):
        for key in _COMMAND_KEYS:
            value = arguments.get(key)
            if isinstance(value, str) and value.strip():
                return value.strip()
    return None


def _looks_like_command(line: str) -> bool:
    line = line.strip().removeprefix("$ ").strip()
    return bool(line) and len(line) <= 200 and line.split()[0] in _COMMAND_WORDS


def _argument_values(arguments: object) -> Iterator[str]:
    """String values of id-, name- and path-like keys of tool call arguments."""
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except ValueError:
            return
    stack = [arguments]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            for key, value in item.items():
                if isinstance(value, (str, int)) and _NAME_KEYS.search(str(key)) and len(str(value)) <= 120:
                    yield str(value)
                elif isinstance(value, (dict, list)):
                    stack.append(value)
        elif isinstance(item, list):
            stack.extend(item)


def _is_path(text: str) -> bool:
    """A path, not a ratio, a date or two words with a slash ("n/a", "start/end")."""
    if text.replace("/", "").replace(".", "").isdigit():
        return False
    last = text.rstrip("/").rsplit("/", 1)[-1]
    return text.startswith(("/", "./", "../", "~/")) or "." in last or text.count("/") >= 2


def is_demonstration(message: Message) -> bool:
    """An example run shown to the agent (SWE-agent ``is_demo``): not part of this session."""
    return message.get("is_demo") is True


def facts(messages: list[Message]) -> list[Fact]:
    """Every fact in the messages, first occurrence first, each text once."""
    seen: dict[str, Fact] = {}

    def add(kind: str, text: str) -> None:
        text = text.strip().rstrip(".,;:")
        if len(text) >= 2 and text not in seen:
            seen[text] = Fact(kind, text)

    for message in messages:
        text = content_text(message)
        for call in tool_calls_of(message):
            function = call.get("function") if isinstance(call, dict) else None
            if not isinstance(function, dict):
                continue
            arguments = function.get("arguments")
            command = _command_of(arguments)
            if command:
                add("command", command.splitlines()[0][:200])
            else:
                add("command", f"{function.get('name', '')} {arguments or ''}".strip()[:200])
            for value in _argument_values(arguments):
                add("id", value)
        action = message.get("action")
        if isinstance(action, str) and action.strip():
            add("command", action.strip().splitlines()[0][:200])
        for block in _FENCE.findall(text):
            lines = [line for line in block.splitlines() if line.strip()]
            if 0 < len(lines) <= 3 and message.get("role") == "assistant":
                for line in lines:
                    if _looks_like_command(line):
                        add("command", line.strip().removeprefix("$ "))
        for inline in _INLINE_CODE.findall(text):
            if _looks_like_command(inline):
                add("command", inline)
        for line in text.splitlines():
            stripped = line.strip()
            if stripped.startswith("$ ") and _looks_like_command(stripped):
                add("command", stripped[2:])
            if (
                _ERROR.search(stripped)
                and len(stripped) <= 300
                and message.get("role") != "assistant"
                and not _LISTING_LINE.match(stripped)
            ):
                add("error", stripped)
        for match in _NAME.finditer(text):
            add("name", match.group(1))
        for pattern in _ID_PATTERNS:
            for match in pattern.finditer(text):
                add("id", match.group(0))
        for match in _URL.finditer(text):
            add("path", match.group(0))
        for match in _PATH.finditer(_URL.sub(" ", text)):
            if _is_path(match.group(0)):
                add("path", match.group(0))
        for match in _NUMBER.finditer(_PROGRESS_BAR.sub(" ", text)):
            add("number", match.group(0))
    return list(seen.values())
