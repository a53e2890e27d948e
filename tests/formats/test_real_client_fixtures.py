"""Files the real clients wrote (tests/formats/data/real-clients, made by tests/fakes/record_fixtures.py),
read and compacted without the clients: what the resume tests found, pinned where no client is installed."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

import compactctl
from compactctl.transcript import content_text
from tests.fakes.record_fixtures import ANSWER
from tests.fakes.resume import run_compactctl

DATA = Path(__file__).parent / "data" / "real-clients"
CLAUDE_CODE = DATA / "claude-code-2.1.332-compacted.jsonl"
CODEX = DATA / "codex-0.171.0-compacted.jsonl"
HAND_WRITTEN = Path(__file__).parent / "data" / "claude-code.jsonl"


def _lines(data: bytes) -> list[dict]:
    return [orjson.loads(line) for line in data.splitlines() if line.strip()]


def test_claude_code_reads_the_messages_its_compaction_kept_after_the_summary() -> None:
    records = _lines(CLAUDE_CODE.read_bytes())
    boundary = next(r for r in records if r.get("subtype") == "compact_boundary")
    assert "preservedSegment" in boundary["compactMetadata"]
    _, transcripts = compactctl.load(CLAUDE_CODE.read_bytes(), str(CLAUDE_CODE))
    texts = [content_text(m) for m in transcripts[0].messages]
    assert texts[0].startswith("This session is being continued")
    assert texts[1] == ANSWER  # kept verbatim before the boundary, sent after the summary


@pytest.mark.slow  # a console script per case
@pytest.mark.parametrize(
    ("session", "args"),
    [
        # (A window of its last 4 now keeps it whole: the summary is the request its tail answers.)
        (CLAUDE_CODE, ["compact", "-s", "summary", "--threshold", "0", "--keep-recent", "4"]),
        (HAND_WRITTEN, ["compact"]),
        (HAND_WRITTEN, ["compact", "-s", "window", "--keep-recent", "3"]),
        (HAND_WRITTEN, ["compact", "-s", "trim-tools", "--tool-max-tokens", "5"]),
    ],
)
def test_a_compacted_claude_code_session_reuses_no_message_id_of_the_records_before_it(
    session: Path, args: list[str], tmp_path: Path
) -> None:
    # Claude Code joins the records of one message.id across the file: a reused id sent old blocks twice.
    source = session.read_bytes()
    records = _lines(run_compactctl(session, tmp_path / "out.jsonl", args).data)
    last = max(n for n, r in enumerate(records) if r.get("subtype") == "compact_boundary")
    before = {r["message"]["id"] for r in records[:last] if r.get("type") == "assistant"}
    after = [r["message"]["id"] for r in records[last:] if r.get("type") == "assistant"]
    assert after and not before & set(after)
    assert records[: len(_lines(source))] == _lines(source)  # every old record stays, unchanged
    # Their usage is the old calls', of the history before the boundary: marked as the client marks a response whose
    # usage is no metered call, so that resuming it does not take the old size for the context's and compact again.
    assert all(r.get("isUnmetered") is True for r in records[last:] if r.get("type") == "assistant")
    assert not any(r.get("isUnmetered") for r in records[:last])


def test_a_codex_compaction_continues_the_numbering_and_restates_the_context_as_codex_does() -> None:
    source = CODEX.read_bytes()
    old = _lines(source)
    fmt, transcripts = compactctl.load(source, str(CODEX))
    result = compactctl.compact(transcripts[0].messages, ["window"], {"keep_recent": 2})
    written = _lines(compactctl.dump([transcripts[0].rewritten(result.messages, result.origins)], fmt.name))
    assert written[: len(old)] == old
    compacted, world, turn, counted = written[len(old) :]
    # Codex 0.171 refuses a rollout whose last line has no ordinal, and writes its initial
    # context again after a compacted line not followed by the context it holds.
    assert compacted["type"] == "compacted"
    ordinals = [line["ordinal"] for line in (compacted, world, turn, counted)]
    assert ordinals == [old[-1]["ordinal"] + n for n in (1, 2, 3, 4)]
    last_world = next(r for r in reversed(old) if r["type"] == "world_state")
    assert world["type"] == "world_state" and world["payload"] == last_world["payload"]
    assert turn["type"] == "turn_context"
    # The count Codex checks its auto-compact limit against on resume, as it writes one after compacting: the thread's
    # totals kept, the last call's usage none but the new history's size, below the old call's.
    last_count = next(r for r in reversed(old) if r.get("payload", {}).get("type") == "token_count")["payload"]["info"]
    info = counted["payload"]["info"]
    assert counted["payload"]["type"] == "token_count" and info["total_token_usage"] == last_count["total_token_usage"]
    assert {k: v for k, v in info["last_token_usage"].items() if k != "total_tokens"} == dict.fromkeys(
        (k for k in last_count["last_token_usage"] if k != "total_tokens"), 0
    )
    assert 0 < info["last_token_usage"]["total_tokens"] < last_count["last_token_usage"]["total_tokens"]


def test_a_window_compaction_of_a_world_state_rollout_keeps_the_context_replay_counts() -> None:
    # Codex 0.171 writes world_state, and the one restated after the compacted line says the model
    # holds its initial context, so Codex does not send it again: a window that dropped it from the
    # history left the model without its environment, while replay counted it sent again.
    from compactctl.formats.codex import client_context
    from compactctl.model_input import model_input, resumed_compaction

    fmt, (transcript,) = compactctl.load(CODEX.read_bytes(), str(CODEX))
    assert any(r["type"] == "world_state" for r in _lines(CODEX.read_bytes()))
    result = compactctl.compact(transcript.messages, ["window"], {"keep_recent": 1})
    assert not all(m in result.messages for m in transcript.messages if client_context(m))  # the step dropped some
    written = compactctl.dump([transcript.rewritten(result.messages, result.origins)], fmt.name)
    _, (again,) = compactctl.load(written, "out.jsonl")
    replayed = resumed_compaction(transcript.messages, result.messages, client_context)
    sent = [(m["role"], content_text(m)) for m in model_input(again)]
    assert sent == [(m["role"], content_text(m)) for m in replayed]
    assert sum(text.startswith("<environment_context>") for _, text in sent) == 1


@pytest.mark.parametrize("keep", [1, 2, 3])
def test_a_window_of_a_claude_code_session_opens_on_the_users_turn_after_its_boundary(
    keep: int, tmp_path: Path
) -> None:
    # Claude Code 2.1.332 sends what follows the last compact boundary as it is: a window whose tail
    # opened on the assistant's turn was refused on resume ("first message must use the user role").
    from typer.testing import CliRunner

    from compactctl.cli.main import app

    source = DATA / "claude-code-2.1.332-model-switch.jsonl"
    out = tmp_path / "out.jsonl"
    args = ["compact", str(source), "-s", "window", "--keep-recent", str(keep), "-o", str(out)]
    assert CliRunner().invoke(app, args).exit_code == 0
    records = _lines(out.read_bytes())
    last = max(n for n, r in enumerate(records) if r.get("subtype") == "compact_boundary")
    sent = [r for r in records[last:] if r.get("type") in ("user", "assistant")]
    assert sent[0]["type"] == "user" and sent[-1]["type"] == "assistant"
    _, transcripts = compactctl.load(out.read_bytes(), str(out))
    assert transcripts[0].messages[0]["role"] == "user"


REWIND_INTO_KEPT = DATA / "claude-code-2.1.332-rewind-into-kept.jsonl"


def test_a_prompt_off_a_message_the_compaction_kept_follows_the_summary() -> None:
    """`/compact` keeps the last answer verbatim (preservedSegment); `--resume-session-at` that answer then
    looks like a rewind to before the compaction, but Claude Code 2.1.332 sent the summary, the kept answer
    and the new prompt (the loopback fake's request), not the whole history before the compaction."""
    _, (transcript,) = compactctl.load(REWIND_INTO_KEPT.read_bytes(), str(REWIND_INTO_KEPT))
    texts = [content_text(m) for m in transcript.messages]
    assert texts[0].startswith("This session is being continued from a previous conversation")
    assert texts[1] == ANSWER
    assert "Before it, then?" in texts and "What do the notes say?" not in texts


def test_replay_calibrates_a_rewind_into_the_kept_messages_on_what_was_sent() -> None:
    """The call after that rewind was fitted on the whole history: held-out per-call error 12.3 %, and the
    compaction was not on the live thread (producer_compactions 0)."""
    from compactctl.formats import records_of
    from compactctl.recorded import read_recorded

    session = read_recorded("claude-code", records_of(REWIND_INTO_KEPT.read_bytes(), str(REWIND_INTO_KEPT)),
                            str(REWIND_INTO_KEPT))  # fmt: skip
    assert session is not None
    (context,) = session.contexts
    assert len(context.compactions) == 1 and context.compactions[0].before_call == 2
    import subprocess
    import sys

    command = [sys.executable, "-m", "compactctl", "replay", str(REWIND_INTO_KEPT), "-t", "100000", "--json"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300, check=True)
    held_out = orjson.loads(done.stdout)["files"][0]["api"]["calibration"]["error"]["held_out"]
    assert held_out["calls"] == 2 and held_out["p90"] < 0.02


# compactctl 75a24d0's `compact -s window --keep-recent 2` of the real 2.1.332 model-switch session: the records
# after its last compact boundary open on the assistant's turn. The real 2.1.332 resuming it answers "API Error: 400
# messages: first message must use the "user" role" (the loopback fake refuses it as the API does); report said
# API-valid: yes.
OPENS_ON_ASSISTANT = DATA / "claude-code-2.1.332-window-opens-on-assistant.jsonl"
OPENING_RULE = 'the first message must use the "user" role'


def _report_json(path: Path) -> dict:
    from typer.testing import CliRunner

    from compactctl.cli.main import app

    done = CliRunner().invoke(app, ["report", str(path), "--json"])
    return orjson.loads(done.stdout)


def test_report_calls_a_claude_code_file_its_client_refuses_for_opening_on_the_assistant_invalid() -> None:
    (file,) = _report_json(OPENS_ON_ASSISTANT)["files"]
    assert file["valid_before"] is False
    assert any(OPENING_RULE in v for v in file["violations_before"]), file["violations_before"]


def _claude_code_files() -> list[Path]:
    """Every Claude Code session file the real clients wrote that the tests hold, and the real transcripts."""
    import os

    from compactctl.formats import detect
    from compactctl.formats.records import parse_records

    roots = [DATA, Path(__file__).parents[1] / "recorded" / "data"]
    if os.environ.get("COMPACTCTL_TRANSCRIPTS"):
        roots.append(Path(os.environ["COMPACTCTL_TRANSCRIPTS"]))
    found = []
    for path in sorted(p for root in roots for p in root.rglob("*.json*") if p.is_file() and p != OPENS_ON_ASSISTANT):
        try:
            records = parse_records(path.read_bytes(), str(path))[0]
            if records and detect(records, str(path)).name == "claude-code":
                found.append(path)
        except compactctl.CompactctlError:
            continue
    return found


def test_no_claude_code_session_its_client_accepted_opens_on_the_assistant() -> None:
    # Each was written (and resumed) by its own client: the opening rule must call none of them invalid.
    files = _claude_code_files()
    assert len(files) >= 10
    for path in files:
        for file in _report_json(path)["files"]:
            assert not any(OPENING_RULE in v for v in file["violations_before"]), (path, file["violations_before"])
