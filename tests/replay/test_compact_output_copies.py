"""``compact``'s output replayed with the session it was made from, on the real clients' own files
(tests/formats/data/real-clients): the run bills the original's calls once, whichever file holds them
(bench/consistency_sweep.py's check 3)."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from typer.testing import CliRunner

from compactctl.cli.main import app

REAL = Path(__file__).parents[1] / "formats" / "data" / "real-clients"


def _bill(*paths: Path) -> tuple[int, float]:
    result = CliRunner().invoke(app, ["replay", *map(str, paths), "-t", "100000", "--json", "-q"])
    assert result.exit_code == 0, result.output
    rows = [r for f in orjson.loads(result.stdout)["files"] for r in f["settings"] if r.get("basis") == "bill"]
    return sum(r["calls"] for r in rows), round(sum(r["cost"] for r in rows), 9)


def _compacted(path: Path, out: Path, *steps: str) -> Path:
    result = CliRunner().invoke(app, ["compact", str(path), "-o", str(out), "-q", "--write-unchanged", *steps])
    assert result.exit_code == 0, result.output
    return out


@pytest.mark.parametrize(
    "name", ["codex-0.171.0-compacted.jsonl", "codex-0.171.0-switch-compaction.jsonl"], ids=lambda n: n[:-6]
)
def test_a_codex_compaction_the_output_copies_is_billed_once(name: str, tmp_path: Path) -> None:
    """Codex records its compaction's own call (a ``token_usage_record`` with no response item); the output holds that
    line as the original does. Before, the run billed it again: 3 calls $0.246405 for the original's $0.197045."""
    path = REAL / name
    out = _compacted(path, tmp_path / name)
    alone = _bill(path)
    assert _bill(out) == alone
    assert _bill(path, out) == alone


@pytest.mark.parametrize(
    ("name", "steps"),
    [
        ("gemini-cli-0.61.0.jsonl", ()),  # unchanged: the output is a copy of the file
        ("gemini-cli-0.61.0.jsonl", ("-s", "window", "--keep-recent", "2")),
        ("gemini-cli-0.61.0-usage.jsonl", ("-s", "window", "--keep-recent", "2")),
    ],
    ids=["copy", "window", "usage-window"],
)
def test_a_gemini_output_bills_the_originals_calls_once(name: str, steps: tuple[str, ...], tmp_path: Path) -> None:
    """Plain ``compact`` of a Gemini CLI chat keeps every line and appends its list (a ``$set`` of ``messages``).
    Before, the output with the original billed every call twice (gemini-cli-0.61.0: 6 calls $0.142028 for 3
    $0.071014), and a list with no summary (``-s window``) read as a saved chat loaded, its calls off the thread:
    1 call $0.02355 alone."""
    path = REAL / name
    out = _compacted(path, tmp_path / name, *steps)
    alone = _bill(path)
    assert _bill(out) == alone
    assert _bill(path, out) == alone


def test_compactctls_gemini_list_with_no_summary_is_its_compaction_and_makes_no_call(tmp_path: Path) -> None:
    from compactctl.formats.records import parse_records
    from compactctl.recorded import COMPACTCTL, gemini

    path = REAL / "gemini-cli-0.61.0-usage.jsonl"
    out = _compacted(path, tmp_path / path.name, "-s", "window", "--keep-recent", "2")
    original = gemini.read(parse_records(path.read_bytes(), str(path))[0], str(path))
    session = gemini.read(parse_records(out.read_bytes(), str(out))[0], str(out))
    (before,), (context,) = original.contexts, session.contexts
    assert [c.trigger for c in context.compactions] == [*(c.trigger for c in before.compactions), COMPACTCTL]
    # The client's own compressions' calls, estimated, are the original's; compactctl's made none.
    assert session.compaction_calls == original.compaction_calls
    assert session.compaction_estimate == original.compaction_estimate
    assert session.off_thread == original.off_thread == ()


def test_a_copy_of_a_codex_thread_with_its_subagent_bills_the_subagents_calls_once(tmp_path: Path) -> None:
    """The real 0.171.0's root rollout and its subagent's (tests/recorded/data/codex-0.171.0-subagent), and compact's
    output of the folder: the root's copy read its subagent's copy as its own, not a copy. Before: 7 calls $0.391525
    for the 5 served, $0.28787."""
    folder = REAL.parents[2] / "recorded" / "data" / "codex-0.171.0-subagent"
    out = _compacted(folder, tmp_path / folder.name)
    alone = _bill(folder)
    assert alone[0] == 5
    assert _bill(out) == alone
    assert _bill(folder, out) == alone


@pytest.mark.parametrize("name", ["claude-code-2.1.332-rewind-into-kept.jsonl", "claude-code-2.1.332-current-models"])
def test_claude_codes_own_compaction_keeps_its_cost_state_bill_in_the_output(name: str, tmp_path: Path) -> None:
    """compactctl's copies after its boundary (``msg_compactctl_`` ids, the session's own id) are of the session's
    calls: the cost-state's total, which bills the client's own compaction call, still holds. Before, they voided
    it as a fork's copies would: the compaction's call estimated and the bill short (rewind-into-kept: 5 calls
    $0.332934 for $0.404736; current-models: $1.149185 for $1.270685)."""
    path = REAL / name
    out = _compacted(path, tmp_path / name)
    alone = _bill(path)
    assert _bill(out) == alone
    assert _bill(path, out) == alone


