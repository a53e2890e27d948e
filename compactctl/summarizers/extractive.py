"""The offline summarizer: every section filled from the text itself, so the task can go on.

Deterministic (same input, same output) and bounded by the request's ``max_tokens``.

- **Goal**: the current task, i.e. the latest requests the user wrote, verbatim (the latest
  whole), and the original request;
- **Progress**: what was done, as artifacts: files created, edited or read with their paths,
  commands run as shell text with their outcome, the latest test result;
- **Current state**: what was being worked on right before the cut: the file, the last
  command, the last error, the agent's last words;
- **Facts**: the verbatim ledger (``ledger.py``): touched paths first, commands, ids, errors
  latest first, numbers with what they measure;
- **Decisions**, **Next steps** (the agent's open todo items, its stated plan, the unfinished
  latest request) and **Constraints** (whole sentences the user wrote, in any language).

The budget is split between the sections so that none starves (a fixed share each, the
latest request first), and what a section leaves unused goes to the others in order of
what the next turn needs most. Within a section the most recent items come first.

Its own summaries are read back section by section, so folding a summary into the
next one (``rolling``, merged chunks) keeps every item instead of re-extracting prose.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import IO, Any

from compactctl.message_memo import each_by_message
from compactctl.summarizers import SECTIONS, Summary, SummaryRequest
from compactctl.summarizers.ledger import Fact, facts
from compactctl.summarizers.memo import MEMO_ENTRIES, Memo, message_key
from compactctl.summarizers.options import SummarizerOptions
from compactctl.summarizers.redact import redacted_text
from compactctl.summarizers.sections import FACT_LABELS, LATEST, REQUEST_CHARS, SEPARATOR, Sections, clip, extract
from compactctl.summarizers.writings import is_demonstration, writings
from compactctl.tokens import TokenCounter, counter_for
from compactctl.transcript import Message, is_thinking
from compactctl.usage import SummarizerUsage

NAME = "extractive"

# The share of the budget each section may take first; what one leaves goes to the others.
SHARES = {
    "Goal": 0.20,
    "Progress": 0.18,
    "Current state": 0.08,
    "Facts": 0.22,
    "Decisions": 0.08,
    "Next steps": 0.08,
    "Constraints": 0.16,
}
# Who gets the leftovers first: the user's words, then what summaries are known to lose.
LEFTOVER_ORDER = ("Constraints", "Goal", "Facts", "Progress", "Current state", "Next steps", "Decisions")


class Budget:
    """Items chosen while they fit under the token bound, and under each section's share of it."""

    def __init__(self, counter: TokenCounter, max_tokens: int) -> None:
        self.counter = counter
        self.left = max_tokens - 8  # the summary's own framing
        self.share_out()
        self.chosen = Sections()
        self.kinds: set[str] = set()  # the kinds of the facts chosen (each kind's label is paid once)

    def share_out(self) -> None:
        """Give each section its share of what is left now."""
        self.shares = {name: int(share * self.left) for name, share in SHARES.items()}

    def _charge(self, section: str, cost: int, capped: bool) -> bool:
        if cost > self.left or (capped and cost > self.shares[section]):
            return False
        self.left -= cost
        self.shares[section] -= cost
        return True

    def offer(self, section: str, item: str, capped: bool = True) -> bool:
        if (section, item) in self.chosen._seen_items:
            return True
        opened = bool(self.chosen.items.get(section))
        cost = self.counter(item) + 3 + item.count("\n") + (0 if opened else self.counter(section) + 3)
        if not self._charge(section, cost, capped):
            return False
        self.chosen.add(section, item)
        return True

    def offer_fact(self, fact: Fact, capped: bool = True) -> bool:
        if fact.text in self.chosen._seen_facts:
            return True
        cost = self.counter(fact.text) + (3 if fact.kind == "command" else 1)
        cost += 0 if self.chosen.facts else 6
        if fact.kind != "command" and fact.kind not in self.kinds:
            cost += 4
        if not self._charge("Facts", cost, capped):
            return False
        self.chosen.add_fact(fact)
        self.kinds.add(fact.kind)
        return True


