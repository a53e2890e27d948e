"""The sections of a span, found in its own text: what the extractive summarizer reads.

``extract`` fills Goal, Progress, Current state, Facts (the ledger), Decisions, Next steps and
Constraints from the messages; summaries met in the span are read back section by section
(``parse_summary``), so folding a summary into the next one keeps every item. Choosing what
fits the budget and writing the summary out is ``extractive.py``'s.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field

from compactctl import lazyre
from compactctl.message_memo import by_message, each_by_message
from compactctl.summarizers import SECTIONS
from compactctl.summarizers.ledger import Fact, command_of, error_lines_of, facts, output_text, paths_of, read_arguments
from compactctl.summarizers.lines import lines_with
from compactctl.summarizers.memo import MEMO_ENTRIES, Memo, remembered
from compactctl.summarizers.writings import CaseBlind, constraints_written, is_demonstration, sentences, writings
from compactctl.transcript import Message, content_text, function_of, tool_calls_of

_PROGRESS = CaseBlind(
    r"\b(?:done|fixed|created|added|updated|changed|removed|implemented|passed|completed|succeeded|found|confirmed|"
    r"verified|booked|cancelled|canceled|refunded|resolved|modified|replaced|installed|reproduced|applied|"
    r"pushed|merged|committed|I have|I've|we have|we've|has been|have been|is now|are now|"
    r"c'est fait|j'ai|nous avons|a été|ont été|effectué|envoyé|commandé|remboursé|corrigé|ajouté|trouvé|vérifié)\b"
)


_DECISION = CaseBlind(
    r"\b(?:I will|I[’']ll|we will|we[’']ll|let[’']s|let us|decided?|instead|chose|choose|going to|plan to|the fix is|"
    r"I[’']m (?:going|switching|using|adding|keeping)|switch(?:ed|ing)? to|opted|rather|in favou?r of|"
    r"proceed(?:ing)?|I can offer|I[’']ve (?:cancel|book|updat|chang|issu|process)\w*|"
    r"approach|will use|should|agreed|offer(?:ed)?|prefer|because|so that|"
    r"je vais|nous allons|on va|je propose|je vous propose|décid\w*|plutôt|au lieu de|proposer)\b"
)


_NEXT = CaseBlind(
    r"\b(?:next|then|remaining|still need|todo|to do|need to|will|plan|pending|after that|let me|I[’']ll|"
    r"ensuite|puis|prochaine?|reste à|il reste|vous recevrez|je vous tiendrai|dès que)\b"
)


# What the user settles: "let's use X", "go with B", "ignore that", "keep the old API".
_USER_DECISION = CaseBlind(
    r"\b(?:let[’']s|go with|go ahead|use|switch to|instead|decided?|choose|prefer|keep|drop|ignore|skip|"
    r"merge|approved?|agreed?|fine with|yes|confirm|proceed|please do|cancel|book|upgrade|refund|"
    r"oui|d'accord|vas-y|allez-y|sí|vale|ja|genau|はい|好的|네)\b"
)


_TEST_RESULT = lazyre.compile(
    r"\b\d+ (?:passed|failed|failing|passing|skipped)\b|\bFAILED\b|^FAIL\b|^OK\b|\bTests?:\s+\d|failures=\d"
    r"|errors=\d|Test Files\s|All tests passed|^Ran \d+ tests?",
    re.M,
)
# A word of every branch of _TEST_RESULT (it ignores no case): a text holding none of them has no
# test-result line, so it is not split and searched line by line, which most tool output is not.
_TEST_RESULT_WORDS: tuple[str, ...] = (
    "passed",
    "failed",
    "failing",
    "passing",
    "skipped",
    "FAIL",
    "OK",
    "Test",
    "failures=",
    "errors=",
)
_TEST_RESULT_WORDS += ("Ran ",)


_EXIT_CODE = lazyre.compile(r"(?:Process exited with code|Exit code:?|exit code|exited with)\s*(-?\d+)", re.I)
# "xit", in every spelling _EXIT_CODE's re.I takes (İ and ı match its i): looked for first, and fast (case
# blind, the alternation is tried at every character; tests/summarizers/test_redact_gates.py).
_EXIT_GATE = lazyre.compile("[xX][iIİı][tT]")


_CREATES = ("write", "create", "add")


_READS = ("read", "view", "open", "cat", "glob", "grep", "ls", "notebookread")


FACT_LABELS = {"path": "Paths", "id": "Ids", "error": "Errors", "number": "Numbers", "name": "Names"}


_LABEL_KINDS = {label: kind for kind, label in FACT_LABELS.items()}


SEPARATOR = " | "


MAX_ITEM_CHARS = 300


_COMMANDS_WITH_OUTCOMES = 10  # the latest ones; the ledger lists the rest as shell text


REQUEST_CHARS = 600  # earlier requests are quoted up to this; the latest one always whole


LATEST = "Current request: "


@dataclass
class Sections:
    """Items per section, in the order they were met; facts apart, with their kind."""

    items: dict[str, list[str]] = field(default_factory=lambda: {name: [] for name in SECTIONS if name != "Facts"})
    facts: list[Fact] = field(default_factory=list)
    # Membership sets beside the ordered lists: a long span yields thousands of items.
    _seen_items: set[tuple[str, str]] = field(default_factory=set)
    _seen_facts: set[str] = field(default_factory=set)

    def add(self, section: str, item: str) -> None:
        if item and (section, item) not in self._seen_items:
            self._seen_items.add((section, item))
            self.items[section].append(item)

    def add_fact(self, fact: Fact) -> None:
        if fact.text not in self._seen_facts:
            self._seen_facts.add(fact.text)
            self.facts.append(fact)

    def absorb(self, other: Sections) -> None:
        for section, items in other.items.items():
            for item in items:
                self.add(section, item)
        for fact in other.facts:
            self.add_fact(fact)


def parse_summary(text: str) -> Sections | None:
    """Read back a summary in this module's layout; None when the text is not one."""
    if "## " not in text:  # no heading line: not a summary (asked of every message of every span)
        return None
    found = Sections()
    section: str | None = None
    headings = 0
    items: list[tuple[str, list[str]]] = []
    for line in text.splitlines():
        if line.startswith("## "):
            name = line[3:].strip()
            section = name if name in SECTIONS else None
            headings += section is not None
            continue
        if section is None:
            continue
        if line.startswith("- "):
            items.append((section, [line[2:]]))
        elif line.startswith("  ") and items and items[-1][0] == section:
            items[-1][1].append(line[2:])  # a multi-line item (a request quoted whole)
    for section, lines in items:
        item = "\n".join(lines)
        if section != "Facts":
            found.add(section, item)
        elif item.startswith("$ "):
            found.add_fact(Fact("command", item[2:], -1))
        else:
            label, _, rest = item.partition(": ")
            kind = _LABEL_KINDS.get(label)
            for text_ in rest.split(SEPARATOR) if kind else [item]:
                found.add_fact(Fact(kind or "id", text_, -1, touched=kind == "path"))
    return found if headings >= 2 else None


