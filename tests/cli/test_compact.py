import orjson
import pytest

from compactctl.errors import EXIT_GATE, EXIT_INPUT, EXIT_OK
from compactctl.transcript import is_valid
from tests.cli.conftest import write_jsonl

FILE_KEYS = {
    "file",
    "name",
    "output",
    "status",
    "reason",
    "format",
    "transcripts",
    "tokens_before",
    "tokens_after",
    "reduction",
    "messages_before",
    "messages_after",
    "tokens_by_role_before",
    "tokens_by_role_after",
    "tool_output_share_before",
    "tool_output_share_after",
    "facts_required",
    "facts_preserved",
    "facts_missing",
    "facts_absent_before",  # declared or required, but not in the input: a warning, not a gate
    "valid_before",
    "valid_after",
    "violation_before",
    "violation_after",
    "summarizer_calls",
    "summarizer_prompt_tokens",
    "summarizer_completion_tokens",
    "summary_truncated",
    "notes",
    "api_usage",  # null unless the transcript records API-reported usage
    "skipped_lines",  # line numbers --on-error skip left out
    "skipped",  # the same lines, each {line, problem}
    "api_calibration",  # null unless a Claude Code or Codex file records its usage
    "violation_count_before",  # every violation counted; the first few listed
    "violation_count_after",
    "violations_before",
    "violations_after",
    "open_calls_before",  # transcripts ending on a call still running (valid)
    "open_calls_after",
    "unchanged_reason",  # why no step changed anything (then no copy is written)
}
TOTAL_KEYS = {
    "inputs",
    "written",
    "unchanged",
    "files",
    "failed",
    "tokens_before",
    "tokens_after",
    "reduction",
    "messages_before",
    "messages_after",
    "facts_required",
    "facts_preserved",
    "facts_missing",
    "facts_absent_before",
    "skipped_lines",
    "valid_before",
    "valid_after",
    "summarizer_calls",
    "summarizer_prompt_tokens",
    "summarizer_completion_tokens",
}


def read_jsonl(path):
    return [orjson.loads(line) for line in path.read_bytes().splitlines() if line.strip()]


def test_json_report_has_exactly_the_documented_keys(cli, chat_file):
    result = cli("compact", chat_file, "-s", "window", "--keep-recent", "3", "--json")
    assert result.exit_code == EXIT_OK, result.stderr
    report = orjson.loads(result.stdout)
    assert list(report) == ["version", "command", "exit_code", "error", "files", "failed", "gates", "total"]
    assert report["command"] == "compact"
    assert report["version"] == 2
    assert set(report["files"][0]) == FILE_KEYS
    assert set(report["total"]) == TOTAL_KEYS


def test_output_goes_beside_the_input_and_the_input_is_untouched(cli, chat_file):
    before = chat_file.read_bytes()
    result = cli("compact", chat_file, "-s", "window", "--keep-recent", "3")
    assert result.exit_code == EXIT_OK, result.stderr
    out = chat_file.with_name("session.compacted.jsonl")
    assert chat_file.read_bytes() == before
    messages = read_jsonl(out)
    assert [m["role"] for m in messages] == ["system", "assistant", "user", "assistant"]
    assert "wrote" in result.stderr and "reduction" in result.stdout


