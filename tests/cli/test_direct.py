"""``cli.direct`` reads a plain line into what Click would pass, word for word, and leaves every other line to Click."""

import functools
import importlib
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from compactctl.cli import direct
from compactctl.cli.main import build_command
from tests.conftest import SAMPLES

PLAIN = {
    "compact": [
        ["a.jsonl", "-o", "out.jsonl", "-q"],
        ["a.jsonl", "--json"],
        ["a.jsonl", "-o", "-"],
        ["-", "-o", "-", "--json", "-q"],
        ["-s", "window", "-s", "trim-tools", "a.jsonl", "--keep-recent", "4"],
        ["a.jsonl", "b.jsonl", "--to", "chat", "--output", "folder"],
        ["a.jsonl", "--redact", "--cache-dir", "c"],
        ["a.jsonl", "--no-redact", "--no-cache"],
        ["a.jsonl", "--summary-ratio", "0.5", "--threshold=100"],
        ["a.jsonl", "--require", "CMD-1", "--require", "CMD-2", "--strict-facts"],
        ["a.jsonl", "--manifest", "m.jsonl", "--config", "c.toml", "--jobs", "2"],
        ["a.jsonl", "-j", "0", "--engine", "processes"],
        ["--session", "latest", "--client", "codex", "--slim", "--force", "--context-window", "200000"],
        ["a.jsonl", "--summary-role", "", "-f", "claude-code", "--fail-under", "12.5"],
    ],
    "prune": [
        ["a.jsonl", "-o", "out.jsonl", "-q", "--jobs", "1", "--mode", "drop"],
        ["a.jsonl", "--explain", "--archive", "a.out.jsonl", "--manifest", "m.jsonl"],
        ["a.jsonl", "--require", "x", "--json"],
    ],
}
# Lines Click reads itself: help, bad or odd values, unknown flags, forms this reader does not take.
NOT_PLAIN = [
    ["a.jsonl", "--help"],
    ["a.jsonl", "-j", "-1"],
    ["a.jsonl", "--jobs", "x"],
    ["a.jsonl", "--jobs", "1.5"],
    ["a.jsonl", "--keep-recent", "-1"],
    ["a.jsonl", "--json=1"],
    ["a.jsonl", "--", "-x"],
    ["a.jsonl", "--no-such-flag"],
    ["a.jsonl", "-qo", "x"],
    ["a.jsonl", "-oout.jsonl"],
    ["a.jsonl", "--jobs", "1", "--jobs", "2"],
    ["a.jsonl", "--redact", "--no-redact"],
    ["a.jsonl", "-o"],
    ["a.jsonl", "-o", "--json"],
]