def clip(sentence: str, limit: int = MAX_ITEM_CHARS) -> str:
    sentence = " ".join(sentence.split()) if "\n" in sentence and limit < len(sentence) else sentence
    return sentence if len(sentence) <= limit else sentence[: limit - 1] + "…"


@dataclass(frozen=True)
class Artifact:
    """What the agent did to one file, or one command it ran and how that ended."""

    at: int
    text: str


def _tool_name(call: dict) -> str:
    function = call.get("function") if isinstance(call, dict) else None
    return str(function.get("name", "")) if isinstance(function, dict) else ""


def _results(messages: list[Message]) -> dict[str, Message]:
    return {str(m.get("tool_call_id")): m for m in messages if m.get("role") == "tool"}


def _outcome(result: Message | None) -> str:
    """How a command ended, in a few words taken from its output."""
    if result is None:
        return "no output recorded"
    return str(remembered(_outcome_of, output_text(result)))


def _outcome_of(text: str) -> str:
    code = _EXIT_CODE.search(text) if _EXIT_GATE.search(text) else None
    errors = error_lines_of(text)
    tests = _test_lines(text)
    status = f"exit {code.group(1)}" if code else ""
    detail = tests[-1] if tests else (errors[-1] if errors else "")
    if not detail and not status:
        lines = [line.strip() for line in text.splitlines() if line.strip()]
        detail = lines[-1] if lines else "no output"
    return clip("; ".join(part for part in (status, detail) if part), 160)


