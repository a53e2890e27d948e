"""A mutator over real transcripts, and the library and CLI pipelines it is run through.

``mutants(seed)`` yields inputs made from the files under /work/shared/transcripts (and the
samples and format fixtures): a file's records, cut to a window, then one of three kinds of
mutation (``KINDS``):

- **field**: one to three changes to the records (a value replaced by one of another type,
  more often one of the fields readers rely on: ``model``, ``usage.*``, ``type``, ``role``,
  ``system``...; a key dropped or added; a record duplicated, dropped or moved);
- **line**: the serialized lines themselves (one cut short, dropped, doubled, swapped, a NUL
  or garbage line, a CRLF, a BOM, a blank line);
- **byte**: a few bytes of the serialized file flipped, inserted or deleted.

``run_library(data)`` reads the bytes with every strategy, the report, replay, the recorded
usage and the writer, as the commands would; ``run_cli(data, folder, number)`` runs one of
the commands on it. Each returns None when the run held (a result, or compactctl's one-line
error), else the crash as ``ExceptionType at file:line``. ``tests/test_fuzz.py`` runs a fixed
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
    from tests.helpers import bundled_samples

    shared = [p for p in SHARED.rglob("*") if p.suffix in (".jsonl", ".json", ".traj") and p.is_file()]
    own = [*bundled_samples(), *(ROOT / "tests" / "formats" / "data").glob("*.json*")]
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


# Fields readers rely on: a mutation lands on one of them more often than chance would have it.
TARGET_KEYS = frozenset({
    "model", "usage", "input_tokens", "output_tokens", "cache_read_input_tokens", "cache_creation_input_tokens",
    "prompt_tokens", "completion_tokens", "type", "role", "system", "content", "payload", "info",
    "total_token_usage", "last_token_usage", "timestamp", "parentUuid", "uuid", "id", "arguments", "tool_calls",
    "messages", "text", "name", "call_id", "output",
})  # fmt: skip
KINDS = ("field", "line", "byte")


def _mutate_record(record: Any, rng: random.Random) -> Any:
    paths = list(_paths(record))
    targeted = [p for p in paths if p and p[-1] in TARGET_KEYS]
    path = rng.choice(targeted) if targeted and rng.random() < 0.5 else rng.choice(paths)
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


def mutate(source: Source, rng: random.Random, kind: str = "field") -> bytes:
    """One mutant of a source: a window of its records, mutated as ``kind`` says, in its layout."""
    records = json.loads(json.dumps(source.records[:MAX_RECORDS] if source.layout == "jsonl" else source.records))
    if source.layout == "json" and len(records) > 3:  # a tau-bench array: a few runs are enough
        start = rng.randrange(len(records) - 2)
        records = records[start : start + 3]
    for _ in range(rng.randint(1, 3) if kind == "field" else 0):
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
        if kind == "field" and lines and rng.random() < 0.05:  # a line cut short, as a killed writer leaves it
            cut = rng.randrange(len(lines))
            lines[cut] = lines[cut][: rng.randrange(1, max(2, len(lines[cut])))]
        if kind == "line":
            lines = _mutate_lines(lines, rng)
        data = b"\n".join(lines) + b"\n"
    else:
        document: Any = records if len(source.records) != 1 or isinstance(source.records, list) else records[0]
        if len(source.records) == 1 and not isinstance(json.loads(source.path.read_bytes()), list):
            document = records[0] if records else {}
        data = json.dumps(document, ensure_ascii=False).encode("utf-8", "surrogatepass")
        if kind == "line":
            data = b"\n".join(_mutate_lines(data.splitlines() or [data], rng))
    return _mutate_bytes(data, rng) if kind == "byte" else data


GARBAGE_LINES = (b"\x00", b"\x00\x00{}", b"{", b"}", b"null", b"[]", b"42", b'"text"', b"\xff\xfe", b"{\"a\": 1}",
                 b"\xef\xbb\xbf{}", b"   ", b"{\"role\": \"user\"}", b"\t", b"1e999", b"-0", b"[" * 300)  # fmt: skip


def _mutate_lines(lines: list[bytes], rng: random.Random) -> list[bytes]:
    lines = list(lines)
    for _ in range(rng.randint(1, 3)):
        if not lines:
            lines.append(rng.choice(GARBAGE_LINES))
            continue
        at = rng.randrange(len(lines))
        action = rng.randrange(8)
        if action == 0:
            lines[at] = lines[at][: rng.randrange(0, max(1, len(lines[at])))]  # cut short
        elif action == 1:
            del lines[at]
        elif action == 2:
            lines.insert(at, lines[at])
        elif action == 3:
            other = rng.randrange(len(lines))
            lines[at], lines[other] = lines[other], lines[at]
        elif action == 4:
            lines.insert(at, rng.choice(GARBAGE_LINES))
        elif action == 5:
            lines[at] = lines[at] + b"\r"
        elif action == 6:
            lines[at] = b"\xef\xbb\xbf" + lines[at]
        else:
            lines.insert(at, b"")
    return lines


def _mutate_bytes(data: bytes, rng: random.Random) -> bytes:
    buffer = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        if not buffer:
            buffer.append(rng.randrange(256))
            continue
        at = rng.randrange(len(buffer))
        action = rng.randrange(3)
        if action == 0:
            buffer[at] = rng.randrange(256)
        elif action == 1:
            buffer.insert(at, rng.choice(b'{}[]":,\\\n\x00\xff0-e'))
        else:
            del buffer[at]
    return bytes(buffer)


def mutants(seed: int, count: int, loaded: list[Source] | None = None) -> Iterator[tuple[str, bytes]]:
    """``count`` mutants, round-robin over the sources and the kinds; the same seed gives the same inputs."""
    rng = random.Random(seed)
    loaded = loaded or load_sources()
    for number in range(count):
        source = loaded[number % len(loaded)]
        kind = KINDS[(number // len(loaded)) % len(KINDS)]
        yield f"{source.path.name}#{number}:{kind}", mutate(source, rng, kind)


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


def _recorded(data: bytes, name: str, format_name: str) -> None:
    """The recorded calls and their calibration, as ``report`` and ``replay`` read them."""
    from compactctl.calibration import calibrate
    from compactctl.formats.records import parse_records
    from compactctl.recorded import read_recorded

    session = read_recorded(format_name, parse_records(data, name)[0], name)
    if session is not None:
        calibrate(session, format_name)


CLI_COMMANDS = ("compact", "prune", "report", "replay", "review", "eval")


def cli_arguments(source: Path, folder: Path, number: int) -> list[str]:
    """The command mutant ``number`` is run through: the six commands in turn, then with and
    without ``--json`` in turn, then with and without ``--on-error skip`` in turn."""
    out = str(folder / f"out{number}.jsonl")
    command = CLI_COMMANDS[number % len(CLI_COMMANDS)]
    arguments = {
        "compact": ["compact", str(source), "-o", out, *(("-s", "prune", "-s", "window") if number % 4 else
                    ("-s", "structured", "--threshold", "200"))],
        "prune": ["prune", str(source), "-o", out],
        "report": ["report", str(source)],
        "replay": ["replay", str(source), "--threshold", "500"],
        "review": ["review", str(source), "-o", str(folder / f"page{number}.html"), "-s", "window"],
        "eval": ["eval", str(source), str(source)],
    }[command]  # fmt: skip
    turn = number // len(CLI_COMMANDS)
    return [*arguments, *(["--json"] if turn % 2 == 0 else []), *(["--on-error", "skip"] if turn // 2 % 2 else [])]


def run_cli(data: bytes, folder: Path, number: int) -> str | None:
    """One command (``cli_arguments``) on ``data``, in this process; None when it held.

    Held means: no exception escaped the CLI, the exit code is one SPEC names (0-3), and no
    file failed as "cannot process this file" (a bug the batch caught: its site is named).
    """
    from typer.testing import CliRunner

    from compactctl.cli.main import app
    from compactctl.errors import CompactctlError
    from compactctl.files import jobs

    source = folder / f"in{number}.jsonl"
    source.write_bytes(data)
    arguments = cli_arguments(source, folder, number)
    caught: list[str] = []
    attempt = jobs.attempt

    def noting(job: Any, work: Any) -> Any:  # the batch's own catch-all, told to say where the bug was
        def watched(given: Any) -> Any:
            try:
                return work(given)
            except (CompactctlError, OSError):
                raise
            except Exception as error:
                caught.append(crash_site(error))
                raise

        return attempt(job, watched)

    jobs.attempt = noting
    try:
        result = CliRunner().invoke(app, arguments)
    finally:
        jobs.attempt = attempt
    for leftover in folder.iterdir():  # what the run wrote; the test's own caches (folders) stay
        if not leftover.is_dir():
            leftover.unlink()
    name = " ".join([arguments[0], *(a for a in arguments if a in ("--json", "--on-error"))])
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        return f"cli {name}: {crash_site(result.exception)}"
    if result.exit_code not in (0, 1, 2, 3):
        return f"cli {name}: exit {result.exit_code}"
    if caught:
        return f"cli {name}: {caught[0]}"
    if "Traceback" in result.output or "cannot process this file" in result.output:
        return f"cli {name}: {result.output.strip().splitlines()[-1][:120]}"
    return None


def run_library(data: bytes, name: str = "<fuzz>", number: int = 0) -> str | None:
    """Read, compact with one step set, report, replay and write ``data``; None when nothing crashed."""
    import compactctl
    from compactctl.errors import CompactctlError
    from compactctl.formats import native_violation
    from compactctl.tokens import TokenCounter

    counter = TokenCounter("approx")
    try:
        fmt, transcripts = compactctl.load(data, name)
        _recorded(data, name, fmt.name)
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
