"""``replay`` of runs whose files hold a call more than once or off the live thread, as the real clients wrote them
(tests/fakes/record_copies.py): session files a user copied, a Codex thread reverted three times. Each call the fake
served is billed once, whichever files hold it, and the calls a revert dropped are off the live thread."""

from __future__ import annotations

import shutil
from pathlib import Path

import orjson
import pytest
from genai_prices import Usage, calc_price
from typer.testing import CliRunner

from compactctl.cli.main import app
from tests.replay.test_bill import anthropic_counts

RECORDED = Path(__file__).parents[1] / "recorded" / "data"
COPIES = RECORDED / "claude-code-2.1.332-copies"
SESSION, FORK = "272f3179-669c-4644-82a6-dfbf79afa390.jsonl", "e535f324-d33a-48b3-aa4b-c5e76951a32a.jsonl"


def _served_cost(served: Path) -> float:
    """What the fake served (``<fixture>.served.json``: each streamed response's model and usage) at list price."""
    responses = orjson.loads(served.read_bytes())
    prices = [
        calc_price(Usage(**anthropic_counts(r["usage"])), model_ref=r["model"], provider_id="anthropic")
        for r in responses
    ]
    return sum(float(price.total_price) for price in prices)


def _replayed(*inputs: Path) -> dict:
    result = CliRunner().invoke(app, ["replay", *map(str, inputs), "-t", "100000", "--json", "-q"])
    assert result.exit_code == 0, result.stderr
    return orjson.loads(result.stdout)


def test_claude_code_2_files_a_user_copied_bill_each_served_call_once():
    """2.1.332's session copied after its first turn into backup/, its file after the second turn and a renamed copy of
    it, a --fork-session's file and its copy: 10 calls $0.499576 before (each copy billed again), 4 served."""
    served = orjson.loads((RECORDED / "claude-code-2.1.332-copies.served.json").read_bytes())
    report = _replayed(COPIES)
    none, threshold = report["total"]["settings"]
    assert (none["calls"], threshold["calls"]) == (len(served), len(served)) == (4, 4)
    assert none["cost"] == pytest.approx(_served_cost(RECORDED / "claude-code-2.1.332-copies.served.json"))
    calls = {str(Path(f["file"]).relative_to(COPIES)): f["settings"][0]["calls"] for f in report["files"]}
    # The backup holds the first turn's two calls first (fewest calls); the session file bills its second turn.
    assert calls == {f"backup/{SESSION}": 2, SESSION: 1, "renamed-copy.jsonl": 0, FORK: 1, "fork-copy.jsonl": 0}
    renamed = next(f for f in report["files"] if f["file"].endswith("renamed-copy.jsonl"))
    assert any(note.startswith("3 calls are copies of calls") for note in renamed["api"]["notes"])


def test_a_shared_call_in_the_middle_of_a_context_is_billed_once():
    """A call another file of the run bills, after calls of this context: the renamed copy's third (after two the
    backup bills), the fork's copy's own call (after three calls copied from the parent). A file stops marking its
    calls as billed elsewhere at the first call it bills itself; as copies keep a call's records whole, every file
    holding a later call of a context holds the earlier ones, so a file billing one call of a context bills the rest
    (and a 1.x resume's copies, written later, open its file)."""
    files = {Path(f["file"]).name: f for f in _replayed(COPIES)["files"]}
    fork_copy = files["fork-copy.jsonl"]
    assert [row["calls"] for row in fork_copy["settings"]] == [0, 0]
    assert any(note.startswith("3 calls were copied from session") for note in fork_copy["api"]["notes"])
    assert any(note.startswith(f"1 calls are copies of calls {FORK} made") for note in fork_copy["api"]["notes"])
    assert fork_copy["api"]["bill_cost"] == 0 and files["renamed-copy.jsonl"]["api"]["bill_cost"] == 0


def test_each_copy_replayed_alone_bills_every_call_it_holds(tmp_path):
    alone = _replayed(COPIES / "renamed-copy.jsonl")
    assert alone["total"]["settings"][0]["calls"] == 3
    # Two sessions of one fake script share a response (msg_fake000004: its id, what it said, its usage) under other
    # uuids: no copy, two bills.
    real = RECORDED.parent.parent / "formats" / "data" / "real-clients"
    twins = [real / "claude-code-2.1.332-branches" / "a6b8705d-055c-4dac-8b9a-9741f0961deb.jsonl"]
    twins.append(real / "claude-code-2.1.332-compacted.jsonl")
    folder = tmp_path / "run"
    folder.mkdir()
    for twin in twins:
        shutil.copy(twin, folder / twin.name)
    apart = [_replayed(folder / twin.name)["total"]["settings"][0] for twin in twins]
    together = _replayed(folder)["total"]["settings"][0]
    assert together["calls"] == sum(row["calls"] for row in apart)
    assert together["cost"] == pytest.approx(sum(row["cost"] for row in apart))


REVERTS = RECORDED / "codex-0.171.0-reverts"


def _openai_cost(response: dict) -> float:
    usage = response["usage"]
    cached = usage["input_tokens_details"]["cached_tokens"]
    counts = Usage(input_tokens=usage["input_tokens"], cache_read_tokens=cached, output_tokens=usage["output_tokens"])
    return float(calc_price(counts, model_ref=response["model"], provider_id="openai").total_price)


def test_a_codex_thread_reverted_twice_and_after_a_compaction_bills_what_was_served_and_drops_each_reverted_turn():
    """0.171.0: a turn, a turn reverted, a turn reverted again, a turn, /compact, a turn reverted, a turn: four
    rollouts, each revert's ``history_base`` naming the rollout before it (not the thread) and the thread's line.
    Before, only the first rollout was cut, and the third at the first's line 22: 2 calls off the live thread, the
    second revert's turn on it."""
    served = orjson.loads((RECORDED / "codex-0.171.0-reverts.served.json").read_bytes())
    assert len(served) == 8  # 7 responses and the compaction's
    files = sorted(_replayed(REVERTS)["files"], key=lambda f: f["file"])
    assert sum(f["api"]["bill_cost"] for f in files) == pytest.approx(sum(map(_openai_cost, served)))
    assert [f["api"]["off_thread"]["calls"] for f in files] == [1, 1, 1, 0]
    kept = [next((n for n in f["api"]["notes"] if "keeps this one's first" in n), "") for f in files]
    assert ["first 22 lines" in kept[0], "first 4 lines" in kept[1], "first 25 lines" in kept[2]] == [True] * 3
    # The live thread: the first turn's 2 calls, the kept turn, the last one (each rollout's rows its own).
    assert [f["settings"][0]["calls"] - f["api"]["off_thread"]["calls"] for f in files] == [2, 0, 1, 1]
