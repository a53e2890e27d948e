"""Secrets stay out of every path: held-out shapes, transformed secrets, summaries, second passes, errors.

Three corpora: the table's own (tests/secrets_corpus.py), a held-out one written from the
files people keep secrets in (tests/heldout_secrets.py) and a blind one written before the
redactor was run on it (tests/blind_secrets.py), each placed as it is, cut by a line break,
base64-encoded and URL-encoded.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from compactctl.cli.main import app
from compactctl.summarizers import SummaryRequest
from compactctl.summarizers.extractive import ExtractiveSummarizer
from compactctl.summarizers.redact import mask_known, redact, redact_messages, redact_reply, redact_url, redacted_text
from tests.blind_secrets import PLACED as BLIND_PLACED
from tests.heldout_secrets import DJANGO, PLACED, PLACEMENTS, Document, Placed, exposed
from tests.properties import examples
from tests.secrets_corpus import CORPUS, leaked

runner = CliRunner()


def contexts(text: str) -> list[str]:
    """The text said by the user, printed by a tool, and inside a tool call's JSON arguments."""
    return [
        f"Here is the file:\n{text}\nthanks",
        f"$ cat settings\n{text}\n$ echo done",
        json.dumps({"command": f"deploy --config '{text}'"}),
    ]


@pytest.mark.parametrize("item", PLACED + BLIND_PLACED, ids=[f"{p.kind}/{p.placement}" for p in PLACED + BLIND_PLACED])
def test_every_held_out_secret_is_redacted_in_every_placement(item: Placed):
    for text in contexts(item.text):
        redacted, count = redact(text)
        assert count >= 1 and not exposed(item, redacted), (item.kind, item.placement, redacted)
        assert redact(redacted) == (redacted, 0)  # idempotent


TABLE_PLACED = [
    Placed(s.kind, name, s.secret, *place(Document(s.kind, s.secret, s.text)))
    for s in CORPUS
    for name, place in PLACEMENTS.items()
    if name != "as is"
]


@pytest.mark.parametrize("item", TABLE_PLACED, ids=[f"{p.kind}/{p.placement}" for p in TABLE_PLACED])
def test_the_table_corpus_is_redacted_split_and_encoded_too(item: Placed):
    for text in contexts(item.text):
        assert not exposed(item, redact(text)[0]), (item.kind, item.placement)


def test_random_django_keys_never_leave_whole_or_in_part():
    # Django's own alphabet has ( # ! @ %: the audit found 94 % of such keys sent whole or in part.
    rng = random.Random(7)
    for _ in range(300):
        key = "".join(rng.choice(DJANGO) for _ in range(50))
        for line in (f"SECRET_KEY = '{key}'", f'SECRET_KEY = "{key}"', f"DJANGO_SECRET_KEY={key}"):
            for text in contexts(line):
                assert not leaked(key, redact(text)[0]), line


@pytest.mark.parametrize(
    "url, password",
    [
        ("postgres://app:p@ss#w0rd!x@db.internal:5432/app", "p@ss#w0rd!x"),
        ("mysql://root:Zq8@@k3y9r2M@127.0.0.1/shop", "Zq8@@k3y9r2M"),
        ("redis://:Xy7@yz%21qq@cache:6379", "Xy7@yz%21qq"),
    ],
)
def test_a_url_password_with_an_unencoded_at_is_redacted_to_the_host(url, password):
    redacted, _ = redact(url)
    assert not leaked(password, redacted, window=5), redacted
    assert redacted.endswith(url[url.rindex("@") :])  # the host is kept