def test_steps_run_in_the_order_given(cli, tmp_path):
    long_output = "\n".join(f"line {i} " + "x" * 40 for i in range(400))
    messages = [
        {"role": "user", "content": "run it"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": "a", "type": "function", "function": {"name": "sh", "arguments": "{}"}}],
        },
        {"role": "tool", "tool_call_id": "a", "content": long_output},
        {"role": "assistant", "content": "done"},
        {"role": "user", "content": "thanks"},
        {"role": "assistant", "content": "you are welcome"},
    ]
    source = write_jsonl(tmp_path / "t.jsonl", messages)
    trim = ("--tool-max-tokens", "200", "--head-lines", "3", "--tail-lines", "2")
    summary = ("--threshold", "1000", "--keep-recent", "2")

    def run(*steps: str) -> tuple[list[dict], list[str]]:
        name = "-".join(steps)
        out, manifest = tmp_path / f"{name}.jsonl", tmp_path / f"{name}.manifest.jsonl"
        flags = [arg for step in steps for arg in ("-s", step)]
        result = cli("compact", source, *flags, *trim, *summary, "-o", out, "--manifest", manifest, "-q")
        assert result.exit_code == EXIT_OK, result.stderr
        return read_jsonl(out), [entry["action"] for entry in read_jsonl(manifest)]

    # Trimmed first, the transcript is under the threshold: summary has nothing left to do.
    out, actions = run("trim-tools", "summary")
    lines = out[2]["content"].split("\n")
    assert lines[:3] == long_output.split("\n")[:3]
    assert lines[-2:] == long_output.split("\n")[-2:]
    assert lines[3].startswith("[... compactctl elided 395 lines (") and lines[3].endswith(" tokens) ...]")
    assert actions == ["kept", "kept", "elided", "kept", "kept", "kept"]
    # Summarized first, the long output is gone into the summary: nothing is left to trim.
    out, actions = run("summary", "trim-tools")
    assert actions == ["summarized"] * 4 + ["kept", "kept"]
    assert [m["role"] for m in out] == ["system", "user", "assistant"]
    assert "compactctl elided" not in orjson.dumps(out).decode()


def test_stdout_output_sends_the_report_to_stderr(cli, chat_file):
    result = cli("compact", chat_file, "-s", "window", "--keep-recent", "2", "-o", "-", "--json")
    assert result.exit_code == EXIT_OK
    messages = [orjson.loads(line) for line in result.stdout.splitlines()]
    assert is_valid(messages) and len(messages) == 3
    assert orjson.loads(result.stderr)["files"][0]["messages_after"] == 3


def test_stdin_to_stdout(cli, agent_messages):
    data = b"".join(orjson.dumps(m) + b"\n" for m in agent_messages)
    result = cli("compact", "-", "-s", "window", "--keep-recent", "1", "-q", input=data)
    assert result.exit_code == EXIT_OK, result.stderr
    assert [orjson.loads(line)["role"] for line in result.stdout.splitlines()] == ["system", "assistant"]


def test_no_step_round_trips_the_file(cli, tmp_path, chat_file):
    out = tmp_path / "same.jsonl"
    result = cli("compact", chat_file, "-s", "window", "--keep-recent", "1000", "-o", out, "--write-unchanged")
    assert result.exit_code == EXIT_OK
    assert out.read_bytes() == chat_file.read_bytes()