@dataclass(frozen=True)
class _Acts:
    """What one message adds to ``artifacts``, worked out once per message in a replay (``by_message``)."""

    tests: tuple[str, ...]  # its last test-result line, for a tool output
    # per tool call: its id, "Ran `command`: " (None: no command), its tool's name, (path, verb) it touched
    calls: tuple[tuple[str, str | None, str, tuple[tuple[str, str], ...]], ...]
    action: str | None  # "Ran `action`: " for an assistant's SWE-agent action


def _acts(message: Message) -> _Acts:
    tests = remembered(_last_test_line, output_text(message)) if message.get("role") == "tool" else ()
    calls = []
    for call in tool_calls_of(message):
        name = _tool_name(call)
        raw = function_of(call).get("arguments")
        # Found once per tool and arguments (an agent reads the same files, runs the same commands).
        key = (name, raw) if isinstance(raw, str) else None
        ran, touched = _CALL_ACTS.found(key, _call_acts, name, raw)
        calls.append((str(call.get("id")), ran, name, touched))
    action = message.get("action")
    ran_action = None
    if isinstance(action, str) and action.strip() and message.get("role") == "assistant":
        ran_action = f"Ran `{clip(action.strip().splitlines()[0], 200)}`: "
    if not tests and not calls and ran_action is None:
        return _NO_ACTS  # most messages (what was said, outputs with no test line): one shared value
    return _Acts(tests, tuple(calls), ran_action)


_NO_ACTS = _Acts((), (), None)
_CALL_ACTS = Memo(MEMO_ENTRIES)  # (tool name, arguments text) -> ``_call_acts``


def _call_acts(name: str, raw: object) -> tuple[str | None, tuple[tuple[str, str], ...]]:
    """A call's "Ran `command`: " (None: no command) and the (path, verb) it touched."""
    arguments = read_arguments(raw)
    command = command_of(arguments)
    ran = f"Ran `{clip(command.splitlines()[0], 200)}`: " if command else None
    return ran, tuple((path, _verb(name, how, arguments)) for path, how in paths_of(arguments))


def artifacts(messages: list[Message]) -> tuple[list[Artifact], list[Artifact], list[str]]:
    """Files (edited or created first, then read) and commands with outcomes; the latest test result lines."""
    results = _results(messages)
    files: dict[str, tuple[int, set[str], dict[str, int]]] = {}  # path -> (last at, verbs, tool -> uses)
    commands: list[Artifact] = []
    tests: list[str] = []
    for at, acts in enumerate(each_by_message(_acts, messages)):
        tests += acts.tests
        for call_id, ran, name, touched in acts.calls:
            if ran is not None:
                commands.append(Artifact(at, ran + _outcome(results.get(call_id))))
            for path, verb in touched:
                entry = files.get(path)  # a new set and counter only for a path not met yet
                verbs, tools = (set(), {}) if entry is None else entry[1:]
                verbs.add(verb)
                tools[name] = tools.get(name, 0) + 1
                files[path] = (at, verbs, tools)
        if acts.action is not None:
            reply = messages[at + 1] if at + 1 < len(messages) else None
            commands.append(Artifact(at, acts.action + _outcome(reply)))
    changed: list[Artifact] = []
    read: list[Artifact] = []
    for path, (at, verbs, tools) in files.items():
        used = sorted(tools.items(), key=lambda pair: pair[1], reverse=True)  # Counter.most_common's order
        tally = ", ".join(f"{tool} x{count}" if count > 1 else tool for tool, count in used)
        verb = next((v for v in ("Created", "Edited", "Deleted") if v in verbs), "Read")
        (read if verb == "Read" else changed).append(Artifact(at, f"{verb} {path} ({tally})"))
    return changed + read, commands, tests


