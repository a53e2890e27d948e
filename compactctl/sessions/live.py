"""The live context of a session: what the client sends the model when it resumes, in the model's tokens.

The messages are the format reader's (the live conversation, after the client's last
compaction). Claude Code and Codex files record each call's usage, so the figure is
``report``'s calibration (``compactctl.calibration``) applied to them: the hidden prefix
fitted for the session's last stretch of calls (the harness's system prompt and tools, never
written to the file), plus the fitted tokens per counted token of the text, plus the
per-message term. A compactctl-compacted Claude Code session repeats the old calls' usage on
the copies it writes after its boundary; those copies are left out of the fit (their usage
describes a context that is gone). Gemini CLI records each response's ``tokens`` (the API's
``promptTokenCount``): the hidden prefix is the last such call's input less the count of the
messages it was sent with, read from the file as it stood before that response.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from compactctl.formats import FORMATS
from compactctl.formats.records import Record, parse_records
from compactctl.tokens import DEFAULT_ENCODING, counter_for
from compactctl.transcript import Message


@dataclass(frozen=True)
class LiveContext:
    tokens: int  # what the next request holds before the new prompt, in the model's tokens
    basis: str  # "calibrated": fitted on the file's usage; "anchored": the last call's input; "counted": no usage
    messages: int  # live messages (what a resume sends of the file)


def live_messages(format_name: str, records: list[Record], path: str) -> list[Message]:
    transcripts = FORMATS[format_name].read(records, path)
    return transcripts[0].messages if transcripts else []


def live_context(
    format_name: str, data: bytes, path: str, copied_usage: Callable[[dict[str, Any]], bool] = lambda value: False
) -> LiveContext:
    records, _ = parse_records(data, path)
    messages = live_messages(format_name, records, path)
    if format_name in ("claude-code", "codex"):
        calibrated = _calibrated(format_name, records, path, messages, copied_usage)
        if calibrated is not None:
            return calibrated
    if format_name == "gemini":
        anchored = _anchored(records, path, messages)
        if anchored is not None:
            return anchored
    return LiveContext(counter_for(DEFAULT_ENCODING).messages(messages), "counted", len(messages))


def _without_copied_usage(records: list[Record], copied: Callable[[dict[str, Any]], bool]) -> list[Record]:
    kept = []
    for record in records:
        value = record.value
        if isinstance(value, dict) and copied(value):
            message = {k: v for k, v in value["message"].items() if k != "usage"}
            record = Record(record.line, {**value, "message": message}, None)
        kept.append(record)
    return kept


def _calibrated(
    format_name: str,
    records: list[Record],
    path: str,
    messages: list[Message],
    copied: Callable[[dict[str, Any]], bool],
) -> LiveContext | None:
    from compactctl.calibration import calibrate, segment_of
    from compactctl.recorded import read_recorded

    session = read_recorded(format_name, _without_copied_usage(records, copied), path)
    if session is None or not session.has_usage:
        return None
    calibration = calibrate(session, format_name)
    counter = counter_for(calibration.encoding, calibration.provider)
    main = max(session.contexts, key=lambda context: len(context.calls))
    segments = segment_of(main)
    prefix = calibration.prefix_of(segments[-1]) if segments else calibration.default_prefix
    text = counter.messages(messages)
    tokens = prefix + calibration.ratio * text + calibration.per_message * len(messages)
    return LiveContext(round(tokens), "calibrated", len(messages))


def _anchored(records: list[Record], path: str, messages: list[Message]) -> LiveContext | None:
    """Gemini CLI: the last response the client recorded on a line of its own (not a copy in a checkpoint)."""
    counter = counter_for(DEFAULT_ENCODING)
    for position in range(len(records) - 1, -1, -1):
        value = records[position].value
        tokens = value.get("tokens") if isinstance(value, dict) and value.get("type") == "gemini" else None
        if not isinstance(tokens, dict) or not isinstance(tokens.get("input"), int):
            continue
        # The response's first copy: the client writes a record again as its tool calls finish.
        first = next(n for n, r in enumerate(records) if isinstance(r.value, dict) and r.value.get("id") == value["id"])
        before = live_messages("gemini", records[:first], path)
        prefix = tokens["input"] - counter.messages(before)
        return LiveContext(max(0, prefix) + counter.messages(messages), "anchored", len(messages))
    return None
