"""``review``, one file: where its pages go, and each transcript compacted once per side."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from compactctl.compaction import compact
from compactctl.errors import InputError
from compactctl.files.io import STDIO, Job, check_distinct_targets, expand_inputs, read_source, same_file
from compactctl.formats import load
from compactctl.formats.records import SkippedLine
from compactctl.review import FileReview, TranscriptReview, recording, review_side
from compactctl.summarizers import Summarizer
from compactctl.tokens import TokenCounter

REVIEW_SUFFIX = ".review.html"


@dataclass(frozen=True)
class ReviewSide:
    """One compaction a review shows: side A, or side B beside it."""

    name: str  # "A" or "B"
    description: str  # what it ran, in one line
    settings: Mapping[str, Any]
    summarizer: Summarizer | None


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


def review_file(job: Job, sides: Sequence[ReviewSide], counter: TokenCounter) -> FileReview:
    """Read one file and compact each transcript once per side, recording what each summarizer was sent."""
    first = sides[0].settings
    redact_secrets = bool(first.get("redact", True))
    skipped: list[SkippedLine] | None = [] if first.get("on_error") == "skip" else None
    fmt, transcripts = load(read_source(job.source), job.source, str(first.get("format") or "auto"), skipped)
    reviewed = []
    for transcript in transcripts:
        side_reviews = []
        for side in sides:
            recorder = recording(side.summarizer) if side.summarizer is not None else None
            steps = list(side.settings["strategy"])
            result = compact(transcript.messages, steps, side.settings, counter=counter, summarizer=recorder)
            sent = recorder.sent(redact_secrets) if recorder is not None else []
            side_reviews.append(
                review_side(side.name, side.description, transcript.messages, result, counter, sent, redact_secrets)
            )
        reviewed.append(TranscriptReview(transcript.label, transcript.messages, side_reviews))
    return FileReview(job.name, fmt.name, reviewed, redact_secrets)
