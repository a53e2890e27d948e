"""``replay`` of the shapes real clients write (tests/fakes/record_fixtures.py): a Claude Code project
folder copied as it is (session files, forks, and each session's ``<session>/subagents/``, its
``agent-*.jsonl`` beside its ``agent-*.meta.json``), a Codex fork that compacted first, a Codex
run killed during a tool call."""

from __future__ import annotations

import shutil
from pathlib import Path

import orjson
import pytest
from genai_prices import Usage, calc_price
from typer.testing import CliRunner

from compactctl.cli.main import app
from tests.replay.test_bill import anthropic_counts

REAL = Path(__file__).parents[1] / "formats" / "data" / "real-clients"
BRANCHES = REAL / "claude-code-2.1.332-branches"


def _bill(folder: Path) -> tuple[int, float]:
    """The calls and list-price bill of every response in the folder, each ``message.id`` once
    (a fork's file repeats its parent's responses; a subagent's are in its own file only)."""
    responses = {}
    for file in folder.rglob("*.jsonl"):
        for line in file.read_bytes().splitlines():
            record = orjson.loads(line)
            message = record.get("message")
            if record.get("type") == "assistant" and isinstance(message, dict) and message.get("usage"):
                responses[message["id"]] = message
    cost = 0.0
    for message in responses.values():
        tokens = Usage(**anthropic_counts(message["usage"]))
        cost += float(calc_price(tokens, model_ref=message["model"], provider_id="anthropic").total_price)
    return len(responses), cost


def test_a_copied_project_folder_bills_each_subagent_call_once_and_reads_no_sidecar(tmp_path):
    folder = tmp_path / "project"
    shutil.copytree(BRANCHES, folder)
    assert list(folder.rglob("subagents/*.meta.json")), "the fixture keeps the client's sidecar"
    calls, bill = _bill(folder)
    result = CliRunner().invoke(app, ["replay", str(folder), "-t", "5000", "--json", "-q"])
    report = orjson.loads(result.stdout)
    assert result.exit_code == 0, (report["failed"], result.stderr)
    baseline = report["total"]["settings"][0]
    assert baseline["trigger"] == "none"
    assert baseline["calls"] == calls
    assert abs(baseline["cost"] - bill) <= 0.03 * bill, (baseline["cost"], bill)


CODEX_FORK = Path(__file__).parents[1] / "formats" / "data" / "real-clients" / "codex-0.171.0-fork-after-compaction"


def test_a_codex_fork_that_compacted_first_is_billed_from_its_own_usage(tmp_path):
    """The fork's opening ``token_count`` (the parent's totals, ``last_token_usage`` all zeros) is no call's;
    the compaction the fork began with (its first ``token_usage_record``, before any call of the file: the
    fake served it as resp_fake000008, 9,573 tokens in) is, and was left out of the bill before."""
    from tests.recorded.test_codex_calls import _each_response_at_its_model

    bill, responses = _each_response_at_its_model(CODEX_FORK / "fork.jsonl")
    assert responses == 2  # the fork's own compaction and its one call
    result = CliRunner().invoke(app, ["replay", str(CODEX_FORK / "fork.jsonl"), "-t", "50000", "--json", "-q"])
    assert result.exit_code == 0, result.stderr
    (replayed,) = orjson.loads(result.stdout)["files"]
    # The fork compacted, so its recorded row is the bill (and none the estimate without that compaction).
    billed = next(row for row in replayed["settings"] if row["basis"] == "bill")
    assert (billed["trigger"], billed["calls"], billed["compactions"]) == ("recorded", 1, 1)
    assert replayed["api"]["producer_compactions"] == 1
    assert billed["cost"] == pytest.approx(bill, rel=1e-6), (billed["cost"], bill)


CODEX_KILLED = Path(__file__).parents[1] / "formats" / "data" / "real-clients" / "codex-0.171.0-killed-mid-call.jsonl"


def test_a_codex_run_killed_during_a_tool_call_costs_the_same_under_a_threshold_it_never_reaches():
    result = CliRunner().invoke(app, ["replay", str(CODEX_KILLED), "-t", "50000", "--json", "-q"])
    assert result.exit_code == 0, result.stderr
    (replayed,) = orjson.loads(result.stdout)["files"]
    none, threshold = replayed["settings"]
    assert threshold["compactions"] == 0 and none["calls"] == threshold["calls"] == 2
    assert 0 not in none["context_per_call"], none["context_per_call"]
    assert abs(threshold["cost"] - none["cost"]) <= 0.03 * none["cost"], (threshold["cost"], none["cost"])