def test_folder_is_mirrored_in_parallel_and_a_bad_file_does_not_stop_the_others(cli, tmp_path, agent_messages):
    src = tmp_path / "logs"
    for name in ("a.jsonl", "team/b.jsonl", "team/deep/c.jsonl"):
        write_jsonl(src / name, agent_messages)
    (src / "team" / "broken.jsonl").write_text('{"role": "user", "content": "x"}\nnot json\n')
    out = tmp_path / "out"
    result = cli("compact", src, "-o", out, "-s", "window", "--keep-recent", "2", "--jobs", "2", "--json")
    assert result.exit_code == EXIT_INPUT
    written = sorted(str(p.relative_to(out)) for p in out.rglob("*.jsonl"))
    assert written == ["a.jsonl", "team/b.jsonl", "team/deep/c.jsonl"]
    report = orjson.loads(result.stdout)
    # Every path as given (joined to the folder), the relative name beside it, the output written.
    good = [f for f in report["files"] if f["status"] != "failed"]
    assert [f["name"] for f in good] == ["a.jsonl", "team/b.jsonl", "team/deep/c.jsonl"]
    assert [f["file"] for f in good] == [str(src / f["name"]) for f in good]
    assert [f["output"] for f in good] == [str(out / f["name"]) for f in good]
    assert len(report["failed"]) == 1 and "broken.jsonl:2:1: malformed JSON" in report["failed"][0]["error"]
    assert report["failed"][0]["file"] == str(src / "team" / "broken.jsonl")

    (src / "team" / "robot.jsonl").write_text('{"role": "robot", "content": "beep"}\n')
    skipped = cli("compact", src, "-o", tmp_path / "out2", "-s", "window", "--on-error", "skip", "-q")
    # A bad line is left out of its file; a file that cannot be read is left out whole, and fails the run
    # (after the others are written) unless --max-failed-files allows it.
    assert skipped.exit_code == EXIT_INPUT
    tolerated = cli(
        "compact", src, "-o", tmp_path / "out3", "-s", "window", "--on-error", "skip", "--max-failed-files", "1", "-q"
    )
    assert tolerated.exit_code == EXIT_OK
    assert (tmp_path / "out2" / "team" / "broken.jsonl").exists()
    assert "robot.jsonl:1: unknown role 'robot'" in skipped.stderr
    assert not (tmp_path / "out2" / "team" / "robot.jsonl").exists()


def test_window_keeps_one_copy_of_each_fact_and_a_lost_fact_fails_the_gate(cli, tmp_path, agent_messages):
    agent_messages[3]["compactctl"] = {"facts": ["return a - b"]}
    source = write_jsonl(tmp_path / "t.jsonl", agent_messages)
    kept = cli("compact", source, "-s", "window", "--keep-recent", "2", "--require", "git status", "--json")
    assert kept.exit_code == EXIT_OK  # the last copy of a fact is never cut by the window
    assert orjson.loads(kept.stdout)["files"][0]["facts_preserved"] == 2
    gone = [{"role": "user", "content": "nothing left"}]
    failed = cli("report", source, write_jsonl(tmp_path / "after.jsonl", gone), "--require", "git status", "--json")
    assert failed.exit_code == EXIT_GATE
    assert orjson.loads(failed.stdout)["files"][0]["facts_missing"] == ["git status", "return a - b"]


def test_fail_under_gates_on_the_reduction(cli, chat_file):
    assert (
        cli("compact", chat_file, "-s", "window", "--keep-recent", "2", "--fail-under", "10", "-q").exit_code == EXIT_OK
    )
    assert (
        cli("compact", chat_file, "-s", "window", "--keep-recent", "2", "--fail-under", "99", "-q").exit_code
        == EXIT_GATE
    )


def test_manifest_says_what_became_of_every_message(cli, tmp_path, chat_file, agent_messages):
    manifest = tmp_path / "manifest.jsonl"
    result = cli("compact", chat_file, "-s", "window", "--keep-recent", "3", "--manifest", manifest, "-q")
    assert result.exit_code == EXIT_OK
    entries = read_jsonl(manifest)
    assert [e["index"] for e in entries] == list(range(len(agent_messages)))
    assert [e["action"] for e in entries] == ["kept"] + ["removed"] * 6 + ["kept"] * 3
    assert all(len(e["sha256"]) == 64 for e in entries)


def test_config_file_sets_defaults_and_flags_override_it(cli, tmp_path, chat_file, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "x"\n\n[tool.compactctl]\nstrategy = "window"\nkeep-recent = 1\n'
    )
    result = cli("compact", chat_file, "-o", "-", "-q")
    assert [orjson.loads(line)["role"] for line in result.stdout.splitlines()] == ["system", "assistant"]
    result = cli("compact", chat_file, "-o", "-", "-q", "--keep-recent", "2")
    assert len(result.stdout.splitlines()) == 3
    own = tmp_path / "team.toml"
    own.write_text('strategy = ["window"]\nkeep_recent = 3\n')
    result = cli("compact", chat_file, "-o", "-", "-q", "--config", own)
    assert len(result.stdout.splitlines()) == 4


