"""The review page in a real browser (Debian's chromium, headless): the DOM it builds and a screenshot.

Skipped where chromium is not installed; failed instead when CI=true, so CI never passes by skipping (tests/needs.py).
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest
from PIL import Image, ImageStat

from tests.cli.conftest import write_jsonl
from tests.conftest import SHARED_TRANSCRIPTS, needs_transcripts
from tests.needs import needs
from tests.review.conftest import session

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

from browser import Chromium

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def chromium() -> Chromium:
    return Chromium(needs("chromium"))


def count(dom: str, pattern: str) -> int:
    return len(re.findall(pattern, dom))


@pytest.fixture
def page(tmp_path, cli) -> Path:
    source = write_jsonl(tmp_path / "session.jsonl", session(rounds=8))
    result = cli("review", source, "-o", tmp_path / "page.html", "--encoding", "approx", "--keep-recent", "4")
    assert result.exit_code == 0, result.output
    return tmp_path / "page.html"


def test_the_browser_shows_the_summary_by_sections_beside_its_span(chromium, page):
    dom = chromium.dom(page)
    headings = re.findall(r'<section class="sec" data-heading="([^"]+)"', dom)
    assert "Goal" in headings and len(headings) == len(set(headings)) >= 3
    spans = re.findall(r'<section class="span" data-from="(\d+)" data-to="(\d+)">', dom)
    assert len(spans) == 1
    start, end = map(int, spans[0])
    summarized = count(dom, r'<article class="msg gone"[^>]*data-actions="summarized"')
    assert summarized == end - start + 1


def test_marks_in_the_browser_match_the_counts_the_page_states(chromium, tmp_path, cli):
    source = write_jsonl(tmp_path / "session.jsonl", session(rounds=8))
    page = tmp_path / "window.html"
    assert (
        cli("review", source, "-o", page, "-s", "window", "--keep-recent", "2", "--encoding", "approx").exit_code == 0
    )
    dom = chromium.dom(page)
    lost = int(re.search(r'<div class="identifiers" data-side="A" data-lost="(\d+)"', dom).group(1))
    assert lost > 0  # a window keeps no summary: the span's identifiers are gone
    listed = re.search(r'<ul class="ids lost">(.*?)</ul>', dom, re.S).group(1)
    assert count(listed, r'<mark class="id lost"') == lost
    assert count(dom, r'<mark class="id lost"[^>]*data-kind="error"') >= 8  # each FAILED line, in its message too
    assert "KeyError: 'region_7'" in dom


def test_long_tool_outputs_are_folded_but_their_text_is_in_the_dom(chromium, page):
    dom = chromium.dom(page)
    folded = re.findall(r"<details><summary>tool output: (\d+) lines", dom)
    assert len(folded) == 8 and all(int(lines) == 120 for lines in folded)
    assert "row_0_119 = compute(119)" in dom  # find-in-page reaches it


def test_a_screenshot_of_the_page_is_not_blank(chromium, page, tmp_path):
    png = chromium.screenshot(page, tmp_path / "shot.png")
    image = Image.open(png).convert("L")
    assert image.size == (chromium.width, chromium.height)
    assert ImageStat.Stat(image).stddev[0] > 20  # text, tables and marks, not one flat colour
    colours = Image.open(png).convert("RGB").getcolors(maxcolors=1 << 16)
    assert colours is None or len(colours) > 50


def test_side_b_in_the_browser_has_each_sides_figures_and_the_difference(chromium, tmp_path, cli):
    source = write_jsonl(tmp_path / "session.jsonl", session(rounds=8))
    page = tmp_path / "ab.html"
    args = ["review", source, "-o", page, "--encoding", "approx", "--vs-strategy", "window", "--keep-recent", "4"]
    assert cli(*args).exit_code == 0
    dom = chromium.dom(page)
    assert count(dom, r'<div class="side" data-side="[AB]">') == 2
    assert count(dom, r"<th>B − A</th>") == 1
    row = re.search(r'<tr data-figure="reduction">(.*?)</tr>', dom).group(1)
    assert len(re.findall(r"<td>", row)) == 4 and re.search(r'class="(better|worse)">[+-]\d', row)


@needs_transcripts
def test_a_real_claude_code_session_in_the_browser(chromium, tmp_path, cli):
    source = SHARED_TRANSCRIPTS / "claude-code" / "kcosr__chat-to-html" / "claude.jsonl"
    page = tmp_path / "claude.html"
    assert cli("review", source, "-o", page).exit_code == 0
    dom = chromium.dom(page)
    counts = dict(re.findall(r'<span data-action="(\w+)" data-count="(\d+)">', dom))
    messages = count(dom, r'<article class="msg')
    assert messages == sum(map(int, counts.values())) and int(counts["summarized"]) > 0
    assert count(dom, r'<section class="sec"') >= 3
    assert count(dom, r'<li class="probe (?:pass|fail)"') == int(re.search(r'data-total="(\d+)"', dom).group(1))
