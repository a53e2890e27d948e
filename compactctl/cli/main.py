"""The ``compactctl`` command: one module per subcommand, assembled here.

A subcommand's module is imported when that command runs (or shows its own help), never
before: ``compactctl --help`` lists the commands from ``SUMMARIES`` and imports none of
them, so neither the strategies, the formats, the tokenizer nor ``openai`` (which costs
about half a second, and only the LLM summarizer needs).

``main`` hands a plain ``compact`` or ``prune`` line to ``cli.direct``, which runs it without
importing Typer; any other line goes to the Typer app (``cli.app``), built on first use. Such a
line, run as the program itself, ends without the interpreter's tear-down (``cli.quick_exit``).
"""

from __future__ import annotations

import sys
from typing import Any

from compactctl import interrupts

# Each command's module (``compactctl.cli.NAME``: the command function NAME and ``declared_settings()``)
# and the first line of its function's docstring, which ``--help`` lists (a test keeps them equal).
SUMMARIES = {
    "compact": "Compact transcripts with the given strategy steps, write them, and print a before/after report.",
    "prune": "Prune transcripts deterministically: superseded and duplicate tool results go, what is still "
    "referenced stays.",
    "report": "Tokens, messages, tokens by role, facts and API validity of a file, or before against after.",
    "replay": "Replay transcripts call by call and compare compaction settings with no compaction at all.",
    "eval": "Score a compaction: recall, artifact, continuation and decision probes built from BEFORE, answered "
    "from AFTER.",
    "review": "Write a review page: the summary beside the span it replaced, identifiers kept and lost, probes, "
    "figures.",
    "sessions": "List the sessions Claude Code, Codex and Gemini CLI keep for this user, newest first.",
}


_FROM_APP = ("app", "build_app", "build_command", "LazyCommands", "JsonUsageErrors")


def __getattr__(name: str) -> Any:
    # The Typer app is built on first use (``from compactctl.cli.main import app``), not when
    # ``main`` is imported: a line ``cli.direct`` reads runs without Typer.
    if name in _FROM_APP:
        from compactctl.cli import app as made

        return getattr(made, name)
    raise AttributeError(f"module 'compactctl.cli.main' has no attribute {name!r}")


def main() -> None:
    from compactctl import dataclass_code, pattern_cache, startup_gc
    from compactctl.cli import quick_exit

    if quick_exit.runs_the_process(main):  # the program only: a caller that goes on keeps its collector as it was
        startup_gc.hold()  # until the files' work starts (``files.jobs.run_jobs``): start-up makes no garbage
        # Before the standard library's patterns (dataclasses', json's): made from the cache. Not in a caller
        # that goes on (a test): the patterns of whatever it runs next would be kept too.
        pattern_cache.install()
    interrupts.install()  # SIGTERM and SIGHUP stop a run the way Ctrl-C does
    command = sys.argv[1] if len(sys.argv) > 1 and sys.argv[1] in SUMMARIES else "other"  # --help, --version
    for cache in (dataclass_code.CACHE, pattern_cache.CACHE):
        cache.narrow(command)  # each command's compiled methods and patterns in a file of its own, read whole
    dataclass_code.install()  # before the first dataclass: their methods compiled once per machine
    from compactctl.cli import direct

    try:
        direct.run(sys.argv[1:])  # returns when the line is not one it reads plainly: Click reads it
    except SystemExit as done:
        if quick_exit.runs_the_process(main):  # the program itself: it ends now, its work done and written
            quick_exit.end_now(done.code)  # returns where the interpreter's own end could differ
        raise
    finally:
        startup_gc.release()  # a line that ends before any file's work (an error, --help) or goes to Click
    from compactctl.cli.app import app

    app()