def test_a_bad_config_is_named(cli, tmp_path, chat_file):
    bad = tmp_path / "c.toml"
    bad.write_text("keep_recnt = 3\n")
    result = cli("compact", chat_file, "--config", bad)
    assert result.exit_code == EXIT_INPUT
    assert "c.toml: unknown setting 'keep_recnt'" in result.stderr


def test_on_error_skip_leaves_out_unreadable_lines_and_counts_them(cli, tmp_path, agent_messages):
    lines = [orjson.dumps(m) for m in agent_messages]
    lines[7:7] = [b'{"role": "assistant", "content": "cut off mid-wri', b"\xff\xfe garbage"]
    source = tmp_path / "t.jsonl"
    source.write_bytes(b"\n".join(lines) + b"\n")
    failed = cli("compact", source, "-s", "window", "--keep-recent", "100", "-q")
    assert failed.exit_code == EXIT_INPUT and "t.jsonl:8:" in failed.stderr
    result = cli("compact", source, "-s", "window", "--keep-recent", "100", "--on-error", "skip", "--json")
    assert result.exit_code == EXIT_OK, result.stderr
    report = orjson.loads(result.stdout)
    assert report["files"][0]["skipped_lines"] == [8, 9]
    assert report["total"]["skipped_lines"] == 2
    assert report["files"][0]["reason"] == (
        "skipped 2 unreadable line(s): 8, 9 (line 8: malformed JSON: unexpected end of data; line 9: not UTF-8 text)"
    )
    assert read_jsonl(tmp_path / "t.compacted.jsonl") == agent_messages
    streamed = orjson.loads(cli("report", source, "--on-error", "skip", "--json").stdout)
    assert streamed["files"][0]["skipped_lines"] == [8, 9]
    assert streamed["files"][0]["messages_before"] == len(agent_messages)


@pytest.mark.parametrize(
    ("line", "named"),
    [
        ('keep-recent = "six"', "keep_recent must be a whole number"),
        ("keep-recent = 1.5", "keep_recent must be a whole number"),
        ("keep-recent = true", "keep_recent must be a whole number"),
        ("threshold = -5", "threshold must be at least 0"),
        ("jobs = -1", "jobs must be at least 0"),
        ("strategy = 5", "strategy must be a string or a list of strings"),
        ('fail-under = "x"', "fail_under must be a number"),
        ("encoding = 5", "encoding must be a string"),
        ('on-error = "maybe"', "on_error must be one of fail, skip"),
        ('redact = "no"', "redact must be true or false"),
    ],
)
def test_a_config_value_of_the_wrong_type_is_a_usage_error(cli, tmp_path, chat_file, line, named):
    bad = tmp_path / "c.toml"
    bad.write_text(line + "\n")
    out = tmp_path / "out.jsonl"
    result = cli("compact", chat_file, "--config", bad, "-o", out)
    assert result.exit_code == EXIT_INPUT, result.output
    assert named in result.stderr
    assert "Traceback" not in result.output
    assert not out.exists()


def test_an_unknown_on_error_value_is_a_usage_error(cli, chat_file):
    result = cli("report", chat_file, "--on-error", "maybe")
    assert result.exit_code == EXIT_INPUT
    assert "on_error must be one of fail, skip, not 'maybe' (given as --on-error)" in result.stderr


def test_outputs_get_the_mode_a_new_file_gets_not_a_private_one(cli, tmp_path, chat_file):
    import os

    mask = os.umask(0o022)
    os.umask(mask)
    out, manifest = tmp_path / "out.jsonl", tmp_path / "manifest.jsonl"
    result = cli("compact", "-s", "window", chat_file, "-o", out, "--manifest", manifest, "-q")
    assert result.exit_code == EXIT_OK, result.output
    for path in (out, manifest):
        assert path.stat().st_mode & 0o777 == 0o666 & ~mask


