"""``review``, one file: where its pages go, and the compactions of it reviewed as they were written.

The compacting itself is ``compact``'s own job (``files.compact.compact_file``), which the CLI
runs into a temporary folder before handing the written file here: a job never imports another.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from compactctl.config import DatabaseOptions, GateOptions, InputOptions
from compactctl.errors import InputError
from compactctl.evaluate import Judge
from compactctl.files.io import STDIO, Job, check_distinct_targets, expand_inputs, read_source, same_file
from compactctl.formats import load
from compactctl.formats.records import skip_list
from compactctl.model_input import model_input
from compactctl.reporting import FileReport
from compactctl.review import NO_FIGURES, Figures, FileReview, Sent, TranscriptReview, review_side
from compactctl.review.written import manifest_fates, matched_fates, written_compaction
from compactctl.strategies import StrategyOptions
from compactctl.summarizers import Summarizer
from compactctl.tokens import TokenCounter
from compactctl.usage import SummarizerUsage

REVIEW_SUFFIX = ".review.html"


@dataclass(frozen=True)
class ReviewSide:
    """One compaction a review shows: side A, or side B beside it."""

    name: str  # "A" or "B"
    description: str  # what it ran, in one line
    steps: tuple[str, ...]
    strategies: StrategyOptions
    summarizer: Summarizer | None
    read: InputOptions  # side B may read and gate otherwise (--vs-config)
    gates: GateOptions


def review_targets(inputs: list[str], output: str | None) -> tuple[list[Job], str | None]:
    """Each input's page, and the index page when there are several: one file gives NAME.review.html beside it."""
    found = list(expand_inputs(inputs))
    if any(source == STDIO for source, _, _ in found):
        raise InputError("review reads files, not stdin; give a file or folder")
    single = len(found) == 1 and found[0][2] is None
    if single and (output is None or not Path(output).is_dir()):
        source, name, _ = found[0]
        target = output or str(Path(source).with_name(Path(source).name + REVIEW_SUFFIX))
        if same_file(source, target):
            raise InputError("the page would overwrite the input; inputs are never overwritten", target)
        return [Job(source, target, name)], None
    if output is None:
        raise InputError("several inputs or a folder need -o DIR for their pages and index.html")
    folder = Path(output)
    if folder.exists() and not folder.is_dir():
        raise InputError("several inputs or a folder need -o DIR, and this is a file", output)
    jobs = [Job(source, str(folder / (name.replace("/", "__") + REVIEW_SUFFIX)), name) for source, name, _ in found]
    check_distinct_targets(jobs)
    return jobs, str(folder / "index.html")


@dataclass(frozen=True)
class WrittenSide:
    """One side of a review, as written: the compacted file, and what is known of how it was made."""

    name: str  # "A" or "B"
    description: str  # what it ran, in one line
    after: str  # the compacted file
    manifest: Sequence[Mapping[str, Any]] | None = None  # compact's manifest entries (every file's), if written
    sent: Sequence[Sent] = ()  # what the summarizer was sent, when this review ran the compaction
    reported: FileReport | None = None  # compact's report of the file, when this review ran the compaction


def read_manifest(path: str) -> list[dict[str, Any]]:
    """The entries of a manifest ``compact --manifest`` wrote (JSON Lines), each checked for its keys."""
    entries = []
    try:
        lines = Path(path).read_bytes().splitlines()
    except OSError as error:
        raise InputError(f"cannot read the manifest: {error.strerror or error}", path) from None
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            entry = orjson.loads(line)
        except orjson.JSONDecodeError as error:
            raise InputError(f"not JSON ({error})", path, number) from None
        missing = [k for k in MANIFEST_KEYS if not isinstance(entry, dict) or k not in entry]
        if missing:
            raise InputError(f"a manifest entry needs {', '.join(missing)}", path, number)
        entries.append(entry)
    return entries


MANIFEST_KEYS = ("file", "transcript", "index", "action", "sha256")


def review_written(
    job: Job,
    sides: Sequence[WrittenSide],
    counter: TokenCounter,
    judge: Judge | None = None,
    *,
    read: InputOptions = InputOptions(),
    database: DatabaseOptions = DatabaseOptions(),
    redact_secrets: bool = True,
) -> FileReview:
    """Review compactions of one input as they were written: each side's file read back, never compacted again.

    Transcripts pair in order. Fates come from the manifest's entries for this file where there
    are any, else by matching the output against the input (``review.written.matched_fates``).
    """
    form = read.format
    skipped = skip_list(read.on_error)
    fmt, transcripts = load(read_source(job.source), job.source, form, skipped)
    database.check_session(fmt, job.source)
    transcripts = fmt.session_of(transcripts, database.session, job.source)
    read_back = []
    for side in sides:
        data = read_source(side.after)
        skipped_after = skip_list(read.on_error)  # a compaction given with --compacted may have bad lines too
        _, after = load(data, side.after, form, skipped_after)
        if skipped is not None:
            skipped += [dataclasses.replace(s, file=side.after) for s in skipped_after or ()]
        after = fmt.session_of(after, database.session, side.after, compacted=True)
        if len(after) != len(transcripts):
            raise InputError(f"holds {len(after)} transcript(s), the input holds {len(transcripts)}", side.after)
        read_back.append((after, hashlib.sha256(data).hexdigest()))
    reviewed = []
    for number, transcript in enumerate(transcripts):
        side_reviews = []
        for side, (after, digest) in zip(sides, read_back, strict=True):
            entries = [
                e
                for e in side.manifest or ()
                if e.get("file") == job.name and str(e.get("transcript") or "") == (transcript.label or "")
            ]
            where = f"{job.name} {transcript.label}".strip()
            # The output as the model receives it on resume: the context Codex writes again (which a
            # compaction kept, and the writer left to Codex) is matched as kept, as the manifest says.
            received = model_input(after[number])
            fates = (
                manifest_fates(transcript.messages, entries, where)
                if entries
                else matched_fates(transcript.messages, received)
            )
            # The calls compact reported are the file's; they are shown once, on its first transcript.
            calls = side.reported.summarizer_calls if side.reported is not None and number == 0 else 0
            compaction = written_compaction(transcript.messages, received, fates, SummarizerUsage(calls))
            side_reviews.append(
                review_side(
                    side.name,
                    side.description,
                    transcript.messages,
                    compaction,
                    counter,
                    list(side.sent),
                    judge,
                    # Token figures of what the model receives on resume (model_input), as compact and report count.
                    tokens_before=counter.messages(model_input(transcript)),
                    tokens_after=counter.messages(received),
                    fates_from="manifest" if entries else "matching",
                    output_sha256=digest,
                    redact_secrets=redact_secrets,
                )
            )
        reviewed.append(TranscriptReview(transcript.label, transcript.messages, side_reviews))
    reported = tuple(reported_figures(side.reported) for side in sides)
    return FileReview(job.name, fmt.name, reviewed, redact_secrets, reported, tuple(skipped or ()))


def reported_figures(report: FileReport | None) -> Figures | None:
    """The figures ``compact`` reported for a file, where the page shows its totals."""
    if report is None or report.tokens_after is None or report.messages_after is None:
        return None
    return dataclasses.replace(
        NO_FIGURES,
        tokens_before=report.tokens_before,
        tokens_after=report.tokens_after,
        messages_before=report.messages_before,
        messages_after=report.messages_after,
        valid_after=bool(report.valid_after),
        summarizer_calls=report.summarizer_calls,
    )
