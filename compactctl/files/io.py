"""The shared I/O of every command's job: which inputs and outputs, reading, sniffing, atomic writes.

Planning (which output each input goes to, refusing to overwrite an input), reading
(a SQLite file as SQLite sees it), sniffing a file's format from its first lines, and atomic
writes staged into one unit. The batch runner that runs the jobs is ``files.jobs``.
"""

from __future__ import annotations

import contextlib
import os
import stat
import sys
import threading
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

import orjson

from compactctl import interrupts, lazyre
from compactctl.errors import CompactctlError, InputError
from compactctl.formats import SUFFIXES, Format, detect
from compactctl.formats.base import Opener
from compactctl.formats.records import BOM, SQLITE_MAGIC, Record

STDIO = "-"
OUTPUT_MARK = ".compacted"
PRUNED_MARK = ".pruned"
OUTPUT_MARKS = (OUTPUT_MARK, PRUNED_MARK)  # outputs of earlier runs, left out of folder inputs
# Why a file (or folder) compact's output should hold may be missing: said where one is looked for.
UNWRITTEN = "compact writes no copy of a file it leaves unchanged: --write-unchanged writes one"


@dataclass(frozen=True)
class Job:
    """One input file, where its output goes, and its name in reports."""

    source: str  # a path, or "-" for stdin
    target: str | None  # a path, "-" for stdout, or None when nothing is written
    name: str  # the path relative to the folder given, for reports and matching


def find_transcripts(folder: Path) -> list[Path]:
    """Transcript files below ``folder``, sorted; outputs of an earlier run are left out."""
    return sorted(
        path
        for path in folder.rglob("*")
        if path.is_file()
        and path.suffix in SUFFIXES
        and not is_output_name(path.name)
        and not is_sidecar(path)
        and not is_resume_stub(path)
    )


# A session id as Claude Code names its files: ``<uuid>.jsonl``.
_SESSION_FILE = lazyre.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\.jsonl")


def is_resume_stub(path: Path) -> bool:
    """An empty ``<uuid>.jsonl``: Claude Code 2.0.x's ``-p --resume`` opens a file named by the resuming run's own
    session id, writes nothing to it and goes on in the resumed session's file (measured on 2.0.76 against the
    loopback fake: one such file per resume). No transcript: a folder leaves it out; named on its own it is still
    an empty file."""
    return bool(_SESSION_FILE.fullmatch(path.name)) and path.stat().st_size == 0


# A Codex home's own JSON Lines beside its ``sessions/``: the threads' names (``session_index.jsonl``, where the
# terminal UI writes the titles it asks the model for) and the prompt history; Claude Code 2.1's list of a project
# folder's sessions for ``/resume`` (``sessions-index.json``, measured with the real 2.1.9): no transcript.
CODEX_HOME_FILES, CLAUDE_PROJECT_FILES = frozenset({"session_index.jsonl", "history.jsonl"}), {"sessions-index.json"}


def is_sidecar(path: Path) -> bool:
    """Claude Code's ``<session>/subagents/agent-<id>.meta.json`` (a subagent's settings), ``CLAUDE_PROJECT_FILES``;
    a Codex home's ``CODEX_HOME_FILES``: not a transcript."""
    if path.name in CLAUDE_PROJECT_FILES or (path.name in CODEX_HOME_FILES and (path.parent / "sessions").is_dir()):
        return True
    return path.parent.name == "subagents" and path.name.endswith(".meta.json")


def read_with_its_session(source: str, sources: set[str]) -> bool:
    """A subagent's file whose session file is among ``sources``: the session reads it (its calls are the
    session's), so it is not a file of its own. Claude Code's ``<session>/subagents/agent-*.jsonl`` (2.0's beside the
    session: ``recorded.claude_code_agents``); a Codex subagent's rollout, which names its parent's thread
    (``recorded.codex_agents``); a Gemini CLI subagent's ``<session id>/<agent id>.jsonl`` (``gemini_agents``)."""
    path = Path(source)
    if path.name.startswith("agent-"):
        from compactctl.recorded.claude_code_agents import read_by_session

        if read_by_session(source, sources):
            return True
    if path.name.startswith("rollout-"):
        from compactctl.recorded.codex_agents import read_by_parent

        return read_by_parent(source, sources)
    from compactctl.recorded.gemini_agents import read_by_parent as read_by_gemini_session

    return read_by_gemini_session(source, sources)


def is_output_name(name: str) -> bool:
    """``x.compacted.jsonl``, ``x.pruned.jsonl``: a name compactctl gives what it writes."""
    return any(f"{mark}." in Path(name).name for mark in OUTPUT_MARKS)