def test_a_calibration_with_no_call_held_out_claims_no_held_out_error():
    """A run killed in its first call has one call with usage (its usage record): nothing to hold out, so no
    "0.0%" held-out error."""
    result = CliRunner().invoke(app, ["replay", str(KILLED_FIRST), "-t", "50000"], terminal_width=400)
    assert result.exit_code == 0, result.stderr
    (replayed,) = orjson.loads(
        CliRunner().invoke(app, ["replay", str(KILLED_FIRST), "-t", "50000", "--json", "-q"]).stdout
    )["files"]
    assert replayed["api"]["calibration"]["error"]["held_out"]["calls"] == 0
    table = " ".join(result.stdout.split())
    assert "held-out per-call error median 0.0%" not in table
    assert "no call held out" in table
    report = CliRunner().invoke(app, ["report", str(KILLED_FIRST)], terminal_width=400)
    assert report.exit_code == 0, report.stderr
    assert "no call held out" in " ".join(report.stdout.split())


GEMINI = Path(__file__).parents[1] / "formats" / "data" / "real-clients" / "gemini-cli-0.61.0.jsonl"


def test_a_gemini_cli_session_is_billed_from_its_own_tokens_at_the_model_it_names():
    responses = {}
    for line in GEMINI.read_bytes().splitlines():
        record = orjson.loads(line)
        if isinstance(record, dict) and record.get("type") == "gemini" and record.get("tokens"):
            responses[record["id"]] = record  # Gemini CLI rewrites a message: each id once
    bill = 0.0
    for record in responses.values():
        tokens = record["tokens"]
        usage = Usage(
            input_tokens=tokens["input"],
            cache_read_tokens=tokens["cached"],
            output_tokens=tokens["output"] + tokens["thoughts"],
        )
        bill += float(calc_price(usage, model_ref=record["model"], provider_id="google").total_price)
    result = CliRunner().invoke(app, ["replay", str(GEMINI), "-t", "50000", "--json", "-q"])
    assert result.exit_code == 0, result.stderr
    (replayed,) = orjson.loads(result.stdout)["files"]
    baseline = replayed["settings"][0]
    assert (baseline["calls"], baseline["basis"]) == (len(responses), "bill")
    assert abs(baseline["cost"] - bill) <= 0.03 * bill, (baseline["cost"], bill)


FORKS = Path(__file__).parents[1] / "formats" / "data" / "real-clients" / "claude-code-2.1.332-forks"


def test_report_of_a_folder_against_compacts_output_names_the_files_compact_left_unwritten(tmp_path):
    """compact writes no copy of a file it leaves unchanged; report BEFORE AFTER says so, and with
    --write-unchanged every after-figure is compact's own."""
    out = tmp_path / "out"
    compacted = CliRunner().invoke(app, ["compact", str(FORKS), "-o", str(out), "--json", "-q"])
    assert compacted.exit_code == 0, compacted.stderr
    assert {f["status"] for f in orjson.loads(compacted.stdout)["files"]} == {"unchanged"}
    missing = CliRunner().invoke(app, ["report", str(FORKS), str(out), "--json", "-q"])
    assert missing.exit_code == 2
    document = orjson.loads(missing.stdout)
    assert "--write-unchanged" in document["error"]["message"], document["error"]  # no output folder at all
    out.mkdir()
    (out / "parent.jsonl").write_bytes((FORKS / "parent.jsonl").read_bytes())
    some = orjson.loads(CliRunner().invoke(app, ["report", str(FORKS), str(out), "--json", "-q"]).stdout)
    reasons = {f["name"]: f["reason"] for f in some["files"] if f["status"] == "failed"}
    assert set(reasons) == {"fork-at-end.jsonl", "fork-at-first-answer.jsonl"}
    assert all("--write-unchanged" in reason for reason in reasons.values()), reasons
    written = CliRunner().invoke(app, ["compact", str(FORKS), "-o", str(out), "--write-unchanged", "--json", "-q"])
    after = {f["name"]: f["tokens_after"] for f in orjson.loads(written.stdout)["files"]}
    reported = CliRunner().invoke(app, ["report", str(FORKS), str(out), "--json", "-q"])
    assert reported.exit_code == 0, reported.stderr
    assert {f["name"]: f["tokens_after"] for f in orjson.loads(reported.stdout)["files"]} == after


KILLED_FIRST = (
    Path(__file__).parents[1] / "formats" / "data" / "real-clients" / "codex-0.171.0-killed-in-its-first-call.jsonl"
)


