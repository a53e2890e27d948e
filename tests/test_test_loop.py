"""The test loop's own machinery: the needs() gate, the Hypothesis profiles, the markers (tests/README.md)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, settings

import tests.needs
from tests.conftest import HEAVY
from tests.needs import NEEDS, Need, needs, transcripts_named
from tests.properties import PROFILES, examples, load_profile, profile_name

NOTHING = Need(lambda: None, "nothing is installed: apt-get install nothing")


@pytest.fixture
def nothing(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    monkeypatch.setitem(NEEDS, "nothing", NOTHING)
    tests.needs._found.cache_clear()
    yield "nothing"
    tests.needs._found.cache_clear()


def test_a_missing_need_is_a_skip_that_says_what_is_missing_and_how_to_get_it(nothing, monkeypatch):
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception, match=r"^needs nothing: nothing is installed: apt-get install nothing$"):
        needs(nothing)


def test_under_ci_a_missing_need_is_a_failure_that_says_why(nothing, monkeypatch):
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match=r"apt-get install nothing; a failure, not a skip, since CI=true"):
        needs(nothing)


def test_a_module_that_does_not_import_is_missing_with_the_import_error(monkeypatch):
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.setitem(NEEDS, "absent", Need(tests.needs._module("compactctl_no_such_module"), "pip install it"))
    tests.needs._found.cache_clear()
    with pytest.raises(pytest.skip.Exception, match=r"pip install it \(No module named 'compactctl_no_such_module'\)"):
        needs("absent")


def test_what_is_found_is_returned(monkeypatch):
    monkeypatch.setitem(NEEDS, "here", Need(lambda: "/usr/bin/here", "never said"))
    tests.needs._found.cache_clear()
    assert needs("here") == "/usr/bin/here"


def test_the_real_transcripts_are_required_where_compactctl_transcripts_names_them_not_under_ci(monkeypatch):
    monkeypatch.setattr(tests.needs, "TRANSCRIPTS_NAMED", False)
    monkeypatch.setenv("CI", "true")  # a clean clone in CI may have none beside it
    assert transcripts_named() == "" and NEEDS["transcripts"].required is transcripts_named
    monkeypatch.setattr(tests.needs, "TRANSCRIPTS_NAMED", True)
    assert transcripts_named() == "COMPACTCTL_TRANSCRIPTS names them"


def test_a_misspelt_need_is_an_error_not_a_skip():
    with pytest.raises(ValueError, match="unknown need 'chromum': one of transcripts, chromium"):
        needs("chromum")


def test_the_profile_comes_from_hypothesis_profile_then_ci(monkeypatch):
    monkeypatch.delenv("HYPOTHESIS_PROFILE", raising=False)
    monkeypatch.delenv("CI", raising=False)
    assert profile_name() == "dev"
    monkeypatch.setenv("CI", "true")
    assert profile_name() == "ci"
    monkeypatch.setenv("HYPOTHESIS_PROFILE", "thorough")
    assert profile_name() == "thorough"


def test_example_counts_are_as_written_in_ci_a_tenth_locally_and_never_below_a_few():
    try:
        settings.load_profile("ci")
        assert (examples(600), examples(15), examples(3)) == (600, 15, 3)
        assert settings.default.derandomize and settings.default.database is None  # Hypothesis's own ci settings
        settings.load_profile("dev")
        assert (examples(600), examples(15), examples(3)) == (60, 5, 3)
        settings.load_profile("thorough")
        assert examples(600) == 6000
    finally:
        load_profile()


def test_what_drives_the_outside_world_is_slow(request):
    # Under `-m "not slow"` no heavy test is left; in a whole run each one is marked slow.
    items = request.session.items
    heavy = [item for item in items if any(item.get_closest_marker(name) for name in HEAVY)]
    assert all(item.get_closest_marker("slow") for item in heavy), [
        i.nodeid for i in heavy if not i.get_closest_marker("slow")
    ]
    if len(items) > 500 and not request.config.getoption("markexpr"):  # a whole run: the clients tests are there
        assert any(item.get_closest_marker("clients") for item in heavy)


def test_no_profile_fails_a_test_for_slow_generation_on_a_busy_machine():
    for name in PROFILES:
        assert HealthCheck.too_slow in settings.get_profile(name).suppress_health_check, name
