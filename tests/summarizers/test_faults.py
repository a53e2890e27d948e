"""Summarizer faults through the real openai client against the loopback server.

A 200 that is not the API's shape fails at once with a one-line reason (exit 3); a
whole request is bounded by --summary-timeout even when the bytes trickle; a run is
bounded by --summary-deadline; after N failed summaries in a row the server is not
called again, so a batch against a dead server fails fast.
"""

from __future__ import annotations

import json
import time

import pytest
from typer.testing import CliRunner

from compactctl.cli.main import app
from compactctl.errors import SummarizerError
from tests.summarizers.openai_server import Behaviour
from tests.summarizers.test_openai import request, summarizer_for

runner = CliRunner()

NON_CONFORMING = {
    "an html page": (Behaviour("html"), "an HTML page (text/html"),
    "malformed json": (Behaviour("malformed"), "malformed JSON"),
    "choices not a list": (Behaviour("shape", body={"id": "x", "choices": {"0": {}}}), "'choices' is dict, not a list"),
    "choices empty": (Behaviour("shape", body={"id": "x", "choices": []}), "'choices' is empty"),
    "choices missing": (Behaviour("shape", body={"object": "chat.completion"}), "'choices' is missing"),
    "choice not an object": (Behaviour("shape", body={"choices": ["hi"]}), "choices[0] has no message object"),
    "content a list": (
        Behaviour("shape", body={"choices": [{"message": {"content": ["a"]}}]}),
        "content is list, not a string",
    ),
    "usage not counts": (
        Behaviour("shape", body={"choices": [{"message": {"content": "ok"}}], "usage": {"prompt_tokens": "12"}}),
        "usage.prompt_tokens is '12', not a count",
    ),
    "a json array": (Behaviour("shape", body=[1, 2]), "JSON list, not an object"),
    "an error object": (
        Behaviour("shape", body={"error": {"message": "overloaded"}}),
        "an error object with status 200",
    ),
}


@pytest.mark.parametrize("case", NON_CONFORMING)
def test_a_non_conforming_200_is_a_one_line_summarizer_error(openai_server, tmp_path, case):
    behaviour, reason = NON_CONFORMING[case]
    openai_server.enqueue(behaviour)
    with pytest.raises(SummarizerError) as caught:
        summarizer_for(openai_server, tmp_path).summarize(request())
    message = str(caught.value)
    assert reason in message and "the 200 reply is" in message and "\n" not in message
    assert len(openai_server.requests) == 1  # not retried: the same server would send the same


@pytest.mark.parametrize(
    ("body", "reason"),
    [({"output": {}}, "'output' is dict, not a list"), ({"output": ["x"]}, "an output item is str")],
)
def test_a_non_conforming_responses_reply_is_a_summarizer_error(openai_server, tmp_path, body, reason):
    openai_server.enqueue(Behaviour("shape", body=body))
    with pytest.raises(SummarizerError, match=reason):
        summarizer_for(openai_server, tmp_path, api="responses").summarize(request())


def test_the_timeout_bounds_the_whole_request_even_when_bytes_trickle(openai_server, tmp_path):
    # One byte every 0.2 s: each read is quick, so only a bound on the whole request ends it.
    openai_server.enqueue(Behaviour("slow-bytes", seconds=0.2))
    started = time.monotonic()
    with pytest.raises(SummarizerError, match=r"timed out after 1 s after 1 attempt"):
        summarizer_for(openai_server, tmp_path, summary_timeout=1, summary_retries=0).summarize(request())
    assert time.monotonic() - started < 2.0


def test_a_trickled_reply_that_finishes_in_time_is_used(openai_server, tmp_path):
    openai_server.enqueue(Behaviour("slow-bytes", seconds=0.0005, text="## Goal\n- trickled"))
    summary = summarizer_for(openai_server, tmp_path, summary_timeout=5).summarize(request())
    # The model's whole prose, then the user's words the summarizer appends verbatim after it.
    assert summary.text.startswith("## Goal\n- trickled\n\n")
    assert summary.text.endswith("- Fix src/app.py. Do not change the public interface.")


def test_the_run_deadline_bounds_all_requests_and_retries_together(openai_server, tmp_path):
    openai_server.enqueue(*[Behaviour("hang", seconds=30)] * 10)
    summarizer = summarizer_for(
        openai_server, tmp_path, summary_timeout=0.6, summary_retries=9, summary_backoff=0.01, summary_deadline=1.5
    )
    started = time.monotonic()
    with pytest.raises(SummarizerError, match=r"`summary_deadline` of 1\.5 s"):
        summarizer.summarize(request())
    elapsed = time.monotonic() - started
    assert 1.4 < elapsed < 2.5 and len(openai_server.requests) <= 3