def _last_test_line(text: str) -> tuple[str, ...]:
    """The last line of a tool output that reports a test result (none or one)."""
    return tuple(_test_lines(text)[-1:])


def _test_lines(text: str) -> list[str]:
    """The lines of a tool output that report a test result, stripped."""
    if not any(word in text for word in _TEST_RESULT_WORDS):
        return []
    # A test-result line holds one of the words: the others (a file view's lines) are not searched.
    return [line.strip() for line in lines_with(text, _TEST_RESULT_WORDS) if _TEST_RESULT.search(line)]


def _said(text: str) -> tuple[tuple[str, str], ...]:
    """``(section, item)`` for each sentence of the agent's text that records a decision or progress."""
    found = []
    for sentence in sentences(text):
        if len(sentence.split()) < 4:
            continue
        if _DECISION.search(sentence):
            found.append(("Decisions", clip(sentence)))
        elif _PROGRESS.search(sentence):
            found.append(("Progress", clip(sentence)))
    return tuple(found)


def _settled(text: str) -> tuple[str, ...]:
    """The sentences of what the user wrote that settle something ("let's use X", "go with B")."""
    return tuple(
        "User: " + sentence
        for sentence in sentences(text)
        if _USER_DECISION.search(sentence) and len(sentence) <= 200 and len(sentence.split()) >= 2
    )


def _verb(tool: str, how: str, arguments: object) -> str:
    if how:
        return {"add": "Created", "delete": "Deleted"}.get(how, "Edited")
    lowered = tool.casefold()
    sub = str(arguments.get("command", "")).casefold() if isinstance(arguments, dict) else ""
    if sub in ("view",) or lowered in _READS or lowered.startswith(("read", "view", "get", "list")):
        return "Read"
    if sub == "create" or lowered in _CREATES or lowered.startswith("write"):
        return "Created"
    return "Edited"


def todos(messages: list[Message]) -> list[str]:
    """The open items of the agent's latest todo list (Claude Code ``TodoWrite``, Codex ``update_plan``)."""
    latest: tuple[str, ...] | None = None
    for written in each_by_message(_todos_written, messages):
        if written is not None:
            latest = written
    return list(latest or ())


def _todos_written(message: Message) -> tuple[str, ...] | None:
    """The open items of the last todo list one message's tool calls write (None: they write none), worked
    out once per message in a replay (``values_of``), not at every compaction that reads the message."""
    latest: tuple[str, ...] | None = None
    for call in tool_calls_of(message):
        arguments = read_arguments(function_of(call).get("arguments"))
        if not isinstance(arguments, dict):
            continue
        entries = arguments.get("todos") or arguments.get("plan")
        if isinstance(entries, list):
            latest = tuple(
                f"[{entry.get('status', 'pending')}] {entry.get('content') or entry.get('step')}"
                for entry in entries
                if isinstance(entry, dict)
                and (entry.get("content") or entry.get("step"))
                and entry.get("status") not in ("completed", "done")
            )
    return latest


