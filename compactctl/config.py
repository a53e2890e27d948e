"""Settings: flags, then ``compactctl.toml`` or ``[tool.compactctl]`` in ``pyproject.toml``, then defaults.

Each setting is declared once on an options dataclass field (``compactctl.settings``), in
small groups by concern: the run's below (steps, input, database, counting, recorded usage,
batch, engine, gates), each strategy's on its options, the summarizer's on
``SummarizerOptions``, replay's, eval's and review's beside them. A config file is checked
against those declarations, so a new field is a new valid key with nothing else to update;
its keys and the flags are merged into flat values once, at the CLI, and every command
builds from them the groups it takes (``cli/options.py``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from compactctl.errors import InputError
from compactctl.settings import Options, SettingDecl, check_values, declared, defaults_of, setting

if TYPE_CHECKING:
    from compactctl.formats import Format

# The other commands' groups (replay's, eval's, review's), the strategies' and the summarizer's
# are imported when asked for, not here: every command imports this module, and those modules
# import the pipelines they configure (``bench/speed_bench.py``: prune -q's start-up).

DEFAULT_STRATEGY = "structured"
IO_PANEL = "Input and output"
GATE_PANEL = "Report and gates"


@dataclass(frozen=True)
class WriteOptions(Options):
    """What the commands that write a compacted copy (compact, prune) take about writing it."""

    write_unchanged: bool = setting(
        False,
        help="Write the output even when no step changed anything (by default such a file is not copied; "
        "the report says why nothing changed).",
        panel=IO_PANEL,
    )


@dataclass(frozen=True)
class StepsOptions(Options):
    """Which strategy steps run, in order (each step's own settings are on its options dataclass)."""

    strategy: tuple[str, ...] = setting(
        (DEFAULT_STRATEGY,),
        help="Strategy step, repeatable, run in order.",
        metavar="STRATEGY",
        listed=lambda: _strategy_names(),
        flags=("--strategy", "-s"),
        panel="Strategies",
    )


def _strategy_names() -> list[str]:
    from compactctl.strategies import STRATEGIES  # when --help is built

    return list(STRATEGIES)


def _format_names() -> list[str]:
    from compactctl.formats import FORMATS  # when --help is built: declaring the setting imports no format

    return list(FORMATS)


@dataclass(frozen=True)
class InputOptions(Options):
    """How input files are read: their format, and what a bad file or line does to the run."""

    format: str = setting(
        "auto",
        help="Input format, or auto (told from the file).",
        flags=("--format", "-f"),
        panel=IO_PANEL,
        metavar="FORMAT",
        listed=lambda: ("auto", *_format_names()),
    )
    on_error: str = setting(
        "fail",
        help="A bad line in a file: fail fails its file; skip leaves the line out and counts it. A file that "
        "cannot be read fails the run either way (after the others are done): see --max-failed-files.",
        choices=("fail", "skip"),
        panel=GATE_PANEL,
    )


@dataclass(frozen=True)
class CountOptions(Options):
    """How tokens are counted."""

    encoding: str = setting(
        "cl100k_base", help="tiktoken encoding, or approx (chars/4).", metavar="ENCODING", panel=IO_PANEL
    )


@dataclass(frozen=True)
class DatabaseOptions(Options):
    """An Agents SDK database as input: which session, and whether the output goes back into it."""

    session: str | None = setting(
        None,
        help="A session by its id: inside an Agents SDK database given (default: every session), or, with no "
        "input files, a Claude Code, Codex or Gemini CLI session (an id, a unique prefix, or latest).",
        metavar="ID",
        panel=IO_PANEL,
    )
    in_place: bool = setting(
        False,
        help="Replace the session where it lives, a backup kept: in an Agents SDK database, in one transaction "
        "(old items in a backup table); a client's --session, its file (the original beside it, named). Default: "
        "a new session (a new id in -o; beside a client's).",
        panel=IO_PANEL,
    )
    # --session was given as a flag: on a file that holds no sessions it is refused, not dropped. From a
    # config file (which serves every command and file) it picks a session where there are sessions only.
    session_flagged: bool = False

    def check_session(self, fmt: Format, source: str) -> None:
        """A --session flag on a file of a format with no sessions in it is bad usage."""
        if self.session_flagged:
            fmt.check_session(self.session, source)


@dataclass(frozen=True)
class RecordedOptions(Options):
    """A producer's session that records its usage (Claude Code, Codex): how its tokens are counted."""

    claude_tokens: str = setting(
        "fitted",
        help="Where a Claude Code file records its usage, count Claude's tokens as cl100k times a ratio "
        "fitted on that usage (fitted, fast), or with ctok's tokenizer families, the best fit chosen "
        "(ctok: the claude extra, about 28x slower).",
        choices=("fitted", "ctok"),
        panel=IO_PANEL,
    )

    def unread_note(self, read_by: Iterable[tuple[str, bool]]) -> str | None:
        """--claude-tokens ctok given where no file (its format, whether it records its usage) is a Claude Code
        file that records its usage: the flag changes nothing there, and is said to, not ignored."""
        if self.claude_tokens != "ctok" or any(fmt == "claude-code" and usage for fmt, usage in read_by):
            return None
        return "--claude-tokens ctok not used: it counts a Claude Code file that records its usage, and none here does"


@dataclass(frozen=True)
class BatchOptions(Options):
    """How many files at once."""

    jobs: int = setting(
        0, help="Files processed in parallel (0: one per core there is).", min=0, flags=("--jobs", "-j")
    )


@dataclass(frozen=True)
class EngineOptions(Options):
    """Where the batch runs."""

    engine: str = setting(
        "processes",
        help="processes: --jobs processes on this machine; threads: --jobs threads (one core); ray: Ray Data over "
        "the files (RAY_ADDRESS, else a local instance, about 20 s to start; pip install 'compactctl[ray]').",
        choices=("processes", "threads", "ray"),
    )


@dataclass(frozen=True)
class OutcomeOptions(Options):
    """How a run reports its end: the failed files it tolerates, and what CI is told."""

    max_failed_files: int = setting(
        0,
        help="Files that may fail (unreadable, unknown format) before the run does (exit 2); every failure is "
        "still reported.",
        min=0,
        metavar="N",
        panel=GATE_PANEL,
    )
    annotations: str | None = setting(
        None,
        help="Also write CI annotations on stderr: github (workflow commands for failed files, skipped lines "
        "and failed gates, paths relative to the repository).",
        choices=("github",),
        panel=GATE_PANEL,
    )
    junit: str | None = setting(
        None, help="Write a JUnit XML report: a test case per file and per gate.", metavar="FILE", panel=GATE_PANEL
    )

    def junit_path(self) -> Path | None:
        """The --junit file, checked with the other files a run writes (never an input or an output)."""
        return Path(self.junit) if self.junit else None


@dataclass(frozen=True)
class GateOptions(Options):
    """What a run must keep, and when it fails: the facts, the reduction."""

    require: tuple[str, ...] = setting(
        (), help="A fact that must survive (repeatable).", metavar="TEXT", panel=GATE_PANEL
    )
    fail_under: float | None = setting(
        None, help="Exit 1 when the total reduction is under PCT percent.", metavar="PCT", panel=GATE_PANEL
    )
    strict_facts: bool = setting(
        False,
        help="A declared or --require fact the input does not hold is an error (exit 2), not a warning.",
        flags=("--strict-facts",),
        panel=GATE_PANEL,
    )


# The groups every command may take (each command lists those it does, in cli/<command>.py).
RUN_GROUPS: tuple[type[Options], ...] = (
    StepsOptions,
    WriteOptions,
    InputOptions,
    DatabaseOptions,
    CountOptions,
    RecordedOptions,
    BatchOptions,
    EngineOptions,
    OutcomeOptions,
    GateOptions,
)


Owners = list[tuple[str, type]]  # (owner, options dataclass): a strategy's name, or "" for the others


def strategy_owners() -> Owners:
    from compactctl.strategies import STRATEGIES

    return [(name, strategy.options) for name, strategy in STRATEGIES.items()]


# Groups of one command each, by where they live: their defaults are in the values of the command
# that takes them (and of a caller asking for every default), and only then imported.
OWN_GROUPS = (
    ("compactctl.replay.options", "ReplayOptions"),
    ("compactctl.evaluate", "EvalOptions"),
    ("compactctl.review", "ReviewOptions"),
)


def shared_groups() -> list[type[Options]]:
    """The groups whose defaults every command's values hold: the run's, the summarizer's."""
    from compactctl.summarizers.options import DryRunOptions, SummarizerOptions

    return [*RUN_GROUPS, SummarizerOptions, DryRunOptions]


def own_groups(taken: Iterable[type] | None = None) -> list[type[Options]]:
    """Replay's, eval's and review's groups, or those of them in ``taken`` (None: all three)."""
    from importlib import import_module

    names = None if taken is None else {(group.__module__, group.__qualname__) for group in taken}
    return [
        getattr(import_module(module), name) for module, name in OWN_GROUPS if names is None or (module, name) in names
    ]


def setting_owners() -> Owners:
    """Every options dataclass a setting lives on: the run's, each strategy's, the summarizer's, replay's."""
    run, summarizer = shared_groups()[: len(RUN_GROUPS)], shared_groups()[len(RUN_GROUPS) :]
    return [
        *(("", group) for group in run),
        *strategy_owners(),
        *(("", group) for group in summarizer),
        *(("", group) for group in own_groups()),
    ]


def all_settings() -> dict[str, SettingDecl]:
    return declared(setting_owners())


def defaults(taken: Iterable[type] | None = None) -> dict[str, Any]:
    """The defaults a command's values start from: the shared groups', and those of the groups of one
    command each that it takes (``taken``; None: every group's)."""
    return {
        name: value for group in (*shared_groups(), *own_groups(taken)) for name, value in defaults_of(group).items()
    }


def __getattr__(name: str) -> Any:
    if name == "DEFAULTS":  # every default, as a caller of the library may want them all
        return defaults()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def find_config(start: Path) -> Path | None:
    """``compactctl.toml`` in the working directory, else a ``pyproject.toml`` with ``[tool.compactctl]``."""
    for name in ("compactctl.toml", "pyproject.toml"):
        candidate = start / name
        if candidate.is_file() and (name == "compactctl.toml" or b"[tool.compactctl" in candidate.read_bytes()):
            return candidate
    return None


def unknown_setting(name: str, known: Iterable[str]) -> str:
    """The message for a key no dataclass declares, with the nearest known one when there is one."""
    import difflib

    close = difflib.get_close_matches(name, sorted(known), n=1)
    return f"unknown setting {name!r}" + (
        f" (did you mean {close[0]!r}?)" if close else f" (known: {', '.join(sorted(known))})"
    )


def load_config(path: Path | None, cwd: Path | None = None) -> dict[str, Any]:
    """The settings a config file gives, with dashes in keys read as underscores."""
    if path is None:
        path = find_config(cwd or Path.cwd())
        if path is None:
            return {}
    elif not path.is_file():
        raise InputError("config file not found", str(path))
    import tomllib  # read when there is a file to read

    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as error:
        raise InputError(f"bad TOML: {error}", str(path)) from None
    if path.name == "pyproject.toml":
        data = data.get("tool", {}).get("compactctl", {})
    settings = {key.replace("-", "_"): value for key, value in data.items()}
    known = all_settings()
    for key in settings:
        if key not in known:
            raise InputError(unknown_setting(key, known), str(path))
    for key, value in settings.items():
        if known[key].many and isinstance(value, str):  # a single string is a list of one
            settings[key] = [value]
    check_values(known, settings, str(path))
    return settings


def merge(flags: Mapping[str, Any], config: Mapping[str, Any], taken: Iterable[type] | None = None) -> dict[str, Any]:
    """Flags that were given win over the config file, which wins over the defaults (those of the
    groups a command takes, ``taken``, see :func:`defaults`)."""
    given = {key: value for key, value in flags.items() if value is not None and value != []}
    return {**defaults(taken), **config, **given}
