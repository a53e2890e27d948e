"""``agents-sqlite``: an OpenAI Agents SDK ``SQLiteSession`` database (read and write).

The SDK keeps one row per Responses input item: ``agent_messages(id, session_id,
message_data, created_at)`` with ``message_data`` the item's JSON, and one row per session in
``agent_sessions``. Each session becomes a transcript (label ``session ID``), its items read
by the Responses mapping (``responses.ItemReader``), so calls pair by ``call_id`` and
reasoning items travel with the message after them.

Writing is pure, bytes to bytes: the database as read with every compacted session added
under a new id (``ID-compacted``); sessions left unchanged are not copied, and nothing in
the file as read is touched. Items kept as they were are written with the text of their row;
rebuilt ones as the SDK writes them (``json.dumps``). Replacing a session inside the
database the app uses (``--in-place``) is I/O and lives in ``files/compact.py``; ``session_items``
gives it the rows.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from contextlib import closing, contextmanager
from dataclasses import dataclass

import orjson

from compactctl.errors import InputError
from compactctl.formats.base import Transcript, is_unchanged, native_of
from compactctl.formats.records import Database, Record
from compactctl.formats.responses import Item, ItemReader, ResponsesNative, transcript_items

NAME = "agents-sqlite"
MANY_PER_FILE = True  # every session of the app
SUFFIXES = ()  # a database is named on its own: a folder input does not pick one up
SESSIONS, MESSAGES = "agent_sessions", "agent_messages"
COMPACTED_SUFFIX = "-compacted"
SCHEMA = f"""
CREATE TABLE IF NOT EXISTS {SESSIONS} (
    session_id TEXT PRIMARY KEY,
    created_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP,
    updated_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP
);
CREATE TABLE IF NOT EXISTS {MESSAGES} (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id TEXT NOT NULL,
    message_data TEXT NOT NULL,
    created_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP,
    FOREIGN KEY (session_id) REFERENCES {SESSIONS} (session_id) ON DELETE CASCADE
);
CREATE INDEX IF NOT EXISTS idx_{MESSAGES}_session_id ON {MESSAGES} (session_id, id);
"""  # the SDK's own schema (agents/memory/sqlite_session.py), for a database made by conversion


@dataclass(frozen=True)
class AgentsNative(ResponsesNative):
    """Responses state whose records are the session's rows (``line`` is the row id, ``raw`` its text)."""

    session_id: str = ""
    database: bytes = b""  # the whole file as read: the writer adds to it


def detect(records: list[Record]) -> bool:
    return len(records) == 1 and isinstance(records[0].value, Database)


@contextmanager
def opened(database: bytes) -> Iterator[sqlite3.Connection]:
    """The database bytes as an in-memory connection (nothing on disk is opened)."""
    with closing(sqlite3.connect(":memory:")) as connection:
        if database:
            connection.deserialize(_rollback_journal(database))
        yield connection


def _rollback_journal(database: bytes) -> bytes:
    """The SDK runs in WAL mode, which an in-memory copy cannot: header bytes 18-19 say which (2: WAL)."""
    if database[18:20] == b"\x02\x02":
        return database[:18] + b"\x01\x01" + database[20:]
    return database


def _tables(connection: sqlite3.Connection) -> set[str]:
    return {row[0] for row in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}


def read(records: list[Record], path: str) -> list[Transcript]:
    if not detect(records) or records[0].raw is None:
        raise InputError("expected an Agents SDK SQLite database (a SQLite file with agent_messages)", path)
    database = records[0].raw
    try:
        with opened(database) as connection:
            missing = {SESSIONS, MESSAGES} - _tables(connection)
            if missing:
                raise InputError(
                    f"a SQLite database without the Agents SDK table(s) {', '.join(sorted(missing))}", path
                )
            rows = connection.execute(f"SELECT id, session_id, message_data FROM {MESSAGES} ORDER BY session_id, id")
            by_session: dict[str, list[tuple[int, str]]] = {}
            for row_id, session_id, data in rows:
                by_session.setdefault(str(session_id), []).append((int(row_id), data))
            sessions = [row[0] for row in connection.execute(f"SELECT session_id FROM {SESSIONS} ORDER BY created_at")]
    except sqlite3.DatabaseError as error:
        raise InputError(f"unreadable SQLite database: {error}", path) from None
    ordered = [*(s for s in sessions if s in by_session), *(s for s in by_session if s not in sessions)]
    return [_session(session, by_session[session], database, path) for session in ordered]


