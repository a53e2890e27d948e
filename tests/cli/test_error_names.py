"""Errors raised below the CLI name the setting as a library caller passes it; the CLI says the flag.

A library message names a setting in backquotes (`summary_max_tokens`), and ``as_flags`` turns
each into the flag it is given by where the CLI prints an error (stderr, the run document, a
failed file's reason), so a library caller reads the keyword and a shell user the flag.
"""

from __future__ import annotations

import ast
import re

import orjson
import pytest
from typer.testing import CliRunner

from compactctl.cli.main import app
from compactctl.cli.options import as_flags
from compactctl.errors import EXIT_INPUT, InputError
from compactctl.replay.triggers import parse_thresholds
from tests.conftest import ROOT

SAMPLE = str(ROOT / "samples" / "coding-agent.jsonl")
FLAG = re.compile(r"(?<![\w-])--[a-z][a-z-]+")
NOT_OURS = {"--ignore-requires-python"}  # pip's, in an install hint
runner = CliRunner()


def raised_messages() -> list[tuple[str, int, str]]:
    """(module, line, text) of every string in a ``raise`` of the package outside ``cli/``."""
    found = []
    for path in sorted((ROOT / "compactctl").rglob("*.py")):
        if path.parent.name == "cli":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Raise) and node.exc is not None:
                found += [
                    (str(path.relative_to(ROOT)), node.lineno, text.value)
                    for text in ast.walk(node.exc)
                    if isinstance(text, ast.Constant) and isinstance(text.value, str)
                ]
    return found


def test_no_error_below_the_cli_names_a_flag():
    named = [(where, line, flags) for where, line, text in raised_messages()
             if (flags := set(FLAG.findall(text)) - NOT_OURS)]  # fmt: skip
    assert named == []


def test_a_library_caller_reads_the_setting():
    with pytest.raises(InputError, match=r"^`thresholds`: '8x' is not a number of tokens$"):
        parse_thresholds(["8x"])


@pytest.mark.parametrize(
    "named, said",
    [
        ("`thresholds`: '8x' is not a number", "--threshold: '8x' is not a number"),  # the flag differs from the key
        ("lower `summary_max_tokens` or", "lower --summary-max-tokens or"),
        ("convert with `to` chat", "convert with --to chat"),  # the command's own option
        ("`compactctl sessions` lists them", "`compactctl sessions` lists them"),  # a command, not a setting
    ],
)
def test_the_cli_says_each_setting_as_its_flag(named, said):
    assert as_flags(named) == said


def test_the_cli_prints_the_flag_on_stderr_and_in_the_run_document():
    result = runner.invoke(app, ["replay", SAMPLE, "-t", "8x", "--json"])
    assert result.exit_code == EXIT_INPUT
    assert "--threshold: '8x' is not a number of tokens" in result.stderr
    assert orjson.loads(result.stdout)["error"]["message"] == "--threshold: '8x' is not a number of tokens"


def test_a_failed_file_s_reason_names_the_flag():
    result = runner.invoke(app, ["compact", SAMPLE, "--in-place", "--json"])  # a chat file is no database
    [reason] = [entry["reason"] for entry in orjson.loads(result.stdout)["files"] if entry["status"] == "failed"]
    assert reason.endswith(": --in-place replaces sessions in an Agents SDK database; this file reads as chat")
