"""Calibration recovers what a known provider billed, and each part of the gap is measured."""

from __future__ import annotations

import statistics
import struct
import zlib
from pathlib import Path

import pytest

from compactctl.calibration import Fit, calibrate, fit
from compactctl.errors import InputError
from compactctl.recorded import claude_code
from tests.conftest import SHARED_TRANSCRIPTS, needs_transcripts
from tests.recorded.sessions import ClaudeSession, Truth, prose, working_session


def _calibrated(session: ClaudeSession):
    return calibrate(claude_code.read(session.parsed(), "s.jsonl"), "claude-code")


def _png(width: int, height: int) -> bytes:
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    chunk = b"IHDR" + header
    return b"\x89PNG\r\n\x1a\n" + struct.pack(">I", 13) + chunk + struct.pack(">I", zlib.crc32(chunk))


def test_the_fit_recovers_the_hidden_prefix_and_the_tokenizer_ratio():
    calibration = _calibrated(working_session(Truth(prefix=20_000, ratio=1.3)))
    assert calibration.source == "usage"
    assert calibration.encoding == "cl100k_base"  # the truth's tokenizer fits best
    assert calibration.ratio == pytest.approx(1.3, abs=0.01)
    assert calibration.prefix["main"] == pytest.approx(20_000, abs=60)
    assert calibration.held_out.median < 0.005
    assert calibration.raw.median > 0.3  # uncalibrated, the prefix alone is most of each call


def test_gap_prefix_is_the_hidden_prefix_on_every_call():
    session = working_session(Truth(prefix=30_000, ratio=1.0))
    gap = _calibrated(session).gap
    assert gap.prefix == pytest.approx(30_000 * session.calls, rel=0.01)


def test_gap_tokenizer_is_the_ratio_above_the_counted_text():
    plain = _calibrated(working_session(Truth(prefix=20_000, ratio=1.0))).gap
    scaled = _calibrated(working_session(Truth(prefix=20_000, ratio=1.5))).gap
    assert abs(plain.tokenizer) < 0.01 * plain.reported
    assert scaled.tokenizer > 0.3 * (scaled.counted - plain.prefix / 10)


def test_gap_resent_thinking_is_the_output_the_log_does_not_show():
    session = ClaudeSession(Truth(ratio=1.0))
    session.user("think hard about it")
    for n in range(6):
        session.response(text=f"step {n}", thinking="hmm " * 50, output=900, tools=[("Bash", {"c": n}, prose(30))])
    session.response(text="done")
    gap = _calibrated(session).gap
    # Each of the 7 calls re-sends the 900-token outputs before it; the log shows only their text and
    # the readable thinking (about 50 tokens each), so the gap is the rest of the 900, and less than all of it.
    billed_again = 900 * sum(range(7))
    assert 0.85 * billed_again < gap.resent_thinking < billed_again
    assert abs(gap.unexplained) < 0.01 * gap.reported


def test_gap_attachments_are_counted_as_sent():
    session = ClaudeSession(Truth(ratio=1.0))
    session.user("go")
    for n in range(5):
        session.attachment(prose(200, n))
        session.response(text=f"ok {n}", tools=[("Bash", {"c": n}, prose(20))])
    gap = _calibrated(session).gap
    assert gap.attachments > 1000
    assert abs(gap.unexplained) < 0.01 * gap.reported


def test_gap_images_are_priced_by_pixels_not_a_flat_figure():
    session = ClaudeSession(Truth(ratio=1.0))
    session.user("look at this")
    session.image(_png(1000, 1000))  # Anthropic: 1000*1000/750 = 1333 tokens, not the flat 765
    for n in range(4):
        session.response(text=f"looking {n}", tools=[("Bash", {"c": n}, prose(20))])
    gap = _calibrated(session).gap
    assert gap.images == pytest.approx((1333 - 765) * 4, abs=8)
    assert abs(gap.unexplained) < 0.01 * gap.reported


