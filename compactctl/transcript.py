"""Messages in the canonical (OpenAI Chat Completions) form, tool-call pairing and API validity.

A message is a plain ``dict``. Everything compactctl adds lives under one key,
``compactctl`` (see docs/spec.md, "Transcript model"); every other key is kept as it came.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from compactctl import lazyre
from compactctl.message_memo import by_message, each_by_message

Message = dict[str, Any]

ROLES = frozenset({"system", "developer", "user", "assistant", "tool"})
# Content part types the Chat Completions API takes, by role.
PART_TYPES: dict[str, frozenset[str]] = {
    "system": frozenset({"text"}),
    "developer": frozenset({"text"}),
    "user": frozenset({"text", "image_url", "input_audio", "file"}),
    "assistant": frozenset({"text", "refusal"}),
    "tool": frozenset({"text"}),
}
# Thinking and reasoning blocks ride on assistant messages as parts so that a producer's
# format writes them back losslessly; they are not Chat Completions parts, and not an error.
CARRIED_PART_TYPES = frozenset({"thinking", "redacted_thinking", "reasoning"})
# The field each part type must hold, and the JSON type it must be.
PART_FIELDS: dict[str, tuple[str, type]] = {
    "text": ("text", str),
    "refusal": ("refusal", str),
    "image_url": ("image_url", dict),
    "input_audio": ("input_audio", dict),
    "file": ("file", dict),
}
ANNOTATION_KEY = "compactctl"


def one_of(value: Any, names: Collection[str]) -> bool:
    """``value`` is a string among ``names``: a list or an object where a name belongs is none of them."""
    return isinstance(value, str) and value in names


def annotations_of(message: Message) -> dict[str, Any]:
    """The message's ``compactctl`` annotations, or an empty dict."""
    found = message.get(ANNOTATION_KEY)
    return found if isinstance(found, dict) else {}


def is_pinned(message: Message) -> bool:
    return annotations_of(message).get("pin") is True


def facts_of(message: Message) -> list[str]:
    facts = annotations_of(message).get("facts", ())
    if isinstance(facts, str):  # one fact written without its list: a fact, not its characters
        return [facts]
    return [fact for fact in facts if isinstance(fact, str)] if isinstance(facts, list) else []


OBSERVATION_KIND = "observation"


def is_observation(message: Message) -> bool:
    """A ``user`` message a format read as tool output (text-mode agents: SWE-agent, mini-swe-agent)."""
    return message.get("role") == "user" and annotations_of(message).get("kind") == OBSERVATION_KIND


_FENCE = lazyre.compile(r"```[^\n]*\n(.*?)```", re.DOTALL)


def observation_action(assistant: Message) -> tuple[str, str]:
    """The action a text-mode agent fenced in its message: (command name, the rest), for naming its output."""
    fences = _FENCE.findall(content_text(assistant))
    first_line = fences[-1].strip().split("\n", 1)[0] if fences else ""
    name, _, rest = first_line.partition(" ")
    return name or "action", rest.strip()


def with_text(content: Any, text: str) -> Any:
    """``text`` in the content's shape: a string stays a string, parts become one text part."""
    if isinstance(content, list):
        first = next((part for part in content if isinstance(part, dict) and part.get("type") == "text"), {})
        return [{**first, "type": "text", "text": text}]
    return text


def is_protected(message: Message) -> bool:
    """Pinned and fact-bearing messages are never removed, elided or summarized."""
    return is_pinned(message) or bool(facts_of(message))


def tool_calls_of(message: Message) -> list[dict[str, Any]]:
    calls = message.get("tool_calls") if message.get("role") == "assistant" else None
    return calls if isinstance(calls, list) else []


def function_of(call: Any) -> dict[str, Any]:
    """A tool call's ``function`` object, or an empty one where the call or its function is not an object."""
    function = call.get("function") if isinstance(call, dict) else None
    return function if isinstance(function, dict) else {}


def tool_call_ids(message: Message) -> list[str]:
    return [call["id"] for call in tool_calls_of(message) if isinstance(call, dict) and isinstance(call.get("id"), str)]


def content_text(message: Message) -> str:
    """The text a person reads in the content: a string, or the text of its parts joined."""
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        # Thinking is not text a person reads (nor what facts, summaries and stubs look at).
        return "\n".join(part_text(part) for part in content if isinstance(part, dict) and not is_thinking(part))
    return ""


# The first line of every summary compactctl writes (strategies.summarizing.SUMMARY_HEADER), wherever a format puts
# it (Codex's hand-off preamble and Claude Code's intro come first).
_COMPACTCTL_SUMMARY = lazyre.compile(r"\[compactctl summary of \d+ earlier messages\]")


