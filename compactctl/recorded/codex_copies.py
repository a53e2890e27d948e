"""Each billed call of a Codex rollout once across the files of a run (``replay.copies``).

A copy of a rollout keeps every line as it was: a user's backup, or plain ``compact``'s output, which holds the
rollout's lines and then compactctl's ``compacted`` line. Each call is keyed by the thread it is of, when it was
written and the usage its count reported, which no other call of a thread repeats; where another file of the run
bills it, it is a copy here, as Claude Code's are (``claude_code_chain.Index.copy_key``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

from compactctl.recorded import RecordedCall, digest_key, marked_shared


def with_copy_keys(
    calls: list[RecordedCall], thread: str | None, billed_elsewhere: Mapping[str, str]
) -> tuple[list[RecordedCall], dict[str, str]]:
    """The calls with their ``copy_key``, those another file bills marked copied; and those, key -> that file."""
    if thread is None:
        return calls, {}
    keyed = [
        call
        if call.usage is None or call.timestamp is None
        else dataclasses.replace(
            call, copy_key=digest_key(f"codex {thread}", [call.timestamp, call.model, dataclasses.astuple(call.usage)])
        )
        for call in calls
    ]
    return marked_shared(keyed, billed_elsewhere)


def copied_unpaired(at: list[int], calls: list[RecordedCall], shared: Mapping[str, str]) -> set[int]:
    """The billed calls no message holds (the compactions' own, responses counted and never written; by index, ``at``:
    the calls made before each) that are copies of another file's: the call after one is a copy of a call that file
    bills, or, for one at the end, the call before it (plain ``compact``'s output holds the original's lines, these
    too, then compactctl's ``compacted`` line)."""
    copied = [call.copy_key in shared for call in calls]
    return {
        n
        for n, before in enumerate(at)
        if (before < len(calls) and copied[before]) or (before == len(calls) and before > 0 and copied[before - 1])
    }


def history_id(path: str, thread: str) -> str:
    """The id a later rollout's ``history_base`` names this one's lines by: the thread's for its first rollout, and
    for each one a ``thread/revert`` wrote (``rollout-<time>-<thread>_<id>.jsonl``; its ``session_meta`` names the
    thread, not this id) the id after the thread's in its name. Measured with the real 0.171.0: three reverts, each
    rollout's base the one before it (tests/recorded/data/codex-0.171.0-reverts)."""
    name = path.replace("\\", "/").rsplit("/", 1)[-1].removesuffix(".jsonl")
    _, found, own = name.partition(f"{thread}_")
    return own if found and own else thread