def ranked_facts(found: list[Fact]) -> list[Fact]:
    """Facts in the order they are worth keeping: touched paths, commands, errors, ids, numbers, mentioned paths.

    Within a kind the most recent first (``at``), so the latest error beats an old one.
    """
    by_recency = sorted(found, key=lambda f: f.at, reverse=True)
    order = [
        [f for f in by_recency if f.kind == "path" and f.touched],
        [f for f in by_recency if f.kind == "command"],
        [f for f in by_recency if f.kind == "error"][:5],
        [f for f in by_recency if f.kind in ("id", "name")],
        [f for f in by_recency if f.kind == "path" and not f.touched],
        [f for f in by_recency if f.kind == "number"],
        [f for f in by_recency if f.kind == "error"][5:],
    ]
    return [fact for group in order for fact in group]


def choose(found: Sections, counter: TokenCounter, max_tokens: int) -> Sections:
    budget = Budget(counter, max_tokens)
    goal = found.items["Goal"]
    if goal and goal[0].startswith(LATEST):
        budget.offer("Goal", goal[0], capped=False)  # the latest request, whole, before anything else
    # The user's own rules next, up to half of what is left: they cannot be found again elsewhere.
    half = budget.left // 2
    for item in found.items["Constraints"]:
        if budget.left - (counter(item) + 6) >= half:
            budget.offer("Constraints", item, capped=False)
    budget.share_out()
    facts_ = ranked_facts(found.facts)
    ordered = {
        "Goal": goal,
        "Constraints": found.items["Constraints"],
        "Progress": found.items["Progress"],
        "Current state": found.items["Current state"],
        "Decisions": found.items["Decisions"],
        "Next steps": found.items["Next steps"],
    }
    for capped in (True, False):
        for section in LEFTOVER_ORDER:
            if section == "Facts":
                for fact in facts_:
                    budget.offer_fact(fact, capped)
            else:
                for item in ordered[section]:
                    budget.offer(section, item, capped)
        if capped:
            # No section starves: one that got nothing within its share gets its first item that fits.
            for section in LEFTOVER_ORDER:
                if section != "Facts" and not budget.chosen.items[section]:
                    next((True for item in ordered[section] if budget.offer(section, item, False)), None)
    return _in_found_order(budget.chosen, found, facts_)


def _in_found_order(chosen: Sections, found: Sections, facts_: Iterable[Fact]) -> Sections:
    ordered = Sections()
    for section, items in found.items.items():
        kept = set(chosen.items[section])
        for item in items:
            if item in kept:
                ordered.add(section, item)
    kept_facts = {fact.text for fact in chosen.facts}
    for fact in facts_:
        if fact.text in kept_facts:
            ordered.add_fact(fact)
    return ordered


def _item(text: str) -> str:
    # A multi-line item (a request quoted whole) keeps its lines, indented under the bullet.
    return "- " + text.replace("\n", "\n  ")


def render(sections: Sections) -> str:
    blocks: list[str] = []
    for section in SECTIONS:
        lines: list[str] = []
        if section == "Facts":
            for kind, label in FACT_LABELS.items():
                texts = [f.text for f in sections.facts if f.kind == kind]
                if texts:
                    lines.append(f"- {label}: {SEPARATOR.join(texts)}")
            lines.extend(f"- $ {f.text}" for f in sections.facts if f.kind == "command")
        else:
            lines.extend(_item(item) for item in sections.items[section])
        if lines:
            blocks.append(f"## {section}\n" + "\n".join(lines))
    return "\n\n".join(blocks) if blocks else "## Progress\n- (nothing to summarize)"


VERBATIM_HEADINGS = ("## Ledger (verbatim)", "## User messages (verbatim)")


