"""The openai summarizer against a real model server: llama-cpp-python's, serving SmolLM2-135M (tests/local_model.py).

What a real server does that the loopback fake does not: it counts with the model's own
tokenizer and reports that usage, refuses a prompt larger than its window with a 400 that
names the window (llama-cpp-python states none in ``/v1/models``), ignores
``max_completion_tokens`` (compactctl sends it ``max_tokens``), and cuts a reply at the bound
wherever it is, often inside a code block (the fake's cut reply is whole text). The fakes stay for
faults (tests/summarizers/test_faults.py).
"""

from __future__ import annotations

import json

import pytest

from tests.cli.conftest import write_jsonl
from tests.helpers import call

# A real model server on shared cores: minutes of CPU per test (208 s, 60 s and 44 s at a load of
# 9-11), five times the rest of the inner loop together.
pytestmark = pytest.mark.slow

SHORT = [
    {"role": "system", "content": "You are a coding agent."},
    {"role": "user", "content": "Fix the failing test in src/app.py. Do not change the public interface."},
    {"role": "assistant", "content": "Reading it.", "tool_calls": [call("c1", "read_file", '{"path": "src/app.py"}')]},
    {"role": "tool", "tool_call_id": "c1", "content": "def add(a, b):\n    return a - b\n" * 60},
    {"role": "assistant", "content": "Running the tests.", "tool_calls": [call("c2", "bash", '{"cmd": "pytest -q"}')]},
    {"role": "tool", "tool_call_id": "c2", "content": "FAILED tests/test_app.py::test_add - assert -1 == 3\n1 failed"},
    {"role": "assistant", "content": "add() subtracts; I will change it to a + b in src/app.py."},
    {"role": "user", "content": "Go ahead, then run the tests again."},
    {"role": "assistant", "content": "Done: src/app.py returns a + b; 1 passed."},
]
SUMMARY = ["-s", "summary", "--threshold", "0", "--keep-recent", "2"]
ENDLESS = (
    "Number every line of every tool output in the transcript below and write each one out again, one per line, "
    "all of them."
)
TERSE = "Reply with one short sentence about the weather. Name no file, command or error."


def server_args(local_model, tmp_path) -> list[str]:
    return [
        "--summarizer",
        "openai",
        "--base-url",
        local_model.url,
        "--model",
        local_model.model,
        "--summary-temperature",
        "0",
        # A small model on shared cores takes minutes for a summary: no per-request bound cuts it short.
        "--summary-timeout",
        "1500",
        "--summary-request-deadline",
        "1500",
        "--cache-dir",
        str(tmp_path / "cache"),
        "--encoding",
        "approx",
    ]


@pytest.fixture
def short(tmp_path):
    return write_jsonl(tmp_path / "short.jsonl", SHORT)


def test_compact_through_the_real_server_reads_usage_as_the_server_counts_it(cli, local_model, tmp_path, short):
    args = [*SUMMARY, *server_args(local_model, tmp_path)]
    shown = cli("compact", short, *args, "--dry-run")
    assert shown.exit_code == 0, shown.output
    (request,) = [json.loads(chunk) for chunk in _json_objects(shown.stdout)]
    body = request["body"]
    assert "max_tokens" in body and "max_completion_tokens" not in body  # llama.cpp ignores the latter
    sent = sum(local_model.tokens(m["content"]) for m in body["messages"])
    done = cli("compact", short, "-o", tmp_path / "out.jsonl", *args, "--json", "-q")
    assert done.exit_code == 0, done.output
    report = json.loads(done.stdout)["files"][0]
    assert report["summarizer_calls"] == 1
    # The server's count of the prompt: the model's tokenizer over what was sent, plus its chat template.
    assert sent - 8 <= report["summarizer_prompt_tokens"] <= sent + 48
    assert 0 < report["summarizer_completion_tokens"] <= body["max_tokens"]
    written = [json.loads(line) for line in (tmp_path / "out.jsonl").read_text().splitlines()]
    summary = written[1]["content"]
    assert summary.startswith("[compactctl summary of") and "## User messages (verbatim)" in summary


