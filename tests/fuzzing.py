"""A mutator over real transcripts, and the library pipeline it is run through.

``mutants(seed)`` yields inputs made from the files under /work/shared/transcripts (and the
samples and format fixtures): a file's records, cut to a window, with one to three
mutations each (a value replaced by one of another type, a key dropped or added, a record
duplicated, dropped or cut short). ``run_library(data)`` reads the bytes with every
strategy, the report, replay and the writer, as ``compact``/``report``/``replay`` would;
it returns None when the run held (a result, or a ``CompactctlError``: the one-line error),
else the crash as ``ExceptionType at file:line``. ``tests/test_fuzz.py`` runs a fixed
budget of these; ``bench/fuzz_bench.py`` runs many more and prints crashes per 10,000.
"""

from __future__ import annotations

import copy
import json
import os
import random
import traceback
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("COMPACTCTL_TRANSCRIPTS") or ROOT.parent / "shared" / "transcripts")
MAX_RECORDS = 60

ODD_VALUES: tuple[Any, ...] = (
    None, 0, -1, 2**70, 1.5, float("1e308"), True, "", "x", "tool", "assistant", [], [1, "x", None], {}, {"a": []},
    [{"type": "text"}], {"type": "function"}, [[]], "2026-13-45T99:99:99Z", "\u0000\ud7ff", "-1",
)  # fmt: skip
ADDED_KEYS = (
    "role", "content", "tool_calls", "tool_call_id", "compactctl", "type", "usage", "message", "payload",
    "parentUuid", "uuid", "function", "arguments", "name", "id", "call_id", "output", "text", "messages", "traj",
    "history", "timestamp", "isSidechain", "requestId",
)  # fmt: skip


def sources() -> list[Path]:
    """The seed files, in an order that does not depend on where the checkout sits.

    Sorted by the path under each root, so a clone at /work/a and one at /tmp/z mutate the
    same files in the same order and a failure found in one is found in the other.
    """
    shared = [p for p in SHARED.rglob("*") if p.suffix in (".jsonl", ".json", ".traj") and p.is_file()]
    own = [*(ROOT / "samples").glob("*.jsonl"), *(ROOT / "tests" / "formats" / "data").glob("*.json*")]
    return sorted(shared, key=lambda p: str(p.relative_to(SHARED))) + sorted(
        own, key=lambda p: str(p.relative_to(ROOT))
    )


@dataclass(frozen=True)
class Source:
    path: Path
    records: list[Any]
    layout: str  # "jsonl" or "json"


def load_sources() -> list[Source]:
    loaded = []
    for path in sources():
        data = path.read_bytes()
        try:
            loaded.append(Source(path, [json.loads(line) for line in data.splitlines() if line.strip()], "jsonl"))
        except ValueError:
            document = json.loads(data)
            loaded.append(Source(path, document if isinstance(document, list) else [document], "json"))
    return loaded


def _odd(rng: random.Random) -> Any:
    return copy.deepcopy(rng.choice(ODD_VALUES))


def _paths(value: Any, prefix: tuple[Any, ...] = (), depth: int = 0) -> Iterator[tuple[Any, ...]]:
    yield prefix
    if depth > 6:
        return
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _paths(item, (*prefix, key), depth + 1)
    elif isinstance(value, list):
        for index, item in enumerate(value[:20]):
            yield from _paths(item, (*prefix, index), depth + 1)


def _get(value: Any, path: tuple[Any, ...]) -> Any:
    for step in path:
        value = value[step]
    return value


def _mutate_record(record: Any, rng: random.Random) -> Any:
    paths = list(_paths(record))
    path = rng.choice(paths)
    if not path:
        return _odd(rng) if rng.random() < 0.3 else record
    parent = _get(record, path[:-1])
    key = path[-1]
    action = rng.random()
    if action < 0.55:
        parent[key] = _odd(rng)
    elif action < 0.75 and isinstance(parent, dict):
        del parent[key]
    elif isinstance(parent, dict):
        parent[rng.choice(ADDED_KEYS)] = _odd(rng)
    elif isinstance(parent, list):
        parent.insert(rng.randrange(len(parent) + 1), _odd(rng))
    return record