def verbatim(messages: list[Message], counter: TokenCounter, max_tokens: int) -> str:
    """The user's messages and the ledger of ``messages``, exactly as written, within ``max_tokens``.

    A model summarizer sends this beside its prompt and appends it after the model's prose, so
    identifiers and the user's words survive whatever the model writes. The user's messages come
    first (the latest whole, earlier ones newest first, each up to 600 characters), then the
    ledger (at least half of the bound), touched paths and commands first.
    """
    plain = [m for m in messages if not is_demonstration(m)]
    written = writings(plain)
    left = max_tokens - 12
    said: list[str] = []
    for n, (_, text) in enumerate(written[::-1]):
        item = _item(text if n == 0 else clip(text, REQUEST_CHARS))
        cost = counter(item) + 2
        if n > 0 and left - cost < max_tokens // 2:  # the ledger keeps at least half, the latest request is whole
            break
        said.insert(0, item)
        left -= cost
    budget = Budget(counter, max(left, max_tokens // 2))
    for fact in ranked_facts(facts(plain)):
        budget.offer_fact(fact, capped=False)
    ledger = render(_in_found_order(budget.chosen, Sections(), ranked_facts(budget.chosen.facts)))
    blocks = []
    if budget.chosen.facts:
        blocks.append(VERBATIM_HEADINGS[0] + "\n" + ledger.split("\n", 1)[1])
    if said:
        blocks.append(VERBATIM_HEADINGS[1] + "\n" + "\n".join(said))
    return "\n\n".join(blocks)


_REDACTED = Memo(MEMO_ENTRIES)  # a message's digest -> the message redacted


def redacted(span: list[Message]) -> list[Message]:
    """``redact_messages``, each message redacted once and remembered (a replay summarizes a message
    under every setting): the copies are shared, so they are read, never changed. A message with
    nothing to redact is its own copy, so what was worked out from it is not worked out again."""
    return each_by_message(_redacted_message, span)


def _redacted_message(message: Message) -> Any:
    return _REDACTED.found(message_key(message), _redacted_read, message)


def _redacted_read(message: Message) -> Any:
    """``_redacted_value`` of the message, its thinking parts passed as they are: nothing the summary is
    made of reads them (``content_text`` leaves them out; facts, writings and sections read the text, the
    tool calls and the outputs), so what they hold never reaches a summary, redacted or not. A thinking
    block's signature is a long base64 run the redactor decoded and scanned for nothing: yoavf's session,
    31 signatures and their thinking, a quarter of the characters its span was redacted over."""
    content = message.get("content")
    if not isinstance(content, list) or not any(is_thinking(part) for part in content):
        return _redacted_value(message)
    bare = {**message, "content": [None if is_thinking(part) else part for part in content]}
    redacted_bare = _redacted_value(bare)
    if redacted_bare is bare:
        return message
    assert isinstance(redacted_bare, dict)  # a dict's copy is a dict
    kept = zip(redacted_bare["content"], content, strict=True)
    return {**redacted_bare, "content": [old if is_thinking(old) else new for new, old in kept]}


def _redacted_value(value: object) -> object:
    """``redact_value``'s copy, each string redacted once and remembered: most strings of a
    transcript repeat (roles, tool names, call arguments), and redaction is per string. A value
    with nothing to redact is given back itself (an equal value: read, never changed)."""
    if isinstance(value, str):
        out = redacted_text(value)
        return value if out == value else out
    if isinstance(value, dict):
        # One pass, a message's strings redacted without a call each (a replay copies every message).
        copied: dict[Any, object] = {}
        same = True
        for key, item in value.items():
            new: object
            if type(item) is str:
                out = redacted_text(item)
                new = item if out == item else out
            else:
                new = _redacted_value(item)
            copied[key] = new
            same = same and new is item
        return value if same else copied
    if isinstance(value, list):
        items = [_redacted_value(item) for item in value]
        return value if all(new is old for new, old in zip(items, value, strict=True)) else items
    return value


class ExtractiveSummarizer:
    """Fills the sections from the text itself: no model, no network, no key.

    With ``redact`` (the default, as for the model summarizers) the span is redacted before a
    fact is taken from it and the summary after it is rendered: a summary never carries a value
    the redactor would catch in its input, even cut from its label (a bare hex key listed as an
    id), so compacting its output again with a model sends nothing the first pass would not.
    """

    # No model window to fit: it reads a whole span at once, which ranks facts across all of it.
    input_limited = False

    def __init__(self, counter: TokenCounter | None = None, redact_secrets: bool = True) -> None:
        self.counter = counter or counter_for()
        self.redact_secrets = redact_secrets

    @property
    def redacts(self) -> bool:
        """Whether summaries are redacted (strategies redact what they add to one, too)."""
        return self.redact_secrets

    def summarize(self, request: SummaryRequest) -> Summary:
        span = list(request.messages)
        if request.previous_summary:
            span.insert(0, {"role": "system", "content": request.previous_summary})
        if self.redact_secrets:
            span = redacted(span)
        found = extract(span)
        text = render(choose(found, self.counter, request.max_tokens))
        if self.redact_secrets:
            text = redacted_text(text)
        # Counted as a call so reports say how often it ran; not a model call, so no tokens are
        # billed, and a bounded extract is not a cut-off summary.
        return Summary(text, SummarizerUsage(calls=1))


def build(
    options: SummarizerOptions, counter: TokenCounter | None = None, out: IO[str] | None = None, dry_run: bool = False
) -> ExtractiveSummarizer:
    """The registry's entry point: the extractive summarizer takes only ``redact``."""
    return ExtractiveSummarizer(counter, options.redact)
