"""Chats older Gemini CLI releases wrote against the loopback fake (tests/fakes/record_gemini_older.py): the real 0.20.2
and 0.38.2, each the older one-document layout, a tool loop, a compression the file shows nothing of, two resumes.
Read from the fixtures: the releases are not installed in CI."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import orjson
import pytest
from typer.testing import CliRunner

from compactctl.cli.main import app
from compactctl.errors import EXIT_OK

DATA = Path(__file__).parent / "data"
OLDER = {"0.20.2": "gemini-cli-0.20.2-older-session", "0.38.2": "gemini-cli-0.38.2-older-session"}


def cli(*args: Any) -> Any:
    return CliRunner().invoke(app, [str(a) for a in args])


def _chat(version: str) -> Path:
    (path,) = (DATA / OLDER[version]).glob("session-*.json")
    return path


def _served(version: str) -> list[dict[str, Any]]:
    return list(json.loads((DATA / f"{OLDER[version]}.served.json").read_text()))


def _replayed(path: Path) -> dict[str, Any]:
    result = cli("replay", path, "-t", "100000", "--json", "-q")
    assert result.exit_code == EXIT_OK, result.output
    (file,) = orjson.loads(result.stdout)["files"]
    return dict(file)


def _api(path: Path) -> dict[str, Any]:
    return dict(_replayed(path)["api"])


def _bill(path: Path) -> tuple[int, float]:
    """The bill row's calls and cost (to 6 places)."""
    (row,) = [row for row in _replayed(path)["settings"] if row.get("basis") == "bill"]
    return row["calls"], round(row["cost"], 6)


def _compacted(version: str, tmp_path: Path) -> Path:
    out = tmp_path / _chat(version).name
    result = cli("compact", _chat(version), "-o", out, "-q")
    assert result.exit_code == EXIT_OK, result.output
    return out


@pytest.mark.parametrize("version", sorted(OLDER))
def test_a_compacted_one_document_chat_still_holds_the_calls_made_before(version, tmp_path):
    """The one-document writer kept only the new list: replay of 0.38.2's compacted chat billed 5 calls for 6
    ($0.004166 of $0.009161); the lists before now stay in ``compactctlEarlier``, which the client keeps."""
    assert _bill(_compacted(version, tmp_path)) == _bill(_chat(version))
    document = json.loads(_compacted(version, tmp_path).read_bytes())
    assert [[m["id"] for m in messages] for messages in document["compactctlEarlier"]] == [
        [m["id"] for m in json.loads(_chat(version).read_bytes())["messages"]]
    ]


@pytest.mark.parametrize("version", sorted(OLDER))
def test_a_compacted_one_document_chat_keeps_its_calls_where_every_older_release_reads_them(version, tmp_path):
    """0.20 resumes a model turn's calls from ``toolCalls`` alone and a user record as its text: compactctl's calls as
    ``functionCall`` parts and responses as a user record went back to the model as "[Function Call: read_file]"
    text (seen with the real 0.20.2 client resuming it); now each call is a ``toolCalls`` entry with its result."""
    document = json.loads(_compacted(version, tmp_path).read_bytes())
    messages = document["messages"]
    parts = [p for m in messages if isinstance(m["content"], list) for p in m["content"] if isinstance(p, dict)]
    assert not [p for p in parts if "functionCall" in p or "functionResponse" in p]
    calls = [c for m in messages for c in m.get("toolCalls") or []]
    assert [c["name"] for c in calls] == ["read_file", "run_shell_command", "read_file"]
    assert all(c["result"][0]["functionResponse"]["id"] == c["id"] for c in calls)
    assert all(c.get("displayName") for c in calls)  # the entries as read, their display fields kept


def _served_main(version: str) -> list[dict[str, Any]]:
    return [r for r in _served(version) if r.get("caller") != "side_call"]


def _priced(responses: list[dict[str, Any]]) -> float:
    from genai_prices import Usage, calc_price

    from tests.replay.test_bill import google_counts

    return sum(
        float(calc_price(Usage(**google_counts(r["usage"])), r["model"], provider_id="google").total_price)
        for r in responses
    )


def test_0_20s_tool_only_responses_kept_in_the_record_before_them_are_in_the_bill():
    """0.20.2 kept the command's and the second read's responses (no text, no thought) in the read's record, their
    usage lost: the bill was 4 calls $0.032912 for the 6 served ($0.034875); each is now estimated from the request it
    was, counted back from the answer's: 6 calls $0.034936 (+0.2 %)."""
    served = _served_main("0.20.2")
    assert len(served) == 6 and _priced(served) == pytest.approx(0.034875, abs=1e-6)
    calls, cost = _bill(_chat("0.20.2"))
    assert (calls, cost) == (6, 0.034936)
    assert cost == pytest.approx(_priced(served), rel=0.005)
    notes = _api(_chat("0.20.2"))["notes"]
    assert any("2 tool-only response(s) Gemini CLI before 0.32 kept" in note for note in notes)


def test_0_38s_responses_each_have_their_record_and_nothing_is_estimated():
    served = _served_main("0.38.2")
    calls, cost = _bill(_chat("0.38.2"))
    assert (calls, cost) == (6, round(_priced(served), 6)) == (6, 0.009161)
    assert not any("tool-only response" in note for note in _api(_chat("0.38.2"))["notes"])


