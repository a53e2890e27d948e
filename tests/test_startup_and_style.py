"""The installed console script, start-up cost, and lint: checks on the project as shipped."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT, SAMPLES


def test_cli_import_does_not_pull_in_openai():
    code = "import sys, compactctl, compactctl.cli.main; print('openai' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "False"


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


@pytest.mark.parametrize("args", [["check", "."], ["format", "--check", "."]])
def test_ruff_is_clean(args):
    result = subprocess.run([sys.executable, "-m", "ruff", *args], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def test_types_check():
    result = subprocess.run([sys.executable, "-m", "mypy", "compactctl"], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