def clicks_arguments(command: str, words: list[str], monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """What Click's command passes to the command's function for ``words``."""
    module = importlib.import_module(f"compactctl.cli.{command}")
    got: dict[str, Any] = {}
    original = getattr(module, command)
    monkeypatch.setattr(module, command, functools.wraps(original)(lambda **given: got.update(given)))
    build_command(command).main(words, standalone_mode=False)
    return got


def direct_arguments(command: str, words: list[str]) -> dict[str, Any] | None:
    module = importlib.import_module(f"compactctl.cli.{command}")
    line = direct.line_of(getattr(module, command), module.declared_settings())
    assert line is not None
    return direct.read(words, line)


@pytest.mark.parametrize(("command", "words"), [(c, w) for c, lines in PLAIN.items() for w in lines])
def test_a_plain_line_gives_what_click_gives(command, words, monkeypatch):
    assert direct_arguments(command, words) == clicks_arguments(command, words, monkeypatch)


@pytest.mark.parametrize("command", direct.COMMANDS)
@pytest.mark.parametrize("words", NOT_PLAIN)
def test_any_other_line_is_left_to_click(command, words):
    assert direct_arguments(command, words) is None


@pytest.mark.parametrize("command", direct.COMMANDS)
def test_every_flag_click_knows_is_read_the_same_way(command):
    module = importlib.import_module(f"compactctl.cli.{command}")
    line = direct.line_of(getattr(module, command), module.declared_settings())
    assert line is not None
    clicks = build_command(command)
    spelled = set()
    for param in clicks.params:
        if param.param_type_name == "argument":
            assert line.positional == param.name
            continue
        for word in param.opts:
            flag = line.flags[word]
            assert (flag.name, flag.kind is bool, flag.many, flag.value) == (
                param.name,
                param.is_flag,
                param.multiple,
                True,
            )
            spelled.add(word)
        for word in param.secondary_opts:
            assert line.flags[word].value is False and line.flags[word].name == param.name
            spelled.add(word)
    assert spelled == set(line.flags)  # and no flag Click would not know
    assert set(line.defaults) == {param.name for param in clicks.params}


def test_a_parameter_declared_for_typer_alone_leaves_every_line_to_click():
    from typing import Annotated

    import typer

    def command(quiet: Annotated[bool, typer.Option("--quiet")] = False) -> None: ...

    assert direct.line_of(command, {}) is None


def test_a_plain_compact_of_a_claude_code_session_writes_what_click_writes(tmp_path):
    source = Path(__file__).parent.parent / "formats" / "data" / "claude-code.jsonl"
    runs = {}
    for way, code in (
        ("direct", "from compactctl.cli.main import main\nmain()"),
        ("click", "from compactctl.cli.app import app\napp()"),
    ):
        target = tmp_path / f"{way}.jsonl"
        words = ["compact", str(source), "-o", str(target), "--json", "-q"]
        done = subprocess.run([sys.executable, "-c", code, *words], capture_output=True, text=True)
        runs[way] = (done.returncode, done.stdout.replace(str(target), "OUT"), done.stderr, target.read_bytes())
    assert runs["direct"] == runs["click"]
    assert runs["direct"][0] == 0


@pytest.mark.parametrize("words", [["prune", str(SAMPLES / "support-fr.jsonl"), "-o", "-", "-j", "-1"]])
def test_a_usage_error_is_still_clicks(words):
    done = subprocess.run([sys.executable, "-m", "compactctl", *words], capture_output=True, text=True)
    assert done.returncode == 2 and "Invalid value" in done.stderr


@pytest.mark.parametrize(
    "extra",
    [
        ["-o", "OUT", "--fail-under", "99", "-q"],  # a gate fails: exit 1, said on stderr
        ["-o", "-"],  # the data itself on stdout: all of it there at exit
        ["-o", "OUT", "--json"],
    ],
)
def test_the_direct_line_ends_as_click_does(tmp_path, extra):
    source = Path(__file__).parent.parent / "formats" / "data" / "claude-code.jsonl"
    runs = {}
    for way, code in (
        ("direct", "from compactctl.cli.main import main\nmain()"),
        ("click", "from compactctl.cli.app import app\napp()"),
    ):
        target = str(tmp_path / f"{way}.jsonl")
        words = ["compact", str(source), *(target if word == "OUT" else word for word in extra)]
        done = subprocess.run([sys.executable, "-c", code, *words], capture_output=True, text=True)
        runs[way] = (done.returncode, done.stdout.replace(target, "OUT"), done.stderr.replace(target, "OUT"))
    assert runs["direct"] == runs["click"]
    assert runs["direct"][0] == (1 if "--fail-under" in extra else 0)


def _inspected(command: Any) -> list[tuple[str, Any, Any]]:
    import inspect

    return [
        (p.name, direct.NO_DEFAULT if p.default is p.empty else p.default, p.annotation)
        for p in inspect.signature(command, eval_str=True).parameters.values()
        if p.kind is not p.VAR_KEYWORD
    ]


def _shapes(a: int, /, b: str = "b", *rest: float, c: Path | None = None, d: int, **more: Any) -> None: ...


def _bare(a, b=2, *, c=3): ...  # type: ignore[no-untyped-def]


@functools.wraps(_shapes)
def _wrapping(*args: Any, **kwargs: Any) -> None: ...


@pytest.mark.parametrize("name", ["compact", "prune"])
def test_a_commands_parameters_are_the_ones_inspect_reads(name):
    command = getattr(importlib.import_module(f"compactctl.cli.{name}"), name)
    read = direct.parameters(command)
    assert [(n, d) for n, d, _ in read] == [(n, d) for n, d, _ in _inspected(command)]
    assert [a for *_, a in read] == [a for *_, a in _inspected(command)]  # Annotated[...] compares by value


@pytest.mark.parametrize("function", [_shapes, _bare, _wrapping, functools.partial(_shapes, 1)])
def test_every_kind_of_parameter_is_read_as_inspect_reads_it(function):
    read = direct.parameters(function)
    expected = _inspected(function)
    assert [(n, d) for n, d, _ in read] == [(n, d) for n, d, _ in expected]
    assert [a if a is not direct._NO_ANNOTATION else None for *_, a in read] == [
        None if a is inspect_empty() else a for *_, a in expected
    ]


def inspect_empty() -> Any:
    import inspect

    return inspect.Parameter.empty


@pytest.mark.parametrize("name", ["claude-code.jsonl", "codex.jsonl", "responses.jsonl"])
def test_a_plain_compact_loads_neither_inspect_nor_what_it_imports(tmp_path, name):
    source = Path(__file__).parent.parent / "formats" / "data" / name
    code = (
        "import sys\n"
        "from compactctl.cli.main import main\n"
        "try:\n"
        "    main()\n"
        "except SystemExit:\n"
        "    pass\n"
        "import types\n"
        "print('INSPECT', type(sys.modules['inspect']) is types.ModuleType)\n"
        "print('LOADED', sorted(set(sys.modules) & {'ast', 'dis', 'tokenize', 'compactctl.formats.unknown',\n"
        "    'compactctl.walked'}))\n"
    )
    words = ["compact", str(source), "-o", str(tmp_path / "out.jsonl"), "-q"]
    done = subprocess.run([sys.executable, "-c", code, *words], capture_output=True, text=True, check=True)
    assert done.stdout.splitlines()[-2:] == ["INSPECT False", "LOADED []"]


def test_every_dataclass_of_the_formats_has_its_own_docstring():
    # Without one, dataclasses makes it from the class's signature, and inspect is loaded to make it.
    import dataclasses
    import pkgutil

    import compactctl.formats

    for module in pkgutil.iter_modules(compactctl.formats.__path__, "compactctl.formats."):
        for value in vars(importlib.import_module(module.name)).values():
            if isinstance(value, type) and dataclasses.is_dataclass(value) and value.__module__ == module.name:
                assert "__doc__" in vars(value) and not value.__doc__.startswith(f"{value.__name__}("), value
