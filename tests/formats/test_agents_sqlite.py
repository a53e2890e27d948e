"""OpenAI Agents SDK sessions in SQLite: written by the real SDK's SQLiteSession, read back through it.

Slow: the SDK's import alone costs 2.5 s of CPU (1.6 s beyond the ``openai`` client the loop imports
anyway); it is imported when the first test asks for it, so ``-m "not slow"`` never loads it.
"""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path
from typing import Any

import orjson
import pytest

from compactctl.errors import EXIT_INPUT, EXIT_OK, InputError
from compactctl.files.io import read_source
from compactctl.formats import load
from compactctl.transcript import find_violation
from tests.cli.conftest import Cli
from tests.needs import needs

pytestmark = pytest.mark.slow


def sdk() -> Any:
    """The OpenAI Agents SDK, imported at its first use (skipped, or failed under CI, where it is missing)."""
    return needs("agents")


def turn(number: int) -> list[dict]:
    """One agent turn as the SDK saves it: the user's message, a tool call and its output, the answer."""
    return [
        {"role": "user", "content": f"Check build {number}"},
        {
            "type": "function_call",
            "call_id": f"call_{number}",
            "name": "read_log",
            "arguments": orjson.dumps({"build": number}).decode(),
        },
        {"type": "function_call_output", "call_id": f"call_{number}", "output": f"build {number}: " + "ok\n" * 200},
        {
            "id": f"msg_{number}",
            "type": "message",
            "role": "assistant",
            "status": "completed",
            "content": [{"type": "output_text", "text": f"Build {number} passed.", "annotations": []}],
        },
    ]


def session_items(path: Path, session_id: str) -> list[dict]:
    session = sdk().SQLiteSession(session_id, path)
    try:
        return asyncio.run(session.get_items())
    finally:
        session.close()


@pytest.fixture
def app_db(tmp_path: Path) -> Path:
    path = tmp_path / "app.db"

    async def record() -> None:
        for session_id, turns in (("support-1", 6), ("support-2", 1)):
            session = sdk().SQLiteSession(session_id, path)
            for number in range(turns):
                await session.add_items(turn(number))
            session.close()

    asyncio.run(record())
    return path


def test_each_session_reads_as_a_transcript_of_paired_calls(app_db: Path):
    fmt, transcripts = load(read_source(str(app_db)), str(app_db))
    assert fmt.name == "agents-sqlite"
    assert [t.label for t in transcripts] == ["session support-1", "session support-2"]
    first = transcripts[0].messages
    assert [m["role"] for m in first[:4]] == ["user", "assistant", "tool", "assistant"]
    assert first[1]["tool_calls"][0]["id"] == first[2]["tool_call_id"] == "call_0"
    assert find_violation(first) is None


def test_compacted_session_is_added_under_a_new_id_and_the_sdk_reads_it(app_db: Path, tmp_path: Path):
    out = tmp_path / "out.db"
    cli = Cli()
    done = cli("compact", app_db, "-o", out, "--session", "support-1", "--strategy", "window", "--keep-recent", "4")
    assert done.exit_code == EXIT_OK, done.output
    compacted = session_items(out, "support-1-compacted")
    assert compacted == turn(5)  # the last turn, item for item
    assert session_items(out, "support-1") == session_items(app_db, "support-1")  # the original stays
    assert session_items(out, "support-2-compacted") == []  # not named, not copied


def test_report_with_session_reports_that_session_and_agrees_with_compact(app_db: Path, tmp_path: Path):
    """report --session used to report every session of the database (and exit 0 on a name not there)."""
    out, cli = tmp_path / "out.db", Cli()
    args = ["--session", "support-1", "--strategy", "window", "--keep-recent", "4", "--json", "-q"]
    compacted = orjson.loads(cli("compact", app_db, "-o", out, *args).stdout)["total"]
    one = orjson.loads(cli("report", app_db, "--session", "support-2", "--json", "-q").stdout)["total"]
    assert one["messages_before"] == 4  # support-2's one turn, not both sessions' 28 messages
    pair = orjson.loads(cli("report", app_db, out, "--session", "support-1", "--json", "-q").stdout)["total"]
    names = ("tokens_before", "tokens_after", "messages_before", "messages_after", "reduction")
    assert {k: pair[k] for k in names} == {k: compacted[k] for k in names}  # the compacted copy, as compact said
    assert compacted["messages_after"] == 4
    missing = cli("report", app_db, "--session", "nope")
    assert missing.exit_code == EXIT_INPUT and "no session 'nope' in this database" in missing.stderr


def test_review_of_a_session_reads_its_compacted_copy_not_the_original_beside_it(app_db: Path, tmp_path: Path):
    """review --session used to read back the original session from the database compact wrote (the copy
    sits beside it as ID-compacted): 2,634 -> 2,634 tokens, 0 % reduction, every probe passed."""
    out, cli = tmp_path / "out.db", Cli()
    steps = ["--session", "support-1", "--strategy", "window", "--keep-recent", "4"]
    compacted = orjson.loads(cli("compact", app_db, "-o", out, *steps, "--json", "-q").stdout)["total"]
    written = cli("review", app_db, "--session", "support-1", "--compacted", out, "-o", tmp_path / "a.html", "--json")
    made = cli("review", app_db, *steps, "-o", tmp_path / "b.html", "--json", "-q")
    sides = [orjson.loads(done.stdout)["total"]["A"] for done in (written, made)]
    names = ("tokens_before", "tokens_after", "messages_before", "messages_after", "reduction")
    assert [{k: side[k] for k in names} for side in sides] == [{k: compacted[k] for k in names}] * 2
    assert sides[0]["own_text"] == sides[1]["own_text"]
    assert sides[0]["own_text"]["probes"]["passed"] < sides[0]["own_text"]["probes"]["total"]  # the turns cut