def mutate(source: Source, rng: random.Random) -> bytes:
    """One mutant of a source: a window of its records, one to three mutations, serialized in its layout."""
    records = json.loads(json.dumps(source.records[:MAX_RECORDS] if source.layout == "jsonl" else source.records))
    if source.layout == "json" and len(records) > 3:  # a tau-bench array: a few runs are enough
        start = rng.randrange(len(records) - 2)
        records = records[start : start + 3]
    for _ in range(rng.randint(1, 3)):
        if not records:
            break
        index = rng.randrange(len(records))
        action = rng.random()
        if action < 0.8:
            records[index] = _mutate_record(records[index], rng)
        elif action < 0.87:
            records.insert(index, json.loads(json.dumps(records[index])))
        elif action < 0.94:
            del records[index]
        else:
            records[index], records[-1] = records[-1], records[index]
    if source.layout == "jsonl":
        lines = [json.dumps(r, ensure_ascii=False).encode("utf-8", "surrogatepass") for r in records]
        if lines and rng.random() < 0.05:  # a line cut short, as a killed writer leaves it
            cut = rng.randrange(len(lines))
            lines[cut] = lines[cut][: rng.randrange(1, max(2, len(lines[cut])))]
        return b"\n".join(lines) + b"\n"
    document: Any = records if len(source.records) != 1 or isinstance(source.records, list) else records[0]
    if len(source.records) == 1 and not isinstance(json.loads(source.path.read_bytes()), list):
        document = records[0] if records else {}
    return json.dumps(document, ensure_ascii=False).encode("utf-8", "surrogatepass")


def mutants(seed: int, count: int, loaded: list[Source] | None = None) -> Iterator[tuple[str, bytes]]:
    """``count`` mutants, round-robin over the sources; the same seed always gives the same inputs."""
    rng = random.Random(seed)
    loaded = loaded or load_sources()
    for number in range(count):
        source = loaded[number % len(loaded)]
        yield f"{source.path.name}#{number}", mutate(source, rng)


STEP_SETS = (
    ("prune",),
    ("window",),
    ("trim-tools",),
    ("structured",),
    ("summary",),
    ("rolling",),
    ("selective",),
    ("prune", "trim-tools", "window"),
)
SETTINGS = {"keep_recent": 4, "threshold": 200, "tool_max_tokens": 50, "keep_turns": 1, "summary_max_tokens": 100}


def crash_site(error: BaseException) -> str:
    frames = [f for f in traceback.extract_tb(error.__traceback__) if "compactctl" in f.filename]
    where = f"{Path(frames[-1].filename).name}:{frames[-1].lineno}" if frames else "?"
    return f"{type(error).__name__} at {where}"


def run_library(data: bytes, name: str = "<fuzz>", number: int = 0) -> str | None:
    """Read, compact with one step set, report, replay and write ``data``; None when nothing crashed."""
    import compactctl
    from compactctl.errors import CompactctlError
    from compactctl.formats import native_violation
    from compactctl.tokens import TokenCounter

    counter = TokenCounter("approx")
    try:
        fmt, transcripts = compactctl.load(data, name)
        steps = STEP_SETS[number % len(STEP_SETS)]
        for transcript in transcripts[:3]:
            native_violation(transcript)  # a Responses or Anthropic file's own API rules
            result = compactctl.compact(transcript.messages, steps, SETTINGS, counter=counter)
            compactctl.report(transcript.messages, result.messages, encoding="approx")
            compactctl.prune(transcript.messages)
            if number % 4 == 0:
                grid = compactctl.settings_grid([300], False, ["window"])
                compactctl.replay.replay(transcript.messages, grid, SETTINGS, counter=counter)
        compactctl.dump(transcripts, fmt.name)
    except CompactctlError:
        return None
    except RecursionError:
        return "RecursionError"
    except Exception as error:  # the crash is the finding
        return crash_site(error)
    return None