def test_a_run_killed_before_its_first_token_count_is_billed_from_its_usage_record():
    """The real 0.171 client on gpt-5.5, killed while its first call's ``sleep 60`` ran: no token_count was
    written, but the response's ``token_usage_record`` was (as it completed): the call is billed from it."""
    from genai_prices import Usage, calc_price

    (record,) = [
        orjson.loads(line) for line in KILLED_FIRST.read_bytes().splitlines() if b'"token_usage_record"' in line
    ]
    usage = record["payload"]["usage"]
    expected = calc_price(
        Usage(input_tokens=usage["input_tokens"], output_tokens=usage["output_tokens"]), "gpt-5.5", provider_id="openai"
    )
    result = CliRunner().invoke(app, ["replay", str(KILLED_FIRST), "-t", "100000", "--json"])
    (entry,) = orjson.loads(result.stdout)["files"]
    (none, _) = entry["settings"]
    assert none["basis"] == "bill" and none["calls"] == 1
    assert none["cost"] == pytest.approx(float(expected.total_price))


def test_a_rollout_that_records_no_usage_is_priced_at_the_model_it_names(tmp_path):
    """The same run as an older Codex writes it, with no usage record: replayed by its messages, and priced
    at the gpt-5.5 it names (turn_context), not as the default model a transcript naming none is."""
    from compactctl.replay.prices import shipped_prices

    bare = tmp_path / "rollout.jsonl"
    lines = KILLED_FIRST.read_bytes().splitlines(keepends=True)
    bare.write_bytes(b"".join(line for line in lines if b'"token_usage_record"' not in line))
    result = CliRunner().invoke(app, ["replay", str(bare), "-t", "100000", "--json"])
    (entry,) = orjson.loads(result.stdout)["files"]
    assert "api" not in entry  # no usage: replayed by its messages
    (none, _) = entry["settings"]
    gpt_5_5 = shipped_prices().find("gpt-5.5", "openai")
    assert gpt_5_5 is not None
    cached = none["cached_tokens"]
    expected = gpt_5_5.call_cost(none["input_tokens"], cached, none["input_tokens"] - cached, none["output_tokens"])
    assert none["cost"] == pytest.approx(expected)
    table = CliRunner().invoke(app, ["replay", str(bare), "-t", "100000"])
    assert "priced as gpt-5.5" in table.stdout


CURRENT_MODELS = Path(__file__).parents[1] / "formats" / "data" / "real-clients" / "claude-code-2.1.332-current-models"


def test_a_session_of_current_models_in_every_shape_is_billed_what_its_client_counted(tmp_path):
    """Made by bench/client_audit.py with the real Claude Code 2.1.332: claude-opus-4-7 reads a note and a PNG
    (an image block), loads WebFetch through ToolSearch (``tool_reference`` blocks), asks a subagent, is resumed
    from its first answer (a branch left behind), ``/compact``s, answers on claude-sonnet-4-6, and is forked onto
    claude-opus-5. The loopback fake served 12 responses; the client's own tally (its last ``cost-state``)
    is the bill replay must give, /compact's summary call included, which no assistant record holds."""
    folder = tmp_path / "project"
    shutil.copytree(CURRENT_MODELS, folder)
    text = b"".join(p.read_bytes() for p in folder.rglob("*.jsonl"))
    assert b'"tool_reference"' in text and b'"type":"image"' in text
    states = [orjson.loads(line) for p in folder.glob("*.jsonl") for line in p.read_bytes().splitlines()]
    own_tally = max((s for s in states if s.get("type") == "cost-state"), key=lambda s: s["totalCostUSD"])
    result = CliRunner().invoke(app, ["replay", str(folder), "-t", "100000", "--json", "-q"])
    report = orjson.loads(result.stdout)
    assert result.exit_code == 0, result.stderr
    entries = report["files"]
    assert all(e["api"]["unpriced_models"] == [] for e in entries)
    assert all(row["cost"] is not None and row["cost"] > 0 for row in report["total"]["settings"])
    bills = [row for e in entries for row in e["settings"] if row["basis"] == "bill"]
    assert sum(row["cost"] for row in bills) == pytest.approx(own_tally["totalCostUSD"], rel=1e-6)
    # Every response the fake served: 11 in the rows (5 of them off the live thread), /compact's in the bill.
    assert sum(row["calls"] for row in bills) == 11
    notes = [note for e in entries for note in e["api"]["notes"]]
    assert any(note.startswith("the producer's own 1 compaction call(s) are in the bill") for note in notes)
    assert sum(e["api"]["off_thread"]["calls"] for e in entries) == 5  # the branch the resume left, the subagent's


