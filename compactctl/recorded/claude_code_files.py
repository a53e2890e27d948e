"""What Claude Code 1.0.x told the model about files changed on disk, which its log does not hold.

Before each call after a round of tool results, Claude Code checks every file it has read or
edited (``readFileState``, one map shared by the main thread and its subagents): where the
file's mtime is newer than its read, it reads the file again and sends the model a system
reminder with the changed part (cli.js 1.0.69 and 1.0.108, ``changed_files``: an
``edited_text_file`` attachment, its snippet the ``structuredPatch`` hunks of the old and new
text with 8 lines of context, the new lines numbered as ``cat -n`` does and the hunks joined
by ``...``). Measured with the real 1.0.108 against the loopback fake: after a Bash
``sed -i`` on a file it had read, the next request carries the reminder inside that command's
tool result, and the session file logs the result without it.

The log does hold what the client knew: every Read's text, every Edit's ``originalFile`` and
every Write's content (``toolUseResult``), and the output of a ``cat`` of one file (1.0.x also
watches the files a Bash command showed, ``_shown``). Where a later Read or Edit shows the file other than
the session left it, something outside changed it (``prettier --write``, a formatter, the
user); the reminder is rebuilt from the two texts and placed after the command that most likely
changed it (a formatter, else one naming the file, else the first command in between).

A file a formatter rewrote and the log never shows again still got its reminder. Where the
formatter names the files it changed (``prettier --write`` lists each file, unchanged ones marked
``(unchanged)``; ``black`` says ``reformatted <file>``) and the log holds the file whole, the
reminder is estimated from the one rewrite every formatter makes (``formatted_estimate``).
Measured on kesslerio/attio-mcp-server's sidechain: after ``npm run format`` its usage rises by
7,353 tokens more than the log explains (6,558 cl100k at the file's fitted ratio 1.1212). The
real prettier 3.10 (``--single-quote --trailing-comma es5``) run on the two files the output lists
as changed, as the log last shows them, gives reminders of 6,571 cl100k tokens; the estimate
4,780 (73 %).

A file the client last read in part (it holds only the lines read) and a ``sed -i`` or ``perl -pi``
then named gets a reminder of nearly the whole file, whatever the edit changed: cli.js 1.0.69 diffs the
held lines against the whole file it reads back. Estimated from the file as last seen whole
(``edited_in_place``); on the real 1.0.69 (the IDE fixture's second prompt: lines 10-19 read, then
``sed -i '1i // top'``) 1,019 cl100k tokens for the 1,037 sent. A later whole view replaces it.

Only 1.x files with no ``attachment`` record: later versions log their attachments themselves.
"""

from __future__ import annotations

import difflib
import posixpath
import shlex
from dataclasses import dataclass
from typing import Any

from compactctl import lazyre

CONTEXT_LINES = 8  # cli.js: structuredPatch(..., {context: 8})
# Claude Code's Read refuses a file over its token limit; its changed-file check then sends nothing.
MAX_FILE_CHARS = 100_000
NOTE = (
    "Note: {path} was modified, either by the user or by a linter. Don't tell the user this, since they are "
    "already aware. This change was intentional, so make sure to take it into account as you proceed (ie. "
    "don't revert it unless the user asks you to). So that you don't need to re-read the file, here's the "
    "result of running `cat -n` on a snippet of the edited file:\n"
)
# Commands that rewrite files in place: the likeliest cause of a change seen after them.
_REWRITES = lazyre.compile(
    r"prettier[^|;&]*(--write|-w\b)|\brun (format|fmt|lint:fix|fix)\b|--fix\b|\bblack\b|ruff format|gofmt|rustfmt"
    r"|clang-format|sed -i|perl -pi"
)
# What a formatter prints for each file it rewrote: prettier --write (``src/a.ts 53ms``; an unchanged
# file ends ``(unchanged)``) and black (``reformatted src/a.py``).
_PRETTIER_LINE = lazyre.compile(r"(?m)^(\S[^\n]*?) \d+(?:\.\d+)?m?s$")
_BLACK_LINE = lazyre.compile(r"(?m)^reformatted (\S[^\n]*)$")
_CAT = lazyre.compile(r"cat ([\w./@+-]+)")  # one file, no options, pipes or redirections
BASH_OUTPUT_CHARS = 30_000  # the Bash tool cuts a longer output (cli.js 1.0.69: 30000, BASH_MAX_OUTPUT_LENGTH)
_GIT = lazyre.compile(r"\bgit (checkout|stash|reset --hard|pull|merge|rebase)\b|\bgit restore (?!--staged)")