def _session(session_id: str, rows: list[tuple[int, str]], database: bytes, path: str) -> Transcript:
    reader = ItemReader(path)
    records: list[Record] = []
    for row_id, data in rows:
        where = f"{MESSAGES} row {row_id} (session {session_id})"
        try:
            item = orjson.loads(data)
        except (orjson.JSONDecodeError, TypeError) as error:
            raise InputError(f"{where}: message_data is not JSON ({error})", path) from None
        try:
            reader.feed(item, Item(item, len(records)) if isinstance(item, dict) else None)
        except InputError as error:
            raise InputError(f"{where}: {error.message}", path) from None
        records.append(Record(row_id, item, data.encode()))
    units, originals = reader.finish()
    native = AgentsNative(
        units, originals, tuple(reader.pending), records=tuple(records), session_id=session_id, database=database
    )
    return Transcript(reader.messages, label=f"session {session_id}", native=native, origins=tuple(reader.origins))


def session_items(transcript: Transcript) -> list[str]:
    """The ``message_data`` of every row of the transcript's session: kept rows' text as read."""
    native = native_of(transcript, AgentsNative)
    records = native.records if native is not None else ()
    return [
        (records[item.record].raw or b"").decode() if item.record is not None else json.dumps(item.value)
        for item in transcript_items(transcript)
    ]


def session_id_of(transcript: Transcript, position: int) -> str:
    native = native_of(transcript, AgentsNative)
    return (
        native.session_id if native is not None else transcript.label.removeprefix("session ") or f"session-{position}"
    )


def _free_id(connection: sqlite3.Connection, wanted: str) -> str:
    taken = {row[0] for row in connection.execute(f"SELECT session_id FROM {SESSIONS}")}
    candidate, number = wanted, 1
    while candidate in taken:
        number += 1
        candidate = f"{wanted}-{number}"
    return candidate


def insert_session(connection: sqlite3.Connection, session_id: str, items: list[str]) -> None:
    connection.execute(f"INSERT OR IGNORE INTO {SESSIONS} (session_id) VALUES (?)", (session_id,))
    connection.executemany(
        f"INSERT INTO {MESSAGES} (session_id, message_data) VALUES (?, ?)", [(session_id, item) for item in items]
    )


def write(transcripts: list[Transcript]) -> bytes:
    natives = [native_of(t, AgentsNative) for t in transcripts]
    database = next((n.database for n in natives if n is not None), b"")
    with opened(database) as connection:
        connection.executescript(SCHEMA)
        for position, (transcript, native) in enumerate(zip(transcripts, natives, strict=True), start=1):
            if native is not None and is_unchanged(transcript, native):
                continue  # the session as read is already in the database
            session_id = session_id_of(transcript, position)
            new_id = _free_id(connection, f"{session_id}{COMPACTED_SUFFIX}" if native is not None else session_id)
            insert_session(connection, new_id, session_items(transcript))
        connection.commit()
        return connection.serialize()


BACKUP = f"{MESSAGES}_backup"


def replace_sessions(connection: sqlite3.Connection, transcripts: list[Transcript], path: str) -> list[str]:
    """Replace each compacted session's rows on an open transaction, the old rows moved to a backup table.

    A session whose rows changed since they were read (the app added a turn) is refused, so
    nothing the app wrote meanwhile is lost. Returns the sessions replaced.
    """
    connection.execute(
        f"CREATE TABLE IF NOT EXISTS {BACKUP} (id INTEGER, session_id TEXT NOT NULL, message_data TEXT NOT NULL, "
        "created_at TIMESTAMP, backed_up_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP)"
    )
    replaced = []
    for transcript in transcripts:
        native = native_of(transcript, AgentsNative)
        if native is None:
            raise InputError("`in_place` replaces sessions read from this database", path)
        if is_unchanged(transcript, native):
            continue
        session_id = native.session_id
        rows = [
            row[0]
            for row in connection.execute(f"SELECT id FROM {MESSAGES} WHERE session_id = ? ORDER BY id", (session_id,))
        ]
        if rows != [record.line for record in native.records]:
            raise InputError(f"session {session_id} changed since it was read; nothing was written", path)
        connection.execute(
            f"INSERT INTO {BACKUP} (id, session_id, message_data, created_at) "
            f"SELECT id, session_id, message_data, created_at FROM {MESSAGES} WHERE session_id = ?",
            (session_id,),
        )
        connection.execute(f"DELETE FROM {MESSAGES} WHERE session_id = ?", (session_id,))
        insert_session(connection, session_id, session_items(transcript))
        connection.execute(f"UPDATE {SESSIONS} SET updated_at = CURRENT_TIMESTAMP WHERE session_id = ?", (session_id,))
        replaced.append(session_id)
    return replaced


def selected(transcripts: list[Transcript], session: str | None, path: str) -> list[Transcript]:
    """The named session only (every one when none is named); a name not in the database is an error."""
    if session is None:
        return transcripts
    chosen = [t for t in transcripts if t.label == f"session {session}"]
    if not chosen:
        known = ", ".join(t.label.removeprefix("session ") for t in transcripts[:10])
        raise InputError(f"no session {session!r} in this database (sessions: {known or 'none'})", path)
    return chosen
