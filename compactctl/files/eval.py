"""``eval``, one before/after pair: probes built from BEFORE, answered from AFTER."""

from __future__ import annotations

import dataclasses

from compactctl.config import InputOptions
from compactctl.errors import InputError
from compactctl.evaluate import FileEvaluation, Judge, evaluate, merged
from compactctl.files.io import read_source
from compactctl.formats import load
from compactctl.formats.records import skip_list
from compactctl.model_input import model_input


def eval_pair(
    name: str, before: str, after: str, read: InputOptions = InputOptions(), judge: Judge | None = None
) -> FileEvaluation:
    """Probe one file's history and score its compacted counterpart (transcripts paired in order).

    With ``--on-error skip``, bad lines of either file are left out and listed (AFTER's with its name).
    """
    skipped, skipped_after = skip_list(read.on_error), skip_list(read.on_error)
    fmt, originals = load(read_source(before), before, read.format, skipped)
    _, compacted = load(read_source(after), after, read.format, skipped_after)
    if len(originals) != len(compacted):
        raise InputError(f"holds {len(compacted)} transcript(s), BEFORE holds {len(originals)}", after)
    # Both sides as the model receives them on resume (model_input), the measure compact and report use.
    scored = [evaluate(model_input(o), model_input(c), judge) for o, c in zip(originals, compacted, strict=True)]
    left_out = [*(skipped or ()), *(dataclasses.replace(s, file=after) for s in skipped_after or ())]
    return FileEvaluation(name, fmt.name, merged(scored), tuple(left_out))
