"""No command accepts a flag it ignores.

Every setting in a command's ``--help`` is a field of a group the command takes (``takes()`` in
``cli/<command>.py``), every field of those groups is in its help, and each one is read: the
command is run with every strategy and the summarizers its settings need, and the reads of the
option dataclasses' fields are counted (a check on construction is not a read). A flag given
where the other settings make it idle is a usage error naming what it needs.
"""

from __future__ import annotations

import importlib
import re
import sys
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from compactctl.cli import main
from compactctl.cli.main import SUMMARIES, app
from compactctl.cli.params import Param, to_typer
from compactctl.errors import EXIT_INPUT, EXIT_OK
from compactctl.settings import Options, fields_of
from compactctl.strategies import STRATEGIES
from tests.conftest import ROOT

SAMPLE = ROOT / "samples" / "coding-agent.jsonl"
CLAUDE_CODE = ROOT / "tests" / "formats" / "data" / "claude-code.jsonl"
PACKAGE = str(ROOT / "compactctl")
EVERY_STEP = [arg for name in STRATEGIES for arg in ("-s", name)]
runner = CliRunner()


def help_flags(command: str) -> set[str]:
    """The flags that start an option's row (not those its help text mentions)."""
    text = runner.invoke(app, [command, "--help"], env={"COLUMNS": "400"}).stdout
    rows = re.findall(r"^│ \*?(?:-[a-zA-Z], )?(--[a-z][a-z-]*)(?:/(--[a-z][a-z-]*))?", text, re.M)
    return {flag for row in rows for flag in row if flag.startswith("--")}


def own_flags(command: str) -> set[str]:
    """The flags a command declares itself (-o, --json, --config...), not from a settings group."""
    import inspect

    module = importlib.import_module(f"compactctl.cli.{command}")
    flags = {"--help"}
    for parameter in inspect.signature(getattr(module, command), eval_str=True).parameters.values():
        for meta in getattr(parameter.annotation, "__metadata__", ()):
            if isinstance(meta, Param):  # declared without Typer (cli.params): the Typer object it stands for
                meta = to_typer(meta)
            if isinstance(meta, typer.models.ArgumentInfo):
                continue
            names = [meta.default, *(meta.param_decls or ())]
            names = [n for n in names if isinstance(n, str) and n.startswith("-")]
            flags |= {n for n in names or [f"--{parameter.name.replace('_', '-')}"] if n.startswith("--")}
    return flags


def setting_flags(command: str) -> dict[str, str]:
    """Flag -> setting name, for the settings of the groups the command takes."""
    module = importlib.import_module(f"compactctl.cli.{command}")
    flags = {}
    for name, declared in module.declared_settings().items():
        for flag in declared.flags:
            for form in flag.split("/"):
                if form.startswith("--"):
                    flags[form] = name
    return flags


NAMES = list(SUMMARIES)


@pytest.mark.parametrize("command", NAMES)
def test_a_command_s_help_lists_exactly_its_groups_settings_and_its_own_flags(command):
    shown = help_flags(command)
    expected = set(setting_flags(command)) | own_flags(command)
    assert shown == expected


def test_a_flag_of_a_group_a_command_does_not_take_is_a_usage_error():
    for args in (["report", str(SAMPLE), "--in-place"], ["replay", str(SAMPLE), "--engine", "ray"],
                 ["eval", str(SAMPLE), str(SAMPLE), "--claude-tokens", "ctok"]):  # fmt: skip
        result = runner.invoke(app, args)
        assert result.exit_code == 2 and "No such option" in result.stderr, args


