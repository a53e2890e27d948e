"""Finding sessions where the clients keep them, and writing one back safely (no client needed).

The sessions are the producer-written fixtures in tests/formats/data/real-clients/ (recorded by
the real Claude Code 2.1.332, Codex 0.171.0 and Gemini CLI 0.61.0), laid out in a private HOME
the way each client lays out its folder.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import compactctl
from compactctl.cli.outcome import SCHEMA
from compactctl.errors import InputError
from compactctl.sessions import CLIENTS, find_session, session_files, since_seconds
from compactctl.sessions import claude_code as claude_sessions
from compactctl.sessions.listing import describe, row_json
from compactctl.sessions.place import backups_of, check_not_live, undo, write_in_place, write_new
from tests.properties import examples

DATA = Path(__file__).resolve().parents[1] / "formats" / "data" / "real-clients"
CLAUDE_ID = "7b6a7c6d-c28d-4def-a921-c47a5a682517"
CODEX_ID = "01a230e5-6fb6-77b1-b6ad-68b008ffbb3f"
GEMINI_ID = "e1cd5fd9-1c45-4f74-9a02-a9b386a220af"
IDLE = time.time() - 3600


def lay_out(home: Path) -> dict[str, Path]:
    """The three fixtures where their clients keep them, idle for an hour (Claude Code's the newest)."""
    claude = home / ".claude" / "projects" / "-home-user-project" / f"{CLAUDE_ID}.jsonl"
    codex = home / ".codex" / "sessions" / "2026" / "12" / "01" / f"rollout-2026-12-01T09-17-52-{CODEX_ID}.jsonl"
    gemini = home / ".gemini" / "tmp" / "project" / "chats" / f"session-2026-12-01T11-19-{GEMINI_ID[:8]}.jsonl"
    sources = {
        claude: "claude-code-2.1.332-compacted.jsonl",
        codex: "codex-0.171.0-compacted.jsonl",
        gemini: "gemini-cli-0.61.0.jsonl",
    }
    for n, (path, name) in enumerate(sources.items()):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes((DATA / name).read_bytes())
        os.utime(path, (IDLE - n * 60, IDLE - n * 60))
    (home / ".gemini" / "projects.json").write_text(json.dumps({"projects": {"/home/user/project": "project"}}))
    return {"claude-code": claude, "codex": codex, "gemini": gemini}


@pytest.fixture
def home(tmp_path: Path) -> Path:
    lay_out(tmp_path)
    return tmp_path


def test_every_clients_sessions_are_found_newest_first(home: Path) -> None:
    found = session_files({}, home)
    assert [(s.client, s.session_id) for s in found] == [
        ("claude-code", CLAUDE_ID),
        ("codex", CODEX_ID),
        ("gemini", GEMINI_ID),
    ]
    assert [s.cwd for s in found] == ["/home/user/project"] * 3


def test_a_codex_subagents_thread_is_part_of_its_roots_session_not_one_of_its_own(home: Path) -> None:
    # Codex 0.171 writes a spawned agent's rollout beside the root's; its session_meta names the root's thread.
    day = home / ".codex" / "sessions" / "2026" / "12" / "04"
    day.mkdir(parents=True)
    for rollout in (DATA.parent.parent.parent / "recorded" / "data" / "codex-0.171.0-subagent").glob("*.jsonl"):
        (day / rollout.name).write_bytes(rollout.read_bytes())
    codex = [s.session_id for s in session_files({}, home, "codex")]
    assert len(codex) == 2 and CODEX_ID in codex  # the fixture laid out, and the subagent's root
    root = next(s for s in codex if s != CODEX_ID)
    assert root.startswith("01a242e6-d767")  # the root's thread, not its subagent's (01a242e6-d7bc-...)


def test_a_gemini_subagents_chat_is_part_of_its_sessions_not_one_of_its_own(home: Path) -> None:
    # Gemini CLI 0.61 writes a subagent's chat in a folder named by the session's id, beside the session's file.
    chats = home / ".gemini" / "tmp" / "project" / "chats"
    fixture = DATA.parent.parent.parent / "recorded" / "data" / "gemini-cli-0.61.0-subagent"
    for path in fixture.rglob("*.jsonl"):
        (chats / path.relative_to(fixture)).parent.mkdir(parents=True, exist_ok=True)
        (chats / path.relative_to(fixture)).write_bytes(path.read_bytes())
    found = session_files({}, home, "gemini")
    assert len(found) == 2 and GEMINI_ID in [s.session_id for s in found]  # the fixture laid out, and the new one
    (new,) = [s for s in found if s.session_id != GEMINI_ID]
    assert new.path.parent == chats and new.session_id.startswith("ab9b5a67")  # not its subagent's (b44e6031-...)


def test_the_clients_own_variables_move_their_folders(tmp_path: Path) -> None:
    lay_out(tmp_path / "elsewhere")
    env = {
        "CLAUDE_CONFIG_DIR": str(tmp_path / "elsewhere" / ".claude"),
        "CODEX_HOME": str(tmp_path / "elsewhere" / ".codex"),
        "GEMINI_CLI_HOME": str(tmp_path / "elsewhere"),
    }
    assert session_files({}, tmp_path) == []
    assert {s.client for s in session_files(env, tmp_path)} == set(CLIENTS)


def test_a_session_is_named_by_its_id_a_unique_prefix_or_latest(home: Path) -> None:
    assert find_session(CODEX_ID, env={}, home=home).client == "codex"
    assert find_session("e1cd5", env={}, home=home).session_id == GEMINI_ID
    assert find_session("latest", env={}, home=home).session_id == CLAUDE_ID
    assert find_session("latest", "gemini", env={}, home=home).session_id == GEMINI_ID
    with pytest.raises(InputError, match="no session 'ffff'"):
        find_session("ffff", env={}, home=home)
    with pytest.raises(InputError, match="unknown client"):
        find_session("latest", "cursor", env={}, home=home)
    # With a client named, the error says where that client's sessions were looked for, not every client's.
    with pytest.raises(InputError) as codex_only:
        find_session("ffff", "codex", env={}, home=home)
    assert str(home / ".codex") in str(codex_only.value) and ".claude" not in str(codex_only.value)


def test_an_ambiguous_prefix_names_the_candidates(home: Path) -> None:
    other = home / ".claude" / "projects" / "-home-user-project" / "01a230e5-0000-4000-8000-000000000000.jsonl"
    other.write_bytes((DATA / "claude-code-2.1.332-compacted.jsonl").read_bytes())
    with pytest.raises(InputError, match="names 2 sessions"):
        find_session("01a230e5", env={}, home=home)
    assert find_session("01a230e5", "codex", env={}, home=home).session_id == CODEX_ID


def test_since_reads_durations_and_dates() -> None:
    assert since_seconds("2h", now=10_000.0) == 10_000.0 - 7200
    assert since_seconds("2026-12-01T00:00:00Z") == 1796083200.0
    with pytest.raises(InputError, match="`since`"):
        since_seconds("yesterday")


def test_a_row_says_what_the_client_would_send_and_that_it_compacted(home: Path) -> None:
    rows = {s.client: row_json(describe(s)) for s in session_files({}, home)}
    assert rows["claude-code"]["compacted"] and rows["codex"]["compacted"]
    assert not rows["gemini"]["compacted"]
    assert rows["codex"]["window"] == 258_400  # what Codex recorded for gpt-5.5
    # claude-opus-5-5: 1M native in Claude Code's catalog (its older models run on 200k).
    assert rows["claude-code"]["window"] == 1_000_000 and rows["gemini"]["window"] == 1_048_576
    for row in rows.values():
        assert row["live_basis"] == "reported" and 0 < row["live_tokens"] < row["window"]
    assert rows["codex"]["resume"] == f"cd /home/user/project && codex resume {CODEX_ID}"
    assert describe(session_files({}, home)[0], window=1000).over_window


def run_cli(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "GEMINI_CLI_HOME")}
    command = [sys.executable, "-m", "compactctl", *args]
    return subprocess.run(command, capture_output=True, text=True, env={**env, "HOME": str(home)}, timeout=300)


