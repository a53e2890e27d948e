"""The command, run as the program, ends without the interpreter's tear-down, and with everything a
normal end does: the same output, exit code, exit functions and flushed streams (``cli.quick_exit``)."""

import os
import subprocess
import sys
from pathlib import Path

from tests.conftest import SAMPLES

ROOT = Path(__file__).resolve().parents[2]
# An object of the script's own that says so when the interpreter frees it at its finalization.
FINALIZED = (
    "import atexit, sys\n"
    "class Said:\n"
    "    def __del__(self):\n"
    "        sys.stderr.write('finalized\\n')\n"
    "kept = Said()\n"
    "atexit.register(lambda: sys.stderr.write('exit function ran\\n'))\n"
)


def _env(tmp_path: Path) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT), "COMPACTCTL_BUILD_CACHE": str(tmp_path / "build")}


def _script(tmp_path: Path, name: str, after: str = "") -> Path:
    # What pip writes for the console script, named as it is, with the object above.
    script = tmp_path / name
    script.write_text(FINALIZED + "from compactctl.cli.main import main\n" + "sys.exit(main())\n" + after)
    return script


def test_the_console_script_ends_without_finalization_after_its_exit_functions(tmp_path):
    target = tmp_path / "out.jsonl"
    words = ["compact", str(SAMPLES / "support-fr.jsonl"), "-o", str(target), "--json"]
    done = subprocess.run(
        [sys.executable, str(_script(tmp_path, "compactctl")), *words],
        capture_output=True,
        text=True,
        env=_env(tmp_path),
    )
    assert done.returncode == 0, done.stderr
    assert "exit function ran" in done.stderr and "finalized" not in done.stderr
    assert done.stdout.rstrip().endswith("}") and target.exists()  # all of stdout there, flushed
    assert list((tmp_path / "build").iterdir())  # the build cache was written at exit, as before
    # The same line run by another program that goes on after main(): the interpreter's own end.
    other = subprocess.run(
        [sys.executable, str(_script(tmp_path, "other-tool")), *words],
        capture_output=True,
        text=True,
        env=_env(tmp_path),
    )
    assert other.returncode == 0 and "finalized" in other.stderr
    assert other.stdout == done.stdout


def test_an_exit_code_that_is_not_zero_is_kept(tmp_path):
    words = ["compact", str(SAMPLES / "support-fr.jsonl"), "-o", str(tmp_path / "o.jsonl"), "-q"]
    for gate in (["--fail-under", "99"], []):
        done = subprocess.run(
            [sys.executable, str(_script(tmp_path, "compactctl")), *words, *gate],
            capture_output=True,
            text=True,
            env=_env(tmp_path),
        )
        assert done.returncode == (1 if gate else 0), done.stderr
        assert "finalized" not in done.stderr


def test_a_thread_still_running_or_a_text_code_gets_the_interpreters_end(tmp_path):
    code = (
        FINALIZED + "import threading, time\n"
        "from compactctl.cli import quick_exit\n"
        "if sys.argv[1] == 'thread':\n"
        "    threading.Thread(target=time.sleep, args=(0.3,)).start()\n"
        "    quick_exit.end_now(0)\n"
        "    sys.stderr.write('returned\\n')\n"
        "else:\n"
        "    quick_exit.end_now('a message')\n"
        "    sys.stderr.write('returned\\n')\n"
        "    quick_exit.end_now(7)\n"
    )
    thread = subprocess.run([sys.executable, "-c", code, "thread"], capture_output=True, text=True, env=_env(tmp_path))
    assert thread.returncode == 0
    assert thread.stderr.splitlines() == ["returned", "exit function ran", "finalized"]
    text = subprocess.run([sys.executable, "-c", code, "text"], capture_output=True, text=True, env=_env(tmp_path))
    assert text.returncode == 7
    assert text.stderr.splitlines() == ["returned", "exit function ran"]


def test_python_dash_m_and_the_console_script_are_the_program_and_nothing_else(monkeypatch, tmp_path):
    import importlib.machinery
    import types

    from compactctl.cli import quick_exit
    from compactctl.cli.main import main

    def entry(spec_name=None, file=None, has_main=True):
        module = types.ModuleType("__main__")
        module.__spec__ = importlib.machinery.ModuleSpec(spec_name, None) if spec_name else None
        if file is not None:
            module.__file__ = file
        if has_main:
            module.main = main
        return module

    for module, expected in (
        (entry("compactctl.__main__", has_main=False), True),  # python -m compactctl
        (entry(file="/venv/bin/compactctl"), True),  # the console script
        (entry(file="C:/venv/Scripts/compactctl-script.py"), True),
        (entry(), False),  # python -c "from compactctl.cli.main import main; main(); ..."
        (entry(file="/home/me/tool.py"), False),  # a program of its own that calls main()
        (entry(file="/venv/bin/compactctl", has_main=False), False),
        (entry("pytest.__main__"), False),
    ):
        monkeypatch.setitem(sys.modules, "__main__", module)
        assert quick_exit.runs_the_process(main) is expected, module
