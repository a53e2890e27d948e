"""Old tool results a recorded call sent as a short stand-in, in replay's units: what each call's context costs less.

Claude Code cuts (or has the API clear) old tool results after the user was idle an hour
(``recorded.claude_code_cleared``): the file holds them whole, the call was sent the stand-in. Replay's contexts
are built of the file's messages, so each call is told, per message, what its stand-in saves
(``ApiCall.stand_ins``); a setting counts the saving of each such result its context still holds, as the client
cuts whatever of those results it still sends (by its call's id).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Protocol

from compactctl.recorded import RecordedContext
from compactctl.replay.simulate import ApiCall
from compactctl.transcript import Message


class Counts(Protocol):
    """What counts a message in replay's units (its ``CalibratedCounter``)."""

    def message(self, message: Message) -> int: ...


def stood_in(context: RecordedContext, counter: Counts, calls: Sequence[ApiCall]) -> list[ApiCall]:
    """``calls`` (one per recorded call of ``context``), each with the savings of the stand-ins it sent, counted
    by ``counter`` (replay's calibrated one: a log message costs what calibration measured for it)."""
    if not context.stand_ins:
        return list(calls)
    found = list(calls)
    for n, sent in context.stand_ins.items():
        if n >= len(found):
            continue
        savings = []
        for at, stand_in in sorted(sent.items()):
            message = context.messages[at]
            savings.append((message, stand_in, counter.message(message) - counter.message(stand_in)))
        found[n] = dataclasses.replace(found[n], stand_ins=tuple(savings))
    return found