def test_sessions_says_so_when_no_client_folder_exists(tmp_path: Path) -> None:
    done = run_cli(tmp_path, "sessions")
    assert done.returncode == 0
    assert "no Claude Code, Codex or Gemini CLI folder here" in done.stderr and str(tmp_path / ".claude") in done.stderr


def test_sessions_says_where_it_looked_when_a_client_folder_holds_no_session(tmp_path: Path) -> None:
    (tmp_path / ".codex" / "sessions").mkdir(parents=True)  # a client run once, whose sessions are kept elsewhere
    done = run_cli(tmp_path, "sessions")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "no sessions yet in ~/.codex"  # the folder that exists, not the three looked for


@pytest.mark.slow  # five console scripts in fresh interpreters
def test_sessions_filters_by_client_project_and_time(home: Path) -> None:
    def ids(*args: str) -> list[str]:
        done = run_cli(home, "sessions", "--json", *args)
        assert done.returncode == 0, done.stderr
        document = json.loads(done.stdout)
        jsonschema.validate(document, json.loads(SCHEMA.read_text()))  # the one --json contract
        return [row["id"] for row in document["files"]]

    assert ids() == [CLAUDE_ID, CODEX_ID, GEMINI_ID]
    assert ids("--client", "codex") == [CODEX_ID]
    assert ids("--project", "nowhere") == []
    assert ids("--since", "10m") == []
    assert run_cli(home, "sessions", "--client", "cursor").returncode == 2


