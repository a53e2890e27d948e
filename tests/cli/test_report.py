import orjson

from compactctl.errors import EXIT_GATE, EXIT_INPUT, EXIT_OK
from compactctl.tokens import TokenCounter
from tests.cli.conftest import write_jsonl


def test_report_on_one_file_counts_tokens_by_role(cli, chat_file, agent_messages):
    result = cli("report", chat_file, "--json")
    assert result.exit_code == EXIT_OK
    file = orjson.loads(result.stdout)["files"][0]
    counter = TokenCounter()
    assert file["tokens_before"] == counter.messages(agent_messages)
    assert sum(file["tokens_by_role_before"].values()) == file["tokens_before"]
    tool = sum(counter.message(m) for m in agent_messages if m["role"] == "tool")
    assert file["tool_output_share_before"] == round(tool / file["tokens_before"], 4)
    assert file["tokens_after"] is None and file["valid_before"] is True


def test_report_before_and_after_folders_match_by_relative_path(cli, tmp_path, agent_messages):
    write_jsonl(tmp_path / "before" / "x" / "s.jsonl", agent_messages)
    write_jsonl(tmp_path / "after" / "x" / "s.jsonl", agent_messages[:1] + agent_messages[-3:])
    result = cli("report", tmp_path / "before", tmp_path / "after", "--json")
    assert result.exit_code == EXIT_OK, result.stderr
    file = orjson.loads(result.stdout)["files"][0]
    assert (file["file"], file["name"]) == (str(tmp_path / "before" / "x" / "s.jsonl"), "x/s.jsonl")
    assert (file["messages_before"], file["messages_after"]) == (10, 4)
    assert 0 < file["reduction"] < 1


def test_an_invalid_after_fails_the_gate_and_names_the_violation(cli, tmp_path, agent_messages):
    before = write_jsonl(tmp_path / "b.jsonl", agent_messages)
    after = write_jsonl(tmp_path / "a.jsonl", [agent_messages[0], agent_messages[3]])
    result = cli("report", before, after)
    assert result.exit_code == EXIT_GATE
    assert "tool message after a system message" in result.stdout


def test_facts_declared_after_their_text_are_still_found(cli, tmp_path):
    messages = [
        {"role": "user", "content": "My order is CMD-1."},
        {"role": "assistant", "content": "Noted.", "compactctl": {"facts": ["CMD-1"]}},
    ]
    result = cli("report", write_jsonl(tmp_path / "t.jsonl", messages), "--json")
    file = orjson.loads(result.stdout)["files"][0]
    assert (file["facts_required"], file["facts_preserved"]) == (1, 1)


def test_require_checks_the_after_file(cli, tmp_path, agent_messages):
    before = write_jsonl(tmp_path / "b.jsonl", agent_messages)
    after = write_jsonl(tmp_path / "a.jsonl", agent_messages[-2:])
    ok = cli("report", before, after, "--require", "src/app.py")
    assert ok.exit_code == EXIT_OK
    lost = cli("report", before, after, "--require", "git status", "--json")
    assert lost.exit_code == EXIT_GATE
    assert orjson.loads(lost.stdout)["total"]["facts_missing"] == 1


def test_a_fact_written_as_a_string_is_checked_whole(cli, tmp_path):
    source = write_jsonl(
        tmp_path / "f.jsonl",
        [{"role": "user", "content": "I am Claire Dubois", "compactctl": {"facts": "Claire Dubois"}}],
    )
    result = cli("report", source, "--json")
    assert result.exit_code == EXIT_OK, result.output
    file = orjson.loads(result.stdout)["files"][0]
    assert (file["facts_required"], file["facts_preserved"], file["facts_missing"]) == (1, 1, [])


def test_facts_match_case_and_whitespace_folded(cli, tmp_path):
    chunk = "L'appareil se connecte\n au réseau STRASSE-4 en 2 s."
    before = write_jsonl(
        tmp_path / "b.jsonl",
        [{"role": "user", "content": chunk, "compactctl": {"facts": ["l'appareil  se connecte au réseau"]}}],
    )
    result = cli("report", before, "--require", "strasse-4", "--json")
    assert result.exit_code == EXIT_OK, result.output
    file = orjson.loads(result.stdout)["files"][0]
    assert (file["facts_required"], file["facts_preserved"], file["facts_absent_before"]) == (2, 2, [])
    after = write_jsonl(tmp_path / "a.jsonl", [{"role": "user", "content": "L'APPAREIL SE CONNECTE AU RÉSEAU"}])
    lost = cli("report", before, after, "--require", "strasse-4", "--json")
    assert lost.exit_code == EXIT_GATE
    assert orjson.loads(lost.stdout)["files"][0]["facts_missing"] == ["strasse-4"]


