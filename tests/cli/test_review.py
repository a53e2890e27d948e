"""``compactctl review``: pages written where asked, an index sorted by difference, a terminal view, bad input."""

from __future__ import annotations

import re

from tests.cli.conftest import write_jsonl
from tests.review.conftest import SECRET, session


def test_one_file_gives_a_page_beside_it(cli, tmp_path):
    source = write_jsonl(tmp_path / "s.jsonl", session())
    result = cli("review", source, "--encoding", "approx")
    assert result.exit_code == 0, result.output
    page = (tmp_path / "s.jsonl.review.html").read_text()
    assert page.startswith("<!doctype html>") and "compactctl review: s.jsonl" in page
    assert not re.search(r"""(?:src|href)=["']?(?:https?:)?//""", page)  # nothing fetched from the network
    assert source.read_bytes() == write_jsonl(tmp_path / "again.jsonl", session()).read_bytes()  # input untouched


def test_a_folder_with_side_b_gives_an_index_sorted_by_the_biggest_difference(cli, tmp_path):
    for name, rounds in (("short.jsonl", 3), ("long.jsonl", 9), ("mid.jsonl", 5)):
        write_jsonl(tmp_path / "in" / name, session(rounds=rounds))
    out = tmp_path / "pages"
    args = [
        "review",
        tmp_path / "in",
        "-o",
        out,
        "--encoding",
        "approx",
        "--vs-strategy",
        "window",
        "--keep-recent",
        "4",
    ]
    result = cli(*args)
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in out.iterdir()) == [
        "index.html",
        "long.jsonl.review.html",
        "mid.jsonl.review.html",
        "short.jsonl.review.html",
    ]
    index = (out / "index.html").read_text()
    differences = [float(d) for d in re.findall(r'data-difference="([\d.]+)"', index)]
    assert len(differences) == 3 and differences == sorted(differences, reverse=True) and differences[0] > 0
    assert 'href="long.jsonl.review.html"' in index


def test_the_terminal_view_shows_figures_fates_and_what_was_lost(cli, tmp_path):
    source = write_jsonl(tmp_path / "s.jsonl", session())
    result = cli("review", source, "--terminal", "-s", "window", "--keep-recent", "2", "--encoding", "approx")
    assert result.exit_code == 0, result.output
    assert "reduction" in result.stdout and "removed" in result.stdout
    lost = re.search(r"A: (\d+) of (\d+) identifiers of the replaced span lost", result.stdout)
    assert lost and 0 < int(lost.group(1)) <= int(lost.group(2))
    assert not (tmp_path / "s.jsonl.review.html").exists()


def test_bad_uses_are_one_line_errors(cli, tmp_path):
    write_jsonl(tmp_path / "in" / "a.jsonl", session(rounds=2))
    folder = cli("review", tmp_path / "in")
    assert folder.exit_code == 2 and "need -o DIR" in folder.stderr and "Traceback" not in folder.stderr
    same = cli("review", tmp_path / "in" / "a.jsonl", "--vs-strategy", "structured")
    assert same.exit_code == 2 and "same strategy" in same.stderr
    missing = cli("review", tmp_path / "nope.jsonl")
    assert missing.exit_code == 2 and "no such file" in missing.stderr
    stdin = cli("review", "-", input="{}")
    assert stdin.exit_code == 2 and "stdin" in stdin.stderr
    # --transcript picks what --terminal shows; a page shows every transcript, so there it is a usage error.
    page = cli("review", tmp_path / "in" / "a.jsonl", "--transcript", "1")
    assert page.exit_code == 2 and "--transcript has no effect here: it is read with --terminal" in page.stderr
    assert not (tmp_path / "in" / "a.jsonl.review.html").exists()


def test_prompt_a_against_prompt_b_through_the_openai_client_and_a_loopback_server(cli, tmp_path, openai_server):
    source = write_jsonl(tmp_path / "s.jsonl", session(secret=True))
    (tmp_path / "A.md").write_text("PROMPT-A: summarize in at most {max_tokens} tokens.")
    (tmp_path / "B.md").write_text("PROMPT-B: list every path and command.")
    page = tmp_path / "ab.html"
    args = ["review", source, "-o", page, "--summarizer", "openai", "--base-url", openai_server.url]
    args += ["--model", "test-model", "--no-cache", "--prompt-file", tmp_path / "A.md"]
    result = cli(*args, "--vs-prompt-file", tmp_path / "B.md")
    assert result.exit_code == 0, result.output
    prompts = [r.body["messages"][0]["content"] for r in openai_server.requests]
    assert sorted(p.split(":")[0] for p in prompts) == ["PROMPT-A", "PROMPT-B"]
    assert SECRET not in openai_server.received_text()  # redacted in the request...
    html = page.read_text()
    assert SECRET not in html and "[REDACTED:openai-key]" in html  # ...and on the page, which says so
    assert re.search(r'class="note secrets" data-redactions="([1-9]\d*)"', html)
    assert "PROMPT-A: summarize in at most" in html and "PROMPT-B: list every path" in html
    assert html.count('<div class="side" data-side=') == 2 and "- Fix the failing test." in html  # the reply
