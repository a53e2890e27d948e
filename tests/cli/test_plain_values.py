"""Flag values read without pydantic are the values Typer's own coercion gives, and the rest is Typer's."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer._click import Context
from typer._coercion import build_runtime_param

from compactctl.cli.main import SUMMARIES, build_command
from compactctl.cli.plain_values import NOT_PLAIN, PlainValues, plain_value
from tests.conftest import SAMPLES

COMMANDS = {name: build_command(name) for name in SUMMARIES}
PARAMS = [(name, param) for name, command in COMMANDS.items() for param in command.params]
NUMBERS = st.one_of(
    st.integers(-(10**20), 10**20).map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.sampled_from(["", " 3", "3 ", "+3", "1_000", "007", "0x10", "1e3", "-0", ".5", "5.", "nan", "٣"]),
)
VALUES = st.one_of(NUMBERS, st.text(max_size=12), st.lists(st.text(max_size=6), max_size=3).map(tuple))


def typers_own(command, param, value):
    """What Typer 0.29 gives for ``value`` (or the message of the error it raises)."""
    try:
        return build_runtime_param(param.type_descriptor)._coerce_value(value, param=param, ctx=Context(command))
    except Exception as error:  # the error is the answer
        return ("error", type(error).__name__, str(error))


def test_every_parameter_of_every_command_is_read_here():
    assert PARAMS and all(isinstance(param._runtime_param, PlainValues) for _, param in PARAMS)


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(range(len(PARAMS))), VALUES)
def test_a_value_read_plainly_is_the_value_typer_gives(which, value):
    name, param = PARAMS[which]
    info = param.type_descriptor.parameter_info
    plain = plain_value(param.type_descriptor.annotation, info.min, info.max, value)
    if plain is NOT_PLAIN:
        return  # left to Typer: what it says is what it always said
    expected = typers_own(COMMANDS[name], param, value)
    assert plain == expected and type(plain) is type(expected)
    assert param._runtime_param._coerce_value(value, param=param, ctx=Context(COMMANDS[name])) == expected


@pytest.mark.parametrize(
    ("annotation", "minimum", "value"),
    [
        (int, 0, "-1"),
        (int, 0, "x"),
        (int, 0, " 3"),
        (float, 0.001, "0"),
        (float, 0, "1e3"),
        (str, None, b"x"),
        (Path, None, "a\x00b"),  # Typer: "embedded null byte" (found by the property test above)
    ],
)
def test_what_is_not_plain_goes_to_typer(annotation, minimum, value):
    assert plain_value(annotation, minimum, None, value) is NOT_PLAIN


def test_typer_still_says_what_is_wrong_with_a_bad_value(tmp_path):
    command = [sys.executable, "-m", "compactctl", "prune", str(SAMPLES / "support-fr.jsonl"), "-o"]
    wide = {**os.environ, "COLUMNS": "200"}
    result = subprocess.run([*command, str(tmp_path / "o.jsonl"), "-j", "-1"], capture_output=True, text=True, env=wide)
    assert result.returncode == 2 and "greater than or equal to 0" in result.stderr


def test_a_quiet_prune_of_one_file_imports_neither_pydantic_a_tokenizer_nor_multiprocessing(tmp_path):
    source, target = str(SAMPLES / "support-fr.jsonl"), str(tmp_path / "o.jsonl")
    code = (
        "import sys\n"
        f"sys.argv = ['compactctl', 'prune', {source!r}, '-o', {target!r}, '-q', '--jobs', '1', '--mode', 'drop']\n"
        "from compactctl.cli.main import main\n"
        "try:\n"
        "    main()\n"
        "except SystemExit as stop:\n"
        "    print('EXIT', stop.code)\n"
        "print('PYDANTIC', 'pydantic' in sys.modules)\n"
        "print('TOKENIZER', any(m in sys.modules for m in ('tiktoken', 'bpe_openai._bindings')))\n"
        "print('FORKING', 'multiprocessing' in sys.modules)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    # prune -q reports no count, so it loads no tokenizer; one file is not forked
    assert result.stdout.splitlines()[-4:] == ["EXIT 0", "PYDANTIC False", "TOKENIZER False", "FORKING False"]
    assert Path(tmp_path / "o.jsonl").is_file()
