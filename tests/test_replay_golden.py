"""Replay's whole ``--json`` output on every sample, format file and real transcript is what main gave.

The digests in ``tests/golden/replay.json`` were written by ``bench/replay_golden.py write`` on main
before replay streamed (0d9da70; again on 2118e15, whose JSON lists skipped lines anew; one case
again after the rolling fix: bastion's claude-session under ``-t 4000 -s rolling`` replays where it
raised IndexError, and the other 300 cases were unchanged by that fix; two ``prune+trim`` cases again
when prune's pass 2 came to keep one copy of a text whatever call fetched it: d-kimuson's
fe5e1c67 session and tau-bench's gpt-4o-airline, whose latest answers of some calls repeat an
earlier call's answer -- on the airline file 7 duplicates where there were 4; the 7 cases of
qiushiyan__duet again when genai-prices priced its gpt-5.5 calls, unpriced before; the 7 of
formats/claude-code-rewind.jsonl when the calls its rewind left off the live thread came into the bill; the 42
cases of the Claude Code files with usage (formats/claude-code.jsonl and the five real ones) when calibration came to
measure what the harness sent unlogged as steps in the usage, carried with the message it followed (their calibrated
estimates moved, e.g. kesslerio's peak 174,958 -> 176,719 tokens; issue 20); keys added
since are left out of the digest, see ADDED_KEYS; the v2 run document is read back into v1's shape, see
``_as_pinned``; the 7 of qiushiyan__duet again when its remote compaction's own call, which the rollout
records no usage for, came into the bill as estimated; the 7 of formats/codex.jsonl when a response
whose count was never written made its none row the calibrated estimate, not a bill that counts it as 0
tokens, issue 20); the 14 of d-kimuson's 5c0375b4 and kesslerio's chat.json when the held-out calibration warning
came to look at the p90 too (each output gains that warning and its note, nothing else: checked against 79b5cc5);
the 49 of the Claude Code files with usage (the two format files and the five real ones; the real Claude Code
fixtures of tests/recorded excepted) when calibration came to count a response whose usage is the stream's start
by its blocks, Claude's stripped thinking to leave at a new prompt, and Claude Code 1.0.x's unlogged changed-file
reminders to be rebuilt (only calibration, estimate, gap, notes and settings figures differ: checked against 09af6a7);
the 5 ``rolling`` cases (bastion's claude-session and four swe-agent trajectories) when rolling came to count its
summary as the writer writes it and keep its input where a fold saves nothing (f7d761c: only the rolling row's
settings figures differ, e.g. rock.traj's compactions 4 -> 5, checked against f7d761c~1);
the 7 of kesslerio's chat.json when Claude Code 1.0.x's reminders for the files a formatter lists as rewritten and the
log never shows again came to be estimated (only calibration, estimate, gap, notes, history-before-compaction and
settings figures differ, summarizer calls among them: checked against fef1d7d); the 21 Codex cases whose
simulated compactions dropped or folded Codex's initial context, when replay came to keep it as ``compact`` does
(never folded, sent again on resume: ``model_input.resumed_compaction``; only the compacting rows' figures differ,
e.g. kcosr's codex.jsonl under ``window`` peak 24,000 -> 27,163 tokens, checked against fef1d7d); the 7 of
bastion's claude-session, whose usage is zeroed, when a file replayed by its messages came to be priced at the model
it names (glm-4.7, not gpt-4o: only the cost figures differ, e.g. none $0.1598 -> $0.0111); the 7 of kcosr's
codex.jsonl when a response counted and cut off before it was written came to be counted among the bill's calls
(the none row's calls 65 -> 66, and a note that says so; nothing else differs: bench/commands_golden.py check);
the 49 of the seven files whose usage reports no cache write (formats/codex.jsonl, formats/claude-code-rewind.jsonl
and the four real Codex rollouts) or whose producer compaction the file records no usage for (kesslerio's chat.json,
qiushiyan__duet), when replay's estimates came to bill what no call reads as plain input where the usage reports no
write, as the bill does (only the estimate rows' cache_write_tokens differ, their cost at OpenAI's equal write price
unchanged), and such a compaction call came to be estimated apart (``api.compaction_estimate``, an added key) and
no longer added into the bill (the recorded row: kesslerio $37.8613 -> $37.4750, duet $8.3863 -> $8.1822, the
files' own usage; checked with bench/commands_golden.py against 5769048); the 14 of the two real files the producer
compacted (kesslerio's chat.json, qiushiyan__duet) when the estimate of what the producer did came to read, at the call
after its compaction, the cache reads that call's usage reports (not the prefix the simulation shares with the call
before, which a new history does not) and to send what the log holds between the boundary and that call with the
summary (only ``api.recorded_estimate_cost`` differs: kesslerio $36.9796 -> $37.4707 of a $37.4750 bill, duet
$8.1934 -> $8.1960 of $8.1822; checked with bench/commands_golden.py against e3da74a); the 28 of the four Codex
files whose tool results are JSON documents (formats/codex.jsonl and the AcidicSoil, kcosr and yoavf rollouts) when
calibration came to count such a result at OpenAI with its strings unescaped (56cd0e2: only calibration, estimate
and the estimate rows' figures differ, e.g. yoavf's fitted ratio x0.887 -> x1.024; the bill rows unchanged; every
case's whole output on main after it equal to 56cd0e2's, checked with bench/replay_golden.py); the 14 of the two
Claude Code 2.1.219 format files (formats/claude-code.jsonl on Opus 4.1, claude-code-rewind.jsonl on Sonnet 4.5) when
the calls of a release that sends ``clear_thinking_20251015`` ``keep: "all"`` came to keep earlier turns' thinking in
the estimate (``recorded/claude_code_thinking.py``: only calibration and the estimate rows' figures differ, the held-out
error 2.09 % -> 1.55 % and 2.11 % -> 1.15 %; checked against the same tree with the rule off);
``bench/replay_golden.py check`` shows the first differing key.
The generated memory-benchmark file is checked by the script only (a minute of strategies).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.conftest import SHARED_TRANSCRIPTS, needs_transcripts

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))

from replay_golden import ROOT, cases, digest, run_case

pytestmark = pytest.mark.slow  # every command and strategy over every sample and real transcript

GOLDEN = json.loads((Path(__file__).parent / "golden" / "replay.json").read_text())
SCRIPT_ONLY = "generated/bench-chat.jsonl"


def is_real(case: str) -> bool:
    return case.startswith("real/") or "mini-swe-agent" in case


def differing(transcripts: Path | None, folder: Path, real: bool) -> tuple[int, list[str]]:
    """How many pinned cases ran, and those whose output differs (an input added since is not pinned)."""
    checked, wrong = 0, []
    for case, arguments in cases(transcripts, folder):
        if case not in GOLDEN or case.startswith(SCRIPT_ONLY) or is_real(case) != real:
            continue
        checked += 1
        roots = {"transcripts": transcripts, "generated": folder, "root": ROOT}
        if GOLDEN.get(case) != digest(run_case(arguments, roots)):
            wrong.append(case)
    return checked, wrong


def test_replay_output_on_the_samples_and_format_files_is_main_s(tmp_path):
    checked, wrong = differing(None, tmp_path, real=False)
    assert checked == len([case for case in GOLDEN if not is_real(case) and not case.startswith(SCRIPT_ONLY)]) == 84
    assert wrong == []  # 4 samples, 6 format files, 2 generated files, 7 configurations each


@needs_transcripts
def test_replay_output_on_the_real_transcripts_is_main_s(tmp_path):
    checked, wrong = differing(SHARED_TRANSCRIPTS, tmp_path, real=True)
    assert checked == len([case for case in GOLDEN if is_real(case)])
    assert checked > 0 and wrong == []