def expand_inputs(inputs: Iterable[str]) -> Iterator[tuple[str, str, Path | None]]:
    """(source, name, folder it came from) for every file the inputs name.

    Outputs of an earlier run are inputs only when named on their own: a folder leaves them out,
    and so do several files given at once among other inputs (``compact dir/*.jsonl`` run twice
    must not compact its own outputs); :func:`left_out_outputs` says which were.
    """
    inputs = list(inputs)
    several = _mixed_with_outputs(inputs)
    for given in inputs:
        if several and given != STDIO and is_output_name(given) and Path(given).is_file():
            continue
        if given == STDIO:
            yield STDIO, "<stdin>", None
            continue
        path = Path(given)
        if path.is_dir():
            found = find_transcripts(path)
            if not found:
                raise InputError(f"no transcripts ({', '.join(SUFFIXES)} files) in this folder", given)
            for file in found:
                yield str(file), str(file.relative_to(path)), path
        elif path.is_file():
            yield given, path.name, None
        else:
            raise InputError("no such file or folder", given)


def left_out_outputs(inputs: Iterable[str]) -> list[str]:
    """The files given that :func:`expand_inputs` leaves out as outputs of an earlier run."""
    inputs = list(inputs)
    if not _mixed_with_outputs(inputs):
        return []
    return [given for given in inputs if given != STDIO and is_output_name(given) and Path(given).is_file()]


def _mixed_with_outputs(inputs: list[str]) -> bool:
    """Several inputs, some of them not outputs: the outputs among them came with a glob, not by name."""
    return len(inputs) > 1 and any(given == STDIO or not is_output_name(given) for given in inputs)


def default_target(source: str, mark: str = OUTPUT_MARK) -> str:
    """``name.compacted.jsonl`` beside ``name.jsonl``."""
    path = Path(source)
    return str(path.with_name(f"{path.stem}{mark}{path.suffix or '.jsonl'}"))


def plan(inputs: list[str], output: str | None, mark: str = OUTPUT_MARK) -> list[Job]:
    """Where each input's output goes; refuses plans that would overwrite an input."""
    found = list(expand_inputs(inputs))
    from_folder = any(folder is not None for _, _, folder in found)
    if output == STDIO and len(found) > 1:
        raise InputError("-o - writes one transcript to stdout; give one input file")
    if (from_folder or len(found) > 1) and output is None and any(s == STDIO for s, _, _ in found):
        raise InputError("stdin cannot be mixed with other inputs")
    if from_folder and output is None:
        raise InputError("a folder input needs -o DIR to mirror its tree into")
    jobs = []
    inside: dict[Path, bool] = {}  # folder -> the output folder is inside it (resolved once a folder, not a file)
    for source, name, folder in found:
        if output == STDIO or (output is None and source == STDIO):
            target = STDIO
        elif output is None:
            target = default_target(source, mark)
        elif from_folder or len(found) > 1 or Path(output).is_dir():
            if source == STDIO:
                raise InputError("stdin has no file name to write into this folder; give -o FILE", output)
            target = str(Path(output) / name)
            if folder is not None and folder not in inside:
                inside[folder] = _inside(Path(output), folder)
            if folder is not None and inside[folder]:
                raise InputError("the output folder is inside the input folder; choose a folder outside it", output)
        else:
            target = output
        if source != STDIO and target != STDIO and same_file(source, target):
            raise InputError("the output would overwrite the input; inputs are never overwritten", target)
        if source == STDIO and target != STDIO and _stdin_is(target):
            raise InputError("stdin is this file: the output would overwrite the input", target)
        jobs.append(Job(source, target, name))
    check_distinct_targets(jobs)
    return jobs


def check_side_files(jobs: list[Job], **files: Path | None) -> None:
    """A --manifest or --archive file must not be an input, an output, or the other side file."""
    if all(path is None for path in files.values()):
        return  # no side file: nothing to resolve every input and output for (2 of plan's 7 a file)
    taken: dict[Path, str] = {}
    for job in jobs:
        if job.source != STDIO:
            taken[Path(job.source).resolve()] = "an input"
        if job.target not in (None, STDIO):
            taken[Path(job.target).resolve()] = "an output"
    stdout = "-o -" if any(job.target == STDIO for job in jobs) else None
    for flag, path in files.items():
        if path is None:
            continue
        if str(path) == STDIO:
            if stdout is not None:  # one stream, two JSON Lines documents interleaved: neither could be read back
                raise InputError(f"--{flag} - and {stdout} would both write to stdout; give --{flag} a file", STDIO)
            stdout = f"--{flag} -"
            continue
        key = path.resolve()
        if key in taken:
            raise InputError(f"--{flag} would overwrite {taken[key]}; choose another file", str(path))
        taken[key] = f"the --{flag} file"
        _check_writable(path, flag)