def test_a_failed_gate_says_which_gate_even_when_quiet(cli, tmp_path, chat_file, agent_messages):
    low = cli("compact", chat_file, "-s", "window", "--keep-recent", "2", "--fail-under", "99", "-q")
    assert low.exit_code == EXIT_GATE
    assert "gate failed: total reduction" in low.stderr
    assert "under --fail-under 99%" in low.stderr
    source = write_jsonl(tmp_path / "t.jsonl", agent_messages)
    after = write_jsonl(tmp_path / "after.jsonl", agent_messages[-1:])
    lost = cli("report", source, after, "--require", "git status", "-q")
    assert lost.exit_code == EXIT_GATE
    assert f"gate failed: {source}: facts missing: 'git status'" in lost.stderr  # the path as given


def test_the_summary_table_names_a_bad_file(cli, tmp_path, agent_messages):
    src = tmp_path / "logs"
    write_jsonl(src / "a.jsonl", agent_messages)
    (src / "broken.jsonl").write_text("not json\n")
    from typer.testing import CliRunner

    from compactctl.cli.main import app

    result = CliRunner().invoke(app, ["report", str(src), "--on-error", "skip"], env={"COLUMNS": "300"})
    assert result.exit_code == EXIT_INPUT  # a file that cannot be read fails the run, skip or not
    assert "2 inputs: 1 read, 1 failed" in result.stdout
    row = next(line for line in result.stdout.splitlines() if "broken.jsonl" in line)
    assert "failed" in row


def test_a_file_nothing_folds_is_not_copied_and_the_report_says_why(cli, chat_file, tmp_path):
    out = tmp_path / "out.jsonl"
    result = cli("compact", chat_file, "-s", "window", "--keep-recent", "1000", "-o", out, "--json")
    assert result.exit_code == EXIT_OK, result.stderr
    (entry,) = orjson.loads(result.stdout)["files"]
    assert entry["unchanged_reason"].startswith("unchanged: nothing the steps could fold")
    assert not out.exists()
    written = cli("compact", chat_file, "-s", "window", "--keep-recent", "1000", "-o", out, "--write-unchanged")
    assert written.exit_code == EXIT_OK and out.read_bytes() == chat_file.read_bytes()
    shown = cli("compact", chat_file, "-s", "window", "--keep-recent", "1000", "-o", tmp_path / "x.jsonl")
    assert "no copy written" in shown.stdout


def test_the_unchanged_reason_says_whether_the_file_was_under_the_threshold_or_all_kept(cli, chat_file, tmp_path):
    def reason(*flags: str) -> str:
        result = cli("compact", chat_file, "-s", "summary", *flags, "-o", tmp_path / "out.jsonl", "--json")
        assert result.exit_code == EXIT_OK, result.stderr
        return orjson.loads(result.stdout)["files"][0]["unchanged_reason"]

    # Never compacted: under summary's threshold, which is named.
    assert reason("--threshold", "1000000").startswith("unchanged: under the threshold (")
    assert "summary 1,000,000" in reason("--threshold", "1000000")
    # Compacted, and every message kept: the threshold is not what to change.
    kept = reason("--threshold", "1", "--keep-recent", "1000")
    assert kept.startswith("unchanged: over the threshold (") and "summary 1)" in kept
    assert "within what the steps keep" in kept


def test_a_compacted_file_has_no_unchanged_reason(cli, chat_file, tmp_path):
    out = tmp_path / "out.jsonl"
    result = cli("compact", chat_file, "-s", "window", "--keep-recent", "2", "-o", out, "--json")
    (entry,) = orjson.loads(result.stdout)["files"]
    assert entry["unchanged_reason"] is None and out.exists()


