"""``eval``, one before/after pair: probes built from BEFORE, answered from AFTER."""

from __future__ import annotations

from compactctl.errors import InputError
from compactctl.evaluate import FileEvaluation, Judge, evaluate, merged
from compactctl.files.io import read_source
from compactctl.formats import load
from compactctl.model_input import model_input


def eval_pair(name: str, before: str, after: str, format: str = "auto", judge: Judge | None = None) -> FileEvaluation:
    """Probe one file's history and score its compacted counterpart (transcripts paired in order)."""
    fmt, originals = load(read_source(before), before, format)
    _, compacted = load(read_source(after), after, format)
    if len(originals) != len(compacted):
        raise InputError(f"holds {len(compacted)} transcript(s), BEFORE holds {len(originals)}", after)
    # Both sides as the model receives them on resume (model_input), the measure compact and report use.
    scored = [evaluate(model_input(o), model_input(c), judge) for o, c in zip(originals, compacted, strict=True)]
    return FileEvaluation(name, fmt.name, merged(scored))