def test_gap_unlogged_is_what_the_log_cannot_hold_measured_from_the_usage_and_warns():
    session = ClaudeSession(Truth(ratio=1.0, hidden_per_call=0))
    session.user("go")
    for n in range(8):
        # Tokens the provider saw that the log never shows, growing call by call (a file the harness re-read).
        session.truth.hidden_per_call = 3000 * n
        session.response(text=f"step {n}", tools=[("Bash", {"c": n}, prose(20))])
    calibration = _calibrated(session)
    # Measured as steps in the usage, they are the gap's unlogged part, not an unexplained rest ...
    assert calibration.gap.unlogged == pytest.approx(3000 * sum(range(8)), rel=0.01)
    assert abs(calibration.gap.unexplained) < 0.001 * calibration.gap.reported
    # ... but no fit on the first half can know those of the second.
    assert calibration.held_out.median > 0.02
    assert calibration.warnings


def test_a_file_without_usage_falls_back_to_stated_priors():
    session = working_session()
    for record in session.records:
        record.get("message", {}).pop("usage", None)
    calibration = _calibrated(session)
    assert calibration.source == "prior"
    assert calibration.default_prefix > 0


def test_fit_with_no_usage_keeps_the_priors():
    assert fit([], prior_ratio=1.2) == Fit(1.2, 0.0, {})


@pytest.mark.slow  # ctok's two tokenizers over a session
@pytest.mark.needs("ctok")
def test_ctok_families_are_fitted_beside_cl100k_when_asked(monkeypatch):
    calibration = calibrate(claude_code.read(working_session().parsed(), "s.jsonl"), "claude-code", "ctok")
    assert set(calibration.candidates) == {"claude-v3", "claude-v4.7", "cl100k_base"}
    assert calibration.encoding == "cl100k_base"  # the truth here was billed in cl100k: the fit says so


def test_asking_for_ctok_without_it_says_how_to_install_it(monkeypatch):
    import compactctl.calibration

    monkeypatch.setattr(compactctl.calibration, "claude_tokens_available", lambda: False)
    with pytest.raises(InputError, match="needs ctok"):
        calibrate(claude_code.read(working_session(calls=3).parsed(), "s.jsonl"), "claude-code", "ctok")


def test_a_file_whose_held_out_error_is_over_5_percent_is_warned_about_in_report_and_replay(tmp_path):
    import orjson
    from typer.testing import CliRunner

    from compactctl.cli.main import app
    from tests.recorded.sessions import working_session

    session = working_session(calls=12)
    calls = [r for r in session.records if r["type"] == "assistant"]
    for record in calls[len(calls) // 2 :]:  # the second half billed far more than its text explains
        record["message"]["usage"]["cache_read_input_tokens"] *= 2
    path = tmp_path / "session.jsonl"
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in session.records))
    report = CliRunner().invoke(app, ["report", str(path), "--json"])
    (entry,) = orjson.loads(report.stdout)["files"]
    assert entry["api_calibration"]["calibration"]["error"]["held_out"]["median"] > 0.05
    assert any(note.startswith("calibration: held-out per-call error") for note in entry["notes"])
    replay = CliRunner().invoke(app, ["replay", str(path), "-t", "50000", "--json"])
    (played,) = orjson.loads(replay.stdout)["files"]
    assert any("held-out per-call error" in note for note in played["api"]["notes"])
    # The same session as billed gives no such warning.
    clean = tmp_path / "clean.jsonl"
    clean.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in working_session(calls=12).records))
    (fine,) = orjson.loads(CliRunner().invoke(app, ["report", str(clean), "--json"]).stdout)["files"]
    assert not any(note.startswith("calibration:") for note in fine["notes"])


def test_an_attachment_is_read_as_the_text_claude_code_sent_and_not_at_all_where_it_sent_none():
    rendered = [{"content": "<system-reminder>\nToday's date is 2026-12-02.\n</system-reminder>"}]
    sent = claude_code.attachment_message({"type": "date", "date": "2026-12-02"}, rendered, renders=True)
    assert sent is not None and sent["content"] == rendered[0]["content"]
    # Claude Code 2.1 logs its prompt's own state beside the prompt; it is in no request.
    assert claude_code.attachment_message({"type": "prompt_snapshot", "text": "x" * 5000}, None, renders=True) is None
    assert claude_code.attachment_message({"type": "date"}, [], renders=True) is None
    # A version that logs no wording: the attachment's own fields stand for it.
    older = claude_code.attachment_message({"type": "todo_reminder", "content": "1. fix it"}, None, renders=False)
    assert older is not None and "1. fix it" in older["content"]


BIG_PY = "".join(f"def f{n}(x):\n    return x * {n}  # step {n}\n" for n in range(300))