def _check_writable(path: Path, flag: str) -> None:
    """A side file that cannot be written fails the run before any output is, not after."""
    if path.is_dir():
        raise InputError(f"cannot write the --{flag} file: it is a folder; give a file", str(path))
    folder = path.parent
    while not folder.exists() and folder != folder.parent:  # write_atomic makes the missing folders
        folder = folder.parent
    if not folder.is_dir() or not os.access(folder, os.W_OK | os.X_OK):
        raise InputError(f"cannot write the --{flag} file: {folder} is not a writable folder", str(path))
    if path.exists() and not os.access(path, os.W_OK) and not os.access(folder, os.W_OK):
        raise InputError(f"cannot write the --{flag} file", str(path))


def check_distinct_targets(jobs: list[Job]) -> None:
    """Two inputs written to one output would leave only the last: refuse before anything is read."""
    seen: dict[Path, str] = {}
    for job in jobs:
        if job.target is None or job.target == STDIO:
            continue
        key = Path(job.target).resolve()
        if key in seen:
            raise InputError(
                f"{seen[key]} and {job.source} would both be written here; give each input once, "
                "or folders whose files do not share relative paths",
                job.target,
            )
        seen[key] = job.source


def _inside(path: Path, folder: Path) -> bool:
    return path.resolve().is_relative_to(folder.resolve())


def same_file(a: str, b: str) -> bool:
    if Path(a).resolve() == Path(b).resolve():
        return True
    try:  # a hard link is the same file under another name
        return os.path.samefile(a, b)
    except OSError:
        return False


def _stdin_is(target: str) -> bool:
    """``compact - -o in.jsonl < in.jsonl``: stdin is the very file the output would replace."""
    try:
        given, there = os.fstat(sys.stdin.fileno()), os.stat(target)
    except (OSError, ValueError, AttributeError):  # no real stdin (a test runner's), or no such target yet
        return False
    return stat.S_ISREG(given.st_mode) and (given.st_dev, given.st_ino) == (there.st_dev, there.st_ino)


def read_source(source: str) -> bytes:
    if source == STDIO:
        return sys.stdin.buffer.read()
    try:
        data = Path(source).read_bytes()
    except OSError as error:
        raise InputError(f"cannot read: {error.strerror}", source) from None
    return _database_snapshot(source) if data.startswith(SQLITE_MAGIC) else data


def _database_snapshot(source: str) -> bytes:
    """A SQLite file as SQLite reads it: with what its write-ahead log (``-wal``) holds that the file does not yet."""
    import sqlite3
    from contextlib import closing

    try:
        with closing(sqlite3.connect(f"file:{Path(source).resolve()}?mode=ro", uri=True)) as connection:
            return connection.serialize()
    except sqlite3.Error as error:
        raise InputError(f"unreadable SQLite database: {error}", source) from None


def _read_umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


# Read once, at import (os.umask can only be read by setting it, which threads must not race on).
_UMASK = _read_umask()


def _is_special(path: Path) -> bool:
    try:
        mode = path.stat().st_mode
    except OSError:
        return False
    return stat.S_ISCHR(mode) or stat.S_ISFIFO(mode) or stat.S_ISBLK(mode)


class Staged:
    """The outputs of one run (transcripts, --manifest, --archive): temporaries renamed together or not at all.

    While a batch is open (``one_unit``), ``write_atomic`` leaves each file as a temporary beside
    its target; ``commit`` renames them all, then syncs their folders, and ``discard`` removes
    them, leaving every existing target as it was.
    """

    def __init__(self, fsync: bool = True) -> None:
        self.fsync = fsync
        self.files: list[tuple[Path, Path]] = []  # (temporary, target)
        self.lock = threading.Lock()

    def add(self, temporary: Path, target: Path) -> None:
        interrupts.register(temporary)
        with self.lock:
            self.files.append((temporary, target))

    def close(self) -> None:
        """Writes after this one are no longer staged (a --junit report written after the renames)."""
        global _staged
        if _staged is self:
            _staged = None

    def commit(self) -> None:
        self.close()
        with self.lock:
            files, self.files = self.files, []
        if interrupts.stopping.is_set():
            raise KeyboardInterrupt
        folders = []
        for temporary, target in files:
            try:
                os.replace(temporary, target)
            except OSError as error:
                raise InputError(f"cannot write: {error.strerror or error}", str(target)) from None
            finally:
                interrupts.unregister(temporary)
            folders.append(target.parent)
        if self.fsync:
            for folder in dict.fromkeys(folders):
                sync_folder(folder)

    def discard(self) -> None:
        self.close()
        with self.lock:
            files, self.files = self.files, []
        for temporary, _ in files:
            temporary.unlink(missing_ok=True)
            interrupts.unregister(temporary)