def extract(messages: list[Message]) -> Sections:
    """The sections of a span of messages; summaries met in it are read back, not re-extracted."""
    found = Sections()
    plain: list[Message] = []
    for message in messages:
        # Remembered by the text (every message of a span is tried): the result is read, never changed.
        role = message.get("role")
        parsed = remembered(parse_summary, content_text(message)) if role in ("system", "user", "assistant") else None
        if parsed is not None:
            found.absorb(parsed)
        elif not is_demonstration(message):
            plain.append(message)
    written = writings(plain)
    if written:
        latest_at, latest = written[-1]
        earlier = [text for at, text in written[:-1] if text != latest]
        goal = [LATEST + latest]
        goal += [f"Earlier request: {clip(text, REQUEST_CHARS)}" for text in earlier[::-1][:2]]
        if len(earlier) > 2:
            goal.append(f"Original request: {clip(earlier[0], REQUEST_CHARS)}")
        # A request carried from an earlier summary is no longer the current one.
        old_goal = [item.replace(LATEST, "Earlier request: ", 1) for item in found.items["Goal"]]
        found.items["Goal"] = []
        found._seen_items = {key for key in found._seen_items if key[0] != "Goal"}
        for item in [*goal, *old_goal]:
            found.add("Goal", item)
    else:
        latest_at = -1
    for constraint in constraints_written(written):
        found.add("Constraints", constraint)
    for fact in facts(plain):
        found.add_fact(fact)
    files, commands, tests = artifacts(plain)
    for artifact in sorted(files, key=lambda a: a.at, reverse=True):
        found.add("Progress", artifact.text)
    for artifact in commands[::-1][:_COMMANDS_WITH_OUTCOMES]:
        found.add("Progress", artifact.text)
    if tests:
        found.add("Progress", f"Latest test result: {clip(tests[-1], 200)}")
    assistant = [(at, m) for at, m in enumerate(plain) if m.get("role") == "assistant"]
    tools: Counter[str] = Counter(name or "?" for _, m in assistant for _, _, name, _ in by_message(_acts, m).calls)
    for _, message in assistant[::-1]:
        for section, item in remembered(_said, content_text(message)):
            found.add(section, item)
    for _, text in written[::-1]:
        for item in remembered(_settled, text):
            found.add("Decisions", item)
    if tools:
        tally = ", ".join(f"{name} x{count}" for name, count in tools.most_common())
        found.add("Progress", f"{sum(tools.values())} tool calls: {tally}")
    _current_state(found, plain, files, commands, assistant)
    for item in todos(plain):
        found.add("Next steps", clip(item))
    for _, message in [pair for pair in assistant if pair[0] > latest_at][-3:][::-1]:
        for sentence in sentences(content_text(message)):
            if _NEXT.search(sentence) and len(sentence.split()) >= 4:
                found.add("Next steps", clip(sentence))
    if written:
        answered = any(
            at > latest_at and content_text(m).strip() and not tool_calls_of(m) and not m.get("action")
            for at, m in assistant
        )
        if answered:
            found.add("Next steps", "Check that the current request (see Goal) is fully done, then wait for the user.")
        else:
            found.add(
                "Next steps", "Finish the current request (see Goal): it was not answered yet when history was cut."
            )
    return found


def _current_state(
    found: Sections,
    plain: list[Message],
    files: list[Artifact],
    commands: list[Artifact],
    assistant: list[tuple[int, Message]],
) -> None:
    changed = [a for a in files if not a.text.startswith("Read ")]
    if changed:
        found.add("Current state", "Last file changed: " + max(changed, key=lambda a: a.at).text)
    if commands:
        found.add("Current state", "Last command: " + commands[-1].text.removeprefix("Ran "))
    # Only the last error line and the agent's last words are quoted: looked for from the end.
    error = next(
        (lines[-1] for m in reversed(plain) if m.get("role") == "tool" and (lines := error_lines_of(output_text(m)))),
        None,
    )
    if error is not None:
        found.add("Current state", "Last error: " + clip(error, 200))
    said = next((text for _, m in reversed(assistant) if (text := content_text(m).strip())), None)
    if said is not None:
        last = " ".join(list(sentences(said))[:2])
        if last:
            found.add("Current state", "The agent last said: " + clip(last))
