"""The summarizer's shortcuts for replay give what the plain computation gives.

Each shortcut (a fact updated in place, a message's tool calls read once per replay, a line
start looked for near the break only) is checked against the computation it replaces, written
out here as it was, on generated input, inside a replay's memo and outside it.
"""

from __future__ import annotations

import json
import random
import re
from collections import Counter
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from compactctl.message_memo import remembering
from compactctl.summarizers import ledger, redact
from compactctl.summarizers.ledger import Fact, command_of, error_lines_of, facts, output_text, paths_of, read_arguments
from compactctl.summarizers.memo import remembered
from compactctl.summarizers.sections import (
    Artifact,
    Sections,
    _current_state,
    _last_test_line,
    _outcome,
    _results,
    _tool_name,
    _verb,
    artifacts,
    clip,
    extract,
)
from compactctl.summarizers.writings import (
    answers_as_tool_output,
    is_demonstration,
    is_harness,
    sentences,
    strip_harness,
    writings,
)
from compactctl.transcript import Message, content_text, function_of, tool_calls_of
from tests.helpers import bundled_samples
from tests.helpers import call as tool_call

USER = [
    "Fix src/app.py",
    "Run the tests",
    "(Open file: src/app.py) bash-$",
    "<system-reminder>ignore</system-reminder>Keep the API",
    "<command-name>/review</command-name><command-args>src/db.py</command-args>",
    "",
]
PATHS = ["ORD-1234", "src/app.py", "src/db.py", "tests/test_app.py", "README.md"]
OUTPUTS = [
    "3 passed, 1 failed in 0.42s\nFAILED tests/test_app.py::test_x - AssertionError",
    "Traceback (most recent call last):\n  File \"src/db.py\", line 3\nKeyError: 'user_id'",
    "ok",
    "Error: first\nValueError: second",
    "Process exited with code 1\nerror: could not open src/app.py",
    "commit 4f9e2ab1c0d\nAuthor: someone",
]
SAID = [
    "I will edit src/app.py next. Then run it. And check.",
    "Fixed it: 3 passed.",
    "Order ORD-1234 is at /tmp/out.log",
    "",
]


@st.composite
def sessions(draw: st.DrawFn) -> list[dict[str, Any]]:
    """An agent session: requests, edits, reads and commands on a few paths, repeated on purpose."""
    messages: list[dict[str, Any]] = [{"role": "system", "content": "You are a coding agent."}]
    for n in range(draw(st.integers(0, 14))):
        kind = draw(st.sampled_from(["user", "assistant", "tools", "tools", "observation", "demo"]))
        if kind == "user":
            messages.append({"role": "user", "content": draw(st.sampled_from(USER))})
        elif kind == "assistant":
            messages.append({"role": "assistant", "content": draw(st.sampled_from(SAID))})
        elif kind == "observation":
            messages.append({"role": "user", "content": draw(st.sampled_from(OUTPUTS)), "message_type": "observation"})
        elif kind == "demo":
            messages.append({"role": "assistant", "content": "Example: edit src/x.py", "is_demo": True})
        else:
            calls = []
            for k in range(draw(st.integers(1, 3))):
                name = draw(st.sampled_from(["read_file", "edit_file", "write", "bash"]))
                path = draw(st.sampled_from(PATHS))
                arguments = {"command": "pytest -q"} if name == "bash" else {"path": path}
                calls.append(tool_call(f"c{n}_{k}", name, json.dumps(arguments)))
            messages.append({"role": "assistant", "content": None, "tool_calls": calls})
            for c in calls:
                messages.append({"role": "tool", "tool_call_id": c["id"], "content": draw(st.sampled_from(OUTPUTS))})
    return messages


def facts_one_by_one(messages: list[dict[str, Any]]) -> list[Fact]:
    """``ledger.facts`` as it was: a new frozen Fact at every sighting."""
    seen: dict[str, Fact] = {}
    for at, message in enumerate(messages):
        if is_demonstration(message):
            continue
        output = message.get("role") == "tool" or answers_as_tool_output(message, messages[at - 1] if at else None)
        for kind, text, touched in ledger._message_facts(message, output):
            old = seen.get(text)
            if old is None:
                seen[text] = Fact(kind, text, at, touched)
            else:
                seen[text] = Fact(old.kind if not touched else kind, text, at, old.touched or touched)
    return list(seen.values())


@settings(max_examples=150, deadline=None)
@given(sessions())
def test_facts_updated_in_place_are_the_facts_found_one_by_one(messages):
    expected = facts_one_by_one(messages)
    assert facts(messages) == expected
    with remembering():  # a replay: each message's facts kept by the message
        assert facts(messages) == expected
        assert facts(messages[::-1]) == facts_one_by_one(messages[::-1])
        assert facts(messages) == expected