def _claude_code_session_counted_by_a_tokenizer(root):
    """The real Claude Code: two prompts of reads and commands, its own /compact, a third prompt; the fake
    reports each request's input as the cl100k tokens of its texts (``text_tokens``), as an API counts."""
    from tests.fakes.anthropic import FakeAnthropic
    from tests.fakes.clients import ClaudeCode, require_client
    from tests.fakes.scenarios import project
    from tests.fakes.server import Reply, ToolCall, text_tokens

    client = require_client("claude")
    with FakeAnthropic() as fake:
        fake.count = text_tokens
        claude = ClaudeCode(client, root, project(root), fake)
        cwd = claude.cwd
        (cwd / "big.py").write_text(BIG_PY)

        def bash(command: str) -> ToolCall:
            return ToolCall("Bash", {"command": command, "description": command})

        def read(name: str) -> ToolCall:
            return ToolCall("Read", {"file_path": str(cwd / name)})

        fake.enqueue(
            Reply(thinking="Read the notes.", text="Reading.", tool_calls=(read("notes.txt"),)),
            Reply(text="And the code.", tool_calls=(read("big.py"),)),
            Reply(text="List.", tool_calls=(bash("ls -la"),)),
            Reply(text="Count.", tool_calls=(bash("wc -l big.py app.py"),)),
            Reply(text="The app.", tool_calls=(read("app.py"),)),
            "The notes say results must stay in CSV.",
        )
        session = claude.run("What do the notes and code say?")
        edit = {"file_path": str(cwd / "app.py"), "old_string": "a - b", "new_string": "a + b"}
        fake.enqueue(
            Reply(text="Rename.", tool_calls=(bash("sed -i 's/# step/# stage/' big.py"),)),
            Reply(text="Check.", tool_calls=(bash("grep -c stage big.py"),)),
            Reply(text="Fix app.", tool_calls=(ToolCall("Edit", edit),)),
            Reply(text="Run it.", tool_calls=(bash("python3 app.py"),)),
            "Done.",
        )
        claude.run("Say stage in big.py, then fix app.py.", resume=session)
        claude.run("/compact", resume=session)
        fake.enqueue(
            Reply(text="Re-read.", tool_calls=(read("app.py"),)),
            Reply(text="Run.", tool_calls=(bash("python3 app.py"),)),
            Reply(text="Head.", tool_calls=(bash("head -50 big.py"),)),
            Reply(text="Tail.", tool_calls=(bash("tail -40 big.py"),)),
            "All good after the compaction.",
        )
        claude.run("Check everything still works.", resume=session)
        assert not fake.errors and not fake.script
        hidden = [text_tokens([b.get("system"), b.get("tools")]) for b in fake.model_calls()]
        return claude.session_file(session), hidden


@pytest.mark.clients
def test_a_session_the_real_claude_code_compacted_calibrates_within_1_percent_held_out(tmp_path):
    from compactctl.formats.records import parse_records

    path, hidden = _claude_code_session_counted_by_a_tokenizer(tmp_path)
    session = claude_code.read(parse_records(path.read_bytes(), str(path))[0], str(path))
    (context,) = session.contexts
    assert len(context.compactions) == 1 and session.calls >= 15
    calibration = calibrate(session, "claude-code")
    # Before the reader took Claude Code 2.1's rendered attachments, the 58 KB prompt snapshots it
    # logs (and never sends) made the fit's prefix negative and the held-out error 31 % / 47 %.
    assert calibration.held_out.median < 0.01 and calibration.held_out.p90 < 0.02
    assert calibration.ratio == pytest.approx(1.0, abs=0.03)  # the fake counts in cl100k
    for prefix in calibration.prefix.values():  # both segments: the system prompt and the tools
        assert prefix == pytest.approx(statistics.median(hidden), rel=0.03)


