"""Rollouts of Codex releases at the boundaries of how the rollout is written (issue 20), recorded against the
loopback fake (tests/fakes/record_codex_releases.py) with what it served: 0.45.0 and 0.77.0 compacting locally,
0.77.0, 0.110.0 and 0.133.0 remotely through ``/v1/responses/compact``, 0.140.0 remotely through a
``compaction_trigger`` request.
Each: a tool loop, an ``apply_patch``, a model switch, a compaction, a resume after it. Read from the fixtures:
the releases are not installed in CI."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import orjson
from typer.testing import CliRunner

from compactctl.cli.main import app
from compactctl.errors import EXIT_OK
from compactctl.formats.records import parse_records
from compactctl.recorded import RecordedSession, codex

DATA = Path(__file__).parent / "data"


def _rollout(name: str) -> Path:
    (path,) = sorted((DATA / name).glob("*.jsonl"))
    return path


def _read(name: str) -> RecordedSession:
    path = _rollout(name)
    return codex.read(parse_records(path.read_bytes(), str(path))[0], str(path))


def _served(name: str) -> list[dict[str, Any]]:
    return json.loads((DATA / f"{name}.served.json").read_text())


def _replayed(name: str) -> dict[str, Any]:
    result = CliRunner().invoke(app, ["replay", str(DATA / name), "--json", "-q"])
    assert result.exit_code == EXIT_OK, result.output
    (entry,) = orjson.loads(result.stdout)["files"]
    return entry


def _calls(session: RecordedSession) -> list[tuple[str | None, int, int]]:
    return [
        (c.model, c.usage.input_tokens, c.usage.output_tokens)
        for context in session.contexts
        for c in context.calls
        if c.usage is not None
    ]


def test_0_45s_local_compaction_count_is_the_compactions_not_the_next_responses():
    """0.45 writes each count before its response's items: the summarizing call's count, just before the
    ``compacted`` line, went to the response after the compaction (8,259 input tokens for its 7,519), whose own
    count was then billed as a response never written. The fake served 12 responses: 11 calls and the
    compaction's, on gpt-5-codex then gpt-5."""
    served = [(r["model"], r["usage"]["input_tokens"], r["usage"]["output_tokens"]) for r in _served(
        "codex-0.45.0-local-compacted")]  # fmt: skip
    session = _read("codex-0.45.0-local-compacted")
    assert served[8] == ("gpt-5", 8259, 54)  # the summarizing request
    assert _calls(session) == served[:8] + served[9:]
    assert (session.compaction_calls, session.unheld_calls) == (1, 0)
    assert session.unpaired is not None and session.unpaired.input_tokens == 8259
    assert [(model, usage.input_tokens) for model, usage, _ in session.priced_apart] == [("gpt-5", 8259)]


def test_0_77s_local_compaction_call_is_a_compaction_not_a_response_never_written():
    """0.77 writes the summarizing call's count after the tool call's own, before the ``compacted`` line: a
    second count of the call before, which was read as a response the log never wrote (the note said "cut off")."""
    session = _read("codex-0.77.0-local-compacted")
    assert (session.compaction_calls, session.unheld_calls) == (1, 0)
    assert [(model, usage.input_tokens) for model, usage, _ in session.priced_apart] == [("gpt-5.1", 11565)]
    notes = _replayed("codex-0.77.0-local-compacted")["api"]["notes"]
    assert not any("cut off" in note for note in notes), notes


def test_local_compactions_bills_are_what_was_served():
    """Every served response in the bill once, at its model's list price (genai-prices): 11 calls and the
    compaction's (a compaction, as 0.171's are), 12 served; before, 12 calls and no compaction call."""
    for name, cost in [("codex-0.45.0-local-compacted", 0.100804), ("codex-0.77.0-local-compacted", 0.147671)]:
        bill = next(row for row in _replayed(name)["settings"] if row["basis"] == "bill")
        assert (bill["calls"], bill["compactions"], round(bill["cost"], 6)) == (11, 1, cost), name
        assert bill["calls"] + bill["compactions"] == len(_served(name))


def test_remote_compactions_the_rollout_records_no_usage_for_are_estimated_apart_as_served():
    """0.77 (``/v1/responses/compact``, mid-turn), 0.110, 0.133 (the same endpoint before the turn) and 0.140 (a
    ``compaction_trigger`` request) write no usage for the compaction: the bill is the 10 or 11 calls the rollout
    records, each as served, and the compaction is estimated apart (``compaction_estimate``) from the last call.
    0.133's and 0.140's requests carried the tools as the turns' do: within 0.1 % of what was served; 0.77's and
    0.110's sent none, which the estimate leaves out (``test_a_compaction_sent_without_the_tools_...``)."""
    for name, calls, served_input, estimate in [
        ("codex-0.77.0-remote-compacted", 11, 11435, 11340),
        ("codex-0.110.0-remote-compacted", 11, 12375, 12181),
        ("codex-0.133.0-remote-compacted", 10, 16517, 16533),
        ("codex-0.140.0-remote-compacted", 10, 16963, 16971),
    ]:
        served = _served(name)
        (compaction,) = [r for r in served if r.get("caller") in ("compact", "compaction")]
        assert compaction["usage"]["input_tokens"] == served_input, name
        entry = _replayed(name)
        assert entry["api"]["compaction_estimate"]["calls"] == 1, name
        assert entry["api"]["compaction_estimate"]["input_tokens"] == estimate, name
        bill = next(row for row in entry["settings"] if row["basis"] == "bill")
        assert bill["calls"] == calls == len(served) - 1, name
        recorded = [r for r in served if r is not compaction]
        assert round(bill["cost"], 6) == round(entry["api"]["bill_cost"], 6), name
        assert bill["input_tokens"] == sum(r["usage"]["input_tokens"] for r in recorded), name


