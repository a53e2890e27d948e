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