def test_a_records_calls_are_told_apart_by_the_response_that_made_them():
    from compactctl.recorded.gemini_merged import batches

    def ids(*names: str) -> list[list[str]]:
        return [[c["id"] for c in batch] for batch in batches([{"id": n} for n in names])]

    # 0.20's ids carry the time each response was read; one response's calls share it.
    assert ids("read_file-1796633827557-61", "run-1796633827724-93", "read_file-1796633827824-e6") == [
        ["read_file-1796633827557-61"], ["run-1796633827724-93"], ["read_file-1796633827824-e6"]]  # fmt: skip
    assert ids("a-1796633827557-61", "b-1796633827558-93") == [["a-1796633827557-61", "b-1796633827558-93"]]
    # 0.30's count each response's calls from 0.
    assert ids("a_1796633936532_0", "b_1796633936532_1", "c_1796633936676_0") == [
        ["a_1796633936532_0", "b_1796633936532_1"], ["c_1796633936676_0"]]  # fmt: skip
    assert ids("api-id-1", "api-id-2") == [["api-id-1", "api-id-2"]]  # the API's own ids: one response


def _side_calls(version: str) -> list[dict[str, Any]]:
    return [r for r in _served(version) if r.get("caller") == "side_call"]


@pytest.mark.parametrize(
    ("version", "calls", "input_tokens"), [("0.20.2", 1, 8_935), ("0.38.2", 2, 17_914)]
)  # fmt: skip
def test_the_compression_the_one_document_chat_shows_nothing_of_is_estimated_from_the_fall_in_its_usage(
    version, calls, input_tokens
):
    """Up to 0.38 the compression changes no record (the file keeps every message); the prompt falls (14,717 to
    6,740 served on 0.20.2) where the history only grew. Read as a compression there: 0.20 sent one summary call
    (8,904 input served), 0.38 (its header's ``kind``) a summary and a check (17,924). Before, no estimate at all
    (bench/consistency_sweep.py: "estimated 0 calls, 0 input; served 1, 8904" / "served 2, 17924")."""
    api = _api(_chat(version))
    served = _side_calls(version)
    estimate = api["compaction_estimate"]
    assert (estimate["calls"], estimate["input_tokens"]) == (len(served), input_tokens) == (calls, input_tokens)
    assert input_tokens == pytest.approx(sum(r["usage"]["promptTokenCount"] for r in served), rel=0.05)
    (note,) = [n for n in api["notes"] if "records no compression" in n]
    assert {"0.20.2": "(14,717 to 6,835 tokens) shows one: one summary", "0.38.2": "(16,490 to 8,508 tokens) shows "
            "one: a summary and its check"}[version] in note  # fmt: skip
    # The compression, then the resume that loaded the whole file again (no call): the bill is unchanged.
    assert api["producer_compactions"] == 2
    assert _bill(_chat(version)) == {"0.20.2": (6, 0.034936), "0.38.2": (6, 0.009161)}[version]


@pytest.mark.parametrize("version", sorted(OLDER))
def test_the_calls_after_an_unrecorded_compression_are_calibrated_on_the_summary_they_sent(version):
    """The calls after the compression sent a summary and the history it kept, not the whole file: read as the
    whole file, the held-out p90 was 105.67 % (0.20.2) and 38.56 % (0.38.2); each stretch (before, after it, after
    the resume that sent the whole file again) now has its own prefix and the summary's size as the usage shows it."""
    calibration = _api(_chat(version))["calibration"]
    held = calibration["error"]["held_out"]
    assert held["calls"] >= 1 and held["p90"] < 0.005
    assert calibration["error"]["calibrated"]["p90"] < 0.001
    assert len(calibration["prefix"]) == 3


def test_a_fall_the_clients_split_does_not_explain_is_no_compression():
    """A prompt that falls by less than a tenth (a resumed client's smaller start-up context), or by more than the
    split's fold leaves room for (0.38's masking of old tool results, which makes no call), is no compression."""
    import dataclasses

    from compactctl.formats.records import parse_records
    from compactctl.recorded import gemini
    from compactctl.recorded.gemini_unseen import Unseen, unseen_compressions

    path = _chat("0.20.2")
    context = gemini.read(parse_records(path.read_bytes(), str(path))[0], str(path)).contexts[0]
    messages, calls = context.messages, context.calls

    def with_input(n: int, tokens: int) -> list[Any]:
        usage = dataclasses.replace(calls[n].usage, input_tokens=tokens)
        return [dataclasses.replace(c, usage=usage) if k == n else c for k, c in enumerate(calls)]

    found = unseen_compressions(messages, calls, [])
    assert [type(f).__name__ for f in found] == ["Unseen", "RecordedCompaction"]
    # The fake's summary was 3 tokens: the rest is what counting the history in cl100k leaves.
    assert isinstance(found[0], Unseen) and found[0].summary_tokens == 33
    assert found[1].trigger == "load" and found[1].before_call == 3
    assert not [f for f in unseen_compressions(messages, with_input(2, 14_000), []) if isinstance(f, Unseen)]
    assert not [f for f in unseen_compressions(messages, with_input(2, 500), []) if isinstance(f, Unseen)]