def compacted(path: Path) -> bytes:
    """The session with its tool outputs and first answer cut to a stub, written back as compact writes it."""
    fmt, transcripts = compactctl.load(path.read_bytes(), str(path))
    messages = transcripts[0].messages
    first_answer = next(n for n, m in enumerate(messages) if m.get("role") == "assistant")
    shorter = [
        dict(m, content="(trimmed)") if m.get("role") == "tool" or n == first_answer else m
        for n, m in enumerate(messages)
    ]
    return compactctl.dump([transcripts[0].rewritten(shorter, list(range(len(shorter))))], fmt.name)


def live(data: bytes, path: Path) -> list[dict[str, object]]:
    _, transcripts = compactctl.load(data, str(path))
    return transcripts[0].messages


@pytest.mark.parametrize("client", list(CLIENTS))
def test_a_new_session_is_written_beside_the_original_under_a_new_id(home: Path, client: str) -> None:
    session = find_session("latest", client, env={}, home=home)
    original = session.path.read_bytes()
    data = compacted(session.path)
    placed = write_new(session, data)
    assert session.path.read_bytes() == original
    assert placed.session_id != session.session_id and placed.path.exists()
    again = find_session(placed.session_id, client, env={}, home=home)
    assert again.path == placed.path and again.cwd == session.cwd
    values = [json.loads(line) for line in placed.path.read_bytes().splitlines()]
    ids = {v.get("sessionId") for v in values} | {
        v["$set"].get("sessionId") for v in values if isinstance(v.get("$set"), dict)
    }
    ids = ids - {None} if client != "codex" else {values[0]["payload"]["id"]}
    assert ids == {placed.session_id}  # every record names the new session
    assert live(placed.path.read_bytes(), placed.path) == live(data, session.path)
    # Nothing else appeared in the client's folders: no temporary file left behind.
    for folder in {session.path.parent, placed.path.parent}:
        assert not [p.name for p in folder.iterdir() if p.name.startswith(".")], folder


@pytest.mark.parametrize("client", list(CLIENTS))
def test_the_slim_form_keeps_the_live_thread_in_a_smaller_file(home: Path, client: str) -> None:
    session = find_session("latest", client, env={}, home=home)
    data = compacted(session.path)
    placed = write_new(session, data, slim=True)
    written = placed.path.read_bytes()
    assert len(written) < len(data)
    assert live(written, placed.path) == live(data, session.path)