def _codex_rollout_counted_by_a_tokenizer(root):
    """The real Codex: two prompts of commands, then a third with a low auto-compact limit, so it
    compacts the history itself (remote compaction) and goes on; the fake counts each request in o200k."""
    import functools
    import re

    from tests.fakes.clients import Codex, require_client
    from tests.fakes.responses import FakeResponses
    from tests.fakes.scenarios import project
    from tests.fakes.server import Reply, ToolCall, text_tokens

    client = require_client("codex")
    with FakeResponses() as fake:
        fake.count = functools.partial(text_tokens, encoding="o200k_base")
        codex = Codex(client, root, project(root), fake)
        (codex.cwd / "big.py").write_text(BIG_PY)

        def run(command: str) -> ToolCall:
            return ToolCall("exec_command", {"cmd": command})

        fake.enqueue(
            Reply(thinking="Read the notes.", text="Reading.", tool_calls=(run("cat notes.txt"),)),
            Reply(text="Code.", tool_calls=(run("cat big.py"),)),
            Reply(text="List.", tool_calls=(run("ls -la"),)),
            Reply(text="Count.", tool_calls=(run("wc -l big.py app.py"),)),
            "The notes say results must stay in CSV.",
        )
        codex.run("What do the notes and code say?")
        (rollout,) = codex.rollouts()
        thread = re.search(r"([0-9a-f-]{36})\.jsonl$", rollout.name)
        assert thread
        fake.enqueue(
            Reply(text="Rename.", tool_calls=(run("sed -i 's/# step/# stage/' big.py"),)),
            Reply(text="Check.", tool_calls=(run("grep -c stage big.py"),)),
            Reply(text="Run.", tool_calls=(run("python3 app.py"),)),
            "Done.",
        )
        codex.run("Say stage in big.py.", resume=thread.group(1))
        codex.extra_config = "model_auto_compact_token_limit = 12000\n"
        fake.enqueue(
            Reply(text="Head.", tool_calls=(run("head -50 big.py"),)),
            Reply(text="Tail.", tool_calls=(run("tail -40 big.py"),)),
            Reply(text="Run.", tool_calls=(run("python3 app.py"),)),
            Reply(text="Count.", tool_calls=(run("wc -c big.py"),)),
            "All good.",
        )
        codex.run("Check everything still works.", resume=thread.group(1))
        assert not fake.errors and not fake.script
        return rollout


@pytest.mark.clients
def test_a_rollout_the_real_codex_compacted_calibrates_within_2_percent_held_out(tmp_path):
    from compactctl.formats.records import parse_records
    from compactctl.recorded import codex

    path = _codex_rollout_counted_by_a_tokenizer(tmp_path)
    session = codex.read(parse_records(path.read_bytes(), str(path))[0], str(path))
    (context,) = session.contexts
    assert len(context.compactions) == 1 and len(context.calls) >= 12
    calibration = calibrate(session, "codex")
    assert calibration.encoding == "o200k_base"
    assert calibration.held_out.median < 0.02 and calibration.held_out.p90 < 0.03
    assert calibration.ratio == pytest.approx(1.0, abs=0.05)  # the fake counts in o200k


def _session_with_an_unlogged_reminder(at_call: int, tokens: int, calls: int = 17) -> ClaudeSession:
    """A session whose harness sent ``tokens`` before call ``at_call`` that no record holds (Claude Code
    1.0.x's reminder that a file it had read changed on disk): it stays in the context from there on."""
    session = ClaudeSession(Truth(prefix=20_000, ratio=1.2))
    session.user("Work through the backlog.")
    for n in range(calls - 1):
        if n == at_call:
            session.context_tokens += tokens
        session.response(text=f"step {n}", tools=[("Bash", {"command": f"make t{n}"}, prose(80 + 40 * (n % 5), n))])
    session.response(text="done")
    return session


def test_a_reminder_the_harness_did_not_log_is_measured_as_a_step_and_does_not_bend_the_fit():
    session = _session_with_an_unlogged_reminder(at_call=4, tokens=2500)
    recorded = claude_code.read(session.parsed(), "s.jsonl")
    calibration = calibrate(recorded, "claude-code")
    ((position, tokens),) = calibration.unlogged_of("main").items()
    assert tokens == pytest.approx(2500, abs=40)
    (context,) = recorded.contexts
    assert position == context.calls[4].position - 1  # the tool result it was sent after
    assert calibration.ratio == pytest.approx(1.2, abs=0.01)
    assert calibration.prefix["main"] == pytest.approx(20_000, abs=60)
    assert calibration.held_out.p90 < 0.003  # the step was in the fitting half: known to the fit
    assert calibration.gap.unlogged == pytest.approx(2500 * (session.calls - 4), rel=0.02)
    assert abs(calibration.gap.unexplained) < 0.002 * calibration.gap.reported


