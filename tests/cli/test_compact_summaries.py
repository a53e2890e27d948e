"""``compactctl compact`` with summaries, end to end: the CLI, the real openai client, the loopback server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from compactctl.cli.main import app
from compactctl.errors import EXIT_INPUT, EXIT_OK, EXIT_SUMMARIZER
from tests.summarizers.test_openai import FAKE_KEY

runner = CliRunner()


def write_chat(path: Path, messages: list[dict]) -> Path:
    path.write_text("".join(json.dumps(m) + "\n" for m in messages), encoding="utf-8")
    return path


def openai_args(server, *extra: str, structured: bool = True) -> list[str]:
    """The summarizer pointed at the fake server (and structured's --keep-turns, when structured runs)."""
    return [
        "--summarizer", "openai", "--base-url", server.url, "--model", "test-model",
        "--summary-backoff", "0.01", *(["--keep-turns", "1"] if structured else []), *extra,
    ]  # fmt: skip


def test_structured_is_the_default_and_summarizes_through_the_server(openai_server, agent_messages, tmp_path):
    source = write_chat(tmp_path / "run.jsonl", agent_messages)
    result = runner.invoke(
        app, ["compact", str(source), "-o", str(tmp_path / "out.jsonl"), "--json", *openai_args(openai_server)]
    )
    assert result.exit_code == EXIT_OK, result.output
    (sent,) = openai_server.requests
    # The bound scales with the span (the floor, 600, plus the user's words); a local server reads max_tokens,
    # and the verbatim block appended after the reply takes its share of the bound.
    assert sent.path == "/v1/chat/completions" and 256 <= sent.body["max_tokens"] < 4000
    out = [json.loads(line) for line in (tmp_path / "out.jsonl").read_text().splitlines()]
    assert out[0] == agent_messages[0]
    assert out[1]["role"] == "system" and openai_server.text in out[1]["content"]
    assert out[2:] == agent_messages[8:]
    (report,) = json.loads(result.stdout)["files"]
    assert report["summarizer_calls"] == 1 and report["summarizer_prompt_tokens"] > 0
    assert report["valid_after"] is True


def test_responses_api_through_the_cli(openai_server, agent_messages, tmp_path):
    source = write_chat(tmp_path / "run.jsonl", agent_messages)
    result = runner.invoke(
        app,
        ["compact", str(source), "-o", str(tmp_path / "out.jsonl"), *openai_args(openai_server, "--api", "responses")],
    )
    assert result.exit_code == EXIT_OK, result.output
    assert [r.path for r in openai_server.requests] == ["/v1/responses"]


def test_retries_then_success_through_the_cli(openai_server, agent_messages, tmp_path):
    openai_server.enqueue("429", "500")
    source = write_chat(tmp_path / "run.jsonl", agent_messages)
    result = runner.invoke(
        app, ["compact", str(source), "-o", str(tmp_path / "out.jsonl"), *openai_args(openai_server)]
    )
    assert result.exit_code == EXIT_OK, result.output
    assert len(openai_server.requests) == 3 and (tmp_path / "out.jsonl").exists()


def test_persistent_server_error_exits_3_and_writes_nothing(openai_server, agent_messages, tmp_path):
    openai_server.enqueue(*["500"] * 10)
    source = write_chat(tmp_path / "run.jsonl", agent_messages)
    target = tmp_path / "out.jsonl"
    result = runner.invoke(
        app, ["compact", str(source), "-o", str(target), *openai_args(openai_server, "--summary-retries", "2")]
    )
    assert result.exit_code == EXIT_SUMMARIZER
    assert "HTTP 500" in result.stderr and "after 3 attempts" in result.stderr
    assert not target.exists() and sorted(p.name for p in tmp_path.iterdir()) == ["run.jsonl"]


def test_a_summarizer_failure_is_a_valid_run_document_with_exit_3(openai_server, agent_messages, tmp_path):
    import jsonschema

    from compactctl.cli.outcome import SCHEMA

    openai_server.enqueue(*["500"] * 10)
    source = write_chat(tmp_path / "run.jsonl", agent_messages)
    args = ["compact", str(source), "-o", str(tmp_path / "o.jsonl"), "--json", "--max-failed-files", "5"]
    result = runner.invoke(app, [*args, *openai_args(openai_server, "--summary-retries", "0")])
    assert result.exit_code == EXIT_SUMMARIZER  # never tolerated, whatever --max-failed-files says
    document = json.loads(result.stdout)
    jsonschema.validate(document, json.loads(SCHEMA.read_text()))
    assert document["exit_code"] == EXIT_SUMMARIZER and document["failed"][0]["exit_code"] == EXIT_SUMMARIZER
    assert document["files"][0]["status"] == "failed" and not (tmp_path / "o.jsonl").exists()


def test_summarizer_failure_is_not_skipped_by_on_error_skip(openai_server, agent_messages, tmp_path):
    openai_server.enqueue(*["500"] * 10)
    source = write_chat(tmp_path / "run.jsonl", agent_messages)
    args = [
        "compact",
        str(source),
        "-o",
        str(tmp_path / "o.jsonl"),
        "--on-error",
        "skip",
        *openai_args(openai_server, "--summary-retries", "0"),
    ]
    assert runner.invoke(app, args).exit_code == EXIT_SUMMARIZER


def test_timeout_exits_3(openai_server, agent_messages, tmp_path):
    from tests.summarizers.openai_server import Behaviour

    openai_server.enqueue(Behaviour("slow", seconds=1.0))
    source = write_chat(tmp_path / "run.jsonl", agent_messages)
    args = [
        "compact",
        str(source),
        "-o",
        str(tmp_path / "o.jsonl"),
        *openai_args(openai_server, "--summary-timeout", "0.2", "--summary-retries", "0"),
    ]
    result = runner.invoke(app, args)
    assert result.exit_code == EXIT_SUMMARIZER and "timed out" in result.stderr and not (tmp_path / "o.jsonl").exists()


def test_no_request_is_larger_than_the_input_limit(openai_server, tmp_path):
    from compactctl.tokens import counter_for

    counter = counter_for()
    messages = [{"role": "system", "content": "You help."}]
    for n in range(30):
        messages.append({"role": "user", "content": f"Step {n}: " + "check the deployment logs again " * 20})
        messages.append({"role": "assistant", "content": f"Step {n} done. " + "the logs look fine " * 20})
    source = write_chat(tmp_path / "long.jsonl", messages)
    args = ["compact", str(source), "-o", str(tmp_path / "o.jsonl"), "-s", "summary", "--threshold", "100"]
    args += ["--summary-max-tokens", "100", "--summary-input-max-tokens", "1200", "--json"]
    result = runner.invoke(app, [*args, *openai_args(openai_server, structured=False)])
    assert result.exit_code == EXIT_OK, result.output
    assert len(openai_server.requests) > 3  # chunks, then a merge
    for request in openai_server.requests:
        # The whole request, prompt included, as the API would count it.
        assert counter.messages(request.body["messages"]) <= 1200
    assert json.loads(result.stdout)["files"][0]["summarizer_calls"] == len(openai_server.requests)


def test_a_key_is_needed_only_when_a_step_summarizes(agent_messages, tmp_path):
    source = write_chat(tmp_path / "run.jsonl", agent_messages)
    settings = tmp_path / "compactctl.toml"
    settings.write_text('summarizer = "openai"\n')  # a team's file: every run, whatever its steps
    window = runner.invoke(
        app, ["compact", str(source), "-o", str(tmp_path / "w.jsonl"), "-s", "window", "--config", str(settings)]
    )
    assert window.exit_code == EXIT_OK, window.output
    # Typed with no step that summarizes, the flag would change nothing: a usage error, as --model is there.
    flagged = runner.invoke(
        app, ["compact", str(source), "-o", str(tmp_path / "f.jsonl"), "-s", "window", "--summarizer", "openai"]
    )
    assert flagged.exit_code == EXIT_INPUT, flagged.output
    assert "--summarizer has no effect here: it is read with --strategy summary or rolling" in flagged.stderr
    assert not (tmp_path / "f.jsonl").exists()
    structured = runner.invoke(
        app, ["compact", str(source), "-o", str(tmp_path / "s.jsonl"), "--summarizer", "openai", "--keep-turns", "1"]
    )
    assert structured.exit_code == EXIT_INPUT and "OPENAI_API_KEY" in structured.stderr
    assert not (tmp_path / "s.jsonl").exists()


def test_a_truncated_summary_is_flagged_in_the_report(openai_server, agent_messages, tmp_path):
    openai_server.enqueue("length")
    source = write_chat(tmp_path / "run.jsonl", agent_messages)
    result = runner.invoke(
        app, ["compact", str(source), "-o", str(tmp_path / "o.jsonl"), "--json", *openai_args(openai_server)]
    )
    assert result.exit_code == EXIT_OK, result.output
    (report,) = json.loads(result.stdout)["files"]
    assert report["summary_truncated"] == 1
    table = runner.invoke(
        app, ["compact", str(source), "-o", str(tmp_path / "p.jsonl"), "--no-cache", *openai_args(openai_server)]
    )
    assert "summarizer" in table.stdout  # the second run was a plain success: no truncation shown
    assert "truncated" not in table.stdout.replace(str(source), "")  # (the test's folder is named for it)


def test_a_rerun_is_served_from_the_cache(openai_server, agent_messages, tmp_path):
    source = write_chat(tmp_path / "run.jsonl", agent_messages)
    args = ["compact", str(source), *openai_args(openai_server, "--cache-dir", str(tmp_path / "c"))]
    first = runner.invoke(app, [*args, "-o", str(tmp_path / "a.jsonl")])
    second = runner.invoke(app, [*args, "-o", str(tmp_path / "b.jsonl"), "--json"])
    assert first.exit_code == EXIT_OK and second.exit_code == EXIT_OK
    assert len(openai_server.requests) == 1
    assert (tmp_path / "a.jsonl").read_bytes() == (tmp_path / "b.jsonl").read_bytes()
    assert json.loads(second.stdout)["files"][0]["summarizer_calls"] == 0


def test_the_cache_dir_can_come_from_the_environment(openai_server, agent_messages, tmp_path, monkeypatch):
    monkeypatch.setenv("COMPACTCTL_CACHE_DIR", str(tmp_path / "env-cache"))
    source = write_chat(tmp_path / "run.jsonl", agent_messages)
    runner.invoke(app, ["compact", str(source), "-o", str(tmp_path / "a.jsonl"), *openai_args(openai_server)])
    assert list((tmp_path / "env-cache").rglob("*.json"))


def test_a_planted_key_never_reaches_the_server(openai_server, agent_messages, tmp_path):
    messages = [dict(m) for m in agent_messages]
    messages[1] = {**messages[1], "content": messages[1]["content"] + f" Use OPENAI_API_KEY={FAKE_KEY} for the test."}
    source = write_chat(tmp_path / "run.jsonl", messages)
    result = runner.invoke(app, ["compact", str(source), "-o", str(tmp_path / "o.jsonl"), *openai_args(openai_server)])
    assert result.exit_code == EXIT_OK, result.output
    assert openai_server.requests and FAKE_KEY not in openai_server.received_text()
    assert "[REDACTED:openai-key]" in openai_server.received_text()


def test_dry_run_sends_nothing_and_writes_nothing(openai_server, agent_messages, tmp_path):
    source = write_chat(tmp_path / "run.jsonl", agent_messages)
    target = tmp_path / "o.jsonl"
    result = runner.invoke(app, ["compact", str(source), "-o", str(target), "--dry-run", *openai_args(openai_server)])
    assert result.exit_code == EXIT_OK, result.output
    assert openai_server.requests == [] and not target.exists()
    shown = json.loads(result.stdout)
    assert shown["url"] == openai_server.url + "/chat/completions"
    assert "[1] user: Fix the failing test in src/app.py." in shown["body"]["messages"][1]["content"]


def test_extractive_structured_keeps_constraints_verbatim(agent_messages, tmp_path):
    # A long explanation, so the summary is smaller than what it replaces (else nothing is replaced).
    agent_messages[7] = {**agent_messages[7], "content": agent_messages[7]["content"] + " It was a sign slip." * 150}
    source = write_chat(tmp_path / "run.jsonl", agent_messages)
    result = runner.invoke(app, ["compact", str(source), "-o", str(tmp_path / "o.jsonl"), "--keep-turns", "1"])
    assert result.exit_code == EXIT_OK, result.output
    out = [json.loads(line) for line in (tmp_path / "o.jsonl").read_text().splitlines()]
    summary = out[1]["content"]
    assert "Do not change the public interface." in summary
    for section in ("## Goal", "## Facts", "## Constraints"):
        assert section in summary
    assert "src/app.py" in summary and "pytest -q" in summary


def run_python(code: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COMPACTCTL_CACHE_DIR": os.environ["COMPACTCTL_CACHE_DIR"]}
    env.pop("OPENAI_API_KEY", None)
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, env=env, timeout=60)


IMPORTS_OPENAI = """
import sys
from compactctl.cli.main import main
sys.argv = ["compactctl", *sys.argv[1:]]
try:
    main()
except SystemExit:
    pass
print("openai imported" if "openai" in sys.modules else "openai not imported", file=sys.stderr)
"""


@pytest.mark.slow  # five console scripts, each importing the CLI
def test_help_and_extractive_compaction_never_import_openai(agent_messages, tmp_path):
    assert "openai not imported" in run_python(IMPORTS_OPENAI, "--help").stderr
    assert "openai not imported" in run_python(IMPORTS_OPENAI, "compact", "--help").stderr
    source = write_chat(tmp_path / "run.jsonl", agent_messages)
    done = run_python(
        IMPORTS_OPENAI, "compact", str(source), "-o", str(tmp_path / "o.jsonl"), "-q", "--write-unchanged"
    )
    assert "openai not imported" in done.stderr and (tmp_path / "o.jsonl").exists()
    # The check itself can fail: the openai summarizer does import it.
    dry = run_python(IMPORTS_OPENAI, "compact", str(source), "--summarizer", "openai", "--dry-run", "-q")
    assert "openai imported" in dry.stderr


@pytest.mark.slow  # a console script through the server
def test_the_console_script_summarizes_through_the_server(openai_server, agent_messages, tmp_path):
    script = Path(sys.executable).with_name("compactctl")
    source = write_chat(tmp_path / "run.jsonl", agent_messages)
    done = subprocess.run(
        [str(script), "compact", str(source), "-o", str(tmp_path / "o.jsonl"), "--json", *openai_args(openai_server)],
        capture_output=True, text=True, timeout=60,
        env={**os.environ, "OPENAI_API_KEY": "sk-loopback-only"},
    )  # fmt: skip
    assert done.returncode == EXIT_OK, done.stderr
    assert len(openai_server.requests) == 1
    assert openai_server.requests[0].headers["authorization"] == "Bearer sk-loopback-only"
    assert json.loads(done.stdout)["files"][0]["summarizer_calls"] == 1