def is_compactctl_summary(message: Message) -> bool:
    """A summary compactctl wrote (``compact`` or ``compact --session``), as a format reads it back."""
    return bool(_COMPACTCTL_SUMMARY.search(content_text(message)[:2000]))


# Reasoning a model produced, carried as assistant content parts exactly as the provider
# wrote it (Anthropic ``thinking`` {thinking, signature} and ``redacted_thinking`` {data};
# Responses / Codex ``reasoning`` items, whole). Not text a person reads (``content_text``
# leaves it out), but sent again and billed, so counted, and cleared by ``clear-thinking``.
THINKING_PARTS = frozenset({"thinking", "redacted_thinking", "reasoning"})


def is_thinking(part: Any) -> bool:
    return isinstance(part, dict) and one_of(part.get("type"), THINKING_PARTS)


def thinking_text(part: dict[str, Any]) -> str:
    """The readable text of a thinking part (none for redacted or encrypted reasoning)."""
    if part.get("type") == "thinking":
        return str(part.get("thinking") or "")
    if part.get("type") != "reasoning":
        return ""
    pieces = [piece for key in ("summary", "content") if isinstance(part.get(key), list) for piece in part[key]]
    return "\n".join(str(piece.get("text", "")) for piece in pieces if isinstance(piece, dict))


def part_text(part: dict[str, Any]) -> str:
    for key in ("text", "refusal"):
        value = part.get(key)
        if isinstance(value, str):
            return value
    return ""


def message_text(message: Message) -> str:
    """Content text plus tool call names and arguments: what facts are searched in."""
    return by_message(_message_text, message)


def message_texts(messages: Iterable[Message]) -> list[str]:
    """``message_text`` of each message in order, the replay's memo looked up once (not once per message)."""
    return each_by_message(_message_text, messages)


def _message_text(message: Message) -> str:
    pieces = [content_text(message)]
    for call in tool_calls_of(message):
        function = call.get("function") if isinstance(call, dict) else None
        if isinstance(function, dict):
            pieces.append(str(function.get("name", "")))
            pieces.append(str(function.get("arguments", "")))
    return "\n".join(piece for piece in pieces if piece)


def tool_units(messages: list[Message]) -> list[range]:
    """Split a transcript into units that are kept or cut together.

    An assistant message with tool calls and the tool messages right after it form
    one unit; every other message is a unit of its own. Cutting between units never
    orphans a tool result or leaves a call unanswered.
    """
    units: list[range] = []
    start = 0
    count = len(messages)
    while start < count:
        end = start + 1
        message = messages[start]
        # ``tool_calls_of`` inline (a compaction splits its whole context): a non-empty list of calls.
        if message.get("role") == "assistant":
            calls = message.get("tool_calls")
            if isinstance(calls, list) and calls:
                while end < count and messages[end].get("role") == "tool":
                    end += 1
        units.append(range(start, end))
        start = end
    return units


def unit_start(messages: list[Message], index: int) -> int:
    """Move ``index`` back to the start of its unit (a tool result moves back to its call)."""
    while index > 0 and messages[index].get("role") == "tool":
        index -= 1
    return index


@dataclass(frozen=True)
class Violation:
    """A reason a transcript would be rejected by the API."""

    index: int
    problem: str
    at: str = ""  # where, in a native format's own terms ("input[3]", "messages.2"); else the message

    def __str__(self) -> str:
        return f"{self.at}: {self.problem}" if self.at else f"message {self.index + 1}: {self.problem}"


KEPT_VIOLATIONS = 5  # a report lists this many, with the count of all
# Anthropic's server tools (web search, web fetch, code execution) run in the API itself: the
# call (``server_tool_use``, id ``srvtoolu_...``) and its result are both in the assistant's
# response, so no tool message answers it.
SERVER_CALL_PREFIX = "srvtoolu_"


def is_server_call(call_id: Any) -> bool:
    return isinstance(call_id, str) and call_id.startswith(SERVER_CALL_PREFIX)


