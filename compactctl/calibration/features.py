"""What each recorded call was sent, in the parts the log lets us count (the calibration's features).

Per call, over the context the API actually saw (the producer's compactions applied): the
log's text in the chosen encoding (attachments included), the earlier responses re-sent as
their output tokens, images by the provider's rule, and the raw cl100k count compactctl
made before calibration; and per call the key of its hidden prefix (a *segment*: it
changes at resumes and compactions).
"""

from __future__ import annotations

import dataclasses
import functools
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import orjson

from compactctl import lazyre
from compactctl.recorded import COMPACTCTL, RecordedCall, RecordedContext
from compactctl.tokens import DEFAULT_ENCODING, REPLY_PRIMING_TOKENS, TokenCounter, claude_model
from compactctl.transcript import Message


@dataclass(frozen=True)
class CallFeatures:
    """One call's input, as reported and as the parts the log lets us count."""

    context: str
    reported: int | None  # usage.input_tokens; None where the call has no usage
    text: int  # the log's text in the chosen encoding (attachments included)
    attachments: int  # of which attachments
    resent: int  # earlier responses' output tokens (thinking included), or their estimate
    images: int  # images by the provider's rule
    raw: int  # what compactctl counted before calibration: cl100k, no attachments, + priming
    raw_visible_resent: int  # the cl100k count of the earlier responses' visible text (in raw)
    raw_images: int  # the raw count's figure for the images (in raw)
    raw_attachments: int  # the cl100k count of the attachments (not in raw)
    messages: int = 0  # messages in the context sent
    unlogged: int = 0  # what the harness sent that the log does not hold, measured as steps in the usage


def _images_of(message: Message, counter: TokenCounter) -> int:
    content = message.get("content")
    if not isinstance(content, list):
        return 0
    return sum(counter.part(p) for p in content if isinstance(p, dict) and p.get("type") == "image_url")


def is_attachment(message: Message) -> bool:
    """Claude Code's attachments, sent as system reminders in a user turn (the reader writes them so;
    Codex's harness messages are part of the conversation a reader gives, and counted raw with it)."""
    return message.get("role") == "user" and str(message.get("content") or "").startswith("<system-reminder>")


# A JSON string literal: its escapes (``\\n``, ``\\"``, ``\\u00e9``) are what ``json_unescaped`` resolves.
_JSON_STRING = lazyre.compile(r'"(?:[^"\\]|\\.)*"')
_TEXT_PARTS = ("text", "input_text", "output_text")


@functools.lru_cache(maxsize=4096)  # the fit counts a context's messages again at every pass
def json_unescaped(text: str) -> str | None:
    """A JSON object's or array's text with each string's escapes resolved (``\\n`` a newline, ``\\"`` a
    quote), its layout kept; None where the text is no such document or holds no escape."""
    if "\\" not in text or not text.lstrip().startswith(("{", "[")):
        return None
    try:
        orjson.loads(text)
    except orjson.JSONDecodeError:  # not JSON (or a lone surrogate): counted as it is
        return None
    return _JSON_STRING.sub(lambda found: '"' + json.loads(found.group(0)) + '"', text)


def sent_tokens(message: Message, counter: TokenCounter) -> int:
    """What a message's text costs as the API counts it: ``counter.message``, but OpenAI counts a tool
    result that is a JSON document as its strings unescaped. Measured on the real Codex 0.47 and 0.58
    rollouts in shared/transcripts, whose exec results are ``{"output": "...\\n...", "metadata": ...}``
    (Codex sends that string as it logs it): counted as written, their fitted ratio to o200k is 0.887 and
    0.884 (the rollouts whose results are plain text fit 1.001 and 1.002); unescaped, 1.024 and 0.998."""
    content = message.get("content")
    if counter.provider != "openai" or message.get("role") != "tool":
        return counter.message(message)
    if isinstance(content, str):
        unescaped = json_unescaped(content)
        return counter.message(message if unescaped is None else {**message, "content": unescaped})
    if isinstance(content, list):
        parts = [_unescaped_part(part) for part in content]
        return counter.message({**message, "content": parts})
    return counter.message(message)


