"""``compactctl replay --json`` on a session that records its usage: the API's units, the bill, the recorded row."""

from __future__ import annotations

from pathlib import Path

import orjson
from typer.testing import CliRunner

from compactctl.cli.main import app
from tests.recorded.sessions import working_session


def _write(tmp_path, session):
    path = tmp_path / "session.jsonl"
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in session.records))
    return path


def test_the_baseline_of_an_uncompacted_session_is_the_bill(tmp_path):
    session = working_session(calls=10)
    path = _write(tmp_path, session)
    result = CliRunner().invoke(app, ["replay", str(path), "-t", "21000", "-s", "window", "--json"])
    assert result.exit_code == 0, result.output
    (data,) = orjson.loads(result.stdout)["files"]
    baseline, threshold = data["settings"]
    assert (baseline["trigger"], baseline["basis"], threshold["basis"]) == ("none", "bill", "estimate")
    reported = sum(
        r["message"]["usage"]["input_tokens"]
        + r["message"]["usage"]["cache_read_input_tokens"]
        + r["message"]["usage"]["cache_creation_input_tokens"]
        for r in session.records
        if r["type"] == "assistant" and r["message"]["usage"]["output_tokens"] > 1
    )
    assert baseline["input_tokens"] == reported
    # Thresholds are API input tokens: the hidden prefix (20k here) alone nearly reaches 21k.
    assert threshold["compactions"] >= 1
    assert data["api"]["calibration"]["error"]["held_out"]["median"] < 0.01
    assert abs(data["api"]["baseline_estimate_cost"] / data["api"]["bill_cost"] - 1) < 0.03


def test_a_session_the_producer_compacted_has_a_recorded_row(tmp_path):
    session = working_session(calls=4)
    session.compact("Summary: the tests pass.", {"trigger": "auto", "preTokens": session.last_context()})
    session.user("continue")
    session.response(text="continuing")
    result = CliRunner().invoke(app, ["replay", str(_write(tmp_path, session)), "-t", "50000", "--json"])
    (data,) = orjson.loads(result.stdout)["files"]
    triggers = [(row["trigger"], row["basis"]) for row in data["settings"]]
    assert triggers[:2] == [("none", "estimate"), ("recorded", "bill")]
    recorded = data["settings"][1]
    assert (recorded["calls"], recorded["compactions"]) == (5, 1)
    assert data["api"]["producer_compactions"] == 1
    # The recorded row compacts where the producer did: the call after the boundary starts small.
    contexts = recorded["context_per_call"]
    assert contexts[4] < contexts[3] - 1000  # the 20k hidden prefix stays; the history goes
    (check,) = data["api"]["pre_tokens_check"]
    assert check["call"] == 3
    assert abs(check["recorded_context"] / check["pre_tokens"] - 1) <= 0.03


def test_a_model_missing_from_the_price_table_is_a_note_naming_model_pricing(tmp_path):
    session = working_session(calls=3)
    for record in session.records:
        if record["type"] == "assistant":
            record["message"]["model"] = "claude-future-9"
    result = CliRunner().invoke(app, ["replay", str(_write(tmp_path, session)), "-t", "50000"])
    assert result.exit_code == 0
    assert "claude-future-9" in result.stdout and "--model-pricing" in result.stdout


def test_price_and_encoding_flags_a_recorded_session_does_not_read_are_said_not_ignored(tmp_path):
    """Each call of a file that records its usage is priced by the model it names and counted in API units: the
    price figures, --model-pricing for a listed model and --encoding change nothing there, and a note says so."""
    path = str(_write(tmp_path, working_session(calls=3)))
    plain = CliRunner().invoke(app, ["replay", path, "-t", "50000", "--json"])
    flags = ["--price-in", "100", "--model-pricing", "gpt-4o", "--cache-min-tokens", "5", "--encoding", "approx"]
    given = CliRunner().invoke(app, ["replay", path, "-t", "50000", "--json", *flags])
    assert given.exit_code == plain.exit_code == 0, given.stderr
    assert orjson.loads(given.stdout)["files"][0]["settings"] == orjson.loads(plain.stdout)["files"][0]["settings"]
    assert "note: --model-pricing, --price-in, --cache-min-tokens not used: session.jsonl records its usage" in (
        given.stderr
    )
    assert "note: --encoding approx not used" in given.stderr
    assert "not used" not in plain.stderr
    # Where --model-pricing prices a model no source knows, it (and the figures over it) is read: no such note.
    session = working_session(calls=3)
    for record in session.records:
        if record["type"] == "assistant":
            record["message"]["model"] = "claude-future-9"
    unknown = str(_write(tmp_path, session))
    fallback = CliRunner().invoke(
        app, ["replay", unknown, "-t", "50000", "--model-pricing", "gpt-4o", "--price-in", "1"]
    )
    assert fallback.exit_code == 0 and "not used" not in fallback.stderr, fallback.stderr