class Validator:
    """Streaming API-validity check: feed messages one by one, then ``finish()``.

    Every violation is counted (the first ``KEPT_VIOLATIONS`` kept), the check going on past
    each one. A transcript that ends on a call still running (its last assistant message's calls
    not answered yet, as a session saved while a tool ran looks) is not invalid: the next request
    would carry the results; ``open_call`` names it. ``carried`` adds, per role, the content part
    types the transcript's producer writes and its own API accepts (Claude Code's
    ``tool_reference``, documents, images in tool results; see ``formats.carried_parts``).
    ``opens_on_user``: the producer's API refuses a conversation whose first turn is the model's, and its client
    sends the messages as they are (Claude Code after a compact boundary: "first message must use the "user"
    role"), so a first assistant message is a violation there. Bounded memory: it remembers only the calls
    still waiting for an answer.
    """

    def __init__(
        self,
        carried: Mapping[str, frozenset[str]] | None = None,
        opens_on_user: bool = False,
        unique_call_ids: bool = False,
    ) -> None:
        self.violations: list[Violation] = []
        self.opens_on_user = opens_on_user
        # The producer's API refuses a request in which two calls share an id, wherever they are (the Messages
        # API: "`tool_use` ids must be unique"); Chat Completions takes them (tau-bench's gpt-4o runs repeat ids).
        self._call_ids: set[str] | None = set() if unique_call_ids else None
        self._opened = False  # a message past the system prompt has been seen
        self.count = 0
        self.open_call: str | None = None
        self.carried = carried or {}
        self._index = -1
        self._previous_role: str | None = None
        self._pending: dict[str, bool] = {}  # call id -> answered yet
        self._assistant_with_calls = False

    @property
    def violation(self) -> Violation | None:
        """The first violation, or None."""
        return self.violations[0] if self.violations else None

    def _add(self, violation: Violation) -> None:
        self.count += 1
        if len(self.violations) < KEPT_VIOLATIONS:
            self.violations.append(violation)

    def feed(self, message: Message) -> None:
        self._index += 1
        problem = self._check(message)
        if problem:
            self._add(Violation(self._index, problem))

    def _check(self, message: Message) -> str | None:
        if not isinstance(message, dict):
            return f"a message is {type(message).__name__}, not an object"
        role = message.get("role")
        if not isinstance(role, str) or role not in ROLES:
            return f"unknown role {shown(role)}" if role is not None else "missing role"
        shape = _shape_problem(message, role, self.carried.get(role, frozenset()))
        opening = None
        if not self._opened and role not in ("system", "developer"):
            self._opened = True
            if self.opens_on_user and role == "assistant":
                opening = 'the first message must use the "user" role'
        # Pairing is followed on past a bad shape, so one fault is reported once, not again at every later message.
        pairing = self._pairing_problem(message, role)
        return shape or opening or pairing

    def _pairing_problem(self, message: Message, role: str) -> str | None:
        if role == "tool":
            if not self._assistant_with_calls:
                return f"tool message after a {self._previous_role or 'start of transcript'} message"
            call_id = message.get("tool_call_id")
            if call_id is not None and not isinstance(call_id, str):  # a list or an object: no call's id
                return f"tool_call_id is {type(call_id).__name__}, not a string"
            if call_id not in self._pending:
                return f"orphan tool result: tool_call_id {call_id!r} answers no call of the assistant before it"
            if self._pending[call_id]:
                return f"tool_call_id {call_id!r} answered twice"
            self._pending[call_id] = True
            if self._empty(message, role):  # the API requires a tool result's content
                return "tool message has no content"
            return None
        unanswered = self._unanswered()
        self._previous_role = role
        ids = [call_id for call_id in tool_call_ids(message) if not is_server_call(call_id)]
        self._assistant_with_calls = bool(ids)
        self._pending = dict.fromkeys(ids, False)
        if unanswered:
            return f"unanswered tool call {unanswered!r} before this {role} message"
        repeated = self._repeated(ids)
        if repeated is not None:
            return f"`tool_use` ids must be unique: {repeated!r} is also the id of an earlier call"
        if self._empty(message, role):
            return f"{role} message has no content"
        return None

    def _repeated(self, ids: list[str]) -> str | None:
        """The first of ``ids`` an earlier call (or this message) already has, where the API refuses that."""
        if self._call_ids is None:
            return None
        found = None
        for call_id in ids:
            if call_id in self._call_ids and found is None:
                found = call_id
            self._call_ids.add(call_id)
        return found

    @staticmethod
    def _empty(message: Message, role: str) -> bool:
        content = message.get("content")
        if role == "assistant" and (tool_calls_of(message) or message.get("function_call")):
            return False
        return content is None or content == []

    def _unanswered(self) -> str | None:
        return next((call_id for call_id, answered in self._pending.items() if not answered), None)

    def finish(self) -> Violation | None:
        """The first violation (None: valid); ``open_call`` is set when the transcript ends on a running call."""
        self.open_call = self._unanswered()
        return self.violation