def test_a_fact_absent_from_the_input_is_a_warning_not_a_lost_fact(cli, tmp_path):
    messages = [{"role": "user", "content": "My order is CMD-1.", "compactctl": {"facts": ["CMD-2"]}}]
    before = write_jsonl(tmp_path / "b.jsonl", messages)
    alone = cli("report", before)
    assert alone.exit_code == EXIT_OK, alone.output
    assert "fact 'CMD-2' is not in the input" in alone.stdout
    compacted = cli("compact", before, "-s", "window", "-o", str(tmp_path / "a.jsonl"), "--json")
    assert compacted.exit_code == EXIT_OK, compacted.output
    file = orjson.loads(compacted.stdout)["files"][0]
    assert (file["facts_missing"], file["facts_absent_before"], file["facts_preserved"]) == ([], ["CMD-2"], 0)
    assert orjson.loads(compacted.stdout)["total"]["facts_absent_before"] == 1


def test_strict_facts_makes_an_absent_fact_an_error_and_writes_nothing(cli, tmp_path):
    messages = [{"role": "user", "content": "My order is CMD-1.", "compactctl": {"facts": ["CMD-2"]}}]
    before = write_jsonl(tmp_path / "b.jsonl", messages)
    result = cli("report", before, "--strict-facts")
    assert result.exit_code == EXIT_INPUT
    assert "fact(s) not in the input (--strict-facts): 'CMD-2'" in result.stderr
    out = tmp_path / "out.jsonl"
    pruned = cli("prune", before, "-o", str(out), "--strict-facts")
    assert pruned.exit_code == EXIT_INPUT and not out.exists()
    assert cli("prune", before, "-o", str(out), "--strict-facts", "--require", "cmd-1").exit_code == EXIT_INPUT
    messages[0]["compactctl"]["facts"] = ["cmd-1"]
    assert cli("prune", write_jsonl(tmp_path / "ok.jsonl", messages), "-o", str(out), "--strict-facts").exit_code == 0


def test_report_lists_every_violation_with_the_count(cli, tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text("".join('{"role": "user", "content": null}\n' for _ in range(7)))
    result = cli("report", path, "--json")
    (entry,) = orjson.loads(result.stdout)["files"]
    assert entry["valid_before"] is False
    assert entry["violation_count_before"] == 7 and len(entry["violations_before"]) == 5
    assert entry["violation_before"] == entry["violations_before"][0]
    shown = cli("report", path)
    assert shown.stdout.count("not API-valid before") == 6 and "7 violations in all" in shown.stdout


def test_a_session_saved_while_a_tool_ran_is_valid_and_says_it_ends_on_an_open_call(cli, tmp_path):
    path = tmp_path / "live.jsonl"
    path.write_text(
        '{"role": "user", "content": "run the tests"}\n'
        '{"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "type": "function", '
        '"function": {"name": "bash", "arguments": "{}"}}]}\n'
    )
    result = cli("report", path, "--json")
    (entry,) = orjson.loads(result.stdout)["files"]
    assert entry["valid_before"] is True and entry["open_calls_before"] == ["c1"]
    assert "ends on an open call" in cli("report", path).stdout


def test_fail_under_with_no_after_is_a_usage_error_not_a_failed_gate(cli, chat_file):
    """No AFTER, no reduction to measure: exit 2 before any file is read (SPEC: bad usage), not exit 1."""
    result = cli("report", chat_file, "--fail-under", "10", "--json")
    assert result.exit_code == EXIT_INPUT, result.output
    document = orjson.loads(result.stdout)
    assert document["exit_code"] == EXIT_INPUT and document["gates"] == [] and document["files"] == []
    assert "--fail-under has no effect here: it is read with AFTER" in document["error"]["message"]
    compared = cli("report", chat_file, chat_file, "--fail-under", "10")
    assert compared.exit_code == EXIT_GATE and "is under --fail-under 10%" in compared.stderr


def test_claude_tokens_ctok_on_a_file_that_is_no_recorded_claude_code_session_is_said(cli, chat_file):
    """--claude-tokens counts only a Claude Code file that records its usage: elsewhere it changes nothing, and a
    note says so (report and replay), the figures as without it."""
    plain = cli("report", chat_file, "--json")
    for command in (["report", chat_file], ["replay", chat_file, "-t", "4000"]):
        given = cli(*command, "--json", "--claude-tokens", "ctok")
        assert given.exit_code == EXIT_OK, given.output
        assert "note: --claude-tokens ctok not used: it counts a Claude Code file that records its usage" in (
            given.stderr
        )
        assert "not used" not in cli(*command, "--json").stderr
    alike = cli("report", chat_file, "--json", "--claude-tokens", "ctok")
    assert orjson.loads(alike.stdout)["files"] == orjson.loads(plain.stdout)["files"]
