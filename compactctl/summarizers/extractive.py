"""The offline summarizer: the five sections and Constraints, filled from the text itself.

Deterministic (same input, same output) and bounded by the request's ``max_tokens``.
What is kept when the bound bites follows what the next turn needs most: the goal
and the user's constraints first, then ids, names, recent errors, paths and commands
(what summaries are known to lose), the next steps and decisions, numbers, and last
the prose of progress.

Its own summaries are read back section by section, so folding a summary into the
next one (``rolling``, merged chunks) keeps every item instead of re-extracting prose.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import IO, Any

from compactctl.summarizers import SECTIONS, Summary, SummaryRequest
from compactctl.summarizers.ledger import Fact, constraints, facts, is_demonstration, people, sentences
from compactctl.tokens import TokenCounter, counter_for
from compactctl.transcript import Message, annotations_of, content_text, tool_calls_of
from compactctl.usage import SummarizerUsage

NAME = "extractive"

_PROGRESS = re.compile(
    r"\b(?:done|fixed|created|added|updated|changed|removed|implemented|passed|completed|succeeded|found|confirmed|"
    r"verified|booked|cancelled|canceled|refunded|resolved|modified|replaced|installed|reproduced|applied|"
    r"I have|I've|we have|we've|has been|have been|is now|are now|now|"
    r"c'est fait|j'ai|nous avons|a été|ont été|effectué|envoyé|commandé|remboursé|corrigé|ajouté|trouvé|vérifié)\b",
    re.I,
)
_DECISION = re.compile(
    r"\b(?:I will|I'll|we will|we'll|let's|let us|decided?|instead|chose|choose|going to|plan to|the fix is|"
    r"approach|will use|should|agreed|offer(?:ed)?|prefer|"
    r"je vais|nous allons|on va|je propose|je vous propose|décid\w*|plutôt|au lieu de|proposer)\b",
    re.I,
)
_NEXT = re.compile(
    r"\b(?:next|then|remaining|still need|todo|to do|need to|will|plan|pending|after that|"
    r"ensuite|puis|prochaine?|reste à|il reste|vous recevrez|je vous tiendrai|dès que)\b",
    re.I,
)
_REQUEST = re.compile(
    r"\?|\b(?:please|can you|could you|I want|I need|I'd like|help|fix|je voudrais|pouvez-vous|"
    r"est-ce que|s'il vous plaît|svp|merci de|corrige\w*)\b",
    re.I,
)
_FACT_LABELS = {"id": "Ids", "name": "Names", "error": "Errors", "path": "Paths", "number": "Numbers"}
_LABEL_KINDS = {label: kind for kind, label in _FACT_LABELS.items()}
_SEPARATOR = " | "
_MAX_ITEM_CHARS = 300
_GOAL_SENTENCES = 3


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
    found = Sections()
    section: str | None = None
    headings = 0
    for line in text.splitlines():
        if line.startswith("## "):
            name = line[3:].strip()
            section = name if name in SECTIONS else None
            headings += section is not None
            continue
        if section is None or not line.startswith("- "):
            continue
        item = line[2:]
        if section != "Facts":
            found.add(section, item)
        elif item.startswith("$ "):
            found.add_fact(Fact("command", item[2:]))
        else:
            label, _, rest = item.partition(": ")
            kind = _LABEL_KINDS.get(label)
            for text_ in rest.split(_SEPARATOR) if kind else [item]:
                found.add_fact(Fact(kind or "id", text_))
    return found if headings >= 2 else None


def _clip(sentence: str) -> str:
    return sentence if len(sentence) <= _MAX_ITEM_CHARS else sentence[: _MAX_ITEM_CHARS - 1] + "…"


def extract(messages: list[Message]) -> Sections:
    """The sections of a span of messages; summaries met in it are read back, not re-extracted."""
    found = Sections()
    plain: list[Message] = []
    for message in messages:
        parsed = (
            parse_summary(content_text(message)) if message.get("role") in ("system", "user", "assistant") else None
        )
        if parsed is not None:
            found.absorb(parsed)
        elif not is_demonstration(message):
            plain.append(message)
    persons = people(plain)
    first_request = next((m for m in persons if _REQUEST.search(content_text(m))), None)
    first_request = first_request or next((m for m in persons if content_text(m).strip()), None)
    first_request = first_request or next(
        (m for m in plain if m.get("role") == "user" and annotations_of(m).get("kind") != "harness"), None
    )
    if first_request is not None and not found.items["Goal"]:
        goal = list(sentences(content_text(first_request)))[:_GOAL_SENTENCES]
        if goal:
            found.add("Goal", _clip(" ".join(goal)))
    for constraint in constraints(plain):
        found.add("Constraints", constraint)
    for fact in facts(plain):
        found.add_fact(fact)
    tools: Counter[str] = Counter()
    for message in plain:
        for call in tool_calls_of(message):
            function = call.get("function") if isinstance(call, dict) else None
            tools[str(function.get("name")) if isinstance(function, dict) else "?"] += 1
        if message.get("role") != "assistant":
            continue
        for sentence in sentences(content_text(message)):
            if _DECISION.search(sentence):
                found.add("Decisions", _clip(sentence))
            elif _PROGRESS.search(sentence):
                found.add("Progress", _clip(sentence))
    if tools:
        tally = ", ".join(f"{name} x{count}" for name, count in tools.most_common())
        found.add("Progress", f"{sum(tools.values())} tool calls: {tally}")
    for message in [m for m in plain if m.get("role") == "assistant"][-3:]:
        for sentence in sentences(content_text(message)):
            if _NEXT.search(sentence):
                found.add("Next steps", _clip(sentence))
    if plain and persons and persons[-1] is plain[-1]:
        # The conversation ends on a request nobody has answered yet: that is the next step.
        found.add("Next steps", "Answer: " + _clip(" ".join(list(sentences(content_text(persons[-1])))[:2])))
    return found


class Budget:
    """Items chosen in priority order while they fit under the token bound."""

    def __init__(self, counter: TokenCounter, max_tokens: int) -> None:
        self.counter = counter
        self.left = max_tokens - 8  # the summary's own framing
        self.chosen = Sections()

    def offer(self, section: str, item: str) -> bool:
        opened = bool(self.chosen.items.get(section)) or (section == "Facts" and bool(self.chosen.facts))
        cost = self.counter(item) + 3 + (0 if opened else self.counter(section) + 3)
        if cost > self.left:
            return False
        self.left -= cost
        self.chosen.add(section, item)
        return True

    def offer_fact(self, fact: Fact) -> bool:
        cost = self.counter(fact.text) + (3 if fact.kind == "command" else 1)
        opened = bool(self.chosen.facts)
        cost += 0 if opened else 6
        if fact.kind != "command" and not any(f.kind == fact.kind for f in self.chosen.facts):
            cost += 4
        if cost > self.left:
            return False
        self.left -= cost
        self.chosen.add_fact(fact)
        return True


def _newest_first(items: Iterable[str], count: int | None = None) -> list[str]:
    items = list(items)[::-1]
    return items if count is None else items[:count]


def choose(found: Sections, counter: TokenCounter, max_tokens: int) -> Sections:
    budget = Budget(counter, max_tokens)
    by_kind = {
        kind: [f for f in found.facts if f.kind == kind]
        for kind in ("id", "name", "error", "path", "command", "number")
    }
    for item in found.items["Goal"][:1]:
        budget.offer("Goal", item)
    for item in found.items["Constraints"]:
        budget.offer("Constraints", item)
    for fact in [*by_kind["id"], *by_kind["name"], *by_kind["error"][-5:]]:
        budget.offer_fact(fact)
    # Paths and commands together, the most recent first: what the agent touched last matters most.
    for fact in _newest_first_facts([f for f in found.facts if f.kind in ("path", "command")]):
        budget.offer_fact(fact)
    for item in _newest_first(found.items["Next steps"], 3):
        budget.offer("Next steps", item)
    for item in _newest_first(found.items["Decisions"], 3):
        budget.offer("Decisions", item)
    for fact in by_kind["number"]:
        budget.offer_fact(fact)
    for item in _newest_first(found.items["Progress"], 3):
        budget.offer("Progress", item)
    for fact in by_kind["error"][:-5]:
        budget.offer_fact(fact)
    for section in ("Decisions", "Progress", "Next steps"):
        for item in _newest_first(found.items[section]):
            budget.offer(section, item)
    return _in_original_order(budget.chosen, found)


def _newest_first_facts(found: list[Fact]) -> list[Fact]:
    return found[::-1]


def _in_original_order(chosen: Sections, found: Sections) -> Sections:
    ordered = Sections()
    for section, items in found.items.items():
        for item in items:
            if item in chosen.items[section]:
                ordered.add(section, item)
    kept = {fact.text for fact in chosen.facts}
    for fact in found.facts:
        if fact.text in kept:
            ordered.add_fact(fact)
    return ordered


def render(sections: Sections) -> str:
    blocks: list[str] = []
    for section in SECTIONS:
        lines: list[str] = []
        if section == "Facts":
            for kind, label in _FACT_LABELS.items():
                texts = [f.text for f in sections.facts if f.kind == kind]
                if texts:
                    lines.append(f"- {label}: {_SEPARATOR.join(texts)}")
            lines.extend(f"- $ {f.text}" for f in sections.facts if f.kind == "command")
        else:
            lines.extend(f"- {item}" for item in sections.items[section])
        if lines:
            blocks.append(f"## {section}\n" + "\n".join(lines))
    return "\n\n".join(blocks) if blocks else "## Progress\n- (nothing to summarize)"


class ExtractiveSummarizer:
    """Fills the sections from the text itself: no model, no network, no key."""

    def __init__(self, counter: TokenCounter | None = None) -> None:
        self.counter = counter or counter_for()

    def summarize(self, request: SummaryRequest) -> Summary:
        span = list(request.messages)
        if request.previous_summary:
            span.insert(0, {"role": "system", "content": request.previous_summary})
        found = extract(span)
        text = render(choose(found, self.counter, request.max_tokens))
        # Counted as a call so reports say how often it ran; not a model call, so no tokens are
        # billed, and a bounded extract is not a cut-off summary.
        return Summary(text, SummarizerUsage(calls=1))


def build(
    settings: Mapping[str, Any], counter: TokenCounter | None = None, out: IO[str] | None = None
) -> ExtractiveSummarizer:
    """The registry's entry point: the extractive summarizer takes no settings."""
    return ExtractiveSummarizer(counter)
