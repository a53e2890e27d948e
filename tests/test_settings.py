"""One declaration per setting: types, bounds and choices checked the same for flags, config files and callers."""

from __future__ import annotations

import typing
from dataclasses import dataclass
from typing import Literal

import pytest

from compactctl.config import all_settings
from compactctl.errors import InputError
from compactctl.settings import _COMPILED, Options, SettingSpec, declared, defaults_of, problem, setting, type_hints
from compactctl.strategies.rolling import RollingOptions
from compactctl.strategies.summary import SummaryOptions
from compactctl.summarizers.options import SummarizerOptions

SHARED = SettingSpec("Messages kept.", min=0)


@dataclass(frozen=True)
class Small(Options):
    count: int = setting(1, help="how many", min=1)
    ratio: float = setting(0.5, help="how much", min=0.0)
    loud: bool = setting(False, help="say so")
    names: tuple[str, ...] = setting((), help="which")
    colour: str = setting("red", help="which colour", choices=("red", "blue"))
    limit: float | None = setting(None, help="an optional bound")


@pytest.mark.parametrize(
    ("name", "value", "why"),
    [
        ("count", True, "count must be a whole number, not True"),
        ("count", 1.5, "count must be a whole number, not 1.5"),
        ("count", 0, "count must be at least 1, not 0"),
        ("ratio", "x", "ratio must be a number, not 'x'"),
        ("ratio", False, "ratio must be a number, not False"),
        ("loud", 1, "loud must be true or false, not 1"),
        ("names", "a", "names must be a string or a list of strings, not 'a'"),
        ("names", ["a", 2], "names must be a string or a list of strings, not ['a', 2]"),
        ("colour", "green", "colour must be one of red, blue, not 'green'"),
        ("colour", 3, "colour must be a string, not 3"),
        ("count", None, "count must be set, not None"),
    ],
)
def test_a_bad_value_is_refused_with_the_setting_named(name, value, why):
    settings = declared([("", Small)])
    assert problem(settings[name], value) == why
    with pytest.raises(InputError, match=f"^{why.replace('[', '.').replace(']', '.')}$"):
        Small(**{name: value})


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("count", 3),
        ("ratio", 2),
        ("ratio", 0.25),
        ("loud", True),
        ("names", ["a"]),
        ("names", ("a", "b")),
        ("colour", "blue"),
        ("limit", None),
        ("limit", 3),
    ],
)
def test_a_good_value_passes(name, value):
    assert problem(declared([("", Small)])[name], value) is None
    assert getattr(Small(**{name: value}), name) == value


def test_a_library_caller_gets_the_setting_named_not_a_flag():
    with pytest.raises(InputError, match=r"^keep_recent must be at least 0, not -1$"):
        SummaryOptions(keep_recent=-1)
    with pytest.raises(ValueError, match="api must be one of chat, responses"):  # InputError is a ValueError
        SummarizerOptions(api="grpc")


def test_a_shared_setting_has_one_spec_and_a_default_per_owner():
    @dataclass(frozen=True)
    class A(Options):
        kept: int = SHARED(6)

    @dataclass(frozen=True)
    class B(Options):
        kept: int = SHARED(10)

    both = declared([("a", A), ("b", B)])
    assert both["kept"].defaults == (("a", 6), ("b", 10))
    assert both["kept"].shown_default() == "a 6, b 10"


def test_declaring_one_name_twice_is_refused():
    @dataclass(frozen=True)
    class A(Options):
        kept: int = setting(6, help="kept")

    @dataclass(frozen=True)
    class B(Options):
        kept: int = setting(6, help="kept, again")

    with pytest.raises(TypeError, match="'kept' is declared twice"):
        declared([("a", A), ("b", B)])


def test_every_setting_of_the_package_is_declared_once_and_its_default_is_valid():
    settings = all_settings()
    assert settings["threshold"].defaults == (
        ("summary", 10000),
        ("rolling", 8000),
        ("selective", 10000),
        ("structured", 0),
    )
    for one in settings.values():
        assert one.spec.help, one.name
        for _, default in one.defaults:
            assert problem(one, list(default) if one.many else default) is None, one.name
    assert RollingOptions().threshold == 8000


def test_defaults_are_the_declared_ones_with_lists_for_list_settings():
    assert defaults_of(Small) == {"count": 1, "ratio": 0.5, "loud": False, "names": [], "colour": "red", "limit": None}


def test_every_options_group_has_the_type_hints_typing_gives_it():
    from compactctl.config import setting_owners

    for _, group in setting_owners():
        hints = type_hints(group)
        assert list(hints.items()) == list(typing.get_type_hints(group).items()), group


def test_type_hints_compile_each_annotation_text_once():
    @dataclass(frozen=True)
    class Twice(Options):
        first: int | None = setting(None, help="one")
        second: int | None = setting(None, help="two")

    _COMPILED.pop("int | None", None)
    type_hints(Twice)
    assert _COMPILED["int | None"] is not None and set(_COMPILED) >= {"int | None"}
    assert type_hints(Twice) == {"first": int | None, "second": int | None}


def test_type_hints_leave_what_is_not_a_plain_class_to_typing():
    @dataclass(frozen=True)
    class Named(Options):
        mode: Literal["a", "b"] = "a"
        count: int = 0

    assert type_hints(Named) == typing.get_type_hints(Named) == {"mode": Literal["a", "b"], "count": int}
