"""``mask-observations``: old tool results become a one-line placeholder naming the call.

What agents' own context editing does (Anthropic's ``clear_tool_uses``: keep the last 3
tool uses, clear older results, optionally their inputs, with a minimum to clear so the
cache break pays off), and what the observation-masking results on SWE-bench agents
measured: an agent rarely needs an old observation verbatim, and the placeholder keeps
the trajectory readable ("read_file(src/app.py): 212 lines, 1,804 tokens cut").

Kept as they are: the results of the last ``keep_tool_uses`` tool uses (or, with
``mask_keep_turns``, of the last N assistant turns that used tools), pinned results and
results of a pinned call, tools named in ``never_mask``, and the one copy of each fact
no other message of the output holds (the latest). With ``mask_inputs`` the masked
calls' arguments become a small JSON placeholder too. When what would be cleared is
under ``mask_min_tokens``, nothing is. A result whose placeholder would not be shorter is
left as it is.

Observations that a format reads as ``user`` messages (``compactctl.kind:
"observation"``: text-mode SWE-agent, mini-swe-agent) are tool output too; their call is
the action in the assistant message before them.

Idempotent by construction: a placeholder is recognised and never masked again, masking
changes no tool use (so the same results are the recent ones), and a fact's kept copy is
chosen against the placeholders' own text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import orjson

from compactctl import jsonbytes, lazyre
from compactctl.facts import FactMatcher, declared_facts
from compactctl.strategies.base import Fate, StepContext, StepResult, unchanged
from compactctl.strategies.settings import MaskOptions
from compactctl.tokens import TokenCounter
from compactctl.transcript import (
    Message,
    content_text,
    is_observation,
    is_pinned,
    message_text,
    observation_action,
    tool_calls_of,
    with_text,
)

PLACEHOLDER_PREFIX = "[compactctl: masked "
_PLACEHOLDER = lazyre.compile(r"\[compactctl: masked .*: \d+ lines?, \d+ tokens cut\]", re.DOTALL)
MASKED_INPUT_KEY = "compactctl_masked_input"
PREVIEW_CHARS = 60


@dataclass(frozen=True)
class _Use:
    """One tool use: the assistant message holding the call, the call's position, its result."""

    assistant: int
    call: int | None  # position in tool_calls; None for an observation in a user message
    result: int | None
    name: str
    arguments: str


def is_placeholder(text: str) -> bool:
    return text.startswith(PLACEHOLDER_PREFIX) and _PLACEHOLDER.fullmatch(text) is not None


def placeholder(name: str, arguments: str, text: str, tokens: int) -> str:
    lines = len(text.splitlines())
    return f"{PLACEHOLDER_PREFIX}{name}({_preview(arguments)}): {lines} line{'s' * (lines != 1)}, {tokens} tokens cut]"


def _preview(arguments: str) -> str:
    """The call's arguments on one short line: JSON values only, so ``{"path": "a.py"}`` reads ``a.py``."""
    try:
        value = orjson.loads(arguments)
    except orjson.JSONDecodeError:
        value = arguments
    if isinstance(value, dict):
        if MASKED_INPUT_KEY in value:
            return "input masked"
        value = ", ".join(v if isinstance(v, str) else jsonbytes.dumps_text(v) for v in value.values())
    spelled = " ".join(str(value).split())
    return spelled if len(spelled) <= PREVIEW_CHARS else spelled[: PREVIEW_CHARS - 3] + "..."


def tool_uses(messages: list[Message]) -> list[_Use]:
    """Every tool use in order, with the index of its result (None when unanswered)."""
    uses: list[_Use] = []
    pending: dict[str, int] = {}  # call id -> its position in ``uses``
    for i, message in enumerate(messages):
        role = message.get("role")
        if role == "tool":
            at = pending.pop(str(message.get("tool_call_id")), None)
            if at is not None:
                uses[at] = _Use(uses[at].assistant, uses[at].call, i, uses[at].name, uses[at].arguments)
            continue
        if role == "user" and is_observation(message) and i and messages[i - 1].get("role") == "assistant":
            name, arguments = observation_action(messages[i - 1])
            uses.append(_Use(i - 1, None, i, name, arguments))
            continue
        if role == "assistant":
            pending = {}
            for position, call in enumerate(tool_calls_of(message)):
                function = call.get("function") if isinstance(call, dict) else None
                function = function if isinstance(function, dict) else {}
                arguments = function.get("arguments", "")
                pending[str(call.get("id"))] = len(uses)
                uses.append(
                    _Use(
                        i,
                        position,
                        None,
                        str(function.get("name", "")),
                        arguments if isinstance(arguments, str) else jsonbytes.dumps_text(arguments),
                    )
                )
    return uses


