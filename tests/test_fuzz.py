"""Mutated real transcripts never crash the library: a fixed budget in the suite, more in bench/fuzz_bench.py.

Every mutant (a value swapped for one of another type, a key dropped or added, a record
duplicated, dropped or cut short) must end in a result or compactctl's one-line error,
whatever strategy, the report, replay or the writer does with it.
"""

from __future__ import annotations

import json

import pytest

from tests.conftest import needs_transcripts
from tests.fuzzing import CLI_COMMANDS, KINDS, cli_arguments, mutants, run_cli, run_library

BUDGET = 600  # field, line and byte mutants in turn
CLI_BUDGET = 240  # 10 of each command x with and without --json x with and without --on-error skip


@pytest.mark.slow  # 600 mutants of the real transcripts
@needs_transcripts
def test_mutated_transcripts_never_crash_the_library():
    crashes = {}
    for number, (name, data) in enumerate(mutants(seed=2026, count=BUDGET)):
        site = run_library(data, name, number)
        if site:
            crashes.setdefault(site, name)
    assert crashes == {}


@pytest.mark.slow  # 160 command runs
@needs_transcripts
def test_mutated_transcripts_never_crash_a_command(tmp_path):
    crashes = {}
    for number, (name, data) in enumerate(mutants(seed=26, count=CLI_BUDGET)):
        site = run_cli(data, tmp_path, number)
        if site:
            crashes.setdefault(site, name)
    assert crashes == {}


def test_every_kind_of_mutant_is_made_and_changes_its_source():
    import random

    from tests.fuzzing import load_sources, mutate

    source = next(s for s in load_sources() if s.layout == "jsonl" and len(s.records) > 5)
    original = b"\n".join(json.dumps(r, ensure_ascii=False).encode() for r in source.records[:60]) + b"\n"
    for kind in KINDS:
        made = {mutate(source, random.Random(seed), kind) for seed in range(20)}
        assert len(made) > 10 and original not in made, kind


def test_the_fuzz_harness_reports_a_crash_it_is_given(monkeypatch):
    # The harness can fail: a step that breaks on odd types is reported, with its type.
    import compactctl

    def breaks_on_lists(messages, *args, **kwargs):
        return {message["content"]: 1 for message in [{"content": []}]}  # unhashable: TypeError

    assert run_library(b'{"role": ["user"], "content": "hi"}\n') is None  # refused by the reader: one line
    monkeypatch.setattr(compactctl, "prune", breaks_on_lists)
    assert run_library(b'{"role": "user", "content": "hi"}\n', number=1).startswith("TypeError at")


def test_every_command_is_fuzzed_with_and_without_json_and_skip(tmp_path):
    runs = {(a[0], "--json" in a, "--on-error" in a) for n in range(24) for a in [cli_arguments(tmp_path, tmp_path, n)]}
    assert runs == {(c, j, s) for c in CLI_COMMANDS for j in (True, False) for s in (True, False)}


def test_the_cli_harness_names_a_bug_the_batch_caught(tmp_path, monkeypatch):
    # A bug met in one file is caught by the batch ("cannot process this file", exit 2): the
    # harness still counts it, and names the site, not the message.
    from compactctl.files import report

    def breaks(*args, **kwargs):
        raise TypeError("unhashable type: 'list'")

    data = b'{"role": "user", "content": "hi"}\n{"role": "assistant", "content": "hello"}\n'
    report_turn = CLI_COMMANDS.index("report")
    assert run_cli(data, tmp_path, report_turn) is None
    monkeypatch.setattr(report, "file_report", breaks)
    site = run_cli(data, tmp_path, report_turn)
    assert site is not None and site.startswith("cli report --json: TypeError at")
