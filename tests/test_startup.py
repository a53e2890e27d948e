"""The installed console script and start-up: checks on the project as shipped (lint and types run in .ci/run)."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import SAMPLES


def test_cli_import_does_not_pull_in_openai():
    code = "import sys, compactctl, compactctl.cli.main; print('openai' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "False"


@pytest.mark.slow  # a console script in a fresh interpreter
def test_installed_console_script_runs_report_on_a_sample():
    # The script installed beside this interpreter, as a user's venv has it.
    script = shutil.which("compactctl", path=str(Path(sys.executable).parent))
    assert script, "the compactctl console script is not installed"
    result = subprocess.run(
        [script, "report", str(SAMPLES / "support-fr.jsonl"), "--json"], capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr
    assert '"valid_before": true' in result.stdout


def test_version_is_the_package_version():
    import compactctl

    result = subprocess.run([sys.executable, "-m", "compactctl", "--version"], capture_output=True, text=True)
    assert result.returncode == 0
    assert result.stdout.strip() == f"compactctl {compactctl.__version__}"


def test_python_dash_m_works():
    result = subprocess.run([sys.executable, "-m", "compactctl", "--help"], capture_output=True, text=True)
    assert result.returncode == 0
    assert "compact" in result.stdout and "report" in result.stdout


def test_help_imports_neither_openai_tiktoken_nor_a_strategy_nor_a_command():
    code = (
        "import sys\n"
        "sys.argv = ['compactctl', '--help']\n"
        "from compactctl.cli.main import main\n"
        "try:\n"
        "    main()\n"
        "except SystemExit:\n"
        "    pass\n"
        "loaded = [m for m in sys.modules if m.split('.')[0] in ('openai', 'tiktoken') or m.startswith(\n"
        "    ('compactctl.strategies', 'compactctl.formats', 'compactctl.summarizers', 'compactctl.cli.compact'))]\n"
        "print('LOADED', loaded)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "compact" in result.stdout and "sessions" in result.stdout  # the commands are listed
    assert result.stdout.splitlines()[-1] == "LOADED []"


def test_the_commands_listed_by_help_are_the_commands_with_their_own_first_line():
    import importlib
    import inspect

    from compactctl.cli.main import SUMMARIES

    commands = sorted(p.stem for p in (Path(__file__).parent.parent / "compactctl" / "cli").glob("*.py"))
    for name, line in SUMMARIES.items():
        function = getattr(importlib.import_module(f"compactctl.cli.{name}"), name)
        assert inspect.getdoc(function).splitlines()[0] == line
        assert name in commands


def test_import_compactctl_imports_only_the_package():
    code = "import sys, compactctl; print(sorted(m for m in sys.modules if m.startswith('compactctl')))"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "['compactctl']"


@pytest.mark.slow  # a fresh interpreter, every module imported: 1.3 s of CPU
def test_importing_the_package_compiles_no_regular_expression():
    # Every module imported (the Ray engine aside, an extra), counting the patterns compiled by
    # compactctl's own code while they load: none, they compile at first use (compactctl.lazyre).
    code = (
        "import importlib, pkgutil, re, sys\n"
        "import typer, rich.console, rich.table\n"
        "compiled = []\n"
        "original = re._compile\n"
        "def counting(pattern, flags):\n"
        "    caller = sys._getframe(1)\n"
        "    while caller.f_code.co_filename.endswith('re/__init__.py'):\n"
        "        caller = caller.f_back\n"
        "    if '/compactctl/' in caller.f_code.co_filename:\n"
        "        compiled.append((caller.f_code.co_filename.split('/compactctl/')[-1], pattern))\n"
        "    return original(pattern, flags)\n"
        "re._compile = counting\n"
        "import compactctl\n"
        "for module in pkgutil.walk_packages(compactctl.__path__, 'compactctl.'):\n"
        "    if module.name not in ('compactctl.__main__', 'compactctl.ray_engine'):\n"
        "        importlib.import_module(module.name)\n"
        "print('COMPILED', compiled)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.splitlines()[-1] == "COMPILED []"


# What a plain ``compact FILE -o OUT -q`` of a Claude Code session must not load (cli.direct reads
# the line; the default steps run): each was measured as part of the gap to cozempic (bench/speed_bench.py).
NOT_FOR_A_PLAIN_COMPACT = (
    "typer",  # and the Click it carries: ~50 ms; only --help, a usage error or an odd line need it
    "click",
    "rich",  # only a table, a bar or an error printed in colour need it
    "pydantic",
    "openai",
    "tiktoken",  # bpe-openai's compiled counter counts
    "multiprocessing",  # one file is not forked
    "concurrent.futures",  # one file runs in one thread of its own (files.jobs._in_turn)
    "_hashlib",  # OpenSSL, ~5 ms to load: the digests are Python's own (compactctl.digests)
    "compactctl.cli.app",
    "compactctl.cli.help",
    "compactctl.cli.plain_values",
)


def loaded_by(argv: list[str]) -> list[str]:
    code = (
        "import sys\n"
        f"sys.argv = {['compactctl', *argv]!r}\n"
        "from compactctl.cli.main import main\n"
        "try:\n"
        "    main()\n"
        "except SystemExit as stop:\n"
        "    print('EXIT', stop.code)\n"
        "print('LOADED', sorted(sys.modules))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    exit_line, loaded_line = result.stdout.splitlines()[-2:]
    assert exit_line == "EXIT 0", result.stderr
    return eval(loaded_line.removeprefix("LOADED "))


def test_a_plain_compact_of_a_claude_code_session_loads_no_typer_rich_nor_a_pool(tmp_path):
    source = Path(__file__).parent / "formats" / "data" / "claude-code.jsonl"
    loaded = loaded_by(["compact", str(source), "-o", str(tmp_path / "out.jsonl"), "-q"])
    unwanted = [m for m in loaded if any(m == name or m.startswith(name + ".") for name in NOT_FOR_A_PLAIN_COMPACT)]
    assert unwanted == []
    assert "compactctl.formats.claude_code" in loaded  # it did read the session


def test_a_line_click_must_read_still_loads_it(tmp_path):
    source = Path(__file__).parent / "formats" / "data" / "claude-code.jsonl"
    loaded = loaded_by(["compact", str(source), "--output", str(tmp_path / "out.jsonl"), "--quiet", "--jobs=1"])
    assert "compactctl.cli.direct" in loaded and "typer" not in loaded  # --jobs=1 is plain: read directly
    loaded = loaded_by(["compact", str(source), "-o", str(tmp_path / "out.jsonl"), "-qj", "1"])
    assert "typer" in loaded  # a cluster of short flags goes to Click