def test_a_session_without_unlogged_steps_has_none():
    calibration = _calibrated(working_session(Truth(prefix=20_000, ratio=1.3)))
    assert calibration.unlogged == {} and calibration.gap.unlogged == 0


def test_replay_carries_an_unlogged_step_with_the_message_it_followed():
    from compactctl.replay import settings_grid, shipped_prices
    from compactctl.replay.recorded import replay_recorded
    from compactctl.strategies import StrategyOptions

    recorded = claude_code.read(_session_with_an_unlogged_reminder(at_call=4, tokens=6000).parsed(), "s.jsonl")
    window = StrategyOptions.from_values({"keep_recent": 4})
    grid = settings_grid([60_000], False, ["window"])
    result = replay_recorded(recorded, "claude-code", grid, window, shipped_prices(), None)
    # No compaction: the estimate of each call is its reported input, the step included.
    assert result.recorded_estimate.input_tokens == pytest.approx(result.bill.input_tokens, rel=0.002)


def test_a_step_after_the_fitting_half_is_named_in_the_held_out_warning():
    calibration = _calibrated(_session_with_an_unlogged_reminder(at_call=9, tokens=6000))
    assert calibration.held_out.median > 0.05  # no fit on the first half can know it
    (warning,) = [w for w in calibration.warnings if w.startswith("held-out per-call error")]
    assert "tokens the harness sent after the fitting half are in no record" in warning
    assert int(warning.split("; ")[1].split(" tokens")[0].replace(",", "")) == pytest.approx(6000, abs=60)


def test_a_few_held_out_calls_far_off_are_warned_about_by_their_p90_where_the_median_is_fine(tmp_path):
    """A step before the last two calls of 17: the held-out median is near 0, its p90 is not."""
    import orjson
    from typer.testing import CliRunner

    from compactctl.cli.main import app

    session = _session_with_an_unlogged_reminder(at_call=15, tokens=6000)
    calibration = _calibrated(session)
    assert calibration.held_out.median < 0.05 < calibration.held_out.p90
    (warning,) = [w for w in calibration.warnings if w.startswith("held-out per-call error")]
    assert warning.startswith(f"held-out per-call error {calibration.held_out.p90:.1%} (p90) is over 5%")
    assert "(median)" not in warning
    both = _calibrated(_session_with_an_unlogged_reminder(at_call=9, tokens=6000))
    assert "(median), " in both.warnings[-1] and "(p90) is over 5%" in both.warnings[-1]
    fine = _calibrated(_session_with_an_unlogged_reminder(at_call=15, tokens=200))
    assert not any(w.startswith("held-out per-call error") for w in fine.warnings)
    path = tmp_path / "session.jsonl"
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in session.records))
    (entry,) = orjson.loads(CliRunner().invoke(app, ["report", str(path), "--json"]).stdout)["files"]
    assert any(note.startswith("calibration: held-out per-call error") and "(p90)" in note for note in entry["notes"])
    replay = CliRunner().invoke(app, ["replay", str(path), "-t", "50000", "--json"])
    (played,) = orjson.loads(replay.stdout)["files"]
    assert any("(p90) is over 5%" in note for note in played["api"]["notes"])


def test_a_fall_the_log_does_not_explain_is_measured_once_the_rises_have_settled():
    session = ClaudeSession(Truth(prefix=20_000, ratio=1.2))
    session.user("Work through the backlog.")
    for n in range(16):
        if n == 5:
            session.user("Now the next item.")
            session.context_tokens -= 900  # taken out of the context unlogged (earlier turns' thinking)
        session.response(text=f"step {n}", tools=[("Bash", {"command": f"make t{n}"}, prose(80 + 40 * (n % 5), n))])
    calibration = _calibrated(session)
    ((_, tokens),) = calibration.unlogged_of("main").items()
    assert tokens == pytest.approx(-900, abs=40)
    assert calibration.ratio == pytest.approx(1.2, abs=0.01)
    assert calibration.held_out.p90 < 0.003


