"""What the command compiles once per machine (``build_cache``): a compiled pattern and a dataclass's
methods made from the cache are the ones ``re`` and ``dataclasses`` make without it."""

from __future__ import annotations

import dataclasses
import re
import subprocess
import sys
import typing
from dataclasses import InitVar
from pathlib import Path
from typing import ClassVar

import pytest

import compactctl
from compactctl import build_cache, dataclass_code, pattern_cache

ROOT = str(Path(compactctl.__file__).parent.parent)


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """A cache folder of the test's own, read afresh (as by a new process), written by the test."""
    monkeypatch.setenv(build_cache.BUILD_CACHE_ENV, str(tmp_path))
    monkeypatch.setattr(pattern_cache, "CACHE", build_cache.BuildCache("patterns", 2_000))
    monkeypatch.setattr(pattern_cache.CACHE, "_new", True)  # no write at exit
    return tmp_path


def _as_re_makes_it(pattern: re.Pattern, source, flags: int) -> None:
    expected = re.compile(source, flags)
    # Pattern equality is the source, the flags and the engine's code; the groups are compared apart.
    assert pattern == expected
    assert (pattern.groups, pattern.groupindex, pattern.flags) == (expected.groups, expected.groupindex, expected.flags)


def _fresh(code: str, cache_dir: Path | str) -> str:
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": ROOT, build_cache.BUILD_CACHE_ENV: str(cache_dir)}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    return done.stdout.splitlines()[-1]


# Every module of the package imported (in a fresh interpreter: importing them all here would build
# clients the test guard refuses).
IMPORT_ALL = """
import gc, importlib, pkgutil, re, sys
import compactctl
def import_all():
    for module in pkgutil.walk_packages(compactctl.__path__, "compactctl."):
        if module.name not in ("compactctl.__main__", "compactctl.ray_engine"):
            importlib.import_module(module.name)
"""

EVERY_PATTERN = (
    IMPORT_ALL
    + """
from compactctl import lazyre, pattern_cache
import_all()
found = {(o._source, o._given_flags) for o in gc.get_objects() if isinstance(o, lazyre._CompiledOnFirstUse)}
def same(source, flags):
    made, expected = pattern_cache.compiled(source, flags), re.compile(source, flags)
    return made == expected and (made.groups, made.groupindex, made.flags) == (
        expected.groups, expected.groupindex, expected.flags)
first = [p for p in found if not same(*p)]
pattern_cache.CACHE.write()
pattern_cache.CACHE.forget()
read = len(pattern_cache.CACHE.known())
second = [p for p in found if not same(*p)]
print("PATTERNS", len(found), read, first, second)
"""
)


@pytest.mark.slow  # every module imported in a fresh interpreter: about a second
def test_every_pattern_of_the_package_read_back_from_the_cache_is_the_one_re_compiles(tmp_path):
    _, count, read, first, second = _fresh(EVERY_PATTERN, tmp_path).split(" ", 4)
    assert int(count) > 100  # the redaction table, the ledger, the sections...
    assert int(read) == int(count)  # all of them written, all read back
    assert (first, second) == ("[]", "[]")


def test_named_groups_inline_flags_and_bytes_survive_the_cache(cache):
    cases = [(r"(?P<key>[a-z]+)=(?P<value>\d+)", 0), (r"(?i)secret", 0), (r"^x$", re.M), (rb"\x00(..)", re.S)]
    for source, flags in cases:
        pattern_cache.compiled(source, flags)
    pattern_cache.CACHE.write()
    pattern_cache.CACHE.forget()
    assert len(pattern_cache.CACHE.known()) == len(cases)
    for source, flags in cases:
        _as_re_makes_it(pattern_cache.compiled(source, flags), source, flags)
    found = pattern_cache.compiled(r"(?P<key>[a-z]+)=(?P<value>\d+)", 0).match("ab=12")
    assert found is not None and found.groupdict() == {"key": "ab", "value": "12"}


def test_a_file_changed_on_disk_is_not_trusted(cache):
    pattern_cache.compiled(r"a+b", 0)
    pattern_cache.CACHE.write()
    (path,) = cache.iterdir()
    assert build_cache.read(path) != {}
    blob = bytearray(path.read_bytes())
    blob[-3] ^= 0xFF  # one byte of the payload: the checksum no longer matches
    path.write_bytes(bytes(blob))
    assert build_cache.read(path) == {}
    path.write_bytes(bytes(blob[:40]))  # cut short
    assert build_cache.read(path) == {}


def test_an_entry_the_engine_refuses_is_compiled_as_re_does(cache):
    # A well-formed file holding code _sre rejects (another build's, say): the pattern is still right.
    pattern_cache.CACHE.known()[(r"a+b", 0)] = (32, b"\x01\x00\x00\x00\x02\x00\x00\x00", 0, {}, (None,))
    _as_re_makes_it(pattern_cache.compiled(r"a+b", 0), r"a+b", 0)


