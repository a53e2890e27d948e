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
    if not SHARED_TRANSCRIPTS.is_dir():
        return []
    claude = sorted((SHARED_TRANSCRIPTS / "claude-code").glob("*/*.json*"))
    return [*claude, *sorted((SHARED_TRANSCRIPTS / "codex").glob("*/*.jsonl"))]


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
    assert len(files) >= 10
    for source in files:
        own, again = _agrees(cli, tmp_path, source, strategy)
        assert {k: own[k] for k in KEYS} == {k: again[k] for k in KEYS}, (source.name, strategy)


@pytest.mark.parametrize("strategy", sorted(STRATEGIES))
def test_report_on_compact_s_output_gives_compact_s_figures_on_the_samples(cli, tmp_path, strategy):
    for source in sorted(SAMPLES.glob("*.jsonl")):
        own, again = _agrees(cli, tmp_path, source, strategy)
        assert {k: own[k] for k in KEYS} == {k: again[k] for k in KEYS}, (source.name, strategy)


def test_codex_writes_its_initial_context_again_on_resume_and_the_measure_counts_it(cli, tmp_path):
    from tests.formats.fixtures import read

    data, _, _ = read("codex")
    source = tmp_path / "rollout.jsonl"
    source.write_bytes(data)
    out = tmp_path / "out.jsonl"
    assert cli("compact", source, "-s", "window", "--keep-recent", "2", "-o", out).exit_code in (0, 1)
    _, (written,) = load(out.read_bytes(), str(out), "codex")
    added = written.native.added_on_resume() if written.native is not None else ()
    live = model_input(written)
    assert added  # the writer left the initial context out of the replacement history (no world_state)
    assert len(live) == len(written.messages) + len(added)
    assert all(m in live for m in added)
    counted = model_input_tokens([written], counter_for())
    assert counted.tokens == sum(counter_for().message(m) for m in live)
    assert sum(counted.tokens_by_role.values()) == counted.tokens