def test_a_compaction_sent_without_the_tools_is_estimated_without_them():
    """Codex up to 0.114 sent ``/v1/responses/compact`` only its model, instructions and history (0.115 the tools
    too: the real releases' requests kept, ``codex_compaction.TOOLLESS_COMPACT_LAST``). Estimated from the last call
    (its input and output) it held the tools: 12,639 input tokens for 0.77's 11,435 served, 13,968 for 0.110's
    12,375. Less the tools the call after the compaction shows beside Codex's own estimate of the compacted
    context, plus the tool output 0.77 wrote after the last call (sent, in no call's input): 0.83 % and 1.57 % under.
    0.77 writes that estimate just before the ``compacted`` line, 0.110 just after it."""
    for name, before in [("codex-0.77.0-remote-compacted", True), ("codex-0.110.0-remote-compacted", False)]:
        lines = [orjson.loads(line) for line in _rollout(name).read_bytes().splitlines()]
        at = next(n for n, line in enumerate(lines) if line["type"] == "compacted")
        estimate_line = at - 1 if before else at + 1
        codex_estimate = lines[estimate_line]["payload"]["info"]["last_token_usage"]
        assert codex_estimate["input_tokens"] == 0 and codex_estimate["total_tokens"] > 0, name
        (served,) = [r["usage"]["input_tokens"] for r in _served(name) if r.get("caller") == "compact"]
        (estimate,) = [usage.input_tokens for _, usage, _ in _read(name).estimated_apart]
        assert abs(estimate / served - 1) < 0.02, (name, estimate, served)
        assert _replayed(name)["api"]["compaction_estimate"]["input_tokens"] == estimate


def test_a_long_compaction_item_does_not_move_the_tools_estimate():
    """Codex estimates an encrypted item at about 0.19 tokens a character (``codex_opaque_estimate``), the API
    bills one at about 0.14 (``encrypted_estimate``): in the context after the compaction, a long ``compaction`` item
    weighs more in Codex's estimate than in the next call's input. 0.77's rollout with a 20,000-character item, each
    count as Codex and the API would write it: the compaction's own request, which did not hold the item, is
    estimated as with the fixture's short one."""
    from compactctl.recorded.codex_compaction import codex_opaque_estimate, encrypted_estimate

    name = "codex-0.77.0-remote-compacted"
    lines = [orjson.loads(line) for line in _rollout(name).read_bytes().splitlines()]
    at = next(n for n, line in enumerate(lines) if line["type"] == "compacted")
    (item,) = [i for i in lines[at]["payload"]["replacement_history"] if i["type"] == "compaction"]
    short = dict(item)
    item["encrypted_content"] = "x" * 20_000
    codex_more = codex_opaque_estimate(item) - codex_opaque_estimate(short)
    billed_more = encrypted_estimate(item) - encrypted_estimate(short)
    assert codex_more - billed_more > 800
    after = next(n for n in range(at, len(lines)) if _input_tokens(lines[n]))  # the call after the compaction
    for n in range(at - 1, after):
        if lines[n]["type"] == "event_msg" and lines[n]["payload"]["type"] == "token_count":
            lines[n]["payload"]["info"]["last_token_usage"]["total_tokens"] += codex_more
    lines[after]["payload"]["info"]["last_token_usage"]["input_tokens"] += billed_more
    lines[after]["payload"]["info"]["total_token_usage"]["input_tokens"] += billed_more
    data = b"".join(orjson.dumps(line) + b"\n" for line in lines)
    session = codex.read(parse_records(data, "r.jsonl")[0], "r.jsonl")
    assert session.compaction_estimate is not None and _read(name).compaction_estimate is not None
    assert session.compaction_estimate.input_tokens == _read(name).compaction_estimate.input_tokens


def _input_tokens(line: dict[str, Any]) -> int:
    if line["type"] != "event_msg" or line["payload"].get("type") != "token_count" or not line["payload"]["info"]:
        return 0
    return int(line["payload"]["info"]["last_token_usage"]["input_tokens"])


def test_the_releases_that_sent_the_compaction_no_tools():
    from compactctl.recorded.codex_compaction import sends_no_tools

    assert [sends_no_tools(v) for v in ("0.77.0", "0.110.0", "0.114.0", "0.115.0", "0.133.0", None)] == [
        True, True, True, False, False, False,
    ]  # fmt: skip
