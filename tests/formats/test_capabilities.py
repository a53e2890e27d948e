"""What a format can do is a field of its ``Format``, declared in its own module: a new format is
one module and one registry line, and no job asks a format's name what it can do."""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path
from types import ModuleType

from compactctl.formats import _DECLARED, _FUNCTIONS, FORMATS, SUFFIXES, Format, many_per_file

PACKAGE = Path(__file__).resolve().parents[2] / "compactctl"


def test_format_of_reads_every_capability_its_module_declares():
    module = ModuleType("compactctl.formats.example")
    module.NAME = "example"
    module.detect, module.read, module.write = (lambda records: False), (lambda r, p: []), (lambda t: b"")
    declared = {
        "WRITES": False,
        "MANY_PER_FILE": True,
        "LINE_RECORDS": True,
        "ONE_PER_LINE": True,
        "OPENS_ON_USER": True,
        "SUFFIXES": (".example",),
        "CARRIED_PARTS": {"user": frozenset({"example_block"})},
        "CARRIES_USAGE": True,
    }
    functions = {name: (lambda *given, name=name: name) for name in _FUNCTIONS}
    for name, value in {**declared, **functions}.items():
        setattr(module, name, value)
    fmt = Format.of(module)
    assert {name: getattr(fmt, name.lower()) for name in declared} == declared
    assert {name: getattr(fmt, name) for name in _FUNCTIONS} == functions
    # Every capability the dataclass has is one Format.of reads: none can be added and left unread.
    fields = {f.name for f in dataclasses.fields(Format)} - {"name", "detect", "read", "write"}
    assert fields == set(_DECLARED) | set(_FUNCTIONS)


def test_a_module_that_declares_nothing_gets_the_defaults():
    module = ModuleType("compactctl.formats.plain")
    module.NAME, module.detect, module.read, module.write = "plain", None, None, None
    fmt = Format.of(module)
    assert (fmt.writes, fmt.many_per_file, fmt.suffixes, fmt.walk, fmt.violations) == (
        True,
        False,
        (".jsonl", ".json"),
        None,
        None,
    )


def test_the_registered_formats_say_what_they_can_do():
    assert [name for name, fmt in FORMATS.items() if not fmt.writes] == ["otel"]
    assert many_per_file() == ["agents-sqlite", "dataset", "tau-bench"]
    assert SUFFIXES == (".jsonl", ".json", ".traj", ".ndjson")  # a folder input's files, as before
    assert [name for name, fmt in FORMATS.items() if fmt.walk is not None] == ["chat"]
    assert [name for name, fmt in FORMATS.items() if fmt.one_per_line] == ["dataset"]
    assert [name for name, fmt in FORMATS.items() if fmt.opens_on_user] == ["claude-code", "anthropic"]
    assert [name for name, fmt in FORMATS.items() if fmt.summary_opens_on_user] == ["codex", "claude-code"]
    assert sorted(name for name, fmt in FORMATS.items() if fmt.violations) == ["anthropic", "responses"]


def test_a_format_that_carries_usage_has_a_producer_that_reads_it():
    from compactctl.recorded import producers

    carrying = {name for name, fmt in FORMATS.items() if fmt.carries_usage}
    assert carrying == set(producers()) == {"claude-code", "codex", "gemini"}


def _named_in_conditions(path: Path) -> list[str]:
    """Where a module compares with a format's name (``fmt.name == "codex"``, ``x in (chat.NAME, ...)``)."""
    names = set(FORMATS)
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if not isinstance(node, ast.Compare):
            continue
        for part in ast.walk(node):
            literal = isinstance(part, ast.Constant) and part.value in names
            if literal or (isinstance(part, ast.Attribute) and part.attr == "NAME"):
                found.append(f"{path.relative_to(PACKAGE)}:{node.lineno}")
    return found


def test_no_job_and_no_command_asks_a_format_by_name():
    modules = [*sorted((PACKAGE / "files").glob("*.py")), *sorted((PACKAGE / "cli").glob("*.py"))]
    assert len(modules) > 20  # the check reads the jobs and the commands
    assert [where for path in modules for where in _named_in_conditions(path)] == []
    # It sees one where there is one.
    sample = PACKAGE / "formats" / "__init__.py"
    assert _named_in_conditions(sample), "formats/__init__.py compares names (``format != 'auto'``...)"
