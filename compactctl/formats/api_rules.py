"""The Responses and Anthropic Messages APIs' own rules, checked on the native items a file holds.

The canonical validator (``transcript.Validator``) checks the Chat Completions rules after
reading; these check what a writer of the ``responses`` or ``anthropic`` format would send
back, in that API's own terms, so a file the API would reject says why (``input[3]: ...``,
``messages.2: ...``, the paths the APIs' error messages use). Where each rule is written
down is in docs/validity.md.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from compactctl.transcript import Violation, shown

Check = Callable[[list[Any]], Violation | None]

# -- Responses: the input items of POST /v1/responses -----------------------------------

RESPONSES_ROLES = frozenset({"user", "assistant", "system", "developer"})
INPUT_PARTS = frozenset({"input_text", "input_image", "input_file", "input_audio"})
OUTPUT_PARTS = frozenset({"output_text", "refusal"})
# Item types the API takes as input (openai-python ResponseInputItemParam), plus the
# compaction items it hands back to be passed in again.
INPUT_ITEMS = frozenset(
    {
        "message",
        "function_call",
        "function_call_output",
        "custom_tool_call",
        "custom_tool_call_output",
        "reasoning",
        "compaction",
        "file_search_call",
        "web_search_call",
        "computer_call",
        "computer_call_output",
        "image_generation_call",
        "code_interpreter_call",
        "local_shell_call",
        "local_shell_call_output",
        "mcp_list_tools",
        "mcp_approval_request",
        "mcp_approval_response",
        "mcp_call",
        "tool_search_call",
        "tool_search_output",
        "item_reference",
        "agent_message",  # Codex's multi-agent messages, which its requests carry (0.171, multi_agent_v2)
    }
)
RESPONSES_CALLS = {"function_call": "arguments", "custom_tool_call": "input"}
RESPONSES_OUTPUTS = {"function_call_output": "function_call", "custom_tool_call_output": "custom_tool_call"}
# What a reasoning item may be followed by: the output of the same model turn.
AFTER_REASONING = frozenset(set(INPUT_ITEMS) - {"reasoning", *RESPONSES_OUTPUTS, "item_reference"})


def responses_violation(items: list[Any]) -> Violation | None:
    """The first rule of the Responses API the input items break, or None."""
    return next(iter(responses_violations(items)), None)


def responses_violations(items: list[Any]) -> list[Violation]:
    """Every rule of the Responses API the input items break, in order. Calls with no output yet
    after the last message (a rollout saved while a tool ran) are an open call, not a fault."""
    found: list[Violation] = []
    calls: dict[str, str] = {}  # call_id -> its call item type
    where: dict[str, int] = {}  # call_id -> its item's index
    answered: set[str] = set()
    item_ids: set[str] = set()  # the items' own ids (``fc_``, ``rs_``, ``msg_``): each once in an input
    last_message = max((i for i, item in enumerate(items) if _item_type(item) == "message"), default=-1)
    for index, item in enumerate(items):
        problem = _responses_item_problem(item, calls, answered)
        if problem is None and _item_type(item) == "reasoning":
            following = items[index + 1] if index + 1 < len(items) else None
            if not _follows_reasoning(following):
                what = "nothing" if following is None else f"a {_item_label(following)}"
                problem = f"reasoning item is followed by {what}, not the message or call it produced"
        if problem:
            found.append(Violation(index, problem, at=f"input[{index}]"))
        item_id = item.get("id") if isinstance(item, dict) else None
        if isinstance(item_id, str):
            if item_id in item_ids:  # the API's words (vercel/ai#13383, #7883)
                found.append(Violation(index, f"Duplicate item found with id {item_id}", at=f"input[{index}]"))
            item_ids.add(item_id)
        if isinstance(item, dict) and isinstance(item.get("call_id"), str) and item["call_id"] not in where:
            where[item["call_id"]] = index
    for call_id, kind in calls.items():
        if call_id not in answered and where.get(call_id, -1) < last_message:
            found.append(Violation(len(items) - 1, f"no {kind}_output for {kind} {call_id!r}", at="input"))
    return found


def _item_type(item: Any) -> Any:
    return item.get("type", "message" if "role" in item else None) if isinstance(item, dict) else None


def _item_label(item: Any) -> str:
    kind = _item_type(item)
    if kind == "message" and isinstance(item, dict):
        return f"{shown(item.get('role'))} message"
    return f"{kind} item" if isinstance(kind, str) else "non-item"


def _follows_reasoning(item: Any) -> bool:
    kind = _item_type(item)
    if kind == "message":
        return isinstance(item, dict) and item.get("role") == "assistant"
    return isinstance(kind, str) and kind in AFTER_REASONING


def _responses_item_problem(item: Any, calls: dict[str, str], answered: set[str]) -> str | None:
    if not isinstance(item, dict):
        return f"an item is {type(item).__name__}, not an object"
    kind = _item_type(item)
    if not isinstance(kind, str) or kind not in INPUT_ITEMS:
        return "item has no type or role" if kind is None else f"unknown item type {shown(kind)}"
    if kind == "message":
        return _message_problem(item)
    if kind in RESPONSES_CALLS:
        field = RESPONSES_CALLS[kind]
        call_id = item.get("call_id")
        if not isinstance(call_id, str) or not call_id:
            return f"{kind} has no call_id string"
        if not isinstance(item.get("name"), str) or not item["name"]:
            return f"{kind} has no name string"
        if not isinstance(item.get(field), str):
            what = "missing" if item.get(field) is None else type(item[field]).__name__
            return f"{kind}.{field} is {what}, not a string"
        if call_id in calls:
            return f"call_id {call_id!r} is used by two calls"
        calls[call_id] = kind
        return None
    if kind in RESPONSES_OUTPUTS:
        call_id = item.get("call_id")
        if not isinstance(call_id, str):
            return f"{kind} has no call_id string"
        if calls.get(call_id) != RESPONSES_OUTPUTS[kind]:
            return f"no {RESPONSES_OUTPUTS[kind]} before it has call_id {call_id!r}"
        answered.add(call_id)
        output = item.get("output")
        if isinstance(output, list):
            return _parts_problem(output, INPUT_PARTS, "output")
        if not isinstance(output, str):
            return f"{kind}.output is {'missing' if output is None else type(output).__name__}, not a string or parts"
        return None
    if kind == "reasoning":
        if not isinstance(item.get("summary"), list):
            return "reasoning item has no summary list"
        if not all(isinstance(s, dict) and s.get("type") == "summary_text" and isinstance(s.get("text"), str)
                   for s in item["summary"]):  # fmt: skip
            return "reasoning summary entries must be summary_text objects with a text string"
    return None


def _message_problem(item: dict[str, Any]) -> str | None:
    role = item.get("role")
    if not isinstance(role, str) or role not in RESPONSES_ROLES:
        return f"message role {shown(role)} is not one of {', '.join(sorted(RESPONSES_ROLES))}"
    content = item.get("content")
    if isinstance(content, str):
        return None
    if not isinstance(content, list):
        return f"{role} message content is {'missing' if content is None else type(content).__name__}"
    return _parts_problem(content, OUTPUT_PARTS if role == "assistant" else INPUT_PARTS, f"{role} message")


def _parts_problem(parts: list[Any], allowed: frozenset[str], where: str) -> str | None:
    for number, part in enumerate(parts):
        if not isinstance(part, dict):
            return f"content[{number}] is {type(part).__name__}, not an object"
        kind = part.get("type")
        if not isinstance(kind, str) or kind not in allowed:
            return f"content[{number}]: type {shown(kind)} is not allowed in {where} ({', '.join(sorted(allowed))})"
        field = {"input_text": "text", "output_text": "text", "refusal": "refusal"}.get(kind)
        if field and not isinstance(part.get(field), str):
            return f"content[{number}]: {kind} has no {field} string"
        if kind == "input_image" and not (
            isinstance(part.get("image_url"), str) or isinstance(part.get("file_id"), str)
        ):
            return f"content[{number}]: input_image has neither an image_url nor a file_id string"
    return None


# -- Anthropic: the messages (and system) of POST /v1/messages --------------------------

# The Messages API's content blocks (the SDK's ``ContentBlockParam`` and its beta one, August 2026): what the model or a
# server tool wrote goes back in an assistant turn, as written; ``mid_conv_system`` is instructions a user turn carries.
# A ``role: "system"`` message in ``messages`` (MessageParam's roles, August 2026): instructions from that point on,
# and the tool runner's changes to the tools offered (``tool_addition``, ``tool_removal``; SDK ``_tool_dispatch``).
SYSTEM_BLOCKS = frozenset({"text", "tool_addition", "tool_removal", "mid_conv_system"})
USER_BLOCKS = frozenset(
    {"text", "image", "document", "search_result", "tool_result", "container_upload", "mid_conv_system"}
)
ASSISTANT_BLOCKS = frozenset(
    {
        "text",
        "tool_use",
        "thinking",
        "redacted_thinking",
        "server_tool_use",
        "web_search_tool_result",
        "web_fetch_tool_result",
        "code_execution_tool_result",
        "bash_code_execution_tool_result",
        "text_editor_code_execution_tool_result",
        "mcp_tool_use",
        "mcp_tool_result",
        "container_upload",
        "tool_search_tool_result",
        "advisor_tool_result",
        # A server-side compaction's summary, and the seam a model fallback left (the API reads neither as prompt).
        "compaction",
        "fallback",
    }
)
# ``tool_reference``: the tool-search mechanism names a tool it loaded (Claude Code writes it, the API takes it back).
TOOL_RESULT_BLOCKS = frozenset({"text", "image", "document", "search_result", "tool_reference"})
IMAGE_TYPES = frozenset({"image/jpeg", "image/png", "image/gif", "image/webp"})


def anthropic_violation(records: list[Any]) -> Violation | None:
    """The first rule of the Messages API the file breaks, or None."""
    return next(iter(anthropic_violations(records)), None)


def anthropic_violations(records: list[Any]) -> list[Violation]:
    """Every rule of the Messages API the file breaks, in order.

    ``records`` are MessageParams (a ``{"system": ...}`` record among them is the system
    prompt) or request objects, each with its own ``messages``.
    """
    if records and all(isinstance(r, dict) and isinstance(r.get("messages"), list) for r in records):
        found: list[Violation] = []
        for number, request in enumerate(records):
            for one in _messages_violations(request["messages"]):
                at = f"line {number + 1} {one.at}" if len(records) > 1 else one.at
                found.append(Violation(one.index, one.problem, at=at))
        return found
    return _messages_violations([r for r in records if not _is_system(r)])


def _is_system(record: Any) -> bool:
    return isinstance(record, dict) and "system" in record and "role" not in record


def _messages_violations(messages: list[Any]) -> list[Violation]:
    found: list[Violation] = []
    turns: list[tuple[int, str, list[Any]]] = []  # (first message index, role, blocks): after merging
    for index, message in enumerate(messages):
        problem = _anthropic_message_problem(message, index, last=index == len(messages) - 1)
        if problem:
            found.append(Violation(index, problem, at=f"messages.{index}"))
        if not (isinstance(message, dict) and message.get("role") in ("user", "assistant")):
            continue
        role, content = message["role"], message.get("content")
        if not isinstance(content, (str, list)):
            continue
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else list(content)
        if turns and turns[-1][1] == role:
            # The API joins consecutive turns of one role into one before checking the rest.
            turns[-1][2].extend(blocks)
        else:
            turns.append((index, role, blocks))
    found += _repeated_call_ids(messages)
    if not turns:
        return [*found, Violation(0, "at least one message is required", at="messages")]
    if turns[0][1] != "user":
        found.append(Violation(0, 'the first message must use the "user" role', at="messages.0"))
    for number, (_, role, blocks) in enumerate(turns):
        if role != "assistant":
            continue
        following = turns[number + 1] if number + 1 < len(turns) else None
        if following is None:
            continue  # tool_use blocks in the last turn are calls still running: an open call, not a fault
        calls = [_id_key(b.get("id")) for b in blocks if isinstance(b, dict) and b.get("type") == "tool_use"]
        results = _leading_results(following[2])
        missing = [call for call in calls if call not in results]
        if missing:
            later = _all_results(following[2])
            where = "not at the start of" if set(missing) & later else "not in"
            found.append(
                Violation(
                    following[0],
                    f"tool_use ids {', '.join(map(repr, missing))} have tool_result blocks {where} "
                    "the next user message",
                    at=f"messages.{following[0]}",
                )
            )
        unexpected = [r for r in _all_results(following[2]) if r not in calls]
        if unexpected:
            found.append(
                Violation(
                    following[0],
                    f"tool_result for {unexpected[0]!r} answers no tool_use of the message before it",
                    at=f"messages.{following[0]}",
                )
            )
    if turns[0][1] == "user" and _all_results(turns[0][2]):
        orphan = sorted(map(str, _all_results(turns[0][2])))[0]
        found.append(Violation(0, f"tool_result for {orphan!r} answers no tool_use", at="messages.0"))
    return found


def _repeated_call_ids(messages: list[Any]) -> list[Violation]:
    """Each tool_use block whose id an earlier one of the request has: the API refuses them wherever they are
    (its words: "messages.43.content.2: `tool_use` ids must be unique", anthropics/claude-code#28515)."""
    seen: set[Any] = set()
    found: list[Violation] = []
    for index, message in enumerate(messages):
        content = message.get("content") if isinstance(message, dict) else None
        for number, block in enumerate(content if isinstance(content, list) else []):
            if not (isinstance(block, dict) and block.get("type") == "tool_use"):
                continue
            key = _id_key(block.get("id"))
            if key in seen:
                at = f"messages.{index}.content.{number}"
                found.append(Violation(index, "`tool_use` ids must be unique", at=at))
            seen.add(key)
    return found


def _leading_results(blocks: list[Any]) -> list[Any]:
    """The tool_use ids of the tool_result blocks a user turn begins with."""
    ids: list[Any] = []
    for block in blocks:
        if not (isinstance(block, dict) and block.get("type") == "tool_result"):
            break
        ids.append(_id_key(block.get("tool_use_id")))
    return ids


def _all_results(blocks: list[Any]) -> set[Any]:
    return {_id_key(b.get("tool_use_id")) for b in blocks if isinstance(b, dict) and b.get("type") == "tool_result"}


def _id_key(value: Any) -> Any:
    """A block's id as the pairing compares it: an id of the wrong type (a list, an object) is its
    repr, so it can sit in a set; _block_problem names it as wrong on its own."""
    return value if value is None or isinstance(value, (str, int, float)) else repr(value)


def _anthropic_message_problem(message: Any, index: int, last: bool) -> str | None:
    if not isinstance(message, dict):
        return f"a message is {type(message).__name__}, not an object"
    role = message.get("role")
    if role not in ("user", "assistant", "system") or not isinstance(role, str):
        return f"role {shown(role)} is not 'user', 'assistant' or 'system'"
    content = message.get("content")
    if not isinstance(content, (str, list)):
        return f"{role} content is {'missing' if content is None else type(content).__name__}, not a string or blocks"
    if not content and not (last and role == "assistant"):
        return "empty content (only the final assistant message may be empty)"
    if isinstance(content, str):
        return None
    allowed = {"assistant": ASSISTANT_BLOCKS, "system": SYSTEM_BLOCKS}.get(role, USER_BLOCKS)
    called: set[Any] = set()  # the server tools' calls so far in the message
    for number, block in enumerate(content):
        problem = _block_problem(block, role, allowed)
        if problem:
            return f"content.{number}: {problem}"
        if block.get("type") == "server_tool_use":
            called.add(_id_key(block.get("id")))
        if block.get("type") == "advisor_tool_result" and _id_key(block.get("tool_use_id")) not in called:
            # The API's wording (anthropics/claude-code#66944): the advice goes in the message of its call, after it.
            return (
                f"content.{number}: unexpected `tool_use_id` found in `advisor_tool_result` blocks: "
                f"{block.get('tool_use_id')}. Each `advisor_tool_result` block must have a corresponding "
                "`server_tool_use` block before it"
            )
    return None


def _block_problem(block: Any, role: str, allowed: frozenset[str]) -> str | None:
    if not isinstance(block, dict):
        return f"a block is {type(block).__name__}, not an object"
    kind = block.get("type")
    if not isinstance(kind, str) or kind not in allowed:
        return f"block type {shown(kind)} is not allowed in a {role} message"
    if kind == "text":
        text = block.get("text")
        if not isinstance(text, str):
            return "text block has no text string"
        if not text:
            return "text blocks must be non-empty"
        if not text.strip():
            return "text blocks must contain non-whitespace text"
    elif kind == "tool_use":
        if not isinstance(block.get("id"), str) or not block["id"]:
            return "tool_use has no id string"
        if not isinstance(block.get("name"), str) or not block["name"]:
            return "tool_use has no name string"
        if not isinstance(block.get("input"), dict):
            what = "missing" if block.get("input") is None else type(block["input"]).__name__
            return f"tool_use.input is {what}, not an object"
    elif kind == "thinking":
        if not isinstance(block.get("thinking"), str):
            return "thinking block has no thinking string"
        if not isinstance(block.get("signature"), str) or not block["signature"]:
            return "thinking block has no signature"
    elif kind == "redacted_thinking":
        if not isinstance(block.get("data"), str):
            return "redacted_thinking block has no data string"
    elif kind == "tool_result":
        if not isinstance(block.get("tool_use_id"), str):
            return "tool_result has no tool_use_id string"
        content = block.get("content", "")
        if isinstance(content, list):
            for number, inner in enumerate(content):
                problem = _block_problem(inner, "tool_result", TOOL_RESULT_BLOCKS)
                if problem:
                    return f"tool_result content.{number}: {problem}"
        elif not isinstance(content, str):
            return f"tool_result content is {type(content).__name__}, not a string or blocks"
    elif kind == "image":
        return _image_problem(block.get("source"))
    return None


def _image_problem(source: Any) -> str | None:
    if not isinstance(source, dict):
        return "image has no source object"
    if source.get("type") == "base64":
        media_type = source.get("media_type")
        if not isinstance(media_type, str) or media_type not in IMAGE_TYPES:
            return f"image media_type {shown(media_type)} is not one of {', '.join(sorted(IMAGE_TYPES))}"
        if not isinstance(source.get("data"), str):
            return "base64 image has no data string"
    elif source.get("type") == "url":
        if not isinstance(source.get("url"), str):
            return "url image has no url string"
    elif source.get("type") != "file":
        return f"image source type {shown(source.get('type'))} is not base64, url or file"
    return None


# Content part types a producer's reader leaves in the canonical messages as they came, by role:
# not Chat Completions parts, but blocks the producer's own API accepts (and its rules above check).
# Each format module that carries them says which (``CARRIED_PARTS``).
ANTHROPIC_CARRIED = {
    "user": USER_BLOCKS - {"tool_result"},
    "tool": TOOL_RESULT_BLOCKS | {"image_url"},  # an image in a tool result (Chat Completions takes text only)
    "assistant": ASSISTANT_BLOCKS,
    "system": SYSTEM_BLOCKS - {"text"},
}
RESPONSES_CARRIED = {
    # Codex's agent_message (read as a user message) carries the task one agent gives another encrypted.
    "user": INPUT_PARTS | {"encrypted_content"},
    "developer": INPUT_PARTS,
    "system": INPUT_PARTS,
    "tool": INPUT_PARTS | {"image_url"},  # a function_call_output may be a list of input parts, images too
    "assistant": OUTPUT_PARTS,
}
