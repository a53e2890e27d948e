"""Shared fixtures: small transcripts written as examples of use."""

from __future__ import annotations

import copy
import sys
from pathlib import Path
from typing import Any

import pytest

# Compiled modules and pytest's rewritten test modules are kept between runs even where the
# environment says PYTHONDONTWRITEBYTECODE (this machine's does): else every run compiles the
# package and rewrites every test module again, about 4 s of CPU of the 9 s collection takes.
sys.dont_write_bytecode = False

from tests.helpers import call  # noqa: E402  (after the flag: what it imports is compiled once)
from tests.needs import SHARED_TRANSCRIPTS, TRANSCRIPTS_NAMED, needs  # noqa: E402
from tests.properties import load_profile  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "samples"
__all__ = ["SHARED_TRANSCRIPTS", "TRANSCRIPTS_NAMED"]

# Hypothesis strength for this run: "dev" locally (fast), "ci" under CI=true; HYPOTHESIS_PROFILE chooses.
load_profile()

# A test on the real transcripts (tests/needs.py): skipped where they are not, with the reason;
# a failure where COMPACTCTL_TRANSCRIPTS names them (.ci/run), so CI never passes by skipping them.
needs_transcripts = pytest.mark.needs("transcripts")

# What runs the real outside world is slow too: `pytest -m "not slow"` leaves all of it out.
HEAVY = ("clients", "browser", "ray")


@pytest.hookimpl(tryfirst=True)  # before -m deselects
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if any(item.get_closest_marker(name) for name in HEAVY) and not item.get_closest_marker("slow"):
            item.add_marker(pytest.mark.slow)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    for marker in item.iter_markers("needs"):
        for name in marker.args:
            needs(name)


@pytest.fixture
def agent_messages() -> list[dict[str, Any]]:
    """A short agent session: a system prompt, a user request, two tool rounds, an answer."""
    return [
        {"role": "system", "content": "You are a coding agent."},
        {"role": "user", "content": "Fix the failing test in src/app.py. Do not change the public interface."},
        {"role": "assistant", "content": None, "tool_calls": [call("c1", "read_file", '{"path": "src/app.py"}')]},
        {"role": "tool", "tool_call_id": "c1", "content": "def add(a, b):\n    return a - b\n"},
        {
            "role": "assistant",
            "content": "Running the tests.",
            "tool_calls": [call("c2", "bash", '{"cmd": "pytest -q"}'), call("c3", "bash", '{"cmd": "git status"}')],
        },
        {"role": "tool", "tool_call_id": "c2", "content": "FAILED tests/test_app.py::test_add\n1 failed in 0.12s"},
        {"role": "tool", "tool_call_id": "c3", "content": "On branch main\nnothing to commit"},
        {"role": "assistant", "content": "add() subtracts; I will change it to a + b."},
        {"role": "user", "content": "Go ahead."},
        {"role": "assistant", "content": "Done: src/app.py now returns a + b; 1 passed."},
    ]


def unchanged(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return copy.deepcopy(messages)


@pytest.fixture
def scripted():
    """A ScriptedSummarizer; the test fails if a scripted reply was never asked for."""
    from tests.helpers import ScriptedSummarizer

    fake = ScriptedSummarizer()
    yield fake
    assert not fake.replies, f"{len(fake.replies)} scripted summaries were never used"


@pytest.fixture
def openai_server():
    """A fresh OpenAI-compatible server on 127.0.0.1 for one test."""
    from tests.summarizers.openai_server import ServerThread

    server = ServerThread()
    yield server.state
    server.stop()


LOOPBACK_HOSTS = ("127.0.0.1", "localhost")


@pytest.fixture(autouse=True)
def no_real_model_clients(monkeypatch, tmp_path):
    """Real calls are impossible: a client pointed anywhere but loopback fails the test.

    Keys and base URLs from the environment are dropped, and the summary and price caches live
    in the test's own folder.
    """
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_ORG_ID", "OPENAI_PROJECT_ID"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("COMPACTCTL_CACHE_DIR", str(tmp_path / "summary-cache"))
    monkeypatch.setenv("COMPACTCTL_PRICES_CACHE", str(tmp_path / "prices-cache"))  # each test looks prices up anew
    monkeypatch.setenv("COMPACTCTL_BUILD_CACHE", str(tmp_path / "build-cache"))  # compiled patterns, not the user's
    import openai

    original = openai.OpenAI.__init__

    def guarded(self, *args, **kwargs):
        original(self, *args, **kwargs)
        if self.base_url.host not in LOOPBACK_HOSTS:
            pytest.fail(f"an openai client was pointed at {self.base_url}, not the test server")

    monkeypatch.setattr(openai.OpenAI, "__init__", guarded)


def mutation_checked(strategy: Any, mutated: list[str]) -> Any:
    """The strategy, noting its name in ``mutated`` whenever a run changes the messages it was given."""
    import dataclasses

    from compactctl import jsonbytes  # integers past 64 bits are input too (the fuzz test makes them)

    def run(messages: list[dict[str, Any]], options: Any, context: Any) -> Any:
        before = jsonbytes.dumps(messages)
        result = strategy.run(messages, options, context)
        if jsonbytes.dumps(messages) != before:
            mutated.append(strategy.name)
        return result

    return dataclasses.replace(strategy, run=run)


@pytest.fixture(autouse=True)
def strategies_never_mutate_their_input(monkeypatch):
    """Every registered strategy, in every test (through compact, replay or the CLI), leaves its input as it was."""
    from compactctl.strategies import STRATEGIES

    mutated: list[str] = []
    for name, strategy in list(STRATEGIES.items()):
        monkeypatch.setitem(STRATEGIES, name, mutation_checked(strategy, mutated))
    yield
    assert not mutated, f"strategies mutated their input: {sorted(set(mutated))}"


@pytest.fixture(scope="session")
def local_model(tmp_path_factory):
    """A real OpenAI-compatible server with a small real model (tests/local_model.py), for the whole run.

    Skipped where llama-cpp-python or the model is not installed; failed under CI=true, where
    .ci/run installs both, so CI never passes by skipping.
    """
    from tests import local_model as local

    needs("local-model")
    server = local.start(tmp_path_factory.mktemp("llama"))
    yield server
    server.stop()