@pytest.mark.parametrize(
    "text",
    [
        "bypass = enabled_for_all",
        "compat=python311",
        "sort_key: created_at",
        "cache_key: user_profile_2024_11",
        "idempotency_key: 7d444840-9dc0-11d1-b245-5ffdce74fad2",
        "psql --no-password --host=db.internal",
        "tool --token-file ./secrets/token.txt",
        "passenger: Ada Lovelace",
        "Authorization: required for admin routes",
        "See https://github.com/acme/app/settings/hooks/123456789",
        'variable "region" {\n  default = "eu-west-1"\n}',
        'Client("x", "hello")',
        "-----BEGIN PGP PUBLIC KEY BLOCK-----\nmQINBGN0\n-----END PGP PUBLIC KEY BLOCK-----",
    ],
)
def test_words_the_blind_corpus_taught_the_table_leave_ordinary_text_alone(text):
    # The rows added for it (pass/pat as words, *_key with a generated value, any Authorization
    # scheme, --*-secret flags, webhook URLs, sensitive Terraform defaults, credential pairs, key
    # blocks but public ones) against what they must not take.
    assert redact(text) == (text, 0)


def test_a_line_opening_on_a_label_is_not_joined_to_the_token_before_it():
    # KEY=pk_...\nSTRIPE_SECRET=sk_... is two entries: joined, the first token ran on into the second
    # label, and the second key, cut by a wrap, went out in part.
    first, second = "pk_live_51" + "a1B2c3D4e5" * 3, "sk_live_51" + "Z9y8X7w6V5" * 6
    text = f"STRIPE_PUBLISHABLE={first}\nSTRIPE_SECRET={second[:30]}\n{second[30:]}\nNODE_ENV=production"
    redacted, _ = redact(text)
    assert "STRIPE_SECRET=" in redacted and "NODE_ENV=production" in redacted
    assert not leaked(second, redacted), redacted


def test_base64_wrapped_over_lines_is_decoded_joined():
    import base64

    secret = "sk-ant-api03-" + "Qw3eRt6yUi9oPa2sDf5gHj8kLz1xCv4b" * 3
    encoded = base64.b64encode(f"ANTHROPIC_API_KEY={secret}\nREGION=eu".encode()).decode()
    wrapped = "\n".join(encoded[i : i + 76] for i in range(0, len(encoded), 76))
    for text in (f"$ base64 .env\n{wrapped}\n$ echo done", f"blob:\n{wrapped}\nthanks"):
        redacted, _ = redact(text)
        assert not any(line in redacted for line in wrapped.splitlines()), redacted
        assert redacted.endswith(text[text.rindex("\n") :])  # the line after it is kept


def test_ordinary_text_with_line_breaks_and_base64_is_left_alone():
    text = (
        "The build step compiled src/compactctl/summarizers/redact.py into the\nwheel without errors.\n"
        "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==\n"
        "https://example.com/search?q=hello%20world&page=2"
    )
    assert redact(text) == (text, 0)


def test_an_error_reply_is_redacted_whole_then_cut_and_the_key_masked_wherever_a_piece_shows():
    key = "sk-proj-" + "Ab3dE6gH9jK2mN5pQ8sT1vW4yZ7bC0eF" * 2
    assert key[10:30] not in redact_reply(f"{'x' * 190} Incorrect API key provided: {key}", (key,))
    assert key[-12:] not in mask_known(f"Incorrect API key provided: sk-...{key[-12:]}", (key,))
    assert redact_reply("Invalid model") == "Invalid model"


@pytest.mark.parametrize(
    "url, secret",
    [
        ("https://api.example.com/v1?key=AbCdEf123456", "AbCdEf123456"),
        ("https://gw.example.com/v1?api-version=2024&code=q9Zx8Yw7Vu6T", "q9Zx8Yw7Vu6T"),
        ("https://Zm9vYmFyYmF6cXV4MTIz@proxy.example.com/v1", "Zm9vYmFyYmF6cXV4MTIz"),
        ("https://bot:hunter2@proxy.example.com/v1", "hunter2"),
    ],
)
def test_a_base_url_prints_with_its_query_and_user_part_masked(url, secret):
    assert secret not in redact_url(url)


# --- summaries never carry what the redactor would catch ------------------------------------------

ALL_TEXTS = [s.text for s in CORPUS] + [
    d.text for d in {p.kind: p for p in PLACED + BLIND_PLACED if p.placement == "as is"}.values()
]