@dataclass
class _State:
    """What the log shows the client held of one file: the whole text as last seen, and the Reads of
    some of its lines since (the client then holds only those lines)."""

    content: str
    record: int  # the record that showed it
    reads: list[tuple[int, int, str]]  # (record, first line, text) of each partial Read since


def logs_own_attachments(values: list[dict[str, Any]]) -> bool:
    """Whether the file is from a version that writes its attachments (2.x) or names none (not 1.x)."""
    if any(v.get("type") == "attachment" for v in values):
        return True
    versions = {str(v.get("version")) for v in values if v.get("version")}
    return not versions or not all(version.startswith("1.") for version in versions)


def snippet(old: str, new: str) -> str:
    """The reminder's snippet: each hunk's context and new lines, numbered from the hunk's old start,
    as the client's diff library gives them (jsdiff's structuredPatch: a file's last newline ends its
    last line, and a last line with none is followed by ``No newline at end of file``)."""
    before, old_ends = _lines(old)
    after, new_ends = _lines(new)
    hunks = []
    for group in difflib.SequenceMatcher(None, before, after, autojunk=False).get_grouped_opcodes(CONTEXT_LINES):
        start = group[0][1] + 1
        lines: list[str] = []
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                lines += before[i1:i2]
                if i2 == len(before) and j2 == len(after) and not (old_ends and new_ends):
                    lines.append(NO_NEWLINE)
                continue
            if i2 == len(before) and i2 > i1 and not old_ends:
                lines.append(NO_NEWLINE)  # follows the removed last line, which the snippet leaves out
            lines += after[j1:j2]
            if j2 == len(after) and j2 > j1 and not new_ends:
                lines.append(NO_NEWLINE)
        hunks.append("\n".join(f"{str(start + k).rjust(6)}→{line}" for k, line in enumerate(lines)))
    return "\n...\n".join(hunks)


NO_NEWLINE = " No newline at end of file"  # jsdiff's "\\ No newline at end of file", its first character cut


def _lines(text: str) -> tuple[list[str], bool]:
    """A text's lines and whether its last one ends with a newline (an empty text: none, and it does)."""
    if not text:
        return [], True
    ends = text.endswith("\n")
    return (text[:-1] if ends else text).split("\n"), ends


def reminder(path: str, old: str, new: str) -> str:
    return f"<system-reminder>\n{NOTE.format(path=path)}{snippet(old, new)}\n</system-reminder>"