def test_the_compaction_note_says_how_much_of_the_bill_no_message_records():
    """The real 2.1.332's /compact: its summarizing call is in the session's cost-state alone, so a bill summed
    from the messages' usage is short by it. The note says by how much, and the two reconcile: the live
    thread's messages plus that amount are the bill."""
    path = REAL / "claude-code-2.1.332-compacted.jsonl"
    result = CliRunner().invoke(app, ["replay", str(path), "--json", "-q"])
    assert result.exit_code == 0, result.stderr
    api = orjson.loads(result.stdout)["files"][0]["api"]
    assert api["unpaired_cost"] > 0
    assert api["live_thread_bill_cost"] + api["unpaired_cost"] == pytest.approx(api["bill_cost"], abs=1e-6)
    note = next(n for n in api["notes"] if n.startswith("the producer's own 1 compaction call(s) are in the bill"))
    assert f"${api['unpaired_cost']:.4f} of the bill is calls no message records" in note


RESUME_1_0 = Path(__file__).parents[1] / "recorded" / "data" / "claude-code-1.0.69-resume"
SERVED_BY_THE_FAKE = 0.126255  # its three responses at list price (tests/recorded/data/README.md)


def _replayed(*inputs: Path) -> dict:
    result = CliRunner().invoke(app, ["replay", *map(str, inputs), "-t", "5000", "--json", "-q"])
    assert result.exit_code == 0, result.stderr
    return orjson.loads(result.stdout)


def test_a_folder_with_a_claude_code_1_0_resume_bills_each_call_the_fake_served_once():
    """1.0.69's --resume wrote a new file that opens with a copy of the first session's two responses: replayed
    together, each is billed in the file that made it, in every row; the copy's file says so."""
    assert _bill(RESUME_1_0) == (3, pytest.approx(SERVED_BY_THE_FAKE))  # each message.id once: what was served
    report = _replayed(RESUME_1_0)
    none, threshold = report["total"]["settings"]
    assert (none["trigger"], none["calls"], threshold["calls"]) == ("none", 3, 3)
    assert none["cost"] == pytest.approx(SERVED_BY_THE_FAKE)
    assert abs(threshold["cost"] - none["cost"]) <= 0.03 * none["cost"], (threshold, none)
    files = {Path(f["file"]).name: f for f in report["files"]}
    first, resumed = files["first.jsonl"], files["resumed.jsonl"]
    assert [row["calls"] for row in first["settings"]] == [2, 2]
    assert [row["calls"] for row in resumed["settings"]] == [1, 1]  # its own call; the copies are history
    assert len(resumed["settings"][0]["context_per_call"]) == 1
    assert first["api"]["bill_cost"] + resumed["api"]["bill_cost"] == pytest.approx(SERVED_BY_THE_FAKE)
    assert resumed["api"]["live_thread_bill_cost"] == pytest.approx(resumed["api"]["bill_cost"])
    assert any(note.startswith("2 calls are copies of calls first.jsonl made") for note in resumed["api"]["notes"])
    assert not any("copies" in note for note in first["api"]["notes"])
    table = CliRunner().invoke(app, ["replay", str(RESUME_1_0), "-t", "5000"], terminal_width=400)
    assert "2 billed call(s) of resumed.jsonl are copies of another file's" in table.stderr


def test_a_resumed_copy_without_the_file_it_copied_bills_every_call_it_holds(tmp_path):
    alone = _replayed(RESUME_1_0 / "resumed.jsonl")
    (entry,) = alone["files"]
    assert [row["calls"] for row in entry["settings"]] == [3, 3]
    assert entry["settings"][0]["cost"] == pytest.approx(SERVED_BY_THE_FAKE)
    assert not any("copies" in note for note in entry["api"]["notes"])
    # In a folder beside another 1.0.69 session (whose fake ids repeat the copy's, msg_fake000002: its responses
    # said other things), nothing is taken off either.
    other = Path(__file__).parents[1] / "recorded" / "data" / "claude-code-1.0.69-web-search.jsonl"
    shutil.copy(RESUME_1_0 / "resumed.jsonl", tmp_path / "resumed.jsonl")
    shutil.copy(other, tmp_path / "other.jsonl")
    by_name = {Path(f["file"]).name: f for f in _replayed(tmp_path)["files"]}
    assert [row["calls"] for row in by_name["resumed.jsonl"]["settings"]] == [3, 3]
    assert by_name["other.jsonl"]["settings"] == _replayed(other)["files"][0]["settings"]