@pytest.mark.parametrize(
    "args, message",
    [
        (
            ["-s", "window", "--keep-turns", "3"],
            "--keep-turns has no effect here: it is read with --strategy structured",
        ),
        (["--prompt-file", "p.txt"], "the extractive summarizer reads no prompt (it fills its sections from"),
        (["-s", "window", "--mode", "drop"], "--mode has no effect here: it is read with --strategy prune"),
        (["-s", "prune", "--threshold", "5"], "--threshold has no effect here: it is read with --strategy summary or"),
        (["--model", "gpt-4o"], "--model has no effect here: it is read with --summarizer openai"),
    ],
)
def test_a_flag_the_other_settings_make_idle_is_a_usage_error_naming_what_it_needs(args, message, tmp_path):
    result = runner.invoke(app, ["compact", str(SAMPLE), "-o", str(tmp_path / "o.jsonl"), *args])
    assert result.exit_code == EXIT_INPUT
    assert message in result.stderr


def test_a_flag_is_accepted_where_something_reads_it(tmp_path):
    out = str(tmp_path / "o.jsonl")
    for args in (["-s", "structured", "--keep-turns", "3"], ["-s", "window", "-s", "structured", "--keep-turns", "3"],
                 ["--keep-turns", "3"], ["-s", "prune", "--mode", "drop"]):  # fmt: skip
        result = runner.invoke(app, ["compact", str(SAMPLE), "-o", out, "-q", *args])
        assert result.exit_code == EXIT_OK, (args, result.output)
    judge = runner.invoke(app, ["eval", str(SAMPLE), str(SAMPLE), "--base-url", "http://127.0.0.1:9/v1", "-q"])
    assert judge.exit_code == EXIT_INPUT and "--base-url has no effect here: it is read with --judge openai" in (
        judge.stderr
    )


def test_a_config_file_may_hold_settings_this_run_does_not_read(tmp_path):
    """A team's compactctl.toml serves every command: only flags are held to what the run reads."""
    config = tmp_path / "c.toml"
    config.write_text('keep-turns = 3\nmodel = "gpt-4o"\nsession = "x"\n')
    args = ["compact", str(SAMPLE), "-s", "window", "--config", str(config), "-o", str(tmp_path / "o.jsonl"), "-q"]
    assert runner.invoke(app, args).exit_code == EXIT_OK


@pytest.fixture
def reads(monkeypatch):
    """The names of option fields the package reads while a command runs."""
    seen: set[str] = set()

    def tracked(self, name):
        value = object.__getattribute__(self, name)
        if not name.startswith("_") and name in {f.name for f, *_ in fields_of(type(self))}:
            caller = sys._getframe(1).f_code.co_filename
            if caller.startswith(PACKAGE) and not caller.endswith("settings.py"):
                seen.add(name)
        return value

    monkeypatch.setattr(Options, "__getattribute__", tracked, raising=False)
    return seen


def database(tmp_path: Path) -> Path:
    out = tmp_path / "app.db"
    made = runner.invoke(app, ["compact", str(SAMPLE), "--to", "agents-sqlite", "-o", str(out), "-s", "window", "-q"])
    assert made.exit_code == EXIT_OK, made.output
    return out


def runs(command: str, tmp_path: Path, server_url: str) -> list[list[str]]:
    """Runs of ``command`` that between them reach every setting it takes."""
    openai = [
        "--summarizer",
        "openai",
        "--base-url",
        server_url,
        "--cache-dir",
        str(tmp_path / "cache"),
        "--summary-backoff",
        "0.01",
    ]
    out = str(tmp_path / "out.jsonl")
    if command == "compact":
        return [
            [
                "compact",
                str(SAMPLE),
                *EVERY_STEP,
                "--threshold",
                "0",
                *openai,
                "--dry-run",
                "-o",
                out,
                "--strict-facts",
            ],
            ["compact", str(database(tmp_path)), "--session", "session-1", "--in-place", "-s", "window"],
            ["compact", str(CLAUDE_CODE), "-s", "clear-thinking", "-o", str(tmp_path / "cc.jsonl")],
        ]
    if command == "prune":
        return [["prune", str(SAMPLE), "-o", out, "--strict-facts"], ["prune", str(database(tmp_path)), "-o", out]]
    if command == "report":
        return [["report", str(CLAUDE_CODE), str(CLAUDE_CODE), "--strict-facts"]]
    if command == "replay":
        return [
            ["replay", str(SAMPLE), *EVERY_STEP, "-t", "500", "--stage-marker", "done"],
            ["replay", str(SAMPLE), "-s", "summary", "-t", "100000000", *openai],
            ["replay", str(CLAUDE_CODE), "-s", "clear-thinking", "-t", "1000"],
            ["replay", str(SAMPLE), "--plot", "chart.nope"],  # refused, once read
        ]
    if command == "eval":
        return [["eval", str(SAMPLE), str(SAMPLE), "--judge", "openai", "--base-url", server_url]]
    if command == "review":
        return [
            ["review", str(SAMPLE), *EVERY_STEP, "--threshold", "0", *openai, "-o", str(tmp_path / "r.html")],
            ["review", str(CLAUDE_CODE), "-s", "clear-thinking", "-o", str(tmp_path / "cc.html")],
            ["review", str(SAMPLE), "-s", "window", "--judge", "openai", "--base-url", server_url, "-o", "j.html"],
        ]
    if command == "sessions":
        return []  # it takes no settings
    raise AssertionError(f"no runs for {command}: add them here")