def _claude_code_session_with_a_subagent_and_a_rewind(root):
    """The real Claude Code: a long command output (kept whole or as a preview), a file changed between
    runs, a subagent with its own calls, then a rewind (``--resume-session-at``) and more work on it."""
    import json

    from tests.fakes.anthropic import FakeAnthropic
    from tests.fakes.clients import ClaudeCode, _run, require_client
    from tests.fakes.scenarios import project
    from tests.fakes.server import Reply, ToolCall, text_tokens

    client = require_client("claude")
    with FakeAnthropic() as fake:
        fake.count = text_tokens
        claude = ClaudeCode(client, root, project(root), fake)
        cwd = claude.cwd
        (cwd / "big.py").write_text(BIG_PY)

        def run(prompt: str, *extra: str) -> str:
            args = [str(client.binary), "-p", prompt, "--output-format", "json"]
            args += ["--permission-mode", "acceptEdits", "--allowedTools", "Bash Read Edit Write Agent Task", *extra]
            done = _run(args, claude.cwd, claude.env())
            return str(json.loads(done.stdout.strip().splitlines()[-1])["session_id"])

        def bash(command: str) -> ToolCall:
            return ToolCall("Bash", {"command": command, "description": command[:30]})

        def read(name: str) -> ToolCall:
            return ToolCall("Read", {"file_path": str(cwd / name)})

        fake.enqueue(
            Reply(thinking="Read the code first. " * 5, text="Reading.", tool_calls=(read("big.py"),)),
            Reply(text="A long log.", tool_calls=(bash("yes 'a line of the long build log' | head -n 1500"),)),
            Reply(text="Count.", tool_calls=(bash("wc -l big.py"),)),
            "big.py has 300 functions.",
        )
        session = run("Look at the code and the log.")
        (cwd / "big.py").write_text(BIG_PY.replace("# step", "# stage"))
        task = {
            "description": "Check the notes",
            "prompt": "Read notes.txt and app.py.",
            "subagent_type": "general-purpose",
        }
        fake.enqueue(
            Reply(text="Asking a subagent.", tool_calls=(ToolCall("Agent", task),)),
            Reply(text="Sub: notes.", tool_calls=(read("notes.txt"),)),
            Reply(text="Sub: app.", tool_calls=(read("app.py"),)),
            "The notes ask for CSV; app.py subtracts.",
            Reply(text="Check big.", tool_calls=(bash("grep -c stage big.py"),)),
            "The subagent confirms: CSV.",
        )
        run("Ask a subagent to check the notes, then check big.py.", "--resume", session)
        records = [json.loads(line) for line in claude.session_file(session).read_text().splitlines() if line]
        answer = next(
            r["uuid"]
            for r in records
            if r.get("type") == "assistant" and "300 functions" in json.dumps(r.get("message", {}).get("content"))
        )
        fake.enqueue(Reply(text="Again.", tool_calls=(bash("head -20 big.py"),)), "Rewound: fine.")
        run("Instead, show the head of big.py.", "--resume", session, "--resume-session-at", answer)
        fake.enqueue(
            Reply(text="More.", tool_calls=(bash("tail -20 big.py"),)),
            Reply(text="App.", tool_calls=(read("app.py"),)),
            "Ok.",
        )
        run("And the tail, and app.py.", "--resume", session)
        assert not fake.errors and not fake.script
        return claude.session_file(session)


@pytest.mark.clients
def test_a_real_claude_code_session_with_a_subagent_and_a_rewind_calibrates_within_1_percent_held_out(tmp_path):
    from compactctl.formats.records import parse_records

    path = _claude_code_session_with_a_subagent_and_a_rewind(tmp_path)
    session = claude_code.read(parse_records(path.read_bytes(), str(path))[0], str(path))
    assert any(c.label.startswith("subagent") for c in session.contexts) and session.off_thread
    calibration = calibrate(session, "claude-code")
    # Before the reader took the rendered attachments: 39.7 % / 92.2 % (its prompt snapshots counted).
    assert calibration.held_out.median < 0.01 and calibration.held_out.p90 < 0.01
    assert calibration.ratio == pytest.approx(1.0, abs=0.03)
    assert calibration.unlogged == {}  # nothing the client sent is missing from its log


REAL_CLIENTS = Path(__file__).parent / "formats" / "data" / "real-clients"


def _switched(name: str, producer: str, models: list[str]):
    """The calibration of a real client's file whose one context ran six calls on each of ``models``."""
    from compactctl.formats.records import parse_records
    from compactctl.recorded import read_recorded

    path = REAL_CLIENTS / name
    session = read_recorded(producer, parse_records(path.read_bytes(), str(path))[0], str(path))
    assert session is not None
    (context,) = session.contexts
    assert [c.model for c in context.calls] == [models[0]] * 6 + [models[1]] * 6
    assert context.segment_starts() == [0, 6]
    calibration = calibrate(session, producer)
    assert calibration.held_out.median < 0.02 and calibration.held_out.p90 < 0.05
    assert calibration.warnings == ()
    return calibration