def mask_observations(messages: list[Message], options: MaskOptions, context: StepContext) -> StepResult:
    uses = tool_uses(messages)
    recent = _recent(uses, options)
    never = set(options.never_mask)
    counter = context.counter
    out = list(messages)
    masked: dict[int, _Use] = {}  # result index -> its use
    for n, use in enumerate(uses):
        r = use.result
        if (
            r is None
            or n in recent
            or use.name in never
            or is_pinned(messages[r])
            or is_pinned(messages[use.assistant])
        ):
            continue
        text = content_text(messages[r])
        if is_placeholder(text):
            continue
        tokens = counter(text)
        stub = placeholder(use.name, use.arguments, text, tokens)
        if counter(stub) >= tokens:
            continue
        masked[r] = use
        out[r] = {**messages[r], "content": with_text(messages[r].get("content"), stub)}
    inputs = _mask_inputs(messages, out, masked) if options.mask_inputs else {}
    kept_back = _keep_fact_copies(messages, out, masked, inputs, options.require)
    for r in kept_back:
        use = masked.pop(r)
        out[r] = messages[r]
        if use.assistant in inputs:
            inputs[use.assistant].discard(use.call)
    for a, positions in inputs.items():
        out[a] = _with_masked_calls(messages[a], positions) if positions else messages[a]
    cleared = _cleared(messages, out, counter) if masked else 0
    if cleared < max(options.mask_min_tokens, 1):
        # Under the minimum a cache break would cost more than the tokens it saves.
        under = f"mask-observations: {cleared:,} tokens to clear, under --mask-min-tokens {options.mask_min_tokens:,}"
        return unchanged(messages, (under,) if masked else ())
    fates = {
        r: Fate("elided", f"tool output of {use.name} masked (not among the recent ones)") for r, use in masked.items()
    }
    fates.update({a: Fate("elided", "masked tool inputs") for a, positions in inputs.items() if positions})
    return StepResult(out, list(range(len(messages))), fates)


def _recent(uses: list[_Use], options: MaskOptions) -> set[int]:
    """Positions in ``uses`` of the tool uses whose results stay."""
    if options.mask_keep_turns > 0:
        turns = list(dict.fromkeys(use.assistant for use in uses))[-options.mask_keep_turns :]
        last = set(turns)
        return {n for n, use in enumerate(uses) if use.assistant in last}
    keep = max(0, options.keep_tool_uses)
    return set(range(len(uses) - keep, len(uses))) if keep else set()


def _mask_inputs(messages: list[Message], out: list[Message], masked: dict[int, _Use]) -> dict[int, set[int | None]]:
    """Per assistant, the positions of the calls whose arguments go with their masked results."""
    inputs: dict[int, set[int | None]] = {}
    for use in masked.values():
        if use.call is not None and len(_masked_arguments(use.arguments)) < len(use.arguments):
            inputs.setdefault(use.assistant, set()).add(use.call)
    for a, positions in inputs.items():
        out[a] = _with_masked_calls(messages[a], positions)
    return inputs


def _masked_arguments(arguments: str) -> str:
    return jsonbytes.dumps_text({MASKED_INPUT_KEY: f"{len(arguments)} characters"})


def _with_masked_calls(message: Message, positions: set[int | None]) -> Message:
    calls = []
    for position, call in enumerate(tool_calls_of(message)):
        if position in positions and isinstance(call, dict) and isinstance(call.get("function"), dict):
            arguments = call["function"].get("arguments", "")
            spelled = arguments if isinstance(arguments, str) else jsonbytes.dumps_text(arguments)
            call = {**call, "function": {**call["function"], "arguments": _masked_arguments(spelled)}}
        calls.append(call)
    return {**message, "tool_calls": calls}


def _keep_fact_copies(
    messages: list[Message],
    out: list[Message],
    masked: dict[int, _Use],
    inputs: dict[int, set[int | None]],
    required: tuple[str, ...],
) -> list[int]:
    """Masked results to give back so every fact the input holds keeps one copy in the output.

    A fact is served when the output (placeholders included) holds it; else its latest
    masked holder comes back, with its call's arguments.
    """
    matcher = FactMatcher(declared_facts(messages, required))
    if not matcher or not masked:
        return []
    # Only facts a masked result holds can be lost; look for those alone, latest messages first.
    at_stake = {r: matcher.found_in(_original_text(messages, r, use, inputs)) for r, use in masked.items()}
    wanted = list(dict.fromkeys(n for found in at_stake.values() for n in found))
    if not wanted:
        return []
    held: set[int] = set()
    for message in reversed(out):
        held.update(matcher.found_in(message_text(message), [n for n in wanted if n not in held]))
        if len(held) == len(wanted):
            return []
    back: list[int] = []
    for n in wanted:
        if n in held:
            continue
        latest = max(r for r, found in at_stake.items() if n in found)
        back.append(latest)
        held.update(at_stake[latest])
    return back


def _original_text(messages: list[Message], r: int, use: _Use, inputs: dict[int, set[int | None]]) -> str:
    """What giving result ``r`` back puts back: its text, and its call's arguments when they were masked."""
    text = content_text(messages[r])
    return f"{text}\n{use.arguments}" if use.call in inputs.get(use.assistant, ()) else text


def _cleared(messages: list[Message], out: list[Message], counter: TokenCounter) -> int:
    return sum(counter.message(a) - counter.message(b) for a, b in zip(messages, out, strict=True) if a is not b)
