"""The review as values: spans beside their summaries, identifiers kept and lost, what was sent."""

from __future__ import annotations

from compactctl.compaction import compact
from compactctl.review import (
    Recorder,
    TranscriptReview,
    difference,
    recording,
    review_side,
    span_identifiers,
)
from compactctl.review.page import FileReview, file_page
from compactctl.review.sections import sections, spans_of
from compactctl.summarizers import PromptedSummarizer
from compactctl.summarizers.extractive import ExtractiveSummarizer
from compactctl.tokens import counter_for
from tests.review.conftest import SECRET, session

COUNTER = counter_for("approx")


def test_sections_split_a_summary_at_its_markdown_headings():
    text = "[compactctl summary of 3 earlier messages]\n\n## Goal\n- fix it\n\n## Facts\n- src/app.py\n"
    assert sections(text) == [
        ("", "[compactctl summary of 3 earlier messages]"),
        ("Goal", "- fix it"),
        ("Facts", "- src/app.py"),
    ]


def test_the_summary_sits_beside_the_run_of_messages_it_replaced(long_session):
    result = compact(long_session, ["summary"], {"keep_recent": 2, "threshold": 0}, counter=COUNTER)
    spans = spans_of(result)
    summarized = [e.index for e in result.manifest if e.action == "summarized"]
    assert len(spans) == 1 and list(spans[0].indices) == summarized
    assert spans[0].summary is not None and "compactctl summary" in spans[0].summary


def test_identifiers_of_a_dropped_span_are_flagged_lost_and_kept_ones_survive(agent_messages):
    kept_all = span_identifiers(agent_messages, [2, 5], agent_messages)
    assert kept_all and all(i.survived for i in kept_all)
    after = [m for i, m in enumerate(agent_messages) if i != 5]  # drop the failing test output
    lost = {i.text: i for i in span_identifiers(agent_messages, [5], after)}
    assert "FAILED tests/test_app.py::test_add" in lost
    assert not lost["FAILED tests/test_app.py::test_add"].survived
    assert lost["FAILED tests/test_app.py::test_add"].seen == (5,)


def test_the_recorder_keeps_the_prompt_interface_of_what_it_wraps():
    assert isinstance(recording(ExtractiveSummarizer(COUNTER)), Recorder)
    wrapped = recording(ExtractiveSummarizer(COUNTER))
    assert isinstance(wrapped, PromptedSummarizer) == isinstance(ExtractiveSummarizer(COUNTER), PromptedSummarizer)


def test_what_the_summarizer_was_sent_is_recorded_and_redacted():
    messages = session(secret=True)
    recorder = recording(ExtractiveSummarizer(COUNTER))
    result = compact(messages, ["summary"], {"keep_recent": 2, "threshold": 0}, counter=COUNTER, summarizer=recorder)
    sent = recorder.sent(redact_secrets=True)
    assert sent and SECRET not in sent[0].data and "[REDACTED:openai-key]" in sent[0].data
    assert sent[0].redactions == 1
    assert SECRET in recorder.sent(redact_secrets=False)[0].data
    side = review_side("A", "summary", messages, result, COUNTER, sent)
    page = file_page(FileReview("f.jsonl", "chat", [TranscriptReview("", messages, [side])], True))
    assert SECRET not in page and "[REDACTED:openai-key]" in page
    open_page = file_page(FileReview("f.jsonl", "chat", [TranscriptReview("", messages, [side])], False))
    assert SECRET in open_page and "redaction is OFF" in open_page


def test_figures_and_the_difference_between_two_sides(long_session):
    summarized = compact(long_session, ["summary"], {"threshold": 0, "keep_recent": 2}, counter=COUNTER)
    windowed = compact(long_session, ["window"], {"keep_recent": 2}, counter=COUNTER)
    a = review_side("A", "summary", long_session, summarized, COUNTER)
    b = review_side("B", "window", long_session, windowed, COUNTER)
    assert a.figures.tokens_before == b.figures.tokens_before == COUNTER.messages(long_session)
    assert b.figures.identifiers_kept < b.figures.identifiers  # a window drops without a summary
    gap = difference(a.figures, b.figures)
    assert gap == difference(b.figures, a.figures) > 0
    assert difference(a.figures, a.figures) == 0
