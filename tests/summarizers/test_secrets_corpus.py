"""No secret of the corpus leaves the machine: not in a request, a dry run, the cache or an error line.

The corpus (tests/secrets_corpus.py) is fake secrets of every kind the audit found leaking,
made in each issuer's shape; each is placed in user text, in a tool output and inside
tool-call arguments, and sent through the real ``openai`` client to the loopback server.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from compactctl.cli.main import app
from compactctl.summarizers.redact import redact, redact_messages
from tests.helpers import call
from tests.secrets_corpus import CLEAN, CORPUS, Secret, leaked

runner = CliRunner()


def leaks(text: str) -> list[str]:
    return [secret.kind for secret in CORPUS if leaked(secret.secret, text)]


def session_holding(secret: Secret, number: int) -> list[dict]:
    """One short agent exchange with the secret said by the user, printed by a tool and passed as arguments."""
    arguments = json.dumps({"command": f"deploy --env prod\n{secret.text}"})
    return [
        {"role": "user", "content": f"Request {number}: here is what I have:\n{secret.text}\nplease deploy."},
        {"role": "assistant", "content": None, "tool_calls": [call(f"c{number}", "bash", arguments)]},
        {"role": "tool", "tool_call_id": f"c{number}", "content": f"$ cat .env\n{secret.text}\nexit 0"},
        {"role": "assistant", "content": f"Deployed request {number}."},
    ]


@pytest.mark.parametrize("secret", CORPUS, ids=[s.kind for s in CORPUS])
def test_each_kind_of_secret_is_redacted_wherever_it_sits(secret):
    for text in session_holding(secret, 1):
        redacted, _ = redact_messages([text])
        assert not leaked(secret.secret, json.dumps(redacted)), secret.kind


def test_ordinary_identifiers_are_left_alone_and_redaction_is_idempotent():
    for line in CLEAN:
        assert redact(line) == (line, 0), line
    for secret in CORPUS:
        once, count = redact(secret.text)
        assert count >= 1 and redact(once) == (once, 0), secret.kind


def compact_args(server, source: Path, out: Path, *extra: str) -> list[str]:
    return [
        "compact", str(source), "-o", str(out), "--summarizer", "openai", "--base-url", server.url,
        "--model", "test-model", "--summary-backoff", "0.01", "-s", "summary",
        "--threshold", "10", *extra,
    ]  # fmt: skip


def write_session(path: Path) -> Path:
    messages = [{"role": "system", "content": "You are a deploy agent."}]
    for number, secret in enumerate(CORPUS):
        messages += session_holding(secret, number)
    # Plain turns at the end, so the kept tail holds no secret and every one is summarized.
    for text in ("Thanks, anything else?", "No, all deployed.", "Good, that is all.", "Bye."):
        messages.append({"role": "user" if text[0] in "TG" else "assistant", "content": text})
    path.write_text("".join(json.dumps(m) + "\n" for m in messages), encoding="utf-8")
    return path


def test_no_secret_reaches_the_server_even_when_chunked(openai_server, tmp_path):
    # A small request limit cuts the span into many chunks, some starting inside a key block.
    source = write_session(tmp_path / "secrets.jsonl")
    cache = tmp_path / "cache"
    limits = ["--summary-input-max-tokens", "2400", "--summary-max-tokens", "200", "--cache-dir", str(cache)]
    result = runner.invoke(app, compact_args(openai_server, source, tmp_path / "out.jsonl", *limits))
    assert result.exit_code == 0, result.output
    assert len(openai_server.requests) > 5  # chunked, then merged
    sent = openai_server.received_text()
    assert "[REDACTED:" in sent
    assert leaks(sent) == []
    cached = "".join(p.read_text() for p in cache.rglob("*.json"))
    assert cached and leaks(cached) == []


def test_a_dry_run_prints_no_secret(openai_server, tmp_path):
    source = write_session(tmp_path / "secrets.jsonl")
    result = runner.invoke(app, [*compact_args(openai_server, source, tmp_path / "out.jsonl"), "--dry-run"])
    assert result.exit_code == 0, result.output
    assert '"body"' in result.stdout and leaks(result.stdout) == []
    assert openai_server.requests == []


def test_no_redact_sends_the_text_as_it_is(openai_server, tmp_path):
    # The switch is real: without it the same run would leak, so the tests above can fail.
    source = write_session(tmp_path / "secrets.jsonl")
    result = runner.invoke(app, [*compact_args(openai_server, source, tmp_path / "out.jsonl"), "--no-redact"])
    assert result.exit_code == 0, result.output
    assert len(leaks(openai_server.received_text())) == len(CORPUS)


def test_a_password_in_the_base_url_is_never_printed(openai_server, tmp_path):
    password = "Pw-" + "q7Rz2LmX9vB4"
    url = openai_server.url.replace("http://", f"http://deploy:{password}@")
    source = write_session(tmp_path / "secrets.jsonl")
    args = compact_args(openai_server, source, tmp_path / "out.jsonl")
    args[args.index(openai_server.url)] = url
    dry = runner.invoke(app, [*args, "--dry-run"])
    assert dry.exit_code == 0 and "deploy:[REDACTED" in dry.stdout and password not in dry.output
    openai_server.enqueue("400")
    failed = runner.invoke(app, [*args, "--no-cache"])
    assert failed.exit_code == 3 and "HTTP 400" in failed.stderr
    assert password not in failed.output and password not in failed.stderr