def _unescaped_part(part: object) -> object:
    if not isinstance(part, dict) or part.get("type") not in _TEXT_PARTS or not isinstance(part.get("text"), str):
        return part
    unescaped = json_unescaped(part["text"])
    return part if unescaped is None else {**part, "text": unescaped}


@dataclass(frozen=True)
class MessageCost:
    """What one message of a recorded context costs the API when sent, and its raw count."""

    text: int
    images: int
    resent: int  # for a response: its output tokens (or estimate); 0 otherwise
    reasoning: int  # of which reasoning that OpenAI drops once a later user message is sent
    attachment: bool
    raw: int
    raw_images: int
    raw_attachment: int
    unlogged: int = 0  # API tokens sent with it that the log does not hold (see ``calibration.steps``)


# Claude's tokens per cl100k token, the stated prior (medians of the real sessions in shared/transcripts).
PRIOR_CLAUDE_RATIO_CL100K = 1.2
# The Claude models whose API strips the thinking of earlier turns from the input once a new prompt is
# sent (Anthropic's extended-thinking and context-editing docs; Opus 4.5, Sonnet 4.6 and later keep it), unless
# the request sent ``clear_thinking_20251015`` ``keep: "all"`` (``RecordedCall.thinking_kept``: which Claude Code
# releases send it is in ``recorded/claude_code_thinking.py``). Measured on yoavf's Sonnet 4.5 (Claude Code 2.0.24)
# session: the input falls by 1,041 tokens at the second prompt, and the first turn's thinking blocks
# hold 3.9k characters (about 1.0k tokens).
_STRIPS_THINKING = lazyre.compile(
    r"claude-(?:3-7-sonnet|sonnet-4-5|haiku-4-5|opus-4-1|(?:sonnet|opus)-4(?:-0)?(?:-\d{8})?$|(?:sonnet|opus)-4-\d{8})"
)


def strips_thinking(model: str | None) -> bool:
    """Whether the API drops earlier turns' thinking from this model's input at a new prompt (the model
    as Anthropic's API, Bedrock or Vertex spells it: ``claude_model``)."""
    return bool(_STRIPS_THINKING.match(claude_model(model) or ""))


def stale(call: RecordedCall, message: Message, counter: TokenCounter) -> bool:
    """Whether a call's recorded output is the stream's start snapshot (``stale_output``)."""
    return call.usage is not None and stale_output(call.usage.output_tokens, counter.message(message))


def dropped_thinking(call: RecordedCall, message: Message, counter: TokenCounter) -> int:
    """What of a Claude response's billed output leaves the input at the next prompt: its thinking,
    on the models whose API strips it where the request did not ask it to keep it (``thinking_kept``; 0 for a
    stale usage: its blocks are counted instead)."""
    if call.usage is None or call.thinking_kept or not strips_thinking(call.model) or stale(call, message, counter):
        return 0
    return _thinking_estimate(message, call.usage.output_tokens, counter)


def _thinking_estimate(message: Message, output_tokens: int, counter: TokenCounter) -> int:
    """A Claude response's thinking tokens: its billed output less what its other blocks hold (the
    thinking the log shows may be a summary of what was billed)."""
    content = message.get("content")
    if not isinstance(content, list) or not any(_is_thinking(b) for b in content):
        return 0
    visible = counter.message({**message, "content": [b for b in content if not _is_thinking(b)]})
    prior = PRIOR_CLAUDE_RATIO_CL100K if counter.encoding == DEFAULT_ENCODING else 1.0
    return max(0, min(output_tokens, output_tokens - round(prior * visible)))


def _is_thinking(block: object) -> bool:
    return isinstance(block, dict) and block.get("type") in ("thinking", "redacted_thinking")


def stale_output(output_tokens: int, visible: int) -> bool:
    """A response's usage that reports fewer output tokens than its visible blocks hold: Claude Code
    1.0.x sometimes writes a response's record with the usage of the stream's start (``output_tokens``
    1-30 beside a 1.3k-token ``MultiEdit``) before the final count arrives, and no later record of that
    id carries it (cli.js 1.0.108 yields each content block as it stops). The response is still sent
    back whole."""
    return output_tokens < visible


