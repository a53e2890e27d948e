"""Every summarizing strategy keeps the user's latest request verbatim, in the summary or the kept tail."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from compactctl.compaction import compact
from compactctl.summarizers import Summary
from compactctl.transcript import content_text, message_text
from tests.conftest import SHARED_TRANSCRIPTS, needs_transcripts
from tests.helpers import call
from tests.properties import examples
from tests.strategies.test_summary_properties import SETTINGS, TEXT, transcripts

SUMMARIZING = ["summary", "rolling", "selective", "structured"]
HARNESS = {"role": "user", "content": "<system-reminder>todo list is empty</system-reminder>"}


class Forgetful:
    """A model that writes a summary with none of the user's words in it."""

    def summarize(self, request):
        return Summary("## Progress\n- things happened")


def fold(text: str) -> str:
    return " ".join(text.split()).casefold()


def latest_user_text(messages: list[dict]) -> str | None:
    """The last user message the generator wrote as a person (harness text is never the request)."""
    found = [content_text(m) for m in messages if m["role"] == "user" and m is not HARNESS and m != HARNESS]
    return found[-1] if found else None


@st.composite
def sessions(draw) -> list[dict]:
    """Generated transcripts that often end on a long agent turn, so the latest request is summarized."""
    messages = draw(transcripts())
    if draw(st.booleans()):
        # A multi-line request, harness text after it (the request is still the latest), then tool rounds.
        messages.append({"role": "user", "content": draw(TEXT) + "\n" + draw(TEXT)})
        messages.append(dict(HARNESS))
        for n in range(draw(st.integers(0, 8))):
            messages.append({"role": "assistant", "content": draw(TEXT), "tool_calls": [call(f"t{n}", "bash", "{}")]})
            messages.append({"role": "tool", "tool_call_id": f"t{n}", "content": draw(TEXT) * 3})
        messages.append({"role": "assistant", "content": draw(TEXT)})
    return messages


@settings(max_examples=examples(80), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sessions(), SETTINGS, st.sampled_from(SUMMARIZING), st.booleans())
def test_the_latest_request_survives_every_summarizing_strategy(messages, options, name, forgetful):
    latest = latest_user_text(messages)
    result = compact(messages, [name], options, summarizer=Forgetful() if forgetful else None)
    output = fold("\n".join(message_text(m) for m in result.messages))
    if latest is not None:
        assert fold(latest) in output


def real_files():
    folders = ("claude-code", "codex", "swe-agent", "mini-swe-agent", "tau-bench")
    found = [p for f in folders for p in sorted((SHARED_TRANSCRIPTS / f).rglob("*")) if p.is_file()]
    return [p for p in found if p.suffix in (".jsonl", ".json", ".traj")]


REAL_SETTINGS = {
    "structured": {},
    "summary": {"threshold": 1000, "keep_recent": 4},
    "rolling": {"threshold": 4000, "window": 4},
    "selective": {"threshold": 1000, "keep_recent": 4},
}


@pytest.mark.slow  # every summarizing strategy on every real transcript
@needs_transcripts  # skipped without them, a failure where COMPACTCTL_TRANSCRIPTS names them (CI)
@pytest.mark.parametrize("path", real_files() or [None], ids=lambda p: p.name[:40] if p else "missing")
def test_the_latest_request_survives_on_every_real_transcript(path):
    from compactctl.formats import load
    from compactctl.summarizers.writings import latest_request

    _, transcripts_ = load(path.read_bytes(), str(path))
    for messages in [t.messages for t in transcripts_][:40]:
        latest = latest_request(messages)
        if latest is None:
            continue
        for name, options in REAL_SETTINGS.items():
            for summarizer in (None, Forgetful()):
                result = compact(messages, [name], options, summarizer=summarizer)
                output = fold("\n".join(message_text(m) for m in result.messages))
                assert fold(latest[1]) in output, (name, latest[1][:80])