def test_a_team_price_table_is_named_in_the_caption_not_the_list_prices(tmp_path):
    """Rows from --prices FILE priced the run: the caption says so, never that genai-prices did."""
    table = tmp_path / "prices.toml"
    table.write_text(
        "[models.claude-sonnet-4-5]\ninput = 30.0\noutput = 150.0\n[models.house-llm]\ninput = 1.0\noutput = 2.0\n"
    )
    wide = {"COLUMNS": "300"}
    session = str(_write(tmp_path, working_session(calls=3)))
    recorded = CliRunner().invoke(app, ["replay", session, "-t", "50000", "--prices", str(table)], env=wide)
    assert recorded.exit_code == 0, recorded.output
    from compactctl.replay.price_source import source_label

    assert f"by the model it names ({source_label()}, your rows from --prices {table} over it)" in recorded.stdout
    chat = tmp_path / "chat.jsonl"
    chat.write_bytes(b'{"role": "user", "content": "hi"}\n{"role": "assistant", "content": "hello"}\n')
    own = CliRunner().invoke(
        app, ["replay", str(chat), "-t", "50", "--prices", str(table), "--model-pricing", "house-llm"], env=wide
    )
    assert own.exit_code == 0, own.output
    assert "priced as house-llm: $1/M in" in own.stdout and f"(--prices {table})" in own.stdout
    assert "genai-prices" not in own.stdout.split("priced as house-llm")[1].splitlines()[0]


def test_report_json_splits_the_gap_into_parts_that_add_up_to_the_reported_input(tmp_path):
    session = working_session(calls=10)
    result = CliRunner().invoke(app, ["report", str(_write(tmp_path, session)), "--json"])
    assert result.exit_code == 0, result.output
    (entry,) = orjson.loads(result.stdout)["files"]
    recorded = entry["api_calibration"]
    gap = recorded["gap"]
    assert set(gap) == {
        "prefix",
        "resent_thinking",
        "tokenizer",
        "attachments",
        "images",
        "unexplained",
        "harness_per_message",
        "unlogged",
    }
    assert recorded["counted_input_tokens"] + sum(gap.values()) == recorded["reported_input_tokens"]
    assert gap["prefix"] > 0.5 * recorded["reported_input_tokens"]  # the 20k hidden prefix on every call
    assert set(recorded["calibration"]["error"]) == {"raw", "calibrated", "held_out"}
    assert recorded["calibration"]["error"]["held_out"]["median"] < 0.01
    # The table's calibrated row says how many billed calls it sums, beside the row of the thread read.
    table = CliRunner().invoke(app, ["report", str(_write(tmp_path, session))], env={"COLUMNS": "250"}).stdout
    calibrated = next(line for line in table.splitlines() if "API input, calibrated" in line)
    assert f"{recorded['calls']:,} billed calls: reported {recorded['reported_input_tokens']:,}," in calibrated
    # Sentences follow the table, a line each: the before column stays as wide as its figures.
    assert not calibrated.startswith("│") and any(line.startswith("  gap: prefix") for line in table.splitlines())
    assert max(len(line) for line in table.splitlines() if line[:1] in "┏│└") < 50


def test_a_folder_mixing_compacted_sessions_and_plain_chats_lines_its_rows_up(tmp_path):
    session = working_session(calls=4)
    session.compact("Summary.", {"trigger": "auto"})
    session.response(text="continuing")
    _write(tmp_path, session)
    chat = tmp_path / "chat.jsonl"
    chat.write_bytes(b'{"role": "user", "content": "hi"}\n{"role": "assistant", "content": "hello"}\n')
    result = CliRunner().invoke(app, ["replay", str(tmp_path), "-t", "50000", "--json"])
    assert result.exit_code == 0, result.output
    data = orjson.loads(result.stdout)
    assert [row["trigger"] for row in data["total"]["settings"]] == ["none", "recorded", "threshold"]
    by_file = {f["name"]: f for f in data["files"]}
    # The chat file's producer never compacted: its share of the recorded row is its baseline.
    assert data["total"]["settings"][1]["calls"] == by_file["session.jsonl"]["settings"][1]["calls"] + 1


def test_replay_reads_a_flagged_release_s_thinking_from_the_usage(cli, tmp_path):
    """The real Claude Code 2.1.84's session (``keep: "all"`` sent) written as 2.1.83, whose request the file cannot
    tell: replay's calibration reads the earlier thinking as sent (held out as the 2.1.84 file itself), not as dropped
    (10.7 % held out, five unlogged steps)."""
    data = Path(__file__).resolve().parent.parent / "recorded" / "data" / "claude-code-2.1.84-thinking"
    (original,) = data.glob("*.jsonl")
    flagged = tmp_path / "flagged.jsonl"
    flagged.write_bytes(original.read_bytes().replace(b'"version":"2.1.84"', b'"version":"2.1.83"'))

    def calibration(path):
        result = cli("replay", path, "--json")
        assert result.exit_code == 0, result.output
        return orjson.loads(result.stdout)["files"][0]["api"]["calibration"]

    read, as_sent = calibration(flagged), calibration(original)
    assert read["error"]["held_out"] == as_sent["error"]["held_out"] and read["error"]["held_out"]["median"] < 0.01
    assert read["unlogged"] == {"steps": 0, "tokens": 0}