def message_costs(
    context: RecordedContext,
    counter: TokenCounter,
    raw_counter: TokenCounter,
    until: int | None = None,
    unlogged: Mapping[int, int] | None = None,
) -> dict[int, MessageCost]:
    """Per message index of the history (and per id of replacement messages), its cost.

    ``unlogged`` adds, per message index, the tokens the usage shows were sent after it that
    no message holds (a reminder the harness sent with a tool result and never logged).

    A response is re-sent as its output tokens. OpenAI keeps a response's reasoning in the
    context only until the next user message (measured: the reported input of a Codex call
    drops by the previous turn's reasoning tokens when a prompt is sent); Claude keeps the
    thinking within a turn (measured: coefficient 1.00 on consecutive calls) and, on the models
    ``strips_thinking`` names, drops earlier turns' at a new prompt.
    """
    drops_reasoning = counter.provider in ("openai", "anthropic")  # Anthropic: the models ``strips_thinking`` names
    # Gemini CLI keeps no thought part in the history it sends: a response goes back as its output alone.
    thoughts_resent = counter.provider != "google"
    unlogged = unlogged or {}
    output_at = {call.position: call for call in context.calls}
    costs: dict[int, MessageCost] = {}
    end = len(context.messages) if until is None else until
    messages = [*context.messages, *(m for c in context.compactions for m in c.replacement if c.position < end)]
    for index, message in enumerate(messages):
        if end <= index < len(context.messages):
            continue
        key = index if index < len(context.messages) else -id(message)
        call = output_at.get(index) if index < len(context.messages) else None
        if call is not None:
            images, raw_images = _images_of(message, counter), _images_of(message, raw_counter)
            raw = raw_counter.message(message)
            if stale(call, message, counter):
                # A snapshot written before the response's last usage came: its visible blocks are what
                # is known of what it sends back, counted as the log's other text.
                text = counter.message(message) - images
                costs[key] = MessageCost(text, images, 0, 0, False, raw, raw_images, 0, unlogged.get(index, 0))
                continue
            if call.usage is not None:
                resent, reasoning = call.usage.output_tokens, call.usage.reasoning_tokens
                if not thoughts_resent:
                    resent, reasoning = resent - reasoning, 0
                elif counter.provider == "anthropic":
                    reasoning = dropped_thinking(call, message, counter)
            else:
                hidden = call.hidden_output_estimate
                resent, reasoning = hidden + counter.message(message), 0 if call.thinking_kept else hidden
            costs[key] = MessageCost(
                0, 0, resent, reasoning if drops_reasoning else 0, False, raw, raw_images, 0, unlogged.get(index, 0)
            )
            continue
        hidden = unlogged.get(index, 0) if index < len(context.messages) else 0
        costs[key] = sent_cost(message, counter, raw_counter, hidden)
    return costs


def sent_cost(message: Message, counter: TokenCounter, raw_counter: TokenCounter, unlogged: int = 0) -> MessageCost:
    """What a message that is no response costs when sent (``message_costs``)."""
    images, raw = _images_of(message, counter), raw_counter.message(message)
    attachment = is_attachment(message)
    text = sent_tokens(message, counter) - images
    encrypted = int(message.get("encrypted_chars") or 0)  # an opaque compaction item's estimate
    raw_text, raw_attachment = (0, raw) if attachment else (raw, 0)
    raw_images = _images_of(message, raw_counter)
    return MessageCost(text, images, encrypted, 0, attachment, raw_text, raw_images, raw_attachment, unlogged)