def test_off_reads_and_writes_nothing(tmp_path, monkeypatch):
    monkeypatch.setenv(build_cache.BUILD_CACHE_ENV, "off")
    monkeypatch.setattr(pattern_cache, "CACHE", build_cache.BuildCache("patterns", 2_000))
    monkeypatch.setattr(pattern_cache.CACHE, "_new", True)
    monkeypatch.chdir(tmp_path)
    _as_re_makes_it(pattern_cache.compiled(r"x(y)", 0), r"x(y)", 0)
    pattern_cache.CACHE.write()
    assert pattern_cache.CACHE.path() is None and list(tmp_path.iterdir()) == []


@pytest.mark.slow  # two fresh interpreters
def test_a_run_writes_the_cache_at_exit_and_the_next_reads_it(tmp_path):
    code = (
        "from compactctl import lazyre, pattern_cache\n"
        "before = len(pattern_cache.CACHE.known())\n"
        "p = lazyre.compile(r'(?P<n>\\d+) tests? passed')\n"
        "print(before, p.search('13 tests passed').group('n'))\n"
    )
    assert _fresh(code, tmp_path).split() == ["0", "13"]  # compiled here, then written at exit
    assert _fresh(code, tmp_path).split() == ["1", "13"]  # found in the file
    assert len(list(tmp_path.iterdir())) == 1


# Every dataclass of the package, each method dataclasses wrote for it as what defines it: its code
# object's parts, annotations and defaults. Built three ways: without the cache, with it cold, from it.
EVERY_DATACLASS = (
    IMPORT_ALL
    + """
import dataclasses, inspect
from compactctl import dataclass_code
if sys.argv[1] != "plain":
    dataclass_code.install()
before = len(dataclass_code.CACHE.known())
import_all()
def parts(code):
    consts = tuple(parts(c) if isinstance(c, type(parts.__code__)) else repr(c) for c in code.co_consts)
    return (code.co_code, consts, code.co_names, code.co_varnames, code.co_flags, code.co_filename,
            code.co_name, code.co_qualname, code.co_firstlineno, code.co_linetable)
def made(function):
    if function is None:  # __hash__ of a class with eq and not frozen
        return None
    function = inspect.unwrap(function)
    if not inspect.isfunction(function):  # a class's own, not dataclasses' (object.__setattr__)
        return repr(function)
    return (parts(function.__code__), repr(function.__annotations__), repr(function.__defaults__),
            repr(function.__kwdefaults__))
classes = {}
for name, module in sorted(sys.modules.items()):
    for value in list(vars(module).values()):
        if isinstance(value, type) and dataclasses.is_dataclass(value) and value.__module__ == name:
            methods = ("__init__", "__repr__", "__eq__", "__hash__", "__setattr__", "__delattr__")
            fields = [(f.name, f._field_type.name, f.kw_only, f.init) for f in value.__dataclass_fields__.values()]
            own = [made(vars(value)[m]) for m in methods if m in vars(value)]
            classes[f"{name}.{value.__qualname__}"] = own, fields
import hashlib
spelled = re.sub(r" at 0x[0-9a-f]+", "", repr(sorted(classes.items())))  # a default function's address
print("CLASSES", before, len(classes), hashlib.sha256(spelled.encode()).hexdigest())
"""
)


@pytest.mark.slow  # three fresh interpreters, every module imported
def test_every_dataclass_of_the_package_gets_the_methods_dataclasses_writes(tmp_path):
    def run(how: str) -> list[str]:
        code = EVERY_DATACLASS.replace("sys.argv[1]", repr(how))
        return _fresh(code, tmp_path).split()

    plain, cold, cached = run("plain"), run("cache"), run("cache")
    assert int(plain[2]) > 100  # every options group, result and record of the package
    assert cold[1] == "0" and int(cached[1]) > 100  # the second run read the first one's code
    assert cold[2:] == plain[2:] and cached[2:] == plain[2:]


def test_a_dataclass_built_through_the_cache_behaves_as_one_built_without(tmp_path, monkeypatch):
    import dataclasses

    monkeypatch.setenv(build_cache.BUILD_CACHE_ENV, str(tmp_path))
    monkeypatch.setattr(dataclass_code, "CACHE", build_cache.BuildCache("dataclass-code", 5_000))
    monkeypatch.setattr(dataclass_code.CACHE, "_new", True)

    def build() -> type:
        @dataclasses.dataclass(frozen=True)
        class Point:
            x: int
            y: tuple[int, ...] = dataclasses.field(default_factory=tuple)

        return Point

    plain = build()
    dataclass_code.install()
    try:
        cold = build()
        dataclass_code.CACHE.write()
        dataclass_code.CACHE.forget()
        cached = build()
    finally:
        dataclass_code.uninstall()
    assert len(dataclass_code.CACHE.known()) >= 5  # __init__, __repr__, __eq__, __setattr__, __delattr__, __hash__
    for made in (cold, cached):
        point = made(1)
        assert repr(point) == repr(plain(1)) and point == made(1, ()) and hash(point) == hash(made(1))
        assert made.__init__.__annotations__ == plain.__init__.__annotations__  # not strings: no flag inherited
        with pytest.raises(dataclasses.FrozenInstanceError):
            point.x = 2  # type: ignore[misc]