@pytest.mark.parametrize("client", list(CLIENTS))
def test_in_place_keeps_a_backup_the_client_does_not_read_and_undo_puts_it_back(home: Path, client: str) -> None:
    session = find_session("latest", client, env={}, home=home)
    original = session.path.read_bytes()
    placed = write_in_place(session, compacted(session.path))
    assert placed.backup is not None and placed.backup.read_bytes() == original
    assert session.path.read_bytes() != original
    assert backups_of(session.path) == [placed.backup]
    # The backup is no session to the client (nor to the listing).
    assert [s.path for s in session_files({}, home, client)] == [session.path]
    current = find_session(session.session_id, client, env={}, home=home)
    undone = undo(current)
    assert session.path.read_bytes() == original and not placed.backup.exists()
    assert undone.backup is not None and undone.backup.read_bytes() != original
    with pytest.raises(InputError, match="no backup"):
        undo(find_session(session.session_id, client, env={}, home=home))


def test_a_session_written_a_moment_ago_is_not_rewritten_unless_forced(home: Path) -> None:
    session = find_session("latest", "claude-code", env={}, home=home)
    check_not_live(session)
    os.utime(session.path)  # the client just wrote it
    fresh = find_session("latest", "claude-code", env={}, home=home)
    with pytest.raises(InputError, match="`force`"):
        check_not_live(fresh)
    check_not_live(fresh, force=True)


def test_a_codex_thread_whose_writer_lock_is_held_is_not_rewritten(home: Path) -> None:
    session = find_session(CODEX_ID, env={}, home=home)
    lock = home / ".codex" / "thread-writer-locks" / f"{CODEX_ID}.lock"
    lock.parent.mkdir()
    lock.touch()
    check_not_live(session)  # a lock file left by a killed process, unlocked: not running
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import fcntl,sys,time;f=open(sys.argv[1],'rb');fcntl.flock(f,fcntl.LOCK_EX);"
            "print('held',flush=True);time.sleep(30)",
            str(lock),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        with pytest.raises(InputError, match="writer lock"):
            check_not_live(session)
    finally:
        holder.kill()
        holder.wait()


