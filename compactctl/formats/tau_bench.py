"""``tau-bench``: a JSON array of runs, each with a ``traj`` list of Chat Completions messages.

Each run reads as one transcript; writing puts every run back with its ``traj`` replaced.
"""

from __future__ import annotations

from compactctl.errors import InputError
from compactctl.formats.base import Signature, Transcript
from compactctl.formats.records import Record, check_message, dumps_document

NAME = "tau-bench"
SIGNATURE = Signature((("traj",), ("task_id", "reward")), "runs with a 'traj' list")
MANY_PER_FILE = True  # one run per task


def detect(records: list[Record]) -> bool:
    first = records[0].value if records else None
    return isinstance(first, dict) and isinstance(first.get("traj"), list)


def read(records: list[Record], path: str) -> list[Transcript]:
    for n, record in enumerate(records):
        if not isinstance(record.value, dict) or not isinstance(record.value.get("traj"), list):
            raise InputError(f"run {n}: expected an object with a 'traj' list of messages", path, record.line)
    return [
        Transcript(
            [check_message(m, path, None, f"run {n} traj[{i}]") for i, m in enumerate(record.value["traj"])],
            f"run {n}",
            envelope=record.value,
        )
        for n, record in enumerate(records)
    ]


def write(transcripts: list[Transcript]) -> bytes:
    runs = [{**(t.envelope or {}), "traj": t.messages} for t in transcripts]
    return dumps_document(runs)
