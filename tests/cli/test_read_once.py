"""Each input is sniffed once and parsed once per job: its format is told from its first records,
and the whole read (when the file is read whole at all) takes that format instead of detecting it
again; ``report`` reads a producer's recorded usage from the records it already parsed.

Counted where the work is done: ``formats.detect`` (every detection, the first records' and a whole
read's) and ``formats.records.parse_records`` / ``database_records`` (a whole file parsed), wrapped
wherever a module holds them, and counted for the input's own path only (the written output read
back, ``<written>``, is another file). A file walked or streamed a line at a time (chat JSON Lines)
is never parsed whole: 0 parses, by design (docs/memory.md).
"""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest

from compactctl.formats import records as records_module
from tests.helpers import bundled_samples

ROOT = Path(__file__).resolve().parents[2]
INPUTS = sorted(
    [
        *bundled_samples(),
        *(p for p in (ROOT / "tests/formats/data").iterdir() if p.is_file()),
        *(ROOT / "tests/formats/data/real-clients").glob("*.jsonl"),
    ]
)

COMMANDS: dict[str, list[str]] = {
    "compact -s prune": ["compact", "-s", "prune"],
    "compact -s window": ["compact", "-s", "window"],
    "compact -s structured": ["compact", "-s", "structured"],
    "compact --manifest": ["compact", "-s", "prune", "--manifest", "{out}/manifest.jsonl"],
    "prune": ["prune"],
    "report": ["report"],
    "replay": ["replay", "-s", "window", "--threshold", "2000"],
    # No -t: the thresholds are fitted to the file before its job runs, and that job replays what was read then.
    "replay (fitted thresholds)": ["replay", "-s", "window", "--json"],
}


class Reads:
    """How often each path was detected and parsed whole."""

    def __init__(self) -> None:
        self.sniffs: Counter[str] = Counter()
        self.parses: Counter[str] = Counter()


def _replace_everywhere(monkeypatch: pytest.MonkeyPatch, original: Callable[..., Any], wrapper: Callable[..., Any]):
    """``wrapper`` wherever a compactctl module holds ``original`` (``from x import f`` copies the name)."""
    held = 0
    for name, module in list(sys.modules.items()):
        if name.startswith("compactctl") and module is not None:
            for attribute, value in list(vars(module).items()):
                if value is original:
                    monkeypatch.setattr(module, attribute, wrapper)
                    held += 1
    assert held, f"nothing holds {original.__name__}: the count would see nothing"


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> Iterator[Reads]:
    # The jobs' modules loaded first, so every reference they hold is seen and replaced.
    import compactctl.cli.main
    import compactctl.files.compact
    import compactctl.files.replay
    import compactctl.files.report
    import compactctl.formats

    counted = Reads()
    detect, parse, database = (
        compactctl.formats.detect,
        records_module.parse_records,
        records_module.database_records,
    )

    def counted_detect(records: list[Any], path: str = "<input>") -> Any:
        counted.sniffs[path] += 1
        return detect(records, path)

    def counted_parse(data: bytes, path: str, *rest: Any, **options: Any) -> Any:
        counted.parses[path] += 1
        return parse(data, path, *rest, **options)

    def counted_database(data: bytes) -> Any:
        found = database(data)
        if found is not None:
            counted.parses["<database>"] += 1
        return found

    _replace_everywhere(monkeypatch, detect, counted_detect)
    _replace_everywhere(monkeypatch, parse, counted_parse)
    _replace_everywhere(monkeypatch, database, counted_database)
    yield counted


def _run(cli, command: list[str], source: Path, out: Path) -> Any:
    arguments = [a.format(out=out) for a in command]
    writes = arguments[0] in ("compact", "prune")
    return cli(*arguments[:1], source, *arguments[1:], *(["-o", out / f"out{source.suffix}"] if writes else []))


@pytest.mark.parametrize("command", COMMANDS, ids=list(COMMANDS))
def test_each_input_is_sniffed_once_and_parsed_at_most_once_per_job(cli, reads, tmp_path, command):
    ran: dict[str, tuple[int, int]] = {}
    fitted: dict[str, str | None] = {}
    for source in INPUTS:
        reads.sniffs.clear()
        reads.parses.clear()
        result = _run(cli, COMMANDS[command], source, tmp_path)
        assert result.exit_code in (0, 1), f"{command} {source.name}: {result.stderr[-300:]}"
        whole = reads.parses[str(source)] + reads.parses["<database>"]
        ran[source.name] = (reads.sniffs[str(source)], whole)
        if command == "replay (fitted thresholds)":
            fitted[source.name] = orjson.loads(result.stdout)["total"]["thresholds_from"]
    assert {name: counts for name, counts in ran.items() if counts[0] != 1 or counts[1] > 1} == {}
    # Both ways through are taken, so the count sees each: files read whole, and (for the
    # commands that stream chat JSON Lines) files never parsed whole.
    assert any(parses == 1 for _, parses in ran.values())
    if command in ("compact -s prune", "prune", "report", "replay", "replay (fitted thresholds)"):
        assert ran["coding-agent.jsonl"] == (1, 0)
    assert ran["claude-code.jsonl"] == (1, 1)
    if command == "replay (fitted thresholds)":  # the files read ahead for their thresholds are among those counted
        assert fitted["claude-code-2.1.332-compacted.jsonl"] and fitted["codex-0.171.0-compacted.jsonl"]
        assert fitted["coding-agent.jsonl"] is None