def test_a_switch_of_model_starts_a_hidden_prefix_of_its_own():
    """The real Claude Code 2.1.332 ran three turns on claude-opus-4-7 and three on claude-sonnet-4-6 against a
    fake counting Opus 4.7's tokenizer at 1.35x (tests/fakes/record_fixtures.py): the system prompt and tools
    cost another number of tokens on the other model. With one prefix for the whole context, the held-out half
    (all Sonnet) was predicted from Opus's prefix: 34.3 % / 34.5 % (median / p90)."""
    models = ["claude-opus-4-7", "claude-sonnet-4-6"]
    calibration = _switched("claude-code-2.1.332-model-switch.jsonl", "claude-code", models)
    opus, sonnet = calibration.prefix["main"], calibration.prefix["main@6"]
    assert opus / sonnet == pytest.approx(1.35, rel=0.1)


def test_a_codex_thread_resumed_on_another_model_calibrates_each_model_s_instructions_apart():
    """The real Codex 0.171 ran three turns on gpt-5.5 and three resumed on gpt-5.4 (no compaction): each model
    sends its own base instructions. One prefix for both predicted the gpt-5.4 half at 7.3 % / 8.5 %."""
    calibration = _switched("codex-0.171.0-model-switch.jsonl", "codex", ["gpt-5.5", "gpt-5.4"])
    assert calibration.prefix["main@6"] > calibration.prefix["main"]  # gpt-5.4's instructions are the longer


def test_an_openai_tool_result_that_is_json_is_counted_with_its_strings_unescaped():
    from compactctl.calibration.features import json_unescaped, sent_tokens
    from compactctl.tokens import TokenCounter

    written = '{"output":"const a = 1;\\nconst b = \\"two\\";\\n","metadata":{"exit_code":0}}'
    assert json_unescaped(written) == '{"output":"const a = 1;\nconst b = "two";\n","metadata":{"exit_code":0}}'
    assert json_unescaped('{"output": "no escape"}') is None  # nothing to resolve
    assert json_unescaped("C:\\temp is not JSON") is None
    assert json_unescaped('{"cut": "off\\n') is None  # not a whole document: counted as written
    lines = "".join(f"function f{n}() {{\\n  return {n};\\n}}\\n\\n" for n in range(40))  # code: escapes cost
    result = {"role": "tool", "tool_call_id": "c1", "content": '{"output":"' + lines + '"}'}
    openai = TokenCounter("o200k_base", "openai")
    unescaped = openai.message({**result, "content": json_unescaped(result["content"])})
    assert sent_tokens(result, openai) == unescaped < openai.message(result)
    parts = {**result, "content": [{"type": "input_text", "text": result["content"]}]}
    assert sent_tokens(parts, openai) == unescaped
    # Anthropic's and Gemini's counts, and any message but a tool result, are counted as written.
    assert sent_tokens(result, TokenCounter("cl100k_base", "anthropic")) == TokenCounter().message(result)
    user = {**result, "role": "user"}
    assert sent_tokens(user, openai) == openai.message(user)


@needs_transcripts
def test_the_real_codex_rollouts_fit_their_own_tokenizer_with_json_tool_results_unescaped():
    """Codex 0.47 and 0.58 logged each exec result as ``{"output": ..., "metadata": ...}``; counted as written,
    their fitted ratio to o200k was 0.887 and 0.884 (held-out per-call error 1.59 % / 2.37 % on the first),
    against 1.001 and 1.002 on the rollouts of later versions, whose results are plain text."""
    from compactctl.formats.records import parse_records
    from compactctl.recorded import codex

    paths = sorted((SHARED_TRANSCRIPTS / "codex").glob("*/*.jsonl"))
    assert len(paths) >= 4
    for path in paths:
        calibration = calibrate(codex.read(parse_records(path.read_bytes(), str(path))[0], str(path)), "codex")
        assert calibration.encoding == "o200k_base"
        assert calibration.ratio == pytest.approx(1.0, abs=0.03), path.parent.name
        assert calibration.held_out.median < 0.01 and calibration.held_out.p90 < 0.02, path.parent.name