def test_one_summary_and_its_retries_are_bounded_by_the_request_deadline(openai_server, tmp_path):
    # A hanging server with the default retries: one summary gives up at --summary-request-deadline
    # (60 s by default), not after (timeout + backoff) x attempts.
    openai_server.enqueue(*[Behaviour("hang", seconds=30)] * 10)
    summarizer = summarizer_for(
        openai_server, tmp_path, summary_timeout=0.5, summary_retries=4, summary_backoff=0.01,
        summary_request_deadline=1.2,
    )  # fmt: skip
    started = time.monotonic()
    with pytest.raises(SummarizerError, match=r"`summary_request_deadline` \(1\.2 s\)"):
        summarizer.summarize(request())
    assert 1.1 < time.monotonic() - started < 2.0 and len(openai_server.requests) == 3


def test_the_request_deadline_is_a_minute_by_default():
    from compactctl.summarizers.options import SummarizerOptions

    assert SummarizerOptions().summary_request_deadline == 60.0


def test_after_n_failures_in_a_row_the_server_is_not_called_again(openai_server, tmp_path):
    openai_server.enqueue(*["500"] * 20)
    summarizer = summarizer_for(openai_server, tmp_path, summary_retries=1, summary_fail_after=2)
    for _ in range(2):
        with pytest.raises(SummarizerError, match="HTTP 500"):
            summarizer.summarize(request())
    assert len(openai_server.requests) == 4
    with pytest.raises(SummarizerError, match=r"not called, the server failed 2 times in a row \(last: HTTP 500"):
        summarizer.summarize(request(max_tokens=301))
    assert len(openai_server.requests) == 4


def test_a_success_resets_the_count_of_failures(openai_server, tmp_path):
    openai_server.enqueue("500", "500", "ok", "500", "500")
    summarizer = summarizer_for(openai_server, tmp_path, summary_retries=1, summary_fail_after=2, cache=False)
    with pytest.raises(SummarizerError):
        summarizer.summarize(request())
    summarizer.summarize(request())  # third reply: ok
    with pytest.raises(SummarizerError, match="HTTP 500"):
        summarizer.summarize(request())  # called: one failure in a row so far
    assert len(openai_server.requests) == 5


def chat(path, messages):
    path.write_text("".join(json.dumps(m) + "\n" for m in messages), encoding="utf-8")
    return path


def test_a_batch_against_a_dead_server_fails_fast_and_reports_every_file(openai_server, tmp_path, agent_messages):
    folder = tmp_path / "in"
    folder.mkdir()
    for n in range(5):
        chat(folder / f"s{n}.jsonl", [*agent_messages, {"role": "user", "content": f"file {n}"}])
    openai_server.enqueue(*["500"] * 50)
    started = time.monotonic()
    result = runner.invoke(
        app,
        [
            "compact", str(folder), "-o", str(tmp_path / "out"), "--summarizer", "openai", "--base-url",
            openai_server.url, "--summary-retries", "1", "--summary-backoff", "0.01", "--keep-turns", "1",
            "--no-cache", "--jobs", "1",
        ],
    )  # fmt: skip
    assert result.exit_code == 3, result.output
    assert len(openai_server.requests) == 6  # 3 files x 2 attempts, then no more calls
    assert result.stderr.count("not called, the server failed 3 times in a row") == 2
    for n in range(5):
        assert f"s{n}.jsonl" in result.output
    assert not (tmp_path / "out").exists() or not list((tmp_path / "out").rglob("*.jsonl"))
    assert time.monotonic() - started < 10


@pytest.mark.parametrize("kind", ["html", "malformed"])
def test_the_cli_exits_3_with_one_line_and_writes_nothing(openai_server, tmp_path, agent_messages, kind):
    source = chat(tmp_path / "run.jsonl", agent_messages)
    openai_server.enqueue(Behaviour(kind))
    out = tmp_path / "out.jsonl"
    result = runner.invoke(
        app,
        ["compact", str(source), "-o", str(out), "--summarizer", "openai", "--base-url", openai_server.url,
         "--keep-turns", "1", "--no-cache"],
    )  # fmt: skip
    assert result.exit_code == 3 and (result.exception is None or isinstance(result.exception, SystemExit))
    errors = [line for line in result.stderr.splitlines() if "error" in line]
    assert len(errors) == 1 and "the 200 reply is" in errors[0] and not out.exists()
    assert "Traceback" not in result.output
