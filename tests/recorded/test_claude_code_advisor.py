"""Claude Code's advisor tool, as the real 2.1.332 client wrote it (tests/fakes/record_advisor.py): claude-sonnet-4-6
advised by claude-opus-4-7. A response that consults the advisor is several sampling passes (``usage.iterations``):
the executor's before and after the advice, the top-level usage their sum, and the advisor's own on its model, billed
on top. The bill is what the fake served, each pass priced by genai-prices at its own model apart from replay."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import orjson
import pytest
from genai_prices import Usage, calc_price
from typer.testing import CliRunner

from compactctl.cli.main import app
from compactctl.formats.records import parse_records
from compactctl.recorded import claude_code
from tests.replay.test_bill import anthropic_counts

RECORDED = Path(__file__).parent / "data"
ADVISED = RECORDED / "claude-code-2.1.332-advisor"
(SESSION,) = ADVISED.glob("*.jsonl")


def _served() -> list[dict[str, Any]]:
    return list(orjson.loads((RECORDED / "claude-code-2.1.332-advisor.served.json").read_bytes()))


def _advices(served: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [e for r in served for e in r["usage"].get("iterations") or [] if e["type"] == "advisor_message"]


def _price(usage: dict[str, Any], model: str) -> float:
    return float(calc_price(Usage(**anthropic_counts(usage)), model, provider_id="anthropic").total_price)


def served_cost(advice: bool = True, served: list[dict[str, Any]] | None = None) -> float:
    """What the fake served (the fixture's, or ``served``) at list prices: each response's top-level usage at its model
    and, with ``advice``, each ``advisor_message`` pass at the advisor's (the client's own cost: it adds them, the
    top-level leaves them out)."""
    served = _served() if served is None else served
    total = sum(_price(response["usage"], response["model"]) for response in served)
    return total + (sum(_price(entry, entry["model"]) for entry in _advices(served)) if advice else 0.0)


def _replayed(data: bytes, *args: str, tmp: Path) -> dict[str, Any]:
    tmp.mkdir(parents=True, exist_ok=True)
    path = tmp / SESSION.name
    path.write_bytes(data)
    result = CliRunner().invoke(app, ["replay", str(path), "--json", "-q", *args])
    assert result.exit_code == 0, result.stderr
    (entry,) = orjson.loads(result.stdout)["files"]
    return dict(entry)


def test_the_fixture_holds_two_advices_on_the_advisors_model():
    served = _served()
    assert [r["model"] for r in served] == ["claude-sonnet-4-6"] * 3
    assert [e["model"] for e in _advices(served)] == ["claude-opus-4-7"] * 2
    # The client's own cost (its cost-state) adds each advice at the advisor's price: the served truth.
    cost_states = [json.loads(line) for line in SESSION.read_text().splitlines() if '"cost-state"' in line]
    assert cost_states[-1]["totalCostUSD"] == pytest.approx(served_cost(), rel=1e-6)
    assert served_cost() > 1.7 * served_cost(advice=False)  # the advice is 45 % of what was paid


def test_an_advised_call_stands_for_its_first_pass_and_its_other_passes_are_billed_apart():
    """The call is the context as sent (the executor's first pass) with all the executor's output; the executor's
    pass after the advice and the advisor's pass are billed apart, each at its model: nothing counted twice."""
    session = claude_code.read(parse_records(SESSION.read_bytes(), str(SESSION))[0], str(SESSION))
    (context,) = session.contexts
    served = _served()
    for call, response in zip(context.calls, served, strict=True):
        passes = response["usage"].get("iterations") or [response["usage"]]
        assert call.usage is not None and call.model == "claude-sonnet-4-6"
        assert call.usage.input_tokens == passes[0]["input_tokens"]
        assert call.usage.output_tokens == response["usage"]["output_tokens"]
    assert sorted((c.model, c.usage.input_tokens) for c in session.passes_apart if c.usage) == sorted(
        (e.get("model", "claude-sonnet-4-6"), e["input_tokens"])
        for r in served
        for e in (r["usage"].get("iterations") or [])[1:]
    )
    everything = sum(e["input_tokens"] for r in served for e in r["usage"].get("iterations") or [r["usage"]])
    assert session.usage_total().input_tokens == everything
    # The cost-state's total now matches the calls and their passes: no call the log holds no message for.
    assert session.unpaired is None


def test_the_bill_and_every_row_carry_the_advice_at_the_advisors_price(tmp_path):
    entry = _replayed(SESSION.read_bytes(), "-t", "20000", tmp=tmp_path)
    bill, threshold = entry["settings"]
    assert bill["basis"] == "bill" and bill["calls"] == threshold["calls"] == 3
    assert bill["cost"] == pytest.approx(served_cost(), rel=1e-6)
    passes = entry["api"]["passes_apart"]
    assert passes["calls"] == 4  # two advices, and the executor's pass after each
    # A simulated row cannot avoid what the advisor was paid: it carries the passes as billed.
    assert threshold["cost"] >= passes["cost"] > 0.6 * bill["cost"]
    # The calibrated estimate of what the client did is the live thread's bill (no advice in either).
    api = entry["api"]
    assert api["recorded_estimate_cost"] == pytest.approx(api["live_thread_bill_cost"], rel=0.03)
    assert api["live_thread_bill_cost"] == pytest.approx(bill["cost"] - passes["cost"], rel=1e-6)
    assert any("sampling pass(es)" in note and "claude-opus-4-7" in note for note in api["notes"])


def test_the_baseline_replay_is_within_3_percent_of_the_bill(tmp_path):
    """Calibrated on the first passes (the contexts as sent), the baseline estimate plus the passes billed apart
    is the bill; the summed top-level input (two passes of one context) fit nothing: 98.9 % per-call error."""
    entry = _replayed(SESSION.read_bytes(), tmp=tmp_path)
    api = entry["api"]
    baseline = api["baseline_estimate_cost"] + api["passes_apart"]["cost"]
    assert baseline == pytest.approx(served_cost(), rel=0.03)
    assert api["calibration"]["error"]["held_out"]["median"] < 0.05


def test_a_session_cut_before_its_cost_state_still_bills_the_advice(tmp_path):
    """Without the cost-state (a run killed before it wrote one), only the iterations tell what the advisor cost."""
    kept = b"".join(line for line in SESSION.read_bytes().splitlines(keepends=True) if b'"cost-state"' not in line)
    bill = _replayed(kept, tmp=tmp_path)["settings"][0]
    assert bill["cost"] == pytest.approx(served_cost(), rel=1e-6)


@pytest.mark.slow  # drives the real Claude Code
def test_the_real_client_records_the_advice_and_replay_bills_what_was_served(tmp_path):
    from tests.fakes.record_advisor import advised_session
    from tests.fakes.record_copies import _serving

    with _serving() as served:
        claude, session = advised_session(tmp_path, served)
    assert len(_advices(served)) == 2
    entry = _replayed(claude.session_file(session).read_bytes(), tmp=tmp_path / "replayed")
    assert entry["settings"][0]["cost"] == pytest.approx(served_cost(served=served), rel=1e-6)
    assert entry["api"]["passes_apart"]["calls"] == 4


WRITTEN = [
    ["compact"],
    # Masking a call's input rewrites the advised turn: its advice stays after its call.
    ["compact", "-s", "mask-observations", "--keep-tool-uses", "0", "--mask-inputs"],
    ["prune", "--mode", "drop"],
]


@pytest.mark.slow  # drives the real Claude Code
@pytest.mark.parametrize("args", WRITTEN, ids=[" ".join(a) for a in WRITTEN])
def test_the_real_client_resumes_the_advised_session_compactctl_wrote(tmp_path: Path, args: list[str]) -> None:
    """With the advisor on again (``--advisor``: Claude Code restores it from no compacted file, its own /compact's
    neither), the client sends each advice back after its call, and the fake, as the API, takes it."""
    from tests.fakes.advisor import advisor_blocks
    from tests.fakes.anthropic import FakeAnthropic
    from tests.fakes.clients import ClaudeCode, require_client
    from tests.fakes.record_advisor import ADVISING, FLAGS
    from tests.fakes.record_fixtures import _claude_print
    from tests.fakes.resume import run_compactctl, swapped
    from tests.fakes.scenarios import LONG_COMMAND, project
    from tests.fakes.server import Reply, ToolCall

    client = require_client("claude")
    flags = (*FLAGS[:-1], "Bash Read")
    with FakeAnthropic(advisor_thinking=200) as fake:
        claude = ClaudeCode(client, tmp_path, project(tmp_path), fake, extra_env=ADVISING)
        long = ToolCall("Bash", {"command": LONG_COMMAND, "description": "Long output"})
        notes = ToolCall("Read", {"file_path": str(claude.cwd / "notes.txt")})
        fake.enqueue(
            Reply(thinking="Ask first.", text="Checking the log.", blocks=advisor_blocks("The log first."),
                  tool_calls=(long,)),
            Reply(text="Reading the notes.", tool_calls=(notes,)),
            Reply(thinking="Check.", text="The notes say results must stay in CSV.", blocks=advisor_blocks("Stop.")),
        )  # fmt: skip
        session = _claude_print(claude, "What do the notes say? Ask the advisor first.", *flags)
        assert not fake.errors, fake.errors
    path = claude.session_file(session)
    compacted = run_compactctl(path, tmp_path / "out.jsonl", args)
    assert compacted.report["valid_before"] and compacted.report["valid_after"], compacted.report
    with swapped(path, compacted.data), FakeAnthropic() as again:
        again.enqueue("Done.")
        _claude_print(ClaudeCode(client, tmp_path, claude.cwd, again, extra_env=ADVISING), "Go on.", "--resume",
                      session, *flags)  # fmt: skip
        (first, *_) = again.model_calls()
    assert not again.errors, again.errors
    turns = [m["content"] for m in first["messages"] if m["role"] == "assistant" and isinstance(m["content"], list)]
    sent = [[b["type"] for b in turn] for turn in turns]
    assert sum(kinds.count("advisor_tool_result") for kinds in sent) == 2, sent  # both advices, none lost
    for kinds in sent:
        if "advisor_tool_result" in kinds:
            assert kinds[kinds.index("advisor_tool_result") - 1] == "server_tool_use", sent