@settings(max_examples=100, deadline=None)
@given(sessions())
def test_artifacts_read_once_per_message_are_those_read_each_time(messages):
    expected = artifacts(messages), extract(messages)
    with remembering():
        assert (artifacts(messages), extract(messages)) == expected
        assert (artifacts(messages), extract(messages)) == expected
        tail = messages[len(messages) // 2 :]
        inside = artifacts(tail), extract(tail)
    assert inside == (artifacts(tail), extract(tail))


@settings(max_examples=150, deadline=None)
@given(sessions())
def test_artifacts_and_the_current_state_are_what_reading_everything_gives(messages):
    with remembering():
        found = artifacts(messages)
        assert found == artifacts_read_each_time(messages)
        files, commands, _ = found
        assistant = [(at, m) for at, m in enumerate(messages) if m.get("role") == "assistant"]
        new, old = Sections(), Sections()
        _current_state(new, messages, files, commands, assistant)
        current_state_from_every_line(old, messages, files, commands, assistant)
    assert new == old


def test_the_bundled_samples_extract_alike_inside_a_replay_and_outside():
    for path in bundled_samples():
        messages = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
        messages = [m for m in messages if isinstance(m, dict) and "role" in m]
        expected = extract(messages)
        with remembering():
            assert extract(messages) == expected
            assert extract(messages) == expected, path


def artifacts_read_each_time(messages: list[Message]) -> tuple[list[Artifact], list[Artifact], list[str]]:
    """``sections.artifacts`` as it was: every call's arguments read again at each compaction."""
    results = _results(messages)
    files: dict[str, tuple[int, set[str], Counter[str]]] = {}
    commands: list[Artifact] = []
    tests: list[str] = []
    for at, message in enumerate(messages):
        if message.get("role") == "tool":
            tests += remembered(_last_test_line, output_text(message))
        for call in tool_calls_of(message):
            name = _tool_name(call)
            arguments = read_arguments(function_of(call).get("arguments"))
            command = command_of(arguments)
            if command:
                result = results.get(str(call.get("id")))
                commands.append(Artifact(at, f"Ran `{clip(command.splitlines()[0], 200)}`: {_outcome(result)}"))
            for path, how in paths_of(arguments):
                verb = _verb(name, how, arguments)
                _, verbs, tools = files.get(path, (at, set(), Counter()))
                verbs.add(verb)
                tools[name] += 1
                files[path] = (at, verbs, tools)
        action = message.get("action")
        if isinstance(action, str) and action.strip() and message.get("role") == "assistant":
            reply = messages[at + 1] if at + 1 < len(messages) else None
            first = action.strip().splitlines()[0]
            commands.append(Artifact(at, f"Ran `{clip(first, 200)}`: {_outcome(reply)}"))
    changed: list[Artifact] = []
    read: list[Artifact] = []
    for path, (at, verbs, tools) in files.items():
        tally = ", ".join(f"{tool} x{count}" if count > 1 else tool for tool, count in tools.most_common())
        verb = next((v for v in ("Created", "Edited", "Deleted") if v in verbs), "Read")
        (read if verb == "Read" else changed).append(Artifact(at, f"{verb} {path} ({tally})"))
    return changed + read, commands, tests


def current_state_from_every_line(
    found: Sections,
    plain: list[Message],
    files: list[Artifact],
    commands: list[Artifact],
    assistant: list[tuple[int, Message]],
) -> None:
    """``sections._current_state`` as it was: every error line and every reply listed first."""
    changed = [a for a in files if not a.text.startswith("Read ")]
    if changed:
        found.add("Current state", "Last file changed: " + max(changed, key=lambda a: a.at).text)
    if commands:
        found.add("Current state", "Last command: " + commands[-1].text.removeprefix("Ran "))
    errors = [line for m in plain if m.get("role") == "tool" for line in error_lines_of(output_text(m))]
    if errors:
        found.add("Current state", "Last error: " + clip(errors[-1], 200))
    said = [content_text(m).strip() for _, m in assistant if content_text(m).strip()]
    if said:
        last = " ".join(list(sentences(said[-1]))[:2])
        if last:
            found.add("Current state", "The agent last said: " + clip(last))


def context_start_scanning_whole(text: str, end: int) -> int:
    """``redact._context_start`` as it was: line ends searched back to the text's start."""
    start = end
    for _ in range(3):
        previous = max(text.rfind("\n", 0, start - 1) + 1, text.rfind("\\n", 0, start - 1) + 2, 0)
        start = previous
        if start == 0:
            break
    return max(start, end - redact._JOIN_CONTEXT)


pieces = st.sampled_from(["a", "bb", "x" * 57, "y" * 199, "\n", "\\n", "\r\n", " ", "\\"])


@settings(max_examples=400, deadline=None)
@given(st.lists(pieces, max_size=80).map("".join), st.integers(0, 10_000))
def test_a_joined_candidate_starts_where_the_whole_scan_says(text, at):
    end = at % (len(text) + 1)
    assert redact._context_start(text, end) == context_start_scanning_whole(text, end)
    # The token the text ends on, matched on the text reversed, is the one searched for forwards.
    left = text[:end]
    forwards = re.search(r"[^\s\"'`]*\Z", left)
    assert forwards is not None
    assert redact._TOKEN_REVERSED.match(left[::-1]).end() == len(forwards.group())


def test_every_break_of_long_texts_starts_where_the_whole_scan_says():
    rng = random.Random(7)
    for _ in range(4):
        # Lines of 1 to 250 characters: three of them back reach past the 400 a candidate may take, or not.
        lines = ["".join(rng.choice("ab \\") for _ in range(rng.randint(1, 250))) for _ in range(20)]
        text = "".join(line + rng.choice(["\n", "\\n", "\r\n"]) for line in lines)
        for end in range(len(text) + 1):
            assert redact._context_start(text, end) == context_start_scanning_whole(text, end), end


def writings_read_each_time(messages: list[Message]) -> list[tuple[int, str]]:
    """``writings.writings`` as it was: every user message's text and marks read at each call."""
    found: list[tuple[int, str]] = []
    for index, message in enumerate(messages):
        if message.get("role") != "user" or is_demonstration(message):
            continue
        previous = messages[index - 1] if index else None
        raw = content_text(message)
        if answers_as_tool_output(message, previous):
            continue
        if is_harness(message) and "<command-args>" not in raw:
            continue
        text = strip_harness(raw)
        if text:
            found.append((index, text))
    return found


@settings(max_examples=150, deadline=None)
@given(sessions())
def test_what_people_wrote_is_read_once_per_message_and_found_alike(messages):
    expected = writings_read_each_time(messages)
    assert writings(messages) == expected
    with remembering():
        assert writings(messages) == expected
        assert writings(messages[1:]) == writings_read_each_time(messages[1:])


def todos_read_each_time(messages: list[Message]) -> list[str]:
    """``sections.todos`` as it was: every call of every message read at each compaction."""
    latest: list[str] | None = None
    for message in messages:
        for one in tool_calls_of(message):
            arguments = read_arguments(function_of(one).get("arguments"))
            entries = (arguments.get("todos") or arguments.get("plan")) if isinstance(arguments, dict) else None
            if isinstance(entries, list):
                latest = [
                    f"[{entry.get('status', 'pending')}] {entry.get('content') or entry.get('step')}"
                    for entry in entries
                    if isinstance(entry, dict)
                    and (entry.get("content") or entry.get("step"))
                    and entry.get("status") not in ("completed", "done")
                ]
    return latest or []


TODO_ENTRIES = [
    {"content": "Fix the parser", "status": "in_progress"},
    {"content": "Write the test", "status": "pending"},
    {"content": "Ship it", "status": "completed"},
    {"step": "Run the suite", "status": "done"},
    {"step": "Read the logs"},
    {"status": "pending"},
    "not an entry",
]


@settings(max_examples=200, deadline=None)
@given(
    sessions(),
    st.lists(
        st.tuples(
            st.integers(0, 30),
            st.sampled_from(["todos", "plan", "other"]),
            st.lists(st.sampled_from(TODO_ENTRIES), max_size=4),
            st.integers(1, 2),
        ),
        max_size=4,
    ),
)
def test_the_todo_list_read_once_per_message_is_the_one_read_each_time(messages, lists):
    from compactctl.summarizers.sections import todos

    for at, key, entries, count in lists:  # messages of one to two todo-writing calls, an empty list among them
        calls = [tool_call(f"t{at}_{k}", "TodoWrite", json.dumps({key: entries[k:]})) for k in range(count)]
        messages.insert(min(at, len(messages)), {"role": "assistant", "content": None, "tool_calls": calls})
    expected = todos_read_each_time(messages)
    assert todos(messages) == expected
    with remembering():
        assert todos(messages) == expected and todos(messages) == expected
        assert todos(messages[: len(messages) // 2]) == todos_read_each_time(messages[: len(messages) // 2])