def shown(value: Any) -> str:
    """A value for an error line: short, whatever its type."""
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _shape_problem(message: Message, role: str, carried: frozenset[str] = frozenset()) -> str | None:
    """What the API would reject in this message's fields, by their types (pairing is checked apart)."""
    content = message.get("content")
    if content is not None and not isinstance(content, (str, list)):
        return f"{role} content is {type(content).__name__}, not a string or a list of parts"
    if isinstance(content, list):
        for number, part in enumerate(content, 1):
            problem = _part_problem(part, role, carried)
            if problem:
                return f"content part {number}: {problem}"
    name = message.get("name")
    if name is not None and not isinstance(name, str):
        return f"name is {type(name).__name__}, not a string"
    if role == "tool":
        call_id = message.get("tool_call_id")
        if not isinstance(call_id, str):
            return (
                "tool message has no tool_call_id"
                if call_id is None
                else (f"tool_call_id is {type(call_id).__name__}, not a string")
            )
    if role == "assistant" and "tool_calls" in message and message["tool_calls"] is not None:
        calls = message["tool_calls"]
        if not isinstance(calls, list):
            return f"tool_calls is {type(calls).__name__}, not a list"
        if not calls:
            return "tool_calls is an empty list (leave it out instead)"
        for number, entry in enumerate(calls, 1):
            problem = _call_problem(entry)
            if problem:
                return f"tool call {number}: {problem}"
    return None


def _part_problem(part: Any, role: str, carried: frozenset[str] = frozenset()) -> str | None:
    if not isinstance(part, dict):
        return f"is {type(part).__name__}, not an object"
    kind = part.get("type")
    if not isinstance(kind, str):
        return "has no type" if kind is None else f"type is {type(kind).__name__}, not a string"
    if (role == "assistant" and kind in CARRIED_PART_TYPES) or kind in carried:
        return None  # the producer's own block, which its API accepts: checked by its own rules
    if kind not in PART_TYPES[role]:
        return f"type {shown(kind)} is not allowed in a {role} message ({', '.join(sorted(PART_TYPES[role]))})"
    field, expected = PART_FIELDS[kind]
    value = part.get(field)
    if not isinstance(value, expected):
        what = "missing" if value is None else f"{type(value).__name__}"
        return f"{kind} part's {field!r} is {what}, not {'a string' if expected is str else 'an object'}"
    if kind == "image_url" and not (isinstance(value, dict) and isinstance(value.get("url"), str)):
        return "image_url part has no url string"
    return None


def _call_problem(entry: Any) -> str | None:
    if not isinstance(entry, dict):
        return f"is {type(entry).__name__}, not an object"
    if not isinstance(entry.get("id"), str):
        return "has no id string"
    if entry.get("type", "function") != "function":
        return f"type is {shown(entry.get('type'))}, not 'function'"
    function = entry.get("function")
    if not isinstance(function, dict):
        return f"function is {type(function).__name__}, not an object" if function is not None else "has no function"
    if not isinstance(function.get("name"), str) or not function.get("name"):
        return "function has no name string"
    arguments = function.get("arguments")
    if not isinstance(arguments, str):
        what = "missing" if arguments is None else type(arguments).__name__
        return f"function.arguments is {what}, not a JSON string"
    return None


def find_violation(
    messages: Iterable[Message], carried: Mapping[str, frozenset[str]] | None = None
) -> Violation | None:
    """The first API-validity violation of a transcript, or None when the API would accept it."""
    validator = Validator(carried)
    for message in messages:
        validator.feed(message)
    return validator.finish()


def is_valid(messages: Iterable[Message]) -> bool:
    return find_violation(messages) is None


def with_added(messages: list[Message], added: Sequence[Message]) -> list[Message]:
    """``messages`` with what the client writes again on resume put back after the system prompt,
    where the session began with it."""
    if not added:
        return messages
    head = 0
    while head < len(messages) and messages[head].get("role") == "system":
        head += 1
    return [*messages[:head], *added, *messages[head:]]


def resumed_compaction(
    before: Sequence[Message], after: list[Message], owned: Callable[[Message], bool]
) -> list[Message]:
    """What the client resumes from a compaction of ``before`` into ``after``: its own context
    (``ClientView.owned``) as it was, after the system prompt, where the steps left any of it out. So Codex
    resumes a rollout with no world_state: the writer leaves its initial context out of the
    ``compacted`` line's history and Codex writes all of it again (``Native.added_on_resume``).
    Replay's simulated compactions go through this, and so does the Codex writer of a rollout with
    world_state (where Codex sends none of that context again), so replay counts what ``compact``'s
    output sends."""
    own = [message for message in before if owned(message)]
    if [message for message in after if owned(message)] == own:
        return after  # all of it kept where it was
    return with_added([message for message in after if not owned(message)], own)


def shared_prefix(a: Sequence[Any], b: Sequence[Any]) -> int:
    """How many leading items ``a`` and ``b`` have equal, found by comparing slices (C speed, an
    item compared with itself is equal at once), not item by item in Python."""
    low, high = 0, min(len(a), len(b))
    if a[:high] == b[:high]:
        return high
    high -= 1  # a[:low] == b[:low]; the first difference is at or before ``high``
    while low < high:
        middle = (low + high + 1) // 2
        if a[low:middle] == b[low:middle]:
            low = middle
        else:
            high = middle - 1
    return low
