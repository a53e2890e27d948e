"""A replay's results, one file's and the run's, and their JSON (pure: values in, values out)."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from compactctl.formats.records import SkippedLine, skipped_json
from compactctl.replay.prices import Prices
from compactctl.replay.simulate import ScenarioResult, aggregate

if TYPE_CHECKING:
    from compactctl.replay.billed_apart import CallsApart
    from compactctl.replay.copies import BilledKeys
    from compactctl.replay.recorded import RecordedReplay


@dataclass(frozen=True)
class FileReplay:
    """One file's replay: settings summed over its transcripts, and the longest one for charts."""

    file: str
    format: str
    transcripts: int
    settings: list[ScenarioResult]
    chart_label: str  # which transcript the chart shows
    chart: list[list[int]]  # per setting: its context size per call in that transcript
    api: RecordedReplay | None = None  # the rows in API units, where the file records its usage
    skipped_lines: tuple[SkippedLine, ...] = ()  # lines left out by --on-error skip
    prices: Prices | None = None  # the model a file with no usage was priced as, where it names one
    billed: BilledKeys | None = None  # the calls it bills that another file may hold a copy of (``replay.copies``)
    shared_calls: int = 0  # its calls another file of the run made and bills (a resume's copies)


def line_up(per_file: Sequence[Sequence[ScenarioResult]]) -> list[list[ScenarioResult]]:
    """The files' rows made to line up: where some file has a ``recorded`` row (its producer
    compacted), a file without one gets its baseline there, which is what its producer did."""
    rows = [list(settings) for settings in per_file]
    if any(len(r) > 1 and r[1].trigger == "recorded" for r in rows):
        for r in rows:
            if r and (len(r) < 2 or r[1].trigger != "recorded"):
                r.insert(1, dataclasses.replace(r[0], trigger="recorded", strategy="producer"))
    return rows


def scenario_json(row: ScenarioResult, basis: str | None = None) -> dict[str, Any]:
    data = dataclasses.asdict(row)
    if basis is not None:
        data["basis"] = basis  # "bill": from the usage the API reported; "estimate": calibrated
    return data


def api_json(api: RecordedReplay) -> dict[str, Any]:
    """The calibration behind a replay in API units, the check against the bill, and the producer's compactions."""
    from compactctl.calibration import calibration_json

    return {
        "calibration": calibration_json(api.calibration),
        "bill_cost": api.bill.cost,
        "unpaired_cost": api.unpaired_cost,  # of the bill: calls the log holds no message for
        "bill_input_tokens": api.bill.input_tokens,
        # What the producer did (its own compactions, or none) replayed with calibrated counts, on the live thread:
        # how far the estimates are from the bill of the same calls (live_thread_bill_cost; bill_cost holds every
        # billed call, the off-thread and unpaired ones too).
        "recorded_estimate_cost": api.recorded_estimate.cost,
        "live_thread_bill_cost": api.live_thread_bill_cost,
        "recorded_estimate_input_tokens": api.recorded_estimate.input_tokens,
        "baseline_estimate_cost": api.baseline_estimate.cost,
        "baseline_estimate_input_tokens": api.baseline_estimate.input_tokens,
        "producer_compactions": api.compactions,
        "history_before_last_compaction": api.history_before_last_compaction,
        "pre_tokens_check": [
            {"call": call, "pre_tokens": pre, "recorded_context": seen} for call, pre, seen in api.pre_tokens_check
        ],
        "notes": list(api.notes),
        "unpriced_models": list(api.unpriced_models),
        # A client's side requests that write no message (Claude Code's WebSearch, WebFetch): in the bill's calls.
        "side_requests": api.side_requests,
        # Billed calls on abandoned branches (rewinds, edited prompts): in every row as billed.
        "off_thread": _calls_apart_json(api.off_thread, "input_tokens", "output_tokens"),
        # The other sampling passes of responses that took several (usage.iterations: an advisor's on its own model):
        # no request of their own, in every row as billed.
        "passes_apart": _calls_apart_json(
            api.passes_apart, "input_tokens", "cached_tokens", "cache_write_tokens", "output_tokens"
        ),
        # The calls the session's subagents made, read from their own files: in the bill and in every row.
        "subagents": _calls_apart_json(api.subagents, "input_tokens", "output_tokens"),
        # The producer's own compaction calls the log records no usage for (an older Codex's remote compaction,
        # Claude Code's summarizing request, Gemini CLI's compression), estimated: in no row, not in bill_cost.
        "compaction_estimate": _calls_apart_json(
            api.compaction_estimate, "input_tokens", "cached_tokens", "output_tokens"
        ),
    }


def _calls_apart_json(part: CallsApart | None, *usage_fields: str) -> dict[str, Any] | None:
    """Billed calls kept apart from the replayed thread: how many, the usage fields named, their cost."""
    if part is None:
        return None
    return {"calls": part.calls, **{name: getattr(part.usage, name) for name in usage_fields}, "cost": part.cost}


def _file_replay_json(f: FileReplay) -> dict[str, Any]:
    bases: Sequence[str | None] = f.api.basis if f.api is not None else [None] * len(f.settings)
    entry: dict[str, Any] = {
        "file": f.file,
        "format": f.format,
        "transcripts": f.transcripts,
        **skipped_json(f.skipped_lines),
        "settings": [scenario_json(r, basis) for r, basis in zip(f.settings, bases, strict=True)],
    }
    if f.api is not None:
        entry["api"] = api_json(f.api)
    return entry


def replay_json(files: Sequence[FileReplay], errors: Sequence[Mapping[str, Any]] = ()) -> dict[str, Any]:
    """The replay's ``files`` (each with its settings), ``failed`` and ``total`` (settings summed over the files)."""
    from compactctl.replay.price_source import source_label

    return {
        "files": [_file_replay_json(f) for f in files],
        "failed": list(errors),
        "total": {
            "files": len(files),
            "transcripts": sum(f.transcripts for f in files),
            "failed": len(errors),
            "skipped_lines": sum(len(f.skipped_lines) for f in files),
            "settings": [scenario_json(row) for row in aggregate(line_up([f.settings for f in files]))],
            "prices": source_label(),  # which list prices priced the run (besides a --prices table)
        },
    }
