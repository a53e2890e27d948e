"""How well a compaction lets the task go on: probes built from the full history, answered from the compacted one.

String survival alone is easy to fool (a ledger of every token "keeps" everything), so the
probes follow the four families published probe-based evaluations of context compression
use, each asking what the next turn needs:

- **recall**: an exact value from the history: the latest error lines, numbers with their
  units, ids;
- **artifact**: which files were changed or created, and how;
- **continuation**: what the user asked last, and what was being worked on (the last file
  changed, the last command run);
- **decision**: what the user required or forbade (their constraint sentences) and what they
  settled.

Each probe carries the answer taken from BEFORE. Scoring is deterministic: the answer is
present in AFTER, verbatim or normalized (case, whitespace, quotes and Markdown folded). With a
judge (``--judge openai``), a model answers each question from AFTER alone and the judge grades
that answer against BEFORE's; both are reported, the judged score beside the deterministic one.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Protocol

from compactctl import lazyre
from compactctl.formats.records import SkippedLine, skipped_json
from compactctl.settings import Needs, Options, setting
from compactctl.summarizers.ledger import error_lines, facts, output_text
from compactctl.summarizers.sections import artifacts
from compactctl.summarizers.writings import constraints, is_prose, latest_request, sentences, writings
from compactctl.transcript import Message, message_text

FAMILIES = ("recall", "artifact", "continuation", "decision")
JUDGES = ("none", "openai")


@dataclass(frozen=True)
class EvalOptions(Options):
    judge: str = setting(
        "none",
        help="none: score deterministically only; openai: also ask a model to answer from AFTER and grade it.",
        choices=JUDGES,
        panel="Evaluation",
    )
    judge_model: str = setting(
        "gpt-4o-mini",
        help="openai judge: model.",
        metavar="MODEL",
        panel="Evaluation",
        needs=Needs("judge", ("openai",)),
    )


PER_FAMILY = 6  # probes per family and transcript: the most recent first
_NOISE = lazyre.compile(r"[`*_\"'“”‘’«»]+")
_USER_DECISION = lazyre.compile(r"\b(?:let'?s|go with|go ahead|use|switch to|instead|keep|drop|ignore|merge)\b", re.I)


@dataclass(frozen=True)
class Probe:
    family: str  # one of FAMILIES
    question: str
    answer: str  # what BEFORE says


@dataclass(frozen=True)
class Scored:
    probe: Probe
    present: bool  # the answer is in AFTER, verbatim or normalized
    judged: bool | None = None  # the judge's grade of a model's answer from AFTER; None without a judge
    reply: str | None = None  # what the model answered from AFTER


@dataclass(frozen=True)
class Evaluation:
    scored: list[Scored] = field(default_factory=list)

    def family(self, name: str, judged: bool = False) -> tuple[int, int]:
        """``(passed, total)`` of one family, deterministic or judged."""
        rows = [s for s in self.scored if s.probe.family == name]
        return sum(bool(s.judged if judged else s.present) for s in rows), len(rows)

    def total(self, judged: bool = False) -> tuple[int, int]:
        return sum(bool(s.judged if judged else s.present) for s in self.scored), len(self.scored)


class Judge(Protocol):
    def answer(self, question: str, context: str) -> str: ...

    def grade(self, question: str, expected: str, given: str) -> bool: ...


def normalized(text: str) -> str:
    return " ".join(_NOISE.sub(" ", text).split()).casefold()


def _recent(items: Iterable[str], count: int = PER_FAMILY) -> list[str]:
    return list(dict.fromkeys(items))[:count]


def probes(messages: list[Message]) -> list[Probe]:
    """The probes one history asks, in the four families, the most recent first within each."""
    found: list[Probe] = []
    errors = [line for m in messages if m.get("role") == "tool" for line in error_lines(output_text(m))]
    for line in _recent(errors[::-1], PER_FAMILY // 2):
        found.append(Probe("recall", "What error did the session hit (the error line)?", line))
    ledger = sorted(facts(messages), key=lambda f: f.at, reverse=True)
    values = [f.text for f in ledger if f.kind in ("number", "id") and len(f.text) >= 3]
    for value in _recent(values, PER_FAMILY - min(len(errors), PER_FAMILY // 2)):
        found.append(Probe("recall", "Which value was recorded (a number with its unit, or an id)?", value))
    files, commands, _ = artifacts(messages)
    changed = sorted((a for a in files if not a.text.startswith("Read ")), key=lambda a: a.at, reverse=True)
    for artifact in changed[:PER_FAMILY]:
        verb, path = artifact.text.split(" ", 1)
        path = path.rsplit(" (", 1)[0]
        found.append(Probe("artifact", f"Which file was {verb.lower()}, and how?", path))
    latest = latest_request(messages)
    if latest is not None:
        found.append(Probe("continuation", "What did the user ask last?", latest[1]))
    if changed:
        found.append(Probe("continuation", "Which file was being worked on last?", changed[0].text.split(" ", 1)[1]))
    if commands:
        last = commands[-1].text.removeprefix("Ran `").split("`:", 1)[0]
        found.append(Probe("continuation", "What was the last command run?", last))
    said = constraints(messages)
    for sentence in _recent(said[::-1], PER_FAMILY):
        found.append(Probe("decision", "What did the user require or forbid?", sentence))
    settled = [s for _, text in writings(messages) for s in sentences(text) if _USER_DECISION.search(s)]
    settled = [s for s in settled if 2 <= len(s.split()) <= 40 and is_prose(s)]
    for sentence in _recent(settled[::-1], 2):
        if sentence not in said:
            found.append(Probe("decision", "What did the user decide?", sentence))
    return [_answer_only(p) for p in found]


def _answer_only(probe: Probe) -> Probe:
    # "Edited src/a.py (Edit x2)" asks about src/a.py: the tally is how, not what.
    answer = probe.answer.rsplit(" (", 1)[0] if probe.family == "continuation" and "(" in probe.answer else probe.answer
    return Probe(probe.family, probe.question, answer)


def context_text(messages: list[Message]) -> str:
    """What a model resuming from a history reads: every message's text and tool calls."""
    return "\n\n".join(message_text(m) for m in messages)