def test_a_claude_code_2_file_and_its_edited_copy_bill_their_shared_calls_once(tmp_path):
    """window-opens-on-assistant is model-switch's session (the same sessionId and record uuids) with records added
    after it: compactctl's ``window`` output, its boundary and two responses copied after it. Its 12 calls and
    model-switch's are the same calls (26 billed before the copy was known, 14 with the copies billed, 12 now)."""
    twins = [
        REAL / "claude-code-2.1.332-model-switch.jsonl",
        REAL / "claude-code-2.1.332-window-opens-on-assistant.jsonl",
    ]
    folder = tmp_path / "run"
    folder.mkdir()
    for twin in twins:
        shutil.copy(twin, folder / twin.name)
    alone = [_replayed(twin)["files"][0] for twin in twins]
    together = _replayed(folder)
    assert [f["settings"][0]["calls"] for f in alone] == [12, 12] and together["total"]["settings"][0]["calls"] == 12
    assert alone[1]["api"]["bill_cost"] == pytest.approx(alone[0]["api"]["bill_cost"])
    billed = sum(f["api"]["bill_cost"] for f in together["files"])
    assert billed == pytest.approx(alone[0]["api"]["bill_cost"])  # it was $2.552680, then $1.352129 with the copies


RESUME_CHAIN_1_0 = Path(__file__).parents[1] / "recorded" / "data" / "claude-code-1.0.69-resume-chain"
SERVED_IN_THE_CHAIN = 0.212121  # the five responses the fake served


def test_a_resume_of_a_resume_bills_each_call_in_the_file_that_made_it():
    """1.0.69 resumed twice: the second file copies the first's 2 calls, the third the first's and the second's
    own (4): 11 responses in the folder for the 5 served (11 calls, $0.465618 before)."""
    assert _bill(RESUME_CHAIN_1_0) == (5, pytest.approx(SERVED_IN_THE_CHAIN))
    report = _replayed(RESUME_CHAIN_1_0)
    none, threshold = report["total"]["settings"]
    assert (none["calls"], threshold["calls"]) == (5, 5)
    assert none["cost"] == pytest.approx(SERVED_IN_THE_CHAIN)
    files = {Path(f["file"]).name: f for f in report["files"]}
    assert {name: f["settings"][0]["calls"] for name, f in files.items()} == {
        "first.jsonl": 2,
        "second.jsonl": 2,
        "third.jsonl": 1,
    }
    (copies,) = [note for note in files["third.jsonl"]["api"]["notes"] if "copies" in note]
    assert copies.startswith("4 calls are copies of calls first.jsonl, second.jsonl made")
    # Without the first file, the second's copies are its to bill, and the third's copies the second's.
    alone = _replayed(RESUME_CHAIN_1_0 / "second.jsonl", RESUME_CHAIN_1_0 / "third.jsonl")
    assert [f["settings"][0]["calls"] for f in alone["files"]] == [4, 1]
    assert alone["total"]["settings"][0]["cost"] == pytest.approx(SERVED_IN_THE_CHAIN)


def test_a_file_named_twice_is_replayed_and_billed_once():
    session = REAL / "claude-code-2.1.332-model-switch.jsonl"
    once = _replayed(session)
    twice = _replayed(session, session)
    assert len(twice["files"]) == 1 and twice["total"]["settings"] == once["total"]["settings"]
    # A folder and a file in it: the file once, under the name it was first given.
    both = _replayed(RESUME_1_0 / "resumed.jsonl", RESUME_1_0)
    assert [Path(f["file"]).name for f in both["files"]] == ["resumed.jsonl", "first.jsonl"]
    assert both["total"]["settings"][0]["calls"] == 3


RESUME_SEARCH_1_0 = Path(__file__).parents[1] / "recorded" / "data" / "claude-code-1.0.69-resume-web-search"


def test_a_resumed_copy_of_a_web_search_bills_the_search_once():
    """1.0.69 resumed a session that made a WebSearch: the fake served 4 requests (two responses, the search's own
    request, the resumed answer). The copy keeps the search's tool result without its ``toolUseResult``, so only
    the first file shows the request: 4 calls, one search's fee ($10 per 1,000 at genai-prices)."""
    calls, responses = _bill(RESUME_SEARCH_1_0)
    assert calls == 3  # the responses, each message.id once; the search's request wrote no message
    report = _replayed(RESUME_SEARCH_1_0)
    none = report["total"]["settings"][0]
    assert none["calls"] == 4
    assert none["cost"] == pytest.approx(responses + 0.01)
    assert [f["api"]["side_requests"] for f in report["files"]] == [1, 0]
