"""Run strategy steps in order and keep track of what became of every input message."""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from compactctl import jsonbytes
from compactctl.batch import Job, read_source, write_atomic
from compactctl.errors import InputError
from compactctl.formats import load, write_as
from compactctl.report import FileReport, SummarizerUsage, file_report, measure
from compactctl.strategies import STRATEGIES, Fate, StepContext, options_from
from compactctl.summarizers import Summarizer
from compactctl.tokens import TokenCounter, counter_for
from compactctl.transcript import Message


@dataclass(frozen=True)
class ManifestEntry:
    index: int
    role: str
    action: str
    reason: str
    sha256: str


@dataclass(frozen=True)
class Compaction:
    messages: list[Message]
    manifest: list[ManifestEntry]
    notes: tuple[str, ...]
    usage: SummarizerUsage


def message_hash(message: Message) -> str:
    return hashlib.sha256(jsonbytes.dumps(message, sort_keys=True)).hexdigest()


def check_steps(steps: Sequence[str]) -> None:
    for name in steps:
        if name not in STRATEGIES:
            raise InputError(f"unknown strategy {name!r} (known: {', '.join(STRATEGIES)})")


def compact(
    messages: list[Message],
    steps: Sequence[str],
    settings: Mapping[str, Any] | None = None,
    counter: TokenCounter | None = None,
    summarizer: Summarizer | None = None,
) -> Compaction:
    """Apply ``steps`` (strategy names) in order; ``settings`` fills each strategy's options."""
    check_steps(steps)
    context = StepContext(counter or counter_for(), summarizer)
    current = list(messages)
    origin: list[int | None] = list(range(len(messages)))
    fates: dict[int, Fate] = {}
    notes: list[str] = []
    usage = SummarizerUsage()
    for name in steps:
        strategy = STRATEGIES[name]
        result = strategy.run(current, options_from(strategy.options, settings or {}), context)
        for index, fate in result.fates.items():
            original = origin[index]
            if original is not None:
                fates[original] = fate
        origin = [origin[i] if i is not None else None for i in result.origins]
        current = result.messages
        notes.extend(result.notes)
        usage = usage + result.usage
    present = {i for i in origin if i is not None}
    manifest = [
        ManifestEntry(
            index,
            str(message.get("role")),
            *_final_fate(fates.get(index), index in present),
            message_hash(message),
        )
        for index, message in enumerate(messages)
    ]
    return Compaction(current, manifest, tuple(dict.fromkeys(notes)), usage)


def _final_fate(fate: Fate | None, present: bool) -> tuple[str, str]:
    if fate is not None:
        return fate.action, fate.reason
    return ("kept", "") if present else ("removed", "")


@dataclass(frozen=True)
class FileCompaction:
    report: FileReport
    manifest: list[dict[str, Any]]
    archive: list[dict[str, Any]] = field(default_factory=list)  # originals not kept verbatim, when asked


def compact_file(
    job: Job,
    steps: Sequence[str],
    settings: Mapping[str, Any],
    counter: TokenCounter,
    summarizer: Summarizer | None = None,
    to: str | None = None,
    archive: bool = False,
) -> FileCompaction:
    """Read one file, compact each transcript in it, write the result atomically, report.

    The output is written in the input's format, or converted to format ``to``. With
    ``archive``, every input message that was not kept verbatim comes back too, with its
    index and fate, so output plus archive give back the input.
    """
    skipped: list[int] | None = [] if settings.get("on_error") == "skip" else None
    fmt, transcripts, _ = load(read_source(job.source), job.source, settings.get("format", "auto"), skipped)
    results = [compact(t.messages, steps, settings, counter, summarizer) for t in transcripts]
    compacted = [dataclasses.replace(t, messages=r.messages) for t, r in zip(transcripts, results, strict=True)]
    required = list(settings.get("require") or ())
    before = measure(((t.label, t.messages) for t in transcripts), counter, required)
    after = measure(((t.label, t.messages) for t in compacted), counter, [*required, *before.facts_declared])
    usage = sum((r.usage for r in results), SummarizerUsage())
    notes = [note for r in results for note in r.notes]
    if job.target is not None:
        write_atomic(job.target, write_as(compacted, fmt, to, job.source))
    manifest = [
        {"file": job.name, "transcript": t.label, **dataclasses.asdict(entry)}
        for t, r in zip(transcripts, results, strict=True)
        for entry in r.manifest
    ]
    archived = [
        {
            "file": job.name,
            "transcript": t.label,
            "index": entry.index,
            "action": entry.action,
            "reason": entry.reason,
            "message": t.messages[entry.index],
        }
        for t, r in zip(transcripts, results, strict=True)
        if archive
        for entry in r.manifest
        if entry.action in ("elided", "removed", "summarized")
    ]
    report = file_report(job.name, fmt.name, before, after, required, usage, dict.fromkeys(notes), skipped or ())
    return FileCompaction(report, manifest, archived)