@dataclass(frozen=True)
class FileEvaluation:
    file: str
    format: str
    evaluation: Evaluation
    skipped: tuple[SkippedLine, ...] = ()  # lines --on-error skip left out of BEFORE or AFTER


def _share(pair: tuple[int, int]) -> dict[str, int | float | None]:
    passed, total = pair
    return {"passed": passed, "total": total, "score": passed / total if total else None}


def evaluation_json(result: FileEvaluation, judged: bool) -> dict[str, object]:
    """One file's probes and scores, per family and in total (``--json``)."""
    evaluation = result.evaluation
    body: dict[str, object] = {
        "file": result.file,
        "format": result.format,
        "families": {name: _share(evaluation.family(name)) for name in FAMILIES},
        "score": _share(evaluation.total()),
        "probes": [
            {
                "family": s.probe.family,
                "question": s.probe.question,
                "answer": s.probe.answer,
                "present": s.present,
                **({"judged": s.judged, "reply": s.reply} if judged else {}),
            }
            for s in evaluation.scored
        ],
    }
    body.update(skipped_json(result.skipped))
    if judged:
        body["judged_families"] = {name: _share(evaluation.family(name, judged=True)) for name in FAMILIES}
        body["judged_score"] = _share(evaluation.total(judged=True))
    return body


def merged(evaluations: Iterable[Evaluation]) -> Evaluation:
    return Evaluation([s for e in evaluations for s in e.scored])


def evaluate(before: list[Message], after: list[Message], judge: Judge | None = None) -> Evaluation:
    """Score ``after`` with the probes ``before`` asks; with a judge, also by a model's answers from ``after``."""
    context = context_text(after)
    folded = normalized(context)
    scored = []
    for probe in probes(before):
        present = probe.answer in context or normalized(probe.answer) in folded
        if judge is None:
            scored.append(Scored(probe, present))
            continue
        reply = judge.answer(probe.question, context)
        scored.append(Scored(probe, present, judge.grade(probe.question, probe.answer, reply), reply))
    return Evaluation(scored)