def test_a_compacted_claude_code_subagent_file_is_one_sidechain(tmp_path: Path) -> None:
    """compact of a session with its subagent's file compacts that file too: its boundary is a new root (no
    ``parentUuid``) going on from the tree it compacted. Read as a tree of its own, the subagent's calls were
    billed in both (subagent-web-fetch ``-s window --keep-recent 2``: 15 calls $0.879339 for the 9, $0.564834)."""
    folder = REAL / "claude-code-2.1.332-subagent-web-fetch"
    out = _compacted(folder, tmp_path / folder.name, "-s", "window", "--keep-recent", "2")
    alone = _bill(folder)
    assert _bill(out) == alone
    assert _bill(folder, out) == alone


@pytest.mark.parametrize(
    ("name", "steps"),
    [
        ("claude-code-2.1.332-web-search.jsonl", ("-s", "window", "--keep-recent", "2")),
        ("claude-code-2.1.332-web-fetch-outcomes.jsonl", ("-s", "window", "--keep-recent", "2")),
    ],
    ids=["web-search", "web-fetch-outcomes"],
)
def test_a_side_request_whose_result_compactctl_copies_is_counted_once(
    name: str, steps: tuple[str, ...], tmp_path: Path
) -> None:
    """WebSearch's and WebFetch's own requests are counted by their tool results; compactctl's copy of a kept
    result after its boundary (the same ``tool_use_id``) made no request, and the session's cost-state bills them as
    it did (``-s window --keep-recent 2``, before: web-search 4 calls $0.265851 for 6, $0.289751; web-fetch-outcomes
    5 $0.55755 for 6, $0.557809)."""
    path = REAL / name
    out = _compacted(path, tmp_path / name, *steps)
    alone = _bill(path)
    assert _bill(out) == alone
    assert _bill(path, out) == alone


@pytest.mark.parametrize("steps", [(), ("-s", "window", "--keep-recent", "2")], ids=["default", "window"])
def test_a_copy_of_a_claude_code_session_with_its_forked_subagent_bills_the_subagents_calls_once(
    steps: tuple[str, ...], tmp_path: Path
) -> None:
    """The real 2.1.332's session and its forked subagent's file (recorded/data/claude-code-2.1.332-fork-subagent),
    with compact's output of the folder: the fork's file opens on its copy of the session's Agent call, no other
    file's, so the copy's subagent billed its own calls again. Before: 8 calls $0.894255 for the 6, $0.66886."""
    folder = REAL.parents[2] / "recorded" / "data" / "claude-code-2.1.332-fork-subagent"
    out = _compacted(folder, tmp_path / folder.name, *steps)
    alone = _bill(folder)
    assert alone[0] == 6
    assert _bill(out) == alone
    assert _bill(folder, out) == alone


@pytest.mark.parametrize(
    ("name", "steps"),
    [
        ("claude-code-1.0.69-web-search.jsonl", ()),
        ("claude-code-1.0.69-web-search.jsonl", ("-s", "window", "--keep-recent", "2")),
        ("claude-code-1.0.69-resume-web-search", ()),
    ],
    ids=["default", "window", "resume"],
)
def test_a_claude_code_1x_outputs_searches_stood_in_once(name: str, steps: tuple[str, ...], tmp_path: Path) -> None:
    """1.0.x writes no cost-state: a WebSearch's searches, as its results count them, stand in for its request. A
    copy's searches were made where its call was: the output with the original stood them in twice (web-search:
    7 calls $0.167254 for 5, $0.147254; resume-web-search 5 $0.146438 for 4, $0.136438), and the output alone,
    compactctl's copies after its boundary read as a fork's, stood in none (window: 3 calls $0.127254)."""
    path = REAL.parents[2] / "recorded" / "data" / name
    out = _compacted(path, tmp_path / name, *steps)
    alone = _bill(path)
    assert _bill(out) == alone
    assert _bill(path, out) == alone


@pytest.mark.parametrize("name", ["codex-0.171.0-revert", "codex-0.171.0-reverts"])
@pytest.mark.parametrize("steps", [(), ("-s", "window", "--keep-recent", "2")], ids=["default", "window"])
def test_a_copy_of_a_reverted_codex_thread_bills_the_dropped_turns_once(
    name: str, steps: tuple[str, ...], tmp_path: Path
) -> None:
    """The real 0.171.0's rollouts of a thread ``thread/revert`` went back on once and three times
    (tests/recorded/data), and compact's output of the folder: the copies' turns a revert dropped, off the live
    thread, were billed again though keyed as copies. Before: 5 calls $0.298475 for the revert's 4, $0.248655; 10
    calls $0.557895 for the reverts' 7, $0.40491."""
    folder = REAL.parents[2] / "recorded" / "data" / name
    out = _compacted(folder, tmp_path / name, *steps)
    alone = _bill(folder)
    assert _bill(out) == alone
    assert _bill(folder, out) == alone
    assert _bill(out, folder) == alone  # the copy named first bills them; the original's are copies then
