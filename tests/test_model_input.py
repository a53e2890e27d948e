"""One measure of what the model sees: ``report IN OUT`` on compact's output gives compact's own after-figure."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from compactctl.formats import load
from compactctl.model_input import model_input, model_input_tokens
from compactctl.strategies import STRATEGIES
from compactctl.tokens import counter_for
from tests.cli.conftest import Cli
from tests.conftest import SAMPLES, SHARED_TRANSCRIPTS, needs_transcripts


@pytest.fixture
def cli() -> Cli:
    return Cli()


def _real_files() -> list[Path]:
    """Every real transcript in shared/: Claude Code, Codex, SWE-agent, mini-swe-agent, tau-bench."""
    if not SHARED_TRANSCRIPTS.is_dir():
        return []
    found = sorted(p for p in SHARED_TRANSCRIPTS.rglob("*") if p.is_file() and p.suffix in (".json", ".jsonl", ".traj"))
    return [p for p in found if p.name not in ("package.json",)]


REAL_CLIENTS = Path(__file__).parent / "formats" / "data" / "real-clients"


def _format_files() -> list[Path]:
    """A file of every format a file holds: the format fixtures, what the real clients wrote, the samples."""
    from tests.formats.fixtures import FILES

    clients = [p for p in sorted(REAL_CLIENTS.rglob("*.jsonl")) if "subagents" not in p.parts]
    return [*FILES.values(), *clients, *sorted(SAMPLES.glob("*.jsonl"))]


def _agrees(cli, tmp_path: Path, source: Path, strategy: str) -> tuple[dict, dict]:
    out = tmp_path / f"{source.stem}.{strategy}{source.suffix}"
    compacted = cli("compact", source, "-s", strategy, "-o", out, "--json", "--write-unchanged")
    assert compacted.exit_code in (0, 1), compacted.stderr
    (own,) = orjson.loads(compacted.stdout)["files"]
    reported = cli("report", source, out, "--json")
    (again,) = orjson.loads(reported.stdout)["files"]
    return own, again


KEYS = ("tokens_before", "tokens_after", "tokens_by_role_after", "messages_after", "valid_after")


@pytest.mark.slow  # every real transcript, per strategy
@needs_transcripts
@pytest.mark.parametrize("strategy", sorted(STRATEGIES))
def test_report_on_compact_s_output_gives_compact_s_figures_on_the_real_transcripts(cli, tmp_path, strategy):
    files = _real_files()
    assert len(files) >= 25
    formats = set()
    for source in files:
        own, again = _agrees(cli, tmp_path, source, strategy)
        assert {k: own[k] for k in KEYS} == {k: again[k] for k in KEYS}, (source.name, strategy)
        formats.add(own["format"])
    assert {"claude-code", "codex", "swe-agent", "tau-bench"} <= formats


# The inner loop runs one step, which summarizes nothing; the others, the default (structured, which
# summarizes) among them, are slow (each strategy compacts and reports every format file: 0.8 s of CPU):
# CI runs all.
INNER_LOOP = ("window",)


@pytest.mark.parametrize(
    "strategy", [s if s in INNER_LOOP else pytest.param(s, marks=pytest.mark.slow) for s in sorted(STRATEGIES)]
)
def test_report_on_compact_s_output_gives_compact_s_figures_in_every_format(cli, tmp_path, strategy):
    formats = set()
    for source in _format_files():
        own, again = _agrees(cli, tmp_path, source, strategy)
        assert {k: own[k] for k in KEYS} == {k: again[k] for k in KEYS}, (source.name, strategy)
        formats.add(own["format"])
    assert {"claude-code", "codex", "gemini", "responses", "anthropic", "chat", "dataset"} <= formats


@pytest.mark.parametrize("name", ["codex", "claude-code"])
def test_review_of_a_written_compaction_counts_what_compact_counted(cli, tmp_path, name):
    from tests.formats.fixtures import FILES

    # Codex's compacted rollout leaves its initial context out: resumed, the client sends it again.
    source = FILES[name]
    out = tmp_path / source.name
    compacted = cli("compact", source, "-s", "window", "--keep-recent", "2", "-o", out, "--json", "-q")
    assert compacted.exit_code in (0, 1), compacted.stderr
    (own,) = orjson.loads(compacted.stdout)["files"]
    reviewed = cli("review", source, "--compacted", out, "-o", tmp_path / "page.html", "--json", "-q")
    assert reviewed.exit_code == 0, reviewed.output
    side = orjson.loads(reviewed.stdout)["files"][0]["sides"]["A"]
    assert (side["tokens_before"], side["tokens_after"]) == (own["tokens_before"], own["tokens_after"])


def _compacted_codex_fixture(cli, tmp_path: Path) -> Path:
    """The Codex fixture compacted by window: a rollout whose replacement history leaves the initial context out."""
    from tests.formats.fixtures import read

    data, _, _ = read("codex")
    source = tmp_path / "rollout.jsonl"
    source.write_bytes(data)
    out = tmp_path / "out.jsonl"
    assert cli("compact", source, "-s", "window", "--keep-recent", "2", "-o", out).exit_code in (0, 1)
    return out


def test_replay_walks_what_the_model_receives_on_resume(cli, tmp_path):
    out = _compacted_codex_fixture(cli, tmp_path)
    # Without its usage (token_count events) the rollout is replayed by its messages, not in API units.
    kept = [line for line in out.read_bytes().splitlines() if b'"token_count"' not in line]
    out.write_bytes(b"\n".join(kept) + b"\n")
    _, (written,) = load(out.read_bytes(), str(out), "codex")
    replayed = cli("replay", out, "-t", "1000000", "--json", "-q")
    assert replayed.exit_code == 0, replayed.stderr
    (none, _) = orjson.loads(replayed.stdout)["files"][0]["settings"]
    live = model_input(written)
    assert len(live) > len(written.messages)  # the initial context the client writes again is walked
    first_call = next(n for n, m in enumerate(live) if m.get("role") == "assistant")
    counter = counter_for()
    bare = next(n for n, m in enumerate(written.messages) if m.get("role") == "assistant")
    assert (
        none["context_per_call"][0] == counter.messages(live[:first_call]) > counter.messages(written.messages[:bare])
    )


def test_codex_writes_its_initial_context_again_on_resume_and_the_measure_counts_it(cli, tmp_path):
    out = _compacted_codex_fixture(cli, tmp_path)
    _, (written,) = load(out.read_bytes(), str(out), "codex")
    added = written.native.added_on_resume() if written.native is not None else ()
    live = model_input(written)
    assert added  # the writer left the initial context out of the replacement history (no world_state)
    assert len(live) == len(written.messages) + len(added)
    assert all(m in live for m in added)
    counted = model_input_tokens([written], counter_for())
    assert counted.tokens == sum(counter_for().message(m) for m in live)
    assert sum(counted.tokens_by_role.values()) == counted.tokens


# --- through a model summarizer: the real openai client against the loopback server ---------------

SUMMARIZING = ("rolling", "selective", "structured", "summary")


def _short_tail(strategy: str) -> list[str]:
    """Threshold 0 and a short tail: every file is summarized, small as the fixtures are."""
    return ["--threshold", "0", *(["--window", "2"] if strategy == "rolling" else ["--keep-recent", "2"])]


def _through_the_server(server) -> list[str]:
    return ["--summarizer", "openai", "--base-url", server.url, "--model", "gpt-4o-mini", "--no-cache"]


def _agrees_through(cli, tmp_path: Path, source: Path, strategy: str, server, *more: str) -> tuple[dict, dict]:
    out = tmp_path / f"{source.stem}.{strategy}{source.suffix}"
    args = ["compact", source, "-s", strategy, "-o", out, "--json", "--write-unchanged", *_through_the_server(server)]
    compacted = cli(*args, *more)
    assert compacted.exit_code in (0, 1), compacted.stderr
    (own,) = orjson.loads(compacted.stdout)["files"]
    reported = cli("report", source, out, "--json")
    (again,) = orjson.loads(reported.stdout)["files"]
    return own, again


def _never_larger(own: dict) -> bool:
    """A written compaction is never larger for the client that resumes it than what it replaces."""
    return own["tokens_after"] <= own["tokens_before"]


@pytest.mark.slow  # every real transcript, per summarizing strategy, through the model server
@needs_transcripts
@pytest.mark.parametrize("strategy", SUMMARIZING)
def test_report_gives_compact_s_figures_through_the_model_summarizer_on_the_real_transcripts(
    cli, tmp_path, openai_server, strategy
):
    formats = set()
    for source in _real_files():
        own, again = _agrees_through(cli, tmp_path, source, strategy, openai_server)
        assert {k: own[k] for k in KEYS} == {k: again[k] for k in KEYS}, (source.name, strategy)
        assert _never_larger(own), (source.name, strategy, own["tokens_before"], own["tokens_after"])
        formats.add(own["format"])
    assert openai_server.requests  # the model summarized, not the extractive fallback
    assert {"claude-code", "codex"} <= formats


@pytest.mark.slow  # each format file, per summarizing strategy, through the model server
@pytest.mark.parametrize("strategy", SUMMARIZING)
def test_report_gives_compact_s_figures_through_the_model_summarizer_in_every_format(
    cli, tmp_path, openai_server, strategy
):
    formats = set()
    for source in _format_files():
        own, again = _agrees_through(cli, tmp_path, source, strategy, openai_server, *_short_tail(strategy))
        assert {k: own[k] for k in KEYS} == {k: again[k] for k in KEYS}, (source.name, strategy)
        assert _never_larger(own), (source.name, strategy, own["tokens_before"], own["tokens_after"])
        formats.add(own["format"])
    assert openai_server.requests
    assert {"claude-code", "codex", "gemini", "responses", "anthropic", "chat", "dataset"} <= formats


ENVIRONMENT = "<environment_context>\n" + "".join(f"  <path_{n}>/srv/app/module_{n}.py</path_{n}>\n" for n in range(60))


def _rollout_with_a_large_initial_context(path: Path) -> Path:
    """A Codex rollout (no world_state, as rollouts before Codex 0.171 are) whose initial context
    outweighs the conversation before the kept tail: what a summary could fold is mostly text Codex
    writes again when it resumes the compacted rollout."""

    def item(role: str, text: str) -> dict:
        kind = "output_text" if role == "assistant" else "input_text"
        return {
            "type": "response_item",
            "payload": {"type": "message", "role": role, "content": [{"type": kind, "text": text}]},
        }

    meta = {
        "type": "session_meta",
        "payload": {"id": "s1", "cwd": "/srv/app", "base_instructions": {"text": "You are Codex."}},
    }
    lines = [meta, item("user", ENVIRONMENT + "</environment_context>"), item("user", "Rename the helper.")]
    lines += [item("assistant", "Done: renamed."), item("user", "Now run the tests."), item("assistant", "All pass.")]
    path.write_bytes(b"".join(orjson.dumps(line) + b"\n" for line in lines))
    return path


@pytest.mark.parametrize("strategy", ["selective", "summary", "structured", "rolling"])
def test_a_model_summary_never_folds_the_context_codex_writes_again_on_resume(cli, tmp_path, openai_server, strategy):
    source = _rollout_with_a_large_initial_context(tmp_path / "rollout.jsonl")
    out = tmp_path / "out.jsonl"
    args = ["compact", source, "-s", strategy, *_short_tail(strategy), "-o", out]
    compacted = cli(*args, "--json", *_through_the_server(openai_server))
    assert compacted.exit_code in (0, 1), compacted.stderr
    (own,) = orjson.loads(compacted.stdout)["files"]
    assert _never_larger(own), (own["tokens_before"], own["tokens_after"], own["notes"])
    if out.exists():  # a compaction was written: the initial context is in what the client is sent, once
        (again,) = orjson.loads(cli("report", source, out, "--json").stdout)["files"]
        assert {k: own[k] for k in KEYS} == {k: again[k] for k in KEYS}
        _, (written,) = load(out.read_bytes(), str(out), "codex")
        live = [str(m.get("content")) for m in model_input(written)]
        assert sum(ENVIRONMENT[:40] in text for text in live) == 1
        summaries = [text for text in live if "compactctl summary" in text]
        assert all(ENVIRONMENT[:40] not in text for text in summaries)
    else:  # nothing smaller to write: the reason says so, and no copy is made (--write-unchanged makes one)
        assert own["unchanged_reason"], own


def test_a_written_compaction_larger_for_the_resuming_client_is_kept_as_it_came(
    cli, tmp_path, openai_server, monkeypatch
):
    """The file's own check, whatever the steps counted: with the steps blind to what the writer adds
    (no ClientView), the summary passes their check and the written rollout would be larger."""
    import compactctl.files.compact as compact_module
    from compactctl.strategies import ClientView

    monkeypatch.setattr(compact_module, "client_view", lambda read_as, written_as: ClientView())
    source = _rollout_with_a_large_initial_context(tmp_path / "rollout.jsonl")
    out = tmp_path / "out.jsonl"
    args = ["compact", source, "-s", "summary", *_short_tail("summary"), "-o", out, "--json"]
    compacted = cli(*args, *_through_the_server(openai_server))
    assert compacted.exit_code in (0, 1), compacted.stderr
    (own,) = orjson.loads(compacted.stdout)["files"]
    assert openai_server.requests  # the model did summarize
    assert (own["tokens_after"], own["messages_after"]) == (own["tokens_before"], own["messages_before"])
    assert "larger for the client that resumes it" in own["unchanged_reason"]
    assert not out.exists()  # unchanged: no copy, as --write-unchanged's help says
    again = cli(*args, "--write-unchanged", *_through_the_server(openai_server))
    assert again.exit_code in (0, 1), again.stderr
    assert out.read_bytes() == source.read_bytes()


IDLE = Path(__file__).parent / "recorded" / "data"


def test_a_claude_code_session_resumed_after_its_client_cut_old_results_sends_them_as_the_stand_in():
    """Claude Code 2.1.332 reads its ``tool_results_cut`` records from the history it resumes and sends those results
    as the stand-in again (tests/recorded/data: the cut-after-idle fixture); the API's clearing is per request, and
    a resume sends every result whole (the cleared-after-idle fixture)."""
    (cut_file,) = (IDLE / "claude-code-2.1.332-cut-after-idle").glob("*.jsonl")
    (cleared_file,) = (IDLE / "claude-code-2.1.332-cleared-after-idle").glob("*.jsonl")
    records = [orjson.loads(line) for line in cut_file.read_bytes().splitlines()]
    (cut,) = [r["attachment"] for r in records if r.get("attachment", {}).get("type") == "tool_results_cut"]
    for path, stood_in in ((cut_file, sorted(cut["callIds"])), (cleared_file, [])):
        fmt, (transcript,) = load(path.read_bytes(), str(path))
        assert fmt.name == "claude-code"
        sent = model_input(transcript)
        assert sorted(m["tool_call_id"] for m in sent if m.get("content") == cut["standIn"]) == stood_in
        assert len(sent) == len(transcript.messages)  # the messages are kept, only what they hold is cut