def changed_file_reminders(values: list[dict[str, Any]]) -> dict[int, list[str]]:
    """Per record index of a tool result, the reminders Claude Code sent with it and did not log."""
    if logs_own_attachments(values):
        return {}
    uses: dict[str, tuple[str, dict[str, Any]]] = {}  # tool_use id -> (tool name, input)
    results: list[tuple[int, str]] = []  # (record, Bash command) of every tool result, in order
    states: dict[str, _State] = {}
    found: dict[int, list[str]] = {}
    pending: dict[str, tuple[int, str]] = {}  # path -> (record, estimated reminder) of an unseen rewrite
    for at, value in enumerate(values):
        message = value.get("message")
        content = message.get("content") if isinstance(message, dict) else None
        if not isinstance(content, list):
            continue
        if value.get("type") == "assistant":
            for block in content:
                if isinstance(block, dict) and block.get("type") == "tool_use" and isinstance(block.get("id"), str):
                    uses[block["id"]] = (str(block.get("name")), block.get("input") or {})
            continue
        if value.get("type") != "user":
            continue
        for block in content:
            if not isinstance(block, dict) or block.get("type") != "tool_result":
                continue
            name, arguments = uses.get(str(block.get("tool_use_id")), ("", {}))
            command = str(arguments.get("command") or "") if name == "Bash" else ""
            seen = _observed(name, value.get("toolUseResult"))
            if seen is None and command:
                seen = _shown(command, value.get("toolUseResult"), str(value.get("cwd") or ""))
            if seen is not None:
                path, disk, after, start, full = seen
                state = states.get(path)
                # Only a whole file seen tells what the client read back (it diffs what it held, a
                # Read's lines or the whole file, against the whole file it finds).
                if state is not None and disk is not None and full and len(disk) <= MAX_FILE_CHARS:
                    sent = _reminder_for(path, state, disk, results)
                    if sent is not None:
                        found.setdefault(sent[0], []).append(sent[1])
                        pending.pop(path, None)  # seen again: the reminder is rebuilt, not estimated
                if full:
                    states[path] = _State(after, at, [])
                elif state is not None:
                    state.reads.append((at, start, after))
            results.append((at, command))
            output = _text_of(block.get("content")) if command else ""
            for path in rewritten(command, output, str(value.get("cwd") or "")) if command else ():
                state = states.get(path)
                if state is not None and not state.reads and path not in pending:
                    pending[path] = (at, reminder(path, state.content, formatted_estimate(state.content)))
            for path in edited_in_place(command, str(value.get("cwd") or "")) if command else ():
                state = states.get(path)
                if state is not None and state.reads and path not in pending:
                    # The client holds only the lines it last read: its snippet is the whole file,
                    # whatever the edit changed (the file as last seen whole stands in for it).
                    pending[path] = (at, reminder(path, state.reads[-1][2], state.content))
    for at, text in pending.values():
        found.setdefault(at, []).append(text)
    return found


def _text_of(content: Any) -> str:
    if isinstance(content, list):
        return "\n".join(str(b.get("text") or "") for b in content if isinstance(b, dict))
    return str(content or "")


def rewritten(command: str, output: str, cwd: str) -> list[str]:
    """The files a formatter command says it changed, as absolute paths (none for other commands)."""
    if not _REWRITES.search(command) and not _REWRITES.search(output[:2000]):
        return []  # npm run format echoes the formatter's own command line
    if "prettier" in command or "prettier" in output[:2000]:
        names = [m.group(1) for m in _PRETTIER_LINE.finditer(output)]
    elif "black" in command:
        names = [m.group(1) for m in _BLACK_LINE.finditer(output)]
    else:
        return []
    return [posixpath.normpath(posixpath.join(cwd, name.strip())) for name in names]


def edited_in_place(command: str, cwd: str) -> list[str]:
    """The files an in-place editor (``sed -i``, ``perl -pi``) is given, as absolute paths: each
    operand of the command that is no option (the script among them, which names no watched file)."""
    found: list[str] = []
    for part in _SEPARATORS.split(command):
        try:
            words = shlex.split(part)
        except ValueError:  # an unclosed quote: not a command to read
            continue
        if words and posixpath.basename(words[0]) in ("sed", "gsed", "perl") and any(map(_in_place, words[1:])):
            found += [posixpath.normpath(posixpath.join(cwd, w)) for w in words[1:] if not w.startswith("-")]
    return found


def _in_place(word: str) -> bool:
    """Whether an option word asks for an edit in place: ``--in-place``, or ``i`` among short options
    (``-i``, ``-i.bak``, ``-pi``; not ``-M...``, whose module name may hold an ``i``)."""
    if word.startswith("--"):
        return word.split("=")[0] == "--in-place"
    return word.startswith("-") and not word.startswith("-M") and "i" in word[1:].split(".")[0]


_SEPARATORS = lazyre.compile(r"&&|\|\||;|\|")


def formatted_estimate(text: str) -> str:
    """The file as its formatter left it, as far as any formatter's settings agree: trailing blanks
    gone (prettier and black strip them whatever else they are told; a model writes indented blank
    lines). A lower bound of the reminder's snippet; a file already formatted stays as it is."""
    return "\n".join(line.rstrip() for line in text.split("\n"))