def test_report_and_review_of_a_whole_database_read_each_compacted_copy_in_its_original_s_place(
    app_db: Path, tmp_path: Path
):
    """report IN OUT on a database compact -o wrote used to count the originals and their copies:
    3,073 -> 3,512 tokens (-14.3 %) where compact said 3,073 -> 878 (71.4 %)."""
    out, cli = tmp_path / "out.db", Cli()
    compacted = orjson.loads(cli("compact", app_db, "-o", out, "-s", "window", "--keep-recent", "4", "--json").stdout)
    reported = orjson.loads(cli("report", app_db, out, "--json", "-q").stdout)["total"]
    reviewed = cli("review", app_db, "--compacted", out, "-o", tmp_path / "r.html", "--json", "-q")
    assert reviewed.exit_code == EXIT_OK, reviewed.output
    names = ("tokens_before", "tokens_after", "messages_before", "messages_after", "reduction")
    expected = {k: compacted["total"][k] for k in names}
    assert expected["messages_after"] == 8  # support-1's last turn, support-2 as it was
    assert {k: reported[k] for k in names} == expected
    assert {k: orjson.loads(reviewed.stdout)["total"]["A"][k] for k in names} == expected


def test_in_place_replaces_the_session_in_one_transaction_keeping_a_backup(app_db: Path):
    before = session_items(app_db, "support-1")
    cli = Cli()
    done = cli("compact", app_db, "--in-place", "--strategy", "window", "--keep-recent", "4")
    assert done.exit_code == EXIT_OK, done.output
    assert session_items(app_db, "support-1") == turn(5)
    assert session_items(app_db, "support-2") == turn(0)  # already short: untouched
    with sqlite3.connect(app_db) as connection:
        backup = [orjson.loads(row[0]) for row in connection.execute("SELECT message_data FROM agent_messages_backup")]
    assert backup == before
    again = sdk().SQLiteSession("support-1", app_db)
    asyncio.run(again.add_items(turn(6)))  # the app goes on with the compacted session
    again.close()
    assert session_items(app_db, "support-1") == [*turn(5), *turn(6)]


def test_a_session_changed_since_it_was_read_is_refused(app_db: Path):
    fmt, transcripts = load(read_source(str(app_db)), str(app_db))
    compacted = [t.rewritten(t.messages[-4:], list(range(len(t.messages) - 4, len(t.messages)))) for t in transcripts]
    asyncio.run(sdk().SQLiteSession("support-1", app_db).add_items(turn(9)))
    from compactctl.files.compact import replace_in_database

    with pytest.raises(InputError, match="session support-1 changed since it was read"):
        replace_in_database(str(app_db), fmt, compacted)
    assert session_items(app_db, "support-1")[-4:] == turn(9)


def test_bad_rows_and_unknown_sessions_are_named(app_db: Path, tmp_path: Path):
    with sqlite3.connect(app_db) as connection:
        row = connection.execute("SELECT max(id) FROM agent_messages WHERE session_id = 'support-2'").fetchone()[0]
        connection.execute("UPDATE agent_messages SET message_data = '{oops' WHERE id = ?", (row,))
    with pytest.raises(InputError) as raised:
        load(read_source(str(app_db)), "app.db")
    assert str(raised.value).startswith(
        f"app.db: agent_messages row {row} (session support-2): message_data is not JSON"
    )
    cli = Cli()
    done = cli("report", app_db)
    assert done.exit_code == EXIT_INPUT and f"row {row}" in done.stderr
    other = tmp_path / "other.db"
    sqlite3.connect(other).execute("CREATE TABLE t (x)").connection.commit()
    with pytest.raises(InputError, match="without the Agents SDK table"):
        load(read_source(str(other)), "other.db")


def test_naming_a_session_that_is_not_there(app_db: Path, tmp_path: Path):
    done = Cli()("compact", app_db, "-o", tmp_path / "out.db", "--session", "nope")
    assert done.exit_code == EXIT_INPUT
    assert "no session 'nope' in this database (sessions: support-1, support-2)" in done.stderr


def test_chat_converts_into_a_new_database_the_sdk_reads(tmp_path: Path, agent_messages):
    source = tmp_path / "chat.jsonl"
    source.write_bytes(b"".join(orjson.dumps(m) + b"\n" for m in agent_messages))
    out = tmp_path / "new.db"
    done = Cli()("compact", source, "--to", "agents-sqlite", "-o", out, "--strategy", "window", "--keep-recent", "100")
    assert done.exit_code == EXIT_OK, done.output
    items = session_items(out, "session-1")
    assert len(items) >= len(agent_messages) - 1 and items[0]["role"] in ("system", "developer", "user")
