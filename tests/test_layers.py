"""The layers hold: every module imports only its own layer and the ones below it.

Values at the bottom, then the pure parts, the pure pipelines, the library API, the one
I/O layer, the CLI on top. Imports inside functions and under ``TYPE_CHECKING`` count too:
a lazy import is still a dependency. A new module must be given a layer here.
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Iterable, Iterator
from pathlib import Path

import pytest

from tests.conftest import ROOT

PACKAGE = ROOT / "compactctl"

# Low to high; a module's layer is that of its first dotted name below ``compactctl``.
LAYERS: list[tuple[str, set[str]]] = [
    (
        "values",
        {
            "errors",
            "transcript",
            "facts",
            "tokens",
            "encodings",
            "usage",
            "settings",
            "jsonbytes",
            "interrupts",
            "userdirs",
            "lazyre",
            "pattern_cache",
            "build_cache",
            "dataclass_code",
            "startup_gc",
            "message_memo",
            "digests",
        },
    ),
    ("parts", {"formats", "strategies", "summarizers", "recorded"}),
    ("pipelines", {"compaction", "model_input", "reporting", "replay", "calibration", "evaluate", "review", "walked"}),
    ("library", {""}),  # compactctl/__init__.py: the functions a library caller uses
    ("io", {"files", "config", "ray_engine", "forks", "progress", "ci", "sessions"}),
    ("cli", {"cli", "__main__"}),
]
RANK = {top: rank for rank, (_, tops) in enumerate(LAYERS) for top in tops}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def is_module(name: str) -> bool:
    path = ROOT.joinpath(*name.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def imported(source: str, package: str) -> Iterator[str]:
    """The compactctl modules a module's source imports (``from x import y`` counts x.y when y is a module)."""
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names if alias.name.split(".")[0] == "compactctl")
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative: resolved against the importing package
                base = ".".join([*package.split(".")[: len(package.split(".")) - node.level + 1], base]).rstrip(".")
            if base.split(".")[0] != "compactctl":
                continue
            for alias in node.names:
                yield f"{base}.{alias.name}" if is_module(f"{base}.{alias.name}") else base


def layer_of(module: str) -> int:
    parts = module.split(".")
    top = parts[1] if len(parts) > 1 else ""
    if top not in RANK:
        raise KeyError(f"{module} has no layer: add it to LAYERS in tests/test_layers.py")
    return RANK[top]


def violations(graph: Iterable[tuple[str, str]]) -> list[str]:
    """``importer -> imported`` pairs that run upward."""
    return [
        f"{importer} ({LAYERS[layer_of(importer)][0]}) imports {target} ({LAYERS[layer_of(target)][0]})"
        for importer, target in graph
        if layer_of(target) > layer_of(importer)
    ]


@functools.cache  # one walk of the package's sources for every test here
def import_graph() -> list[tuple[str, str]]:
    graph = []
    for path in sorted(PACKAGE.rglob("*.py")):
        name = module_name(path)
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        graph += [(name, target) for target in imported(path.read_text(encoding="utf-8"), package) if target != name]
    return graph


def test_no_import_runs_upward():
    graph = import_graph()
    assert len(graph) > 100  # the walk found the package's imports
    assert violations(graph) == []


def test_every_module_has_a_layer():
    for path in PACKAGE.rglob("*.py"):
        layer_of(module_name(path))


MAX_MODULE_LINES = 500  # outside formats/, whose readers are one module per format however long


def modules_over(limit: int) -> dict[str, int]:
    counts = {module_name(path): len(path.read_text(encoding="utf-8").splitlines()) for path in PACKAGE.rglob("*.py")}
    return {name: n for name, n in counts.items() if n > limit and not name.startswith("compactctl.formats")}


def test_no_module_outside_formats_is_over_500_lines():
    assert modules_over(MAX_MODULE_LINES) == {}
    assert modules_over(100)  # the count sees the package's modules


def test_only_the_cli_imports_the_cli_and_nothing_below_files_imports_it():
    graph = import_graph()
    into_cli = {importer for importer, target in graph if target.startswith("compactctl.cli")}
    assert into_cli <= {m for m, _ in graph if m.startswith("compactctl.cli")} | {"compactctl.__main__"}
    into_files = {importer for importer, target in graph if target.startswith("compactctl.files")}
    assert all(layer_of(importer) >= layer_of("compactctl.files") for importer in into_files)
    assert "compactctl.cli.compact" in into_files  # the check sees the real importers


def test_a_command_s_job_shares_only_files_io_with_the_other_jobs():
    """``files/<command>.py`` is one command's per-file job: it may use the shared ``files.io`` (and the batch
    runner ``files.jobs``), never another job, so each job reads on its own and a new command is one module
    beside the others."""
    graph = import_graph()
    shared = {"compactctl.files.io", "compactctl.files.jobs"}
    jobs = {m for m, _ in graph if m.startswith("compactctl.files.") and m not in shared}
    assert {"compactctl.files.compact", "compactctl.files.replay", "compactctl.files.report"} <= jobs
    across = [(m, t) for m, t in graph if m in jobs and t.startswith("compactctl.files") and t not in shared]
    assert across == []
    assert not [t for m, t in graph if m == "compactctl.files.io" and t.startswith("compactctl.files.")]
    assert {t for m, t in graph if m == "compactctl.files.jobs" and t.startswith("compactctl.files.")} == {
        "compactctl.files.io"
    }


@pytest.mark.parametrize(
    "source, package, expected",
    [
        ("from compactctl.files import read_source", "compactctl", ["compactctl.files"]),
        ("from compactctl.strategies import prune", "compactctl", ["compactctl.strategies.prune"]),
        ("def later():\n    import compactctl.cli.main", "compactctl", ["compactctl.cli.main"]),
        ("from . import records", "compactctl.formats", ["compactctl.formats.records"]),
        ("from .records import listed", "compactctl.formats", ["compactctl.formats.records"]),
        ("import orjson", "compactctl", []),
    ],
)
def test_imports_are_found_wherever_they_are_written(source, package, expected):
    assert list(imported(source, package)) == expected


def test_an_upward_import_is_reported():
    graph = [("compactctl.reporting", "compactctl.files"), ("compactctl.files", "compactctl.reporting")]
    assert violations(graph) == ["compactctl.reporting (pipelines) imports compactctl.files (io)"]
    assert violations([("compactctl.strategies.window", "compactctl.cli.common")])
