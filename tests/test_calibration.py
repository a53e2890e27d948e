"""Calibration recovers what a known provider billed, and each part of the gap is measured."""

from __future__ import annotations

import struct
import zlib

import pytest

from compactctl.calibration import Fit, calibrate, fit
from compactctl.errors import InputError
from compactctl.recorded import claude_code
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


def test_gap_unexplained_is_what_the_log_cannot_account_for_and_warns():
    session = ClaudeSession(Truth(ratio=1.0, hidden_per_call=0))
    session.user("go")
    for n in range(8):
        # Tokens the provider saw that the log never shows, growing call by call (a file the harness re-read).
        session.truth.hidden_per_call = 3000 * n
        session.response(text=f"step {n}", tools=[("Bash", {"c": n}, prose(20))])
    calibration = _calibrated(session)
    assert calibration.gap.unexplained != 0
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