# eval's runs (a judge on the loopback server for each setting) take 1.3 s of CPU: slow.
@pytest.mark.parametrize("command", [pytest.param(n, marks=pytest.mark.slow) if n == "eval" else n for n in NAMES])
def test_every_setting_a_command_takes_is_read(command, reads, tmp_path, openai_server, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for args in runs(command, tmp_path, openai_server.url):
        runner.invoke(main.app, [*args, "-q"] if command != "eval" else args)
    module = importlib.import_module(f"compactctl.cli.{command}")
    unread = sorted(set(module.declared_settings()) - reads)
    assert unread == []


@pytest.mark.parametrize(
    "command, flag",
    [(command, flag) for command in ("compact", "prune")
     for flag in (["--client", "codex"], ["--slim"], ["--force"], ["--context-window", "9000"])]
    + [("report", ["--client", "codex"])],
)  # fmt: skip
def test_a_session_flag_given_with_input_files_is_a_usage_error(command, flag, tmp_path):
    output = ["-o", str(tmp_path / "o.jsonl")] if command != "report" else []
    result = runner.invoke(app, [command, str(SAMPLE), *output, *flag])
    assert result.exit_code == EXIT_INPUT
    assert f"{flag[0]} has no effect here: it is read with --session ID and no input files" in result.stderr


@pytest.mark.parametrize("command", NAMES)
def test_every_option_a_command_declares_itself_is_read_by_it(command):
    """Its own options (-o, --json, --client...) are parameters of the command: each one is used."""
    import ast
    import inspect

    module = importlib.import_module(f"compactctl.cli.{command}")
    function = next(node for node in ast.parse(inspect.getsource(module)).body
                    if isinstance(node, ast.FunctionDef) and node.name == command)  # fmt: skip
    used = {node.id for node in ast.walk(function) if isinstance(node, ast.Name)}
    assert [a.arg for a in [*function.args.args, *function.args.kwonlyargs] if a.arg not in used] == []


@pytest.mark.parametrize(
    "command, args",
    [("compact", ["-s", "window"]), ("compact", []), ("prune", []), ("report", []), ("review", [])],
)
def test_session_on_a_file_that_holds_no_sessions_is_a_usage_error_not_ignored(command, args, tmp_path):
    """--session with input files picks a session inside an Agents SDK database; on a chat file it
    used to be dropped silently (every message compacted or reported, exit 0)."""
    output = {"report": [], "review": ["-o", str(tmp_path / "r.html")]}.get(command, ["-o", str(tmp_path / "o.jsonl")])
    result = runner.invoke(app, [command, str(SAMPLE), *output, "--session", "support-1", "-q", *args])
    assert result.exit_code == EXIT_INPUT, result.output
    assert "--session picks a session inside an Agents SDK database; this file reads as chat" in result.stderr
    assert not (tmp_path / "o.jsonl").exists() and not (tmp_path / "r.html").exists()