def test_a_session_whose_live_context_is_the_producer_s_summary_says_so(cli, tmp_path):
    from tests.recorded.sessions import working_session

    session = working_session(calls=4)
    session.compact("Summary: the tests pass.", {"trigger": "auto", "preTokens": session.last_context()})
    session.user("continue")
    session.response(text="continuing")
    source = tmp_path / "session.jsonl"
    source.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in session.records))
    out = tmp_path / "out.jsonl"
    result = cli("compact", source, "-s", "structured", "-o", out, "--json")
    (entry,) = orjson.loads(result.stdout)["files"]
    assert "the producer's own summary and 2 message(s) since" in entry["unchanged_reason"]
    assert entry["reduction"] == 0.0 and not out.exists()


@pytest.mark.slow  # two console scripts, one with a process pool
def test_jobs_in_processes_write_the_same_bytes_and_report_as_one_job(tmp_path, agent_messages):
    import subprocess
    import sys

    src = tmp_path / "logs"
    for n in range(5):
        write_jsonl(src / f"s{n}.jsonl", agent_messages[: len(agent_messages) - n])
    (src / "broken.jsonl").write_text('{"role": "user", "content": "x"}\nnot json\n')
    runs = {}
    for jobs in ("1", "2"):
        out = tmp_path / f"out{jobs}"
        command = [sys.executable, "-m", "compactctl", "compact", str(src), "-o", str(out), "-s", "window"]
        done = subprocess.run([*command, "--keep-recent", "2", "--jobs", jobs, "--json"], capture_output=True)
        files = {p.relative_to(out): p.read_bytes() for p in sorted(out.rglob("*.jsonl"))}
        # The progress line says how fast it went: not compared.
        said = [line for line in done.stderr.splitlines() if not line.startswith(b"compactctl: ")]
        runs[jobs] = (done.returncode, done.stdout.replace(str(out).encode(), b"OUT"), said, files)
    assert runs["1"] == runs["2"]
    code, stdout, _, files = runs["2"]
    assert code == EXIT_INPUT and len(files) == 5
    assert b"broken.jsonl:2:1: malformed JSON" in stdout


def test_a_folder_run_names_the_files_each_note_is_of(cli, chat_file, agent_messages, tmp_path):
    folder = tmp_path / "logs"
    folder.mkdir()
    (folder / "a.jsonl").write_bytes(chat_file.read_bytes())
    (folder / "b.jsonl").write_bytes(chat_file.read_bytes())
    write_jsonl(folder / "c.jsonl", agent_messages[:4])  # another note: its own counts
    result = cli("compact", folder, "-s", "window", "--keep-recent", "1000", "-o", tmp_path / "out")
    assert result.exit_code == EXIT_OK, result.stderr
    notes = [line for line in result.stdout.splitlines() if line.startswith("note:")]
    # One note for the two files it is of, each named: not an unattributed line per distinct text.
    shared = [line for line in notes if "unchanged: nothing the steps could fold (10 messages" in line]
    assert len(shared) == 1 and f"{folder / 'a.jsonl'}, {folder / 'b.jsonl'}: unchanged" in shared[0]
    (own,) = [line for line in notes if line not in shared]
    assert own.startswith(f"note: {folder / 'c.jsonl'}: unchanged: nothing the steps could fold (4 messages")


def test_a_note_beside_a_failed_file_names_its_file_as_the_table_of_the_run_does(cli, chat_file, tmp_path):
    folder = tmp_path / "logs"
    folder.mkdir()
    (folder / "a.jsonl").write_bytes(chat_file.read_bytes())
    (folder / "broken.jsonl").write_text("not json\n")
    result = cli("compact", folder, "-s", "window", "--keep-recent", "1000", "-o", tmp_path / "out")
    assert result.exit_code == EXIT_INPUT
    (note,) = [line for line in result.stdout.splitlines() if line.startswith("note:")]
    assert note.startswith(f"note: {folder / 'a.jsonl'}: unchanged: nothing the steps could fold")