def _observed(name: str, result: Any) -> tuple[str, str | None, str, int, bool] | None:
    """What a tool's result shows of a file: (path, its text on disk before the tool if known, its text
    after, the first line that text holds, whether it is the whole file)."""
    if not isinstance(result, dict):
        return None
    if name == "Read" and isinstance(result.get("file"), dict):
        file = result["file"]
        text, path = file.get("content"), file.get("filePath")
        if not isinstance(text, str) or not isinstance(path, str):
            return None
        start = int(file.get("startLine") or 1)
        full = start == 1 and file.get("numLines") == file.get("totalLines")
        return path, text, text, start, full
    path = result.get("filePath")
    if not isinstance(path, str):
        return None
    if name == "Edit" and isinstance(result.get("originalFile"), str):
        original = result["originalFile"]
        old, new = str(result.get("oldString") or ""), str(result.get("newString") or "")
        edited = original.replace(old, new) if result.get("replaceAll") else original.replace(old, new, 1)
        return path, original, edited, 1, True
    if name == "MultiEdit" and isinstance(result.get("originalFileContents"), str):
        original = edited = result["originalFileContents"]
        for edit in result.get("edits") or []:
            if isinstance(edit, dict):
                old, new = str(edit.get("old_string") or ""), str(edit.get("new_string") or "")
                edited = edited.replace(old, new) if edit.get("replace_all") else edited.replace(old, new, 1)
        return path, original, edited, 1, True
    if name == "Write" and isinstance(result.get("content"), str):
        return path, None, result["content"], 1, True
    return None


def _shown(command: str, result: Any, cwd: str) -> tuple[str, str | None, str, int, bool] | None:
    """A file a ``cat`` of it alone showed whole: 1.0.x asks a small model after each Bash command which
    files its output showed, and watches them as it does the files it Read (cli.js 1.0.69, the Bash
    tool's ``command_paths`` query; measured with the real 1.0.69 against the loopback fake). The text
    is not taken as the disk's for a change (the output is trimmed), only as what the client held."""
    match = _CAT.fullmatch(command.strip())
    if match is None or not isinstance(result, dict) or result.get("stderr") or result.get("interrupted"):
        return None
    stdout = result.get("stdout")
    if not isinstance(stdout, str) or len(stdout) >= BASH_OUTPUT_CHARS:
        return None  # cut: not the whole file
    return posixpath.normpath(posixpath.join(cwd, match.group(1))), None, stdout, 1, True


def _reminder_for(path: str, state: _State, disk: str, results: list[tuple[int, str]]) -> tuple[int, str] | None:
    """Where the file seen now differs from what the log last showed of it: the tool result the
    client's reminder went with, and the reminder (its snippet against what the client then held)."""
    held = [state.content, *(text for _, _, text in state.reads)]
    # A file ``cat`` showed is held without its last newlines (the Bash tool trims its output).
    same = disk.rstrip("\n") == state.content.rstrip("\n")
    if same and all(_agrees(disk, start, text) for _, start, text in state.reads):
        return None
    place = _cause(results, state.record)
    if place is None:
        return None
    # What the client held when it looked: the last of the file's Reads before the change, if any.
    before = [text for at, _, text in state.reads if at < place]
    return place, reminder(path, before[-1] if before else held[0], disk)


def _agrees(disk: str, start: int, text: str) -> bool:
    lines = text.split("\n")
    return disk.split("\n")[start - 1 :][: len(lines)] == lines


def _cause(results: list[tuple[int, str]], since: int) -> int | None:
    """The tool result after ``since`` the reminder went with: the command likeliest to have changed the file."""
    between = [(at, command) for at, command in results if at > since]
    commands = [(at, command) for at, command in between if command]
    for pattern in (_REWRITES, _GIT):
        chosen = next((at for at, command in commands if pattern.search(command)), None)
        if chosen is not None:
            return chosen
    if commands:
        return commands[0][0]
    return between[0][0] if between else None