def call_features(
    context: RecordedContext,
    counter: TokenCounter,
    raw_counter: TokenCounter,
    calls: int | None = None,
    unlogged: Mapping[int, int] | None = None,
) -> list[CallFeatures]:
    """Each call's features over the context the API actually saw (the producer's compactions applied).

    With ``calls``, only the first that many calls (and the messages before them) are counted;
    ``unlogged`` as for :func:`message_costs`.
    """
    until = None if calls is None or calls >= len(context.calls) else context.calls[calls].position
    costs = message_costs(context, counter, raw_counter, until, unlogged)
    compaction_at = {c.position: c for c in context.compactions}
    sums = _Sums()
    features: list[CallFeatures] = []
    at_position = {call.position: (n, call) for n, call in enumerate(context.calls)}
    segment = segment_of(context)
    # The responses compactctl's ``compact --session`` copies after its summary keep the usage they were billed with,
    # which is of the history the summary replaced: they tell nothing of what this context sends.
    after_ours = False
    for index, message in enumerate(context.messages[:until]):
        if index in compaction_at:
            after_ours = compaction_at[index].trigger == COMPACTCTL
            sums = _Sums()
            for kept in compaction_at[index].replacement:
                cost = costs.get(-id(kept))
                if cost is None:  # a preserved message of the history itself
                    position = next(i for i, m in enumerate(context.messages) if m is kept)
                    cost = costs[position]
                sums.add(cost, kept)
        if index in at_position:
            n, call = at_position[index]
            stale = call.copied and after_ours
            found = sums.features(segment[n], call.usage.input_tokens if call.usage and not stale else None)
            features.append(
                _with_stand_ins(found, context.messages, context.stand_ins.get(n, {}), costs, counter, raw_counter)
            )
        sums.add(costs[index], message)
    return features


def _with_stand_ins(
    found: CallFeatures,
    context_messages: Sequence[Message],
    stand_ins: Mapping[int, Message],
    costs: Mapping[int, MessageCost],
    counter: TokenCounter,
    raw_counter: TokenCounter,
) -> CallFeatures:
    """A call's features with the old tool results it sent as a stand-in (cut by the client, cleared by the
    API: ``RecordedContext.stand_ins``) counted as that stand-in, not as the log holds them; a response whose
    calls' inputs the API cleared with their results is re-sent as its output less what those inputs count."""
    if not stand_ins:
        return found
    text = images = raw = raw_images = 0
    for at, sent in stand_ins.items():
        was, now = costs[at], sent_cost(sent, counter, raw_counter, costs[at].unlogged)
        if was.resent:  # a response (re-sent as its output tokens) whose calls' inputs the API cleared
            was = sent_cost(context_messages[at], counter, raw_counter, costs[at].unlogged)
        text += now.text - was.text
        images += now.images - was.images
        raw += now.raw - was.raw
        raw_images += now.raw_images - was.raw_images
    return dataclasses.replace(
        found,
        text=found.text + text,
        images=found.images + images,
        raw=found.raw + raw,
        raw_images=found.raw_images + raw_images,
    )


def segment_key(label: str, start: int) -> str:
    """The hidden prefix's key for the stretch of a context's calls starting at call ``start``."""
    return label if start == 0 else f"{label}@{start}"


def segment_of(context: RecordedContext) -> list[str]:
    """Per call, the key of its hidden prefix (it changes at resumes and compactions)."""
    starts = context.segment_starts()
    keys: list[str] = []
    current = segment_key(context.label, 0)
    for n in range(len(context.calls)):
        if n in starts:
            current = segment_key(context.label, n)
        keys.append(current)
    return keys


class _Sums:
    def __init__(self) -> None:
        self.text = self.attachments = self.resent = self.images = self.turn_reasoning = self.messages = 0
        self.raw = self.raw_visible = self.raw_images = self.raw_attachments = self.unlogged = 0

    def add(self, cost: MessageCost, message: Message) -> None:
        if message.get("role") == "user" and not is_attachment(message) and self.turn_reasoning:
            self.resent -= self.turn_reasoning  # the earlier turns' reasoning leaves the context
            self.turn_reasoning = 0
        self.turn_reasoning += cost.reasoning
        self.messages += 1
        self.text += cost.text
        self.attachments += cost.text if cost.attachment else 0
        self.resent += cost.resent
        self.images += cost.images
        self.raw += cost.raw
        self.raw_visible += cost.raw if cost.resent and not cost.text else 0
        self.raw_images += cost.raw_images
        self.raw_attachments += cost.raw_attachment
        self.unlogged += cost.unlogged

    def features(self, label: str, reported: int | None) -> CallFeatures:
        return CallFeatures(
            label,
            reported,
            self.text,
            self.attachments,
            self.resent,
            self.images,
            self.raw + REPLY_PRIMING_TOKENS,
            self.raw_visible,
            self.raw_images,
            self.raw_attachments,
            self.messages,
            self.unlogged,
        )
