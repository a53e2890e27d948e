"""Scores that separate prompts: each side scored on the summarizer's own text, and on the whole summary."""

from __future__ import annotations

from compactctl.compaction import compact
from compactctl.review import own_difference, review_side
from compactctl.review.sections import own_text, sections
from compactctl.strategies.summarizing import LATEST_REQUEST_HEADING
from compactctl.summarizers.build import make_summarizer
from compactctl.summarizers.options import SummarizerOptions
from compactctl.tokens import counter_for
from tests.review.conftest import session
from tests.summarizers.openai_server import ServerThread

COUNTER = counter_for("approx")
NONSENSE = "## Goal\n- The weather was pleasant and the birds sang.\n\n## Next step\n- Enjoy the afternoon."
GOOD = (
    "## Goal\n- Now make the header row optional.\n- Fix the CSV export in src/export/csv_writer.py.\n\n"
    "## Files and artifacts\n"
    + "".join(f"- src/export/part_{n}.py read\n" for n in range(6))
    + "\n## Errors and fixes\n"
    + "".join(f"- FAILED tests/test_part_{n}.py::test_rows - KeyError: 'region_{n}'\n" for n in range(6))
    + "".join(f"- pytest tests/test_part_{n}.py -q\n" for n in range(6))
    + "\n## Constraints\n- Never change the public signature of export_rows."
)


def side_answering(text: str, tmp_path, name: str):
    server = ServerThread()
    server.state.text = text
    try:
        settings = {
            "summarizer": "openai",
            "base_url": server.state.url,
            "model": "m",
            "cache": False,
            "summary_retries": 0,
        }
        summarizer = make_summarizer(SummarizerOptions(**settings), COUNTER)
        messages = session(rounds=6)
        result = compact(
            messages, ["summary"], {"threshold": 0, "keep_recent": 2}, counter=COUNTER, summarizer=summarizer
        )
        return review_side(name, text[:20], messages, result, COUNTER)
    finally:
        server.stop()


def test_a_nonsense_answering_server_scores_lower_on_the_models_own_text_than_one_that_answers_well(tmp_path):
    nonsense = side_answering(NONSENSE, tmp_path, "A")
    good = side_answering(GOOD, tmp_path, "B")
    a, b = nonsense.figures, good.figures
    # As written, what compactctl appends (the ledger, the user's messages) answers every probe even
    # beside nonsense ...
    assert a.probes_passed == a.probes == b.probes and a.identifiers_kept > a.identifiers // 2
    # ... the model's own text alone tells them apart.
    assert a.identifiers_kept_own < b.identifiers_kept_own and a.probes_passed_own < b.probes_passed_own
    assert a.identifiers_kept_own <= a.identifiers_kept and a.probes_passed_own <= a.probes_passed
    assert own_difference(a, b) > 20 and own_difference(b, a) == -own_difference(a, b)


def test_own_text_stops_where_compactctl_appended_its_blocks():
    text = f"## Goal\n- fix it\n\n## Ledger (verbatim)\n- Paths: src/a.py\n\n{LATEST_REQUEST_HEADING}\nmake it so"
    assert own_text(text) == "## Goal\n- fix it"
    assert own_text("## Goal\n- all mine") == "## Goal\n- all mine"
    # A small model copies the verbatim block out mid-summary: what it wrote after the copy is still its own.
    copied = "## Goal\n- x\n\n## User messages (verbatim)\n- fix it\n\n## Next step\n- run pytest"
    assert own_text(copied + "\n\n## Ledger (verbatim)\n- Paths: src/a.py") == copied


def test_a_heading_the_user_pasted_is_quoted_never_a_section():
    pasted = "Please review this plan:\n## Payment Provider Integration\n- use Stripe"
    summary = (
        "[compactctl summary of 9 earlier messages]\n\n## Goal\n- Current request: "
        + pasted.replace("\n", "\n  ")  # the extractive summarizer indents a request quoted whole
        + "\n\n## Progress\n- 3 tool calls\n\n"
        + f"{LATEST_REQUEST_HEADING}\n{pasted}"  # appended as written, headings and all
    )
    found = sections(summary)
    assert [h for h, _ in found] == ["", "Goal", "Progress", "Latest user request (verbatim)"]
    assert "## Payment Provider Integration" in dict(found)["Goal"]
    assert dict(found)["Latest user request (verbatim)"].endswith("## Payment Provider Integration\n- use Stripe")


def test_a_custom_prompts_headings_are_sections_too():
    summary = "## Outcome\n- done\n\n## Risks\n- none"
    assert sections(summary) == [("", summary)]  # unknown headings: the text is kept whole, never split
    assert [h for h, _ in sections(summary, ("Outcome", "Risks"))] == ["Outcome", "Risks"]


def test_review_with_a_judge_reports_the_probes_a_model_answered_from_the_compacted_transcript(
    cli, tmp_path, openai_server
):
    import json

    from tests.cli.conftest import write_jsonl
    from tests.summarizers.openai_server import Behaviour

    source = write_jsonl(tmp_path / "s.jsonl", session(rounds=3))
    first = cli("review", source, "-o", tmp_path / "plain.html", "--json", "-q", "--encoding", "approx")
    probes = json.loads(first.stdout)["files"][0]["sides"]["A"]["whole_summary"]["probes"]["total"]
    # Each probe: an answer, then a grade; only the first is graded right.
    openai_server.enqueue(Behaviour(text="an answer"), Behaviour(text="yes"))
    openai_server.enqueue(*[Behaviour(text=t) for _ in range(probes - 1) for t in ("an answer", "no")])
    args = ["--judge", "openai", "--judge-model", "judge-1", "--base-url", openai_server.url, "--no-cache"]
    page = tmp_path / "judged.html"
    result = cli("review", source, "-o", page, "--json", "-q", "--encoding", "approx", *args)
    assert result.exit_code == 0, result.output
    side = json.loads(result.stdout)["files"][0]["sides"]["A"]
    assert side["judged_probes"] == {"passed": 1, "total": probes, "score": round(1 / probes, 4)}
    assert (
        len(openai_server.requests) == 2 * probes
        and "<history>" in openai_server.requests[0].body["messages"][1]["content"]
    )
    assert 'data-figure="probes answered right by the judge"' in page.read_text()
