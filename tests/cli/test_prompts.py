"""Prompts only where they are read: a prompt for a summarizer that reads none is a usage error."""

from __future__ import annotations

import pytest

from tests.cli.conftest import write_jsonl
from tests.review.conftest import session


@pytest.fixture
def prompt(tmp_path):
    path = tmp_path / "terse.md"
    path.write_text("Summarize in at most {max_tokens} tokens.", encoding="utf-8")
    return path


@pytest.fixture
def source(tmp_path):
    return write_jsonl(tmp_path / "s.jsonl", session(rounds=4))


@pytest.mark.parametrize(
    "args",
    [
        ("compact", "{source}", "-o", "{out}", "--prompt-file", "{prompt}"),
        ("compact", "{source}", "-o", "{out}", "--prompt-file", "structured={prompt}"),
        ("review", "{source}", "-o", "{out}", "--vs-prompt-file", "structured={prompt}"),
        ("review", "{source}", "-o", "{out}", "--prompt-file", "{prompt}", "--vs-strategy", "summary"),
    ],
)
def test_a_prompt_for_the_extractive_summarizer_is_a_usage_error(cli, tmp_path, source, prompt, args):
    out = tmp_path / "out.file"
    result = cli(*(a.format(source=source, prompt=prompt, out=out) for a in args))
    assert result.exit_code == 2, result.output
    assert "the extractive summarizer reads no prompt" in result.stderr and "--summarizer openai" in result.stderr
    assert not out.exists()


def test_the_same_prompt_for_the_openai_summarizer_is_read(cli, tmp_path, source, prompt):
    result = cli("compact", source, "--summarizer", "openai", "--prompt-file", f"structured={prompt}", "--dry-run")
    assert result.exit_code == 0, result.output
    assert "Summarize in at most" in result.stdout


def test_a_dry_run_with_the_extractive_summarizer_says_there_was_nothing_to_send(cli, tmp_path, source):
    result = cli("compact", source, "--dry-run")
    assert result.exit_code == 0
    assert result.stdout == ""  # no request to print
    assert "the extractive summarizer runs offline and sends no request; there was nothing to send" in result.stderr
    assert not (tmp_path / "s.compacted.jsonl").exists()