_staged: Staged | None = None


def current_unit() -> Staged | None:
    """The unit ``write_atomic`` stages into now, if one is open (a forked worker's is a copy of its parent's)."""
    return _staged


@contextlib.contextmanager
def one_unit(fsync: bool = True) -> Iterator[Staged]:
    """Every ``write_atomic`` inside the block is staged; what is not committed by its end is removed."""
    global _staged
    batch = Staged(fsync)
    _staged = batch
    try:
        yield batch
    finally:
        _staged = None
        batch.discard()


def sync_folder(folder: Path) -> None:
    """A rename is only durable once its folder is synced (a crash could otherwise undo it)."""
    with contextlib.suppress(OSError):  # not every file system lets a folder be opened (or synced)
        handle = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(handle)
        finally:
            os.close(handle)


def output_mode(target: Path, like: Iterable[str] = ()) -> int:
    """The mode an output gets: the existing output's (else the umask's), never wider than an input's."""
    try:
        mode = stat.S_IMODE(target.stat().st_mode)
    except OSError:
        mode = 0o666 & ~_UMASK
    for source in like:
        if source == STDIO:
            continue
        with contextlib.suppress(OSError):
            mode &= stat.S_IMODE(os.stat(source).st_mode)
    return mode


def write_atomic(target: str, data: bytes | Callable[[BinaryIO], object], like: Iterable[str] = ()) -> None:
    """Write to a temporary file beside the target, then rename: readers never see half a file.

    ``data`` is the bytes, or a function writing them into the file it is given (an output
    made one line at a time is never held whole). The temporary is created 0600 and gets
    ``output_mode`` (of the target and the inputs in ``like``) before it takes the target's
    place: a private session never becomes readable by others. Inside ``one_unit`` the rename
    waits for the batch's commit. A write that fails names the target, not the temporary.
    """
    fill = data if callable(data) else lambda file: file.write(data)
    if target == STDIO:
        fill(sys.stdout.buffer)
        sys.stdout.buffer.flush()
        return
    path = Path(target)
    if _is_special(path):  # /dev/null, a named pipe: a rename would replace the device with a plain file
        with open(path, "wb") as file:
            fill(file)
        return
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        interrupts.remove_stale(path)  # left by a run killed outright; never one still running
        mode = output_mode(path, like)
        temporary = interrupts.temporary_name(path)
        interrupts.register(temporary)
        renamed = False
        try:
            # O_EXCL: the name is this process's own.
            handle = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(handle, "wb") as file:
                fill(file)
                file.flush()
                os.fchmod(file.fileno(), mode)
                os.fsync(file.fileno())
            if interrupts.stopping.is_set():  # stopped while writing: the target keeps what it had
                raise KeyboardInterrupt
            staged = _staged
            if staged is not None:
                staged.add(temporary, path)  # renamed with the rest of the run, or removed
                renamed = True
                return
            os.replace(temporary, path)
            renamed = True
        finally:
            if not renamed:
                temporary.unlink(missing_ok=True)
            if _staged is None or not renamed:
                interrupts.unregister(temporary)
        sync_folder(path.parent)
    except OSError as error:
        raise InputError(f"cannot write: {error.strerror or error}", target) from None


# As many first records as any detector looks at (Anthropic's looks at 50): the format they give is
# the one a whole read would detect, so the whole read takes it and the file is sniffed once.
SNIFFED_RECORDS = 50


def sniff(source: str, sample: int = SNIFFED_RECORDS) -> Format | None:
    """The format of a JSON Lines file of objects, by its first ``sample`` records; None when it is
    not one (one JSON document, a database, a first line that does not parse) or they detect as none."""
    records: list[Record] = []
    with open(source, "rb") as file:
        for number, line in enumerate(file, start=1):
            if line.strip():
                try:
                    records.append(Record(number, orjson.loads(line.removeprefix(BOM) if number == 1 else line)))
                except orjson.JSONDecodeError:
                    if not records:  # a first line that does not parse may begin a JSON document
                        return None
                    continue  # a bad line further on is the reader's to name (or skip)
                if len(records) == sample:
                    break
    if not records or not isinstance(records[0].value, dict):
        return None
    try:
        return detect(records, source)
    except CompactctlError:
        return None


def sniffed(source: str, format: str = "auto") -> Format | None:
    """The format a job reads ``source`` as when it can tell before reading it whole: sniffed
    from a file that can be read again, unless ``format`` names another."""
    if source == STDIO or not Path(source).is_file():
        return None
    found = sniff(source)
    return found if found is not None and format in ("auto", found.name) else None


def opener(source: str) -> Opener:
    """``source`` opened again for reading at each call: what a format that walks a file is given."""
    return lambda: open(source, "rb")