def test_chunks_follow_the_servers_window_learned_from_its_refusal(cli, local_model, tmp_path):
    from tests.local_model import start

    small = start(tmp_path, window=2048)  # llama-cpp-python states no window in /v1/models
    try:
        long = [*SHORT[:3], {**SHORT[3], "content": SHORT[3]["content"] * 4}, *SHORT[4:]]  # ~2,800 tokens
        source = write_jsonl(tmp_path / "long.jsonl", long)
        args = [*SUMMARY, *server_args(small, tmp_path), "--summary-max-tokens", "100"]
        done = cli("compact", source, "-o", tmp_path / "out.jsonl", *args, "--json", "-q")
        assert done.exit_code == 0, done.output
        report = json.loads(done.stdout)["files"][0]
        log = small.log.read_text(errors="replace")
    finally:
        small.stop()
    assert log.count(" 400 ") == 1  # the whole span once: then every chunk fit the window its refusal named
    assert report["summarizer_calls"] >= 2 and log.count(" 200 ") >= 3  # /v1/models, then the chunks
    assert report["summarizer_prompt_tokens"] / report["summarizer_calls"] < 2048


def test_a_reply_the_real_server_cuts_at_the_bound_is_kept_and_counted_as_truncated(cli, local_model, tmp_path, short):
    # A prompt no summary bound holds (SmolLM2 echoes the tool output into a ```python block and loops):
    # the server stops at the bound and says finish_reason "length".
    endless = tmp_path / "endless.md"
    endless.write_text(ENDLESS, encoding="utf-8")
    args = [*SUMMARY, *server_args(local_model, tmp_path), "--prompt-file", f"summary={endless}"]
    args += ["--summary-max-tokens", "256"]
    shown = cli("compact", short, *args, "--dry-run")
    assert shown.exit_code == 0, shown.output
    (request,) = [json.loads(chunk) for chunk in _json_objects(shown.stdout)]
    bound = request["body"]["max_tokens"]
    done = cli("compact", short, "-o", tmp_path / "out.jsonl", *args, "--json", "-q")
    assert done.exit_code == 0, done.output
    report = json.loads(done.stdout)["files"][0]
    assert report["summarizer_calls"] == 1 and report["summary_truncated"] == 1
    assert report["summarizer_completion_tokens"] == bound  # it wrote up to the bound, no further
    written = [json.loads(line) for line in (tmp_path / "out.jsonl").read_text().splitlines()]
    summary = written[1]["content"]
    model_text, _, appended = summary.partition("## User messages (verbatim)")
    assert model_text.strip() and appended  # the cut text is kept, the verbatim block follows it
    assert SHORT[1]["content"] in appended
    assert model_text.count("```") % 2 == 0  # a fence the cut left open is closed before the blocks


def test_a_prompt_ab_review_through_the_real_server_tells_the_prompts_apart(cli, local_model, tmp_path):
    source = write_jsonl(tmp_path / "s.jsonl", SHORT)
    terse = tmp_path / "terse.md"
    terse.write_text(TERSE, encoding="utf-8")
    page = tmp_path / "ab.html"
    args = [*SUMMARY, *server_args(local_model, tmp_path), "--vs-prompt-file", f"summary={terse}"]
    result = cli("review", source, "-o", page, *args, "--json", "-q")
    assert result.exit_code == 0, result.output
    body = json.loads(result.stdout)["files"][0]
    a, b = body["sides"]["A"], body["sides"]["B"]
    html = page.read_text()
    left, right = _summaries(html)
    assert left != right  # two prompts, two summaries
    # Both carry the ledger compactctl appends; the model's own text is what differs.
    assert a["own_text"] != b["own_text"] and body["own_text_difference_pp"] != 0
    assert int(_attr(html, "data-changed")) > 0  # the side-by-side text diff shows it


def _json_objects(text: str) -> list[str]:
    """The JSON objects --dry-run prints one after another."""
    decoder, found, at = json.JSONDecoder(), [], 0
    while at < len(text):
        if text[at].isspace():
            at += 1
            continue
        value, end = decoder.raw_decode(text, at)
        found.append(json.dumps(value))
        at = end
    return found


def _summaries(html: str) -> tuple[str, str]:
    import re

    sides = re.findall(r'<aside class="summary" data-side="([AB])">(.*?)</aside>', html, re.S)
    by_side = {name: text for name, text in sides}
    return by_side["A"], by_side["B"]


def _attr(html: str, name: str) -> str:
    import re

    found = re.search(rf'{name}="(\d+)"', html)
    assert found, name
    return found.group(1)
