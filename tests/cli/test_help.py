"""Every command's ``--help`` reads whole at 80 columns.

No line is wider than the terminal, no word is cut (``--summary-input-ma…``), no placeholder is
a type name (``<list[str]>``, ``<bool>``), every flag the command takes starts a row of its own,
derived help keeps its brackets (``pip install 'compactctl[ray]'``), and the options whose values
come from a registry list them.
"""

from __future__ import annotations

import re

import pytest
from rich.cells import cell_len
from typer.testing import CliRunner

from compactctl.cli.main import SUMMARIES, app
from compactctl.formats import FORMATS
from compactctl.summarizers.build import SUMMARIZERS
from tests.cli.test_settings_read import own_flags, setting_flags

runner = CliRunner()
NARROW = {"COLUMNS": "80"}


def help_at_80(*command: str) -> str:
    result = runner.invoke(app, [*command, "--help"], env=NARROW)
    assert result.exit_code == 0, result.output
    return result.stdout


def prose(text: str) -> str:
    """The help as running text: the panels' borders gone, wrapped lines joined."""
    return " ".join(line.strip(" │╭╮╰╯─") for line in text.splitlines())


def option_help(text: str, flag: str) -> str:
    """The help of the row ``flag`` starts, up to the next option's row."""
    found, lines = False, []
    for line in text.splitlines():
        row = re.match(r"^│ \*?(?:-[a-zA-Z], )?(--[a-z][a-z-]*)", line)
        if row:
            found = row.group(1) == flag
        if found:
            lines.append(line)
    assert lines, f"{flag} starts no row"
    return prose("\n".join(lines))


@pytest.mark.parametrize("command", [(), *((name,) for name in SUMMARIES)], ids=["app", *SUMMARIES])
def test_help_fits_80_columns_with_nothing_cut_and_no_type_names(command):
    text = help_at_80(*command)
    assert max(cell_len(line) for line in text.splitlines()) <= 80
    assert "…" not in text
    assert not re.search(r"<(?:bool|str|int|float|path|list)\b[^>]*>", text), re.findall(r"<[^>]+>", text)


@pytest.mark.parametrize("command", list(SUMMARIES))
def test_every_flag_of_a_command_starts_a_row_whole_at_80_columns(command):
    text = help_at_80(command)
    rows = set(re.findall(r"^│ \*?(?:-[a-zA-Z], )?(--[a-z][a-z-]*)(?:/(--[a-z][a-z-]*))?", text, re.M))
    shown = {flag for row in rows for flag in row if flag}
    assert shown == set(setting_flags(command)) | own_flags(command)


def test_derived_help_keeps_its_brackets():
    text = prose(help_at_80("compact"))
    assert "pip install 'compactctl[ray]'" in text
    assert "compactctl')" not in text


def test_placeholders_say_what_to_type():
    text = help_at_80("compact")
    for row in ("-j, --jobs N", "--model MODEL", "--base-url URL", "-o, --output TEXT", "--manifest PATH",
                "-s, --strategy STRATEGY", "--summary-timeout SECONDS", "--engine processes|threads|ray"):  # fmt: skip
        assert re.search(rf"^│ {re.escape(row)}\b", text, re.M), row
    assert re.search(r"^│ PATH\.\.\. ", text, re.M)  # the inputs
    assert re.search(r"^│ --redact/--no-redact ", text, re.M)  # a switch takes nothing


def words(text: str) -> set[str]:
    return set(re.findall(r"[a-z][a-z-]*", text))


def test_options_whose_values_a_registry_holds_list_them():
    text = help_at_80("compact")
    assert {"auto", *FORMATS} <= words(option_help(text, "--format"))
    written = words(option_help(text, "--to"))
    read_only = {name for name, fmt in FORMATS.items() if not fmt.writes}
    assert set(FORMATS) - read_only <= written and not read_only & written
    assert set(SUMMARIZERS) <= words(option_help(text, "--summarizer"))