def session(texts: list[str]) -> list[dict]:
    messages: list[dict] = [{"role": "system", "content": "You are a deploy agent."}]
    for number, text in enumerate(texts):
        arguments = json.dumps({"command": f"cat settings{number}"})
        messages += [
            {"role": "user", "content": f"Step {number}: the config is\n{text}"},
            {"role": "assistant", "content": None, "tool_calls": [
                {"id": f"c{number}", "type": "function", "function": {"name": "bash", "arguments": arguments}}]},
            {"role": "tool", "tool_call_id": f"c{number}", "content": f"{text}\nexit 0"},
        ]  # fmt: skip
    return messages


def summary_text(messages: list[dict]) -> str:
    return ExtractiveSummarizer().summarize(SummaryRequest(messages, "summary", 1500)).text


@settings(max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(ALL_TEXTS), min_size=1, max_size=6))
def test_redacting_a_summary_changes_nothing_the_summary_of_the_redacted_input_has(texts):
    messages = session(texts)
    summary = summary_text(messages)
    assert redact(summary)[0] == summary == summary_text(redact_messages(messages)[0])


def test_without_redaction_the_summary_does_carry_bare_secrets():
    # The property above can fail: the offline summary of the raw text lists values cut from their label.
    messages = session(ALL_TEXTS)
    raw = ExtractiveSummarizer(redact_secrets=False).summarize(SummaryRequest(messages, "summary", 4000)).text
    assert redact(raw)[0] != raw


def write(path: Path, messages: list[dict]) -> Path:
    path.write_text("".join(json.dumps(m) + "\n" for m in messages), encoding="utf-8")
    return path


def exposed_anywhere(text: str) -> list[str]:
    table = [s.kind for s in CORPUS if leaked(s.secret, text)]
    held_out = [p.kind for p in PLACED + BLIND_PLACED if p.placement == "as is" and exposed(p, text)]
    return table + held_out


def turns(strategy: str, n: int) -> list[str]:
    """--keep-turns is structured's (given to another strategy it is a usage error)."""
    return ["--keep-turns", str(n)] if strategy == "structured" else []


@pytest.mark.parametrize("strategy", ["summary", "structured"])
def test_an_offline_pass_then_a_model_pass_sends_no_secret(openai_server, tmp_path, strategy):
    # Six plain messages at the end: the kept tail of either pass holds no secret.
    messages = session(ALL_TEXTS) + [
        {"role": "user" if n % 2 == 0 else "assistant", "content": f"plain turn {n}"} for n in range(6)
    ]
    source = write(tmp_path / "secrets.jsonl", messages)
    first, second = tmp_path / "first.jsonl", tmp_path / "second.jsonl"
    common = ["-s", strategy, "--threshold", "10", "--summary-max-tokens", "3000"]
    # The first pass keeps three plain turns, the second folds two of them into the first summary:
    # that summary is what the model is sent.
    offline = runner.invoke(
        app, ["compact", str(source), "-o", str(first), *turns(strategy, 3), "--keep-recent", "6", *common]
    )
    assert offline.exit_code == 0, offline.output
    written_summaries = [m for m in map(json.loads, first.read_text().splitlines()) if "summary" in str(m)[:200]]
    assert exposed_anywhere(json.dumps(written_summaries)) == []
    model = [
        "compact", str(first), "-o", str(second), *turns(strategy, 1), "--keep-recent", "2", *common,
        "--summarizer", "openai", "--base-url", openai_server.url, "--model", "test-model",
        "--summary-backoff", "0.01", "--no-cache",
    ]  # fmt: skip
    result = runner.invoke(app, model)
    assert result.exit_code == 0, result.output
    sent = openai_server.received_text()
    assert "[REDACTED:" in sent and exposed_anywhere(sent) == []


