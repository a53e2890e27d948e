"""The deterministic steps on every real transcript: API-valid, idempotent, written back and read again.

prune (both modes), mask-observations (defaults, and with inputs masked and turns
counted), clear-thinking (keep 1 and keep 0), each on every file in the shared
transcripts folder, read in its own format: the output is API-valid wherever the input
was, a second run changes nothing, and what is written reads back as the same messages.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from compactctl.compaction import compact
from compactctl.formats import load, write_as
from compactctl.tokens import TokenCounter
from compactctl.transcript import find_violation, is_observation, is_thinking
from tests.conftest import SHARED_TRANSCRIPTS, needs_transcripts

pytestmark = [needs_transcripts, pytest.mark.slow]  # every step on every real transcript

counter = TokenCounter("approx")

STEPS = [
    ("prune", {"mode": "stub"}),
    ("prune", {"mode": "drop"}),
    ("mask-observations", {}),
    ("mask-observations", {"mask_inputs": True, "mask_keep_turns": 2}),
    ("clear-thinking", {}),
    ("clear-thinking", {"keep_thinking_turns": 0}),
]


def real_files() -> list[Path]:
    if not SHARED_TRANSCRIPTS.is_dir():
        return []
    skip = {"README.md"}
    return sorted(
        p for p in SHARED_TRANSCRIPTS.rglob("*") if p.is_file() and p.name not in skip and "LICENSE" not in p.name
    )


@pytest.mark.parametrize("path", real_files(), ids=lambda p: str(p.relative_to(SHARED_TRANSCRIPTS))[-60:])
def test_deterministic_steps_are_valid_and_idempotent_on_real_transcripts(path):
    data = path.read_bytes()
    fmt, transcripts = load(data, str(path))[:2]
    for transcript in transcripts[:40]:  # tau-bench holds 200 runs: 40 of them are enough here
        valid = find_violation(transcript.messages) is None
        for step, options in STEPS:
            result = compact(transcript.messages, [step], options, counter=counter)
            if valid:
                assert find_violation(result.messages) is None, (step, options, find_violation(result.messages))
            again = compact(result.messages, [step], options, counter=counter)
            assert again.messages == result.messages, f"{step} {options} not idempotent"
            written = write_as([transcript.rewritten(result.messages, result.origins)], fmt)
            for back in load(written, str(path))[1]:
                assert not valid or find_violation(back.messages) is None, f"{step} {options}: written back invalid"


def test_what_the_real_transcripts_hold_for_these_steps():
    """Thinking, reasoning and observations are seen where the files have them (so the tests above bite)."""
    seen = {"thinking": 0, "reasoning": 0, "observation": 0}
    for path in real_files():
        for transcript in load(path.read_bytes(), str(path))[1]:
            for message in transcript.messages:
                seen["observation"] += is_observation(message)
                for part in message.get("content") if isinstance(message.get("content"), list) else ():
                    if is_thinking(part):
                        seen["reasoning" if part.get("type") == "reasoning" else "thinking"] += 1
    assert seen["thinking"] >= 40 and seen["reasoning"] >= 60 and seen["observation"] >= 100, seen