def test_an_interrupted_write_leaves_nothing_in_the_clients_folder(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    session = find_session(CLAUDE_ID, env={}, home=home)
    before = sorted(session.path.parent.iterdir())

    def interrupted(*args: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "replace", interrupted)
    with pytest.raises(KeyboardInterrupt):
        write_new(session, compacted(session.path))
    with pytest.raises(KeyboardInterrupt):
        write_in_place(session, compacted(session.path))
    after = sorted(p for p in session.path.parent.iterdir() if not p.name.endswith(".compactctl-backup"))
    assert after == before  # no half-written session, no temporary file; the original as it was
    assert session.path.read_bytes() == (DATA / "claude-code-2.1.332-compacted.jsonl").read_bytes()


def test_codexs_thread_index_gets_the_new_thread_copied_from_the_original(home: Path) -> None:
    database = home / ".codex" / "state_5.sqlite"
    with sqlite3.connect(database) as connection:
        connection.execute("CREATE TABLE threads (id TEXT PRIMARY KEY, rollout_path TEXT, title TEXT, updated_at INT)")
        connection.execute("INSERT INTO threads VALUES (?, ?, 'Fix the bug', 1)", (CODEX_ID, "old/path"))
    session = find_session(CODEX_ID, env={}, home=home)
    placed = write_new(session, compacted(session.path))
    with sqlite3.connect(database) as connection:
        rows = dict(connection.execute("SELECT id, title FROM threads").fetchall())
        path = connection.execute("SELECT rollout_path FROM threads WHERE id = ?", (placed.session_id,)).fetchone()
    assert rows == {CODEX_ID: "Fix the bug", placed.session_id: "Fix the bug"}
    assert path == (str(placed.path),)
    assert placed.path.name.startswith("rollout-") and placed.path.name.endswith(f"-{placed.session_id}.jsonl")


@settings(max_examples=examples(50), deadline=None)
@given(st.lists(st.sampled_from(["a", "b", "other"]), min_size=1, max_size=8), st.text(max_size=20))
def test_renaming_a_session_touches_only_its_id(ids: list[str], text: str) -> None:
    lines = [json.dumps({"type": "user", "sessionId": i, "message": {"content": text}}) for i in ids]
    data = ("\n".join(lines) + "\n").encode()
    renamed = claude_sessions.with_session_id(data, "a", "b-new")
    values = [json.loads(line) for line in renamed.splitlines()]
    assert [v["sessionId"] for v in values] == ["b-new" if i == "a" else i for i in ids]
    assert all(v["message"]["content"] == text for v in values)
    assert claude_sessions.with_session_id(data, "absent", "x") == data


def test_short_ids_are_the_shortest_unique_prefixes() -> None:
    from compactctl.sessions import short_ids

    ids = ["01a233f5-5819-7ef3", "01a233f5-7914-7691", "7b6a7c6d-c28d-4def"]
    assert short_ids(ids) == {
        "01a233f5-5819-7ef3": "01a233f5-5",
        "01a233f5-7914-7691": "01a233f5-7",
        ids[2]: "7b6a7c6d",
    }
    assert all(not other.startswith(prefix) for i, prefix in short_ids(ids).items() for other in ids if other != i)


def test_of_two_files_of_one_session_the_one_holding_it_is_taken(home: Path) -> None:
    # Gemini CLI starts a file of its own for a session it resumes; it may hold only the header.
    chats = home / ".gemini" / "tmp" / "project" / "chats"
    shadow = chats / f"session-2026-12-01T12-00-{GEMINI_ID[:8]}.jsonl"
    shadow.write_text(json.dumps({"sessionId": GEMINI_ID, "projectHash": "x", "kind": "main"}) + "\n")
    found = find_session(GEMINI_ID[:8], env={}, home=home)
    assert found.path.name == f"session-2026-12-01T11-19-{GEMINI_ID[:8]}.jsonl"


@pytest.mark.slow  # three console scripts in fresh interpreters
def test_report_and_prune_take_a_session_by_id(home: Path) -> None:
    reported = run_cli(home, "report", "--session", CODEX_ID[:13], "--json")
    assert reported.returncode == 0, reported.stderr
    (entry,) = json.loads(reported.stdout)["files"]
    assert entry["file"].endswith(f"-{CODEX_ID}.jsonl") and entry["format"] == "codex"
    pruned = run_cli(home, "prune", "--session", CLAUDE_ID[:8], "--json")
    assert pruned.returncode == 0, pruned.stderr
    session = json.loads(pruned.stdout)["session"]
    assert session["id"] == CLAUDE_ID and session["new_id"] != CLAUDE_ID and Path(session["written"]).exists()
    assert session["resume"] == f"cd /home/user/project && claude --resume {session['new_id']}"
    assert run_cli(home, "report").returncode == 2  # neither a file nor --session: bad usage


def test_undo_without_a_backup_is_a_clear_error(home: Path) -> None:
    done = run_cli(home, "compact", "--session", GEMINI_ID, "--undo")
    assert done.returncode == 2 and "no backup of this session" in done.stderr


def test_a_tighter_pass_halves_the_tail_the_user_did_not_set() -> None:
    from compactctl.cli.options import Given
    from compactctl.cli.session_options import tighter

    unset = Given({"keep_recent": None})
    assert tighter(unset, ["structured"], 0) == unset.strategies()
    once = tighter(Given({}), ["structured"], 1).of("structured")
    assert (once.keep_recent, once.tool_max_tokens, once.keep_turns) == (5, 500, 1)
    assert tighter(Given({}), ["structured"], 3).of("structured").tool_max_tokens == 200  # the floor
    assert tighter(Given({"keep_recent": 8}), ["structured"], 2).of("structured").keep_recent == 8  # the user's own