def _marked() -> type:
    @dataclasses.dataclass
    class Marked:
        count: ClassVar[int] = 0
        spelled: typing.ClassVar[str] = ""
        seed: InitVar[int] = 0
        also: dataclasses.InitVar[str] = ""
        plain: int = 1
        _: dataclasses.KW_ONLY
        late: str = ""
        unknown: Undeclared = None  # type: ignore[name-defined]  # noqa: F821 - a name the module lacks

    return Marked


def test_annotations_read_once_mark_classvars_initvars_and_keyword_only_as_dataclasses_does():
    def kinds(made: type) -> list[tuple[str, str, object]]:
        return [(f.name, f._field_type.name, f.kw_only) for f in made.__dataclass_fields__.values()]  # type: ignore[attr-defined]

    plain = _marked()
    dataclass_code.install()
    try:
        dataclass_code._IDENTIFIERS.clear()
        read = _marked()
        again = _marked()  # every annotation's names from the memo
        assert "dataclasses.InitVar[str]" in dataclass_code._IDENTIFIERS
    finally:
        dataclass_code.uninstall()
    assert dataclasses._is_type is not dataclass_code._is_type  # type: ignore[attr-defined]
    assert kinds(read) == kinds(again) == kinds(plain)
    assert [name for name, kind, _ in kinds(plain) if kind != "_FIELD"] == ["count", "spelled", "seed", "also"]
    assert read(seed=1, late="x").late == "x"


def test_re_compiles_through_the_cache_once_installed(cache, capsys):
    from re import _compiler

    source = r"(?P<word>installed)-(\d+)-hook"
    re.purge()
    pattern_cache.install()
    try:
        made = re.compile(source, re.I)
        assert (source, int(re.I)) in pattern_cache.CACHE.known()
        re.compile(r"debugged+", re.DEBUG)  # compiled by re itself, which prints it
        assert "debugged" not in str(pattern_cache.CACHE.known()) and "LITERAL" in capsys.readouterr().out
    finally:
        pattern_cache.uninstall()
        re.purge()
    assert _compiler.compile is not pattern_cache._compile
    _as_re_makes_it(made, source, re.I)


# The command run as the program (``python -m compactctl``), its parse of patterns counted at exit.
PARSES = """
import atexit, runpy, sys
from re import _parser
parsed = []
plain = _parser.parse
_parser.parse = lambda *args, **kwargs: parsed.append(args[0]) or plain(*args, **kwargs)
atexit.register(lambda: print("PARSED", len(parsed), file=sys.stderr))
sys.argv = ["compactctl", "compact", sys.argv[1], "-o", sys.argv[2], "-q"]
runpy.run_module("compactctl", run_name="__main__", alter_sys=True)
"""


def test_a_second_run_parses_no_pattern_at_all(tmp_path):
    source = Path(__file__).parent / "formats" / "data" / "claude-code.jsonl"
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": ROOT, build_cache.BUILD_CACHE_ENV: str(tmp_path / "cache")}
    counts = []
    for _ in range(2):
        done = subprocess.run(
            [sys.executable, "-c", PARSES, str(source), str(tmp_path / "out.jsonl")],
            env=env, capture_output=True, text=True, check=True,
        )  # fmt: skip
        counts.append(int(done.stderr.split("PARSED")[-1]))
    assert counts[0] > 10  # the standard library's (json's, dataclasses') and the package's, parsed once
    assert counts[1] == 0
    # The command's own files: what a compact compiles, not what every command does.
    assert sorted(path.name.split("-cpython")[0] for path in (tmp_path / "cache").iterdir()) == [
        "dataclass-code-compact",
        "patterns-compact",
    ]


def test_a_narrowed_cache_has_a_file_of_its_own_unless_read_already(tmp_path, monkeypatch):
    monkeypatch.setenv(build_cache.BUILD_CACHE_ENV, str(tmp_path))
    plain, narrowed = build_cache.BuildCache("patterns", 10), build_cache.BuildCache("patterns", 10)
    narrowed.narrow("prune")
    assert plain.path() != narrowed.path() and narrowed.path().name.startswith("patterns-prune-")
    narrowed.known()
    narrowed.narrow("report")  # read already: what it holds goes back where it came from
    assert narrowed.path().name.startswith("patterns-prune-")