def test_a_401_that_echoes_the_key_shows_none_of_it(openai_server, tmp_path, monkeypatch):
    key = "sk-proj-" + "Qw3eRt6yUi9oPa2sDf5gHj8kLz1xCv4b" * 3
    monkeypatch.setenv("OPENAI_API_KEY", key)
    source = write(tmp_path / "s.jsonl", [*session(["plain text"] * 3), {"role": "user", "content": "ok"}])
    openai_server.enqueue("401")
    args = ["compact", str(source), "-o", str(tmp_path / "o.jsonl"), "--summarizer", "openai", "--base-url",
            openai_server.url + "?key=" + key[8:30], "--model", "m", "-s", "summary",
            "--threshold", "10", "--no-cache", "--summary-backoff", "0.01"]  # fmt: skip
    result = runner.invoke(app, args)
    assert result.exit_code == 3 and "HTTP 401" in result.stderr, result.output
    assert not leaked(key, result.output, window=8) and not leaked(key, result.stderr, window=8), result.stderr


@pytest.mark.slow  # a review page of both corpora
def test_the_review_page_shows_no_secret_of_either_corpus(tmp_path):
    messages = [*session(ALL_TEXTS), {"role": "user", "content": "thanks"}, {"role": "assistant", "content": "ok"}]
    source = write(tmp_path / "secrets.jsonl", messages)
    page = tmp_path / "page.html"
    result = runner.invoke(app, ["review", str(source), "-o", str(page), "--keep-turns", "1", "-s", "structured"])
    assert result.exit_code == 0, result.output
    html = page.read_text()
    assert "[REDACTED:" in html
    import html as html_module

    assert exposed_anywhere(html_module.unescape(html)) == []


@pytest.mark.parametrize("item", PLACED[::7], ids=[f"{p.kind}/{p.placement}" for p in PLACED[::7]])
def test_a_text_redacted_once_is_its_own_redaction_as_remembered(item: Placed):
    # redacted_text remembers its output as already redacted (a summary redacted again, or read back
    # as the next compaction's earlier summary): that is only right while redaction is idempotent.
    for text in contexts(item.text):
        once = redacted_text(text)
        assert once == redact(text)[0] and redacted_text(once) == once == redact(once)[0]


def _rows_one_by_one(text: str, rows) -> tuple[str, int]:
    """The table's rows tried in order, each on its own keys: what redact_rows's index must give."""
    total = 0
    lowered = text.lower()  # case-blind rows look for their keys in the text as given
    for row in rows:
        haystack = lowered if row.folded else text
        if row.keys and not any(key in haystack for key in row.keys):
            continue
        text, count = row.sub(text)
        total += count
    return text, total


@settings(max_examples=examples(200), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from([*ALL_TEXTS, *(s.text for s in CORPUS), " ", "\n", "key=", "Password: "]), max_size=5))
def test_the_rows_index_runs_the_rows_a_row_by_row_walk_would(pieces):
    from compactctl.summarizers.secret_rows import KEY_BLOCKS, PATTERNS, TOKEN_ROWS, redact_rows

    text = "".join(pieces)
    for rows in (PATTERNS, KEY_BLOCKS, TOKEN_ROWS):
        assert redact_rows(text, rows) == _rows_one_by_one(text, rows)


def test_a_400_that_quotes_the_request_back_shows_no_secret_of_any_corpus(openai_server, tmp_path):
    # A validation error quoting what it was sent: once through the CLI (the reply quotes from the
    # first secret on), then every corpus text through the function the error line is made with.
    from tests.summarizers.openai_server import Behaviour

    source = write(tmp_path / "s.jsonl", [*session(ALL_TEXTS), {"role": "user", "content": "ok"}])
    openai_server.enqueue(Behaviour("400-echo", text="Step 0"))
    args = ["compact", str(source), "-o", str(tmp_path / "o.jsonl"), "--summarizer", "openai", "--base-url",
            openai_server.url, "--model", "m", "-s", "summary", "--threshold", "10", "--no-cache",
            "--summary-retries", "0"]  # fmt: skip
    result = runner.invoke(app, args)
    assert result.exit_code == 3 and "HTTP 400" in result.stderr and "Step 0" in result.stderr, result.stderr
    assert exposed_anywhere(result.output + result.stderr) == []
    for text in ALL_TEXTS:
        quoted = json.dumps(f"Step 1: the config is\n{text}")[1:-1]
        assert exposed_anywhere(redact_reply(f"Invalid value for 'messages': {quoted}")) == [], text
