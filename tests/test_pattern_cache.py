"""The compiled-pattern cache: a pattern made from the cache is the pattern ``re.compile`` makes."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

import compactctl
from compactctl import pattern_cache


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """A cache folder of the test's own, read afresh (as by a new process)."""
    monkeypatch.setenv(pattern_cache.PATTERN_CACHE_ENV, str(tmp_path))
    monkeypatch.setattr(pattern_cache, "_known", None)
    monkeypatch.setattr(pattern_cache, "_added", True)  # written by the test, not at exit
    return tmp_path


def _as_re_makes_it(pattern: re.Pattern, source, flags: int) -> None:
    expected = re.compile(source, flags)
    # Pattern equality is the source, the flags and the engine's code; the groups are compared apart.
    assert pattern == expected
    assert (pattern.groups, pattern.groupindex, pattern.flags) == (expected.groups, expected.groupindex, expected.flags)


# In a fresh interpreter (importing every module here would build clients the test guard refuses):
# every lazyre pattern of the package compiled into the cache, read back, and compared with re's.
EVERY_PATTERN = """
import gc, importlib, pkgutil, re, sys
import compactctl
from compactctl import lazyre, pattern_cache
for module in pkgutil.walk_packages(compactctl.__path__, "compactctl."):
    if module.name not in ("compactctl.__main__", "compactctl.ray_engine"):
        importlib.import_module(module.name)
found = {(o._source, o._given_flags) for o in gc.get_objects() if isinstance(o, lazyre._CompiledOnFirstUse)}
def same(source, flags):
    made, expected = pattern_cache.compiled(source, flags), re.compile(source, flags)
    return made == expected and (made.groups, made.groupindex, made.flags) == (
        expected.groups, expected.groupindex, expected.flags)
first = [p for p in found if not same(*p)]
pattern_cache.write()
pattern_cache._known = None
read = len(pattern_cache._load())
second = [p for p in found if not same(*p)]
print("PATTERNS", len(found), read, first, second)
"""


@pytest.mark.slow  # every module imported in a fresh interpreter: about a second
def test_every_pattern_of_the_package_read_back_from_the_cache_is_the_one_re_compiles(cache):
    done = subprocess.run([sys.executable, "-c", EVERY_PATTERN], capture_output=True, text=True, check=True)
    _, count, read, first, second = done.stdout.splitlines()[-1].split(" ", 4)
    assert int(count) > 100  # the redaction table, the ledger, the sections...
    assert int(read) == int(count)  # all of them written, all read back
    assert (first, second) == ("[]", "[]")


def test_named_groups_inline_flags_and_bytes_survive_the_cache(cache):
    cases = [(r"(?P<key>[a-z]+)=(?P<value>\d+)", 0), (r"(?i)secret", 0), (r"^x$", re.M), (rb"\x00(..)", re.S)]
    for source, flags in cases:
        pattern_cache.compiled(source, flags)
    pattern_cache.write()
    pattern_cache._known = None
    for source, flags in cases:
        made = pattern_cache.compiled(source, flags)
        _as_re_makes_it(made, source, flags)
    assert pattern_cache.compiled(r"(?P<key>[a-z]+)=(?P<value>\d+)", 0).match("ab=12").groupdict() == {
        "key": "ab",
        "value": "12",
    }


def test_a_file_changed_on_disk_is_not_trusted(cache):
    pattern_cache.compiled(r"a+b", 0)
    pattern_cache.write()
    (path,) = cache.iterdir()
    blob = bytearray(path.read_bytes())
    blob[-3] ^= 0xFF  # one byte of the payload: the checksum no longer matches
    path.write_bytes(bytes(blob))
    assert pattern_cache._read(path) == {}
    path.write_bytes(bytes(blob[:40]))  # cut short
    assert pattern_cache._read(path) == {}


def test_an_entry_the_engine_refuses_is_compiled_as_re_does(cache):
    # A well-formed file holding code _sre rejects (another build's, say): the pattern is still right.
    pattern_cache._load()[(r"a+b", 0)] = (32, (1, 2, 3), 0, {}, (None,))
    _as_re_makes_it(pattern_cache.compiled(r"a+b", 0), r"a+b", 0)


def test_off_reads_and_writes_nothing(tmp_path, monkeypatch):
    monkeypatch.setenv(pattern_cache.PATTERN_CACHE_ENV, "off")
    monkeypatch.setattr(pattern_cache, "_known", None)
    monkeypatch.setattr(pattern_cache, "_added", True)
    monkeypatch.chdir(tmp_path)
    _as_re_makes_it(pattern_cache.compiled(r"x(y)", 0), r"x(y)", 0)
    pattern_cache.write()
    assert pattern_cache.cache_path() is None and list(tmp_path.iterdir()) == []


@pytest.mark.slow  # two fresh interpreters
def test_a_run_writes_the_cache_at_exit_and_the_next_reads_it(tmp_path):
    code = (
        "from compactctl import lazyre, pattern_cache\n"
        "before = len(pattern_cache._load())\n"
        "p = lazyre.compile(r'(?P<n>\\d+) tests? passed')\n"
        "print(before, p.search('13 tests passed').group('n'))\n"
    )
    env = {"PATH": "/usr/bin:/bin", pattern_cache.PATTERN_CACHE_ENV: str(tmp_path)}
    env["PYTHONPATH"] = str(pattern_cache.Path(compactctl.__file__).parent.parent)
    first = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    second = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert first.stdout.split() == ["0", "13"]  # compiled here, then written at exit
    assert second.stdout.split() == ["1", "13"]  # found in the file
    assert len(list(tmp_path.iterdir())) == 1
