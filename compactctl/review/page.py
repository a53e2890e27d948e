"""The review as one self-contained HTML page: inline CSS and a few lines of JS, no network.

Everything is text in the DOM, so the browser's find reaches folded tool outputs too
(Chromium opens a closed ``<details>`` when find lands inside it). Messages off screen are
not laid out until scrolled to (``content-visibility: auto``, which find also reaches): a
2,000-message page opens as fast as its first screen. Identifiers of the
replaced span are ``<mark class="id kept">`` where the compacted transcript still has
them and ``<mark class="id lost">`` where it does not; the counts at the top are the
same marks counted.
"""

from __future__ import annotations

import html
import re
from collections.abc import Sequence
from importlib import resources

from compactctl.review import (
    Figures,
    FileReview,
    Identifier,
    SideReview,
    TranscriptReview,
    difference,
    own_difference,
    shown,
)
from compactctl.review.sections import APPENDED_HEADINGS, own_text, sections
from compactctl.transcript import Message, content_text, tool_calls_of

FOLD_CHARS = 1200  # tool outputs longer than this are folded (still searchable)
FOLD_LINES = 16
PREVIEW_CHARS = 160


CSS = resources.files("compactctl.review").joinpath("page.css").read_text("utf-8")

JS = """
for (const box of document.querySelectorAll('input[data-toggle]')) {
  box.addEventListener('change', () => document.body.classList.toggle(box.dataset.toggle, box.checked));
}
"""


def esc(text: str) -> str:
    return html.escape(text, quote=True)


def pct(value: float | None) -> str:
    return "–" if value is None else f"{100 * value:.1f}%"


def _page(title: str, body: str) -> str:
    return (
        "<!doctype html>\n<html lang=en><head><meta charset=utf-8>"
        '<meta name=viewport content="width=device-width,initial-scale=1">'
        "<meta http-equiv=Content-Security-Policy content=\"default-src 'none'; style-src 'unsafe-inline'; "
        "script-src 'unsafe-inline'; img-src data:\">"
        f"<title>{esc(title)}</title><style>{CSS}</style></head><body>{body}<script>{JS}</script></body></html>\n"
    )


def secrets_note(redact: bool, redactions: int) -> str:
    if redact:
        return (
            f'<p class="note secrets" data-redactions="{redactions}">Secrets: everything on this page, including '
            "what the summarizer was sent, is redacted as the summarizer's request is (the same patterns; "
            f"{redactions} redaction(s) here). <code>--no-redact</code> turns this off, for requests and page "
            "alike.</p>"
        )
    return (
        '<p class="note secrets" data-redactions="0">Secrets: redaction is OFF (<code>--no-redact</code>): '
        "this page shows the text as it was, and so was the summarizer's request.</p>"
    )


# --- highlighting -------------------------------------------------------------------------------


class Highlighter:
    """Escapes text and marks the identifiers of the replaced span in it (longest first)."""

    def __init__(self, identifiers: Sequence[Identifier], redact: bool) -> None:
        self.redact = redact
        self.by_text = {i.text: i for i in identifiers}
        self.redactions = 0

    def text(self, raw: str, candidates: Sequence[str] = ()) -> str:
        """``raw`` redacted and escaped, with the ``candidates`` (identifier texts) marked where they occur."""
        text, count = shown(raw, self.redact)
        self.redactions += count
        present = sorted((t for t in candidates if t in text and t in self.by_text), key=len, reverse=True)
        pattern = re.compile("|".join(re.escape(t) for t in present)) if present else None
        if pattern is None:
            return esc(text)
        out, last = [], 0
        for match in pattern.finditer(text):
            found = self.by_text[match.group(0)]
            state = "kept" if found.survived else "lost"
            out.append(esc(text[last : match.start()]))
            out.append(
                f'<mark class="id {state}" data-kind="{found.kind}" title="{found.kind}: '
                f'{"survived" if found.survived else "lost in the compaction"}">{esc(match.group(0))}</mark>'
            )
            last = match.end()
        out.append(esc(text[last:]))
        return "".join(out)


def _body_text(message: Message) -> str:
    pieces = [content_text(message)]
    for call in tool_calls_of(message):
        function = call.get("function") if isinstance(call, dict) else None
        if isinstance(function, dict):
            pieces.append(f"→ {function.get('name', '')}({function.get('arguments', '')})")
    return "\n".join(piece for piece in pieces if piece)


def _is_long(text: str) -> bool:
    return len(text) > FOLD_CHARS or text.count("\n") > FOLD_LINES


def message_html(
    index: int, message: Message, fates: Sequence[tuple[str, str, str]], marks: Highlighter, candidates: list[str]
) -> str:
    """One input message: its fate on each side (``(side, action, reason)``), its text, tool output folded."""
    role = str(message.get("role"))
    text = _body_text(message)
    gone = any(action != "kept" for _, action, _ in fates)
    badges = " ".join(
        f'<span class="fate {esc(action)}" data-side="{esc(side)}" title="{esc(reason)}">'
        f"{esc(side + ': ' if len(fates) > 1 else '')}{esc(action)}</span>"
        + (f' <span class="reason">{esc(reason)}</span>' if reason else "")
        for side, action, reason in fates
    )
    body = f"<pre>{marks.text(text, candidates)}</pre>"
    if _is_long(text) and (role == "tool" or len(text) > 4 * FOLD_CHARS):
        lines = text.count("\n") + 1
        body = f"<details><summary>{role} output: {lines} lines, {len(text):,} characters</summary>{body}</details>"
    actions = " ".join(action for _, action, _ in fates)
    return (
        f'<article class="msg{" gone" if gone else ""}" id="m{index}" data-index="{index}" data-role="{esc(role)}" '
        f'data-actions="{esc(actions)}"><div class="head">#{index} <b>{esc(role)}</b> {badges}</div>{body}</article>'
    )


def summary_html(text: str | None, marks: Highlighter, side: str = "", headings: Sequence[str] = ()) -> str:
    if text is None:
        return '<aside class="summary"><p class="note">Summarized into the summary beside the first span.</p></aside>'
    parts = []
    for heading, body in sections(text, headings):
        title = f"<h3>{esc(heading)}</h3>" if heading else ""
        body_html = marks.text(body, [t for t in marks.by_text if t in body])
        # What compactctl appended after the summarizer's own text is marked so: it is not the prompt's doing.
        appended = ' data-appended="yes"' if heading in APPENDED_HEADINGS else ""
        parts.append(
            f'<section class="sec" data-heading="{esc(heading)}"{appended}>{title}<pre>{body_html}</pre></section>'
        )
    label = f" {esc(side)}" if side else ""
    return f'<aside class="summary" data-side="{esc(side)}"><b>Summary{label}</b>{"".join(parts)}</aside>'


def figures_table(names: Sequence[str], figures: Sequence[Figures]) -> str:
    """The figures of each side; with two, a third column with B minus A."""
    rows: list[tuple[str, list[str], str]] = []

    def row(label: str, values: list[str], diff: str = "") -> None:
        rows.append((label, values, diff))

    def signed(value: float, better_if_higher: bool, unit: str = " pp") -> str:
        cls = "better" if (value > 0) == better_if_higher and value != 0 else ("worse" if value != 0 else "")
        shown_value = f"{value:+.1f}{unit}" if unit else f"{value:+,.0f}"
        return f'<span class="{cls}">{shown_value}</span>'

    two = len(figures) == 2
    row("tokens before", [f"{f.tokens_before:,}" for f in figures])
    row(
        "tokens after",
        [f"{f.tokens_after:,}" for f in figures],
        signed(figures[1].tokens_after - figures[0].tokens_after, False, "") if two else "",
    )
    row(
        "reduction",
        [pct(f.reduction) for f in figures],
        signed(100 * (figures[1].reduction - figures[0].reduction), True) if two else "",
    )
    row("messages after / before", [f"{f.messages_after:,} / {f.messages_before:,}" for f in figures])
    row(
        "identifiers of the span kept",
        [f"{f.identifiers_kept:,} / {f.identifiers:,} ({pct(f.identifiers_share)})" for f in figures],
        signed(100 * ((figures[1].identifiers_share or 0) - (figures[0].identifiers_share or 0)), True) if two else "",
    )
    row(
        "eval probes passed",
        [f"{f.probes_passed} / {f.probes} ({pct(f.probes_share)})" for f in figures],
        signed(100 * ((figures[1].probes_share or 0) - (figures[0].probes_share or 0)), True) if two else "",
    )
    row(
        "identifiers kept, summarizer's own text",
        [f"{f.identifiers_kept_own:,} / {f.identifiers:,} ({pct(f.identifiers_own_share)})" for f in figures],
        signed(100 * ((figures[1].identifiers_own_share or 0) - (figures[0].identifiers_own_share or 0)), True)
        if two
        else "",
    )
    row(
        "eval probes passed, summarizer's own text",
        [f"{f.probes_passed_own} / {f.probes} ({pct(f.probes_own_share)})" for f in figures],
        signed(100 * ((figures[1].probes_own_share or 0) - (figures[0].probes_own_share or 0)), True) if two else "",
    )
    if any(f.judged for f in figures):
        row(
            "probes answered right by the judge",
            [f"{f.probes_judged} / {f.judged} ({pct(f.judged_share)})" for f in figures],
            signed(100 * ((figures[1].judged_share or 0) - (figures[0].judged_share or 0)), True) if two else "",
        )
    row("API-valid after", ["yes" if f.valid_after else "NO" for f in figures])
    row("summarizer calls", [str(f.summarizer_calls) for f in figures])
    head = "".join(f"<th>{esc(n)}</th>" for n in names) + ("<th>B − A</th>" if two else "")
    body = "".join(
        f'<tr data-figure="{esc(label)}"><td>{esc(label)}</td>'
        + "".join(f"<td>{v}</td>" for v in values)
        + (f"<td>{diff}</td>" if two else "")
        + "</tr>"
        for label, values, diff in rows
    )
    return f'<table class="figures"><tr><th></th>{head}</tr>{body}</table>'


def identifiers_html(side: SideReview, marks: Highlighter) -> str:
    lost = [i for i in side.identifiers if not i.survived]
    kept = [i for i in side.identifiers if i.survived]

    def items(found: list[Identifier], state: str) -> str:
        return "".join(
            f'<li><span class="kind">{esc(i.kind)}</span><mark class="id {state}" data-kind="{esc(i.kind)}">'
            f'{esc(shown(i.text, marks.redact)[0])}</mark> <a href="#m{i.first}">#{i.first}</a></li>'
            for i in found
        )

    return (
        f'<div class="identifiers" data-side="{esc(side.name)}" data-lost="{len(lost)}" data-kept="{len(kept)}">'
        f"<h3>Identifiers of the replaced span: {len(lost)} lost, {len(kept)} kept</h3>"
        f'<ul class="ids lost">{items(lost, "lost")}</ul>'
        f"<details><summary>{len(kept)} kept</summary><ul class='ids kept'>{items(kept, 'kept')}</ul></details></div>"
    )


def probes_html(side: SideReview, redact: bool) -> str:
    if not side.probes:
        return '<div class="probes"><p class="note">No eval probes for this transcript.</p></div>'
    rows = "".join(
        f'<li class="probe {"pass" if s.present else "fail"}" data-family="{esc(s.probe.family)}">'
        f'<span class="kind">{esc(s.probe.family)}</span>{esc(s.probe.question)} '
        f"<code>{esc(shown(s.probe.answer, redact)[0][:300])}</code></li>"
        for s in side.probes
    )
    passed = sum(s.present for s in side.probes)
    return (
        f'<div class="probes" data-side="{esc(side.name)}" data-passed="{passed}" data-total="{len(side.probes)}">'
        f"<h3>eval probes: {passed} / {len(side.probes)} answered by the compacted transcript</h3>"
        f'<ul class="ids">{rows}</ul></div>'
    )


def sent_html(side: SideReview, marks: Highlighter) -> str:
    if not side.sent:
        return ""
    parts = []
    for number, sent in enumerate(side.sent, 1):
        marks.redactions += sent.redactions
        prompt = f"<h3>Prompt</h3><pre>{esc(sent.prompt)}</pre>" if sent.prompt else ""
        parts.append(
            f'<details class="sent" data-redactions="{sent.redactions}"><summary>Request {number} '
            f"({esc(sent.strategy)}): {len(sent.data):,} characters, {sent.redactions} redaction(s)</summary>"
            f"{prompt}<h3>Data</h3><pre>{esc(sent.data)}</pre></details>"
        )
    return f"<h3>What the summarizer was sent ({len(side.sent)} request(s), redacted as sent)</h3>{''.join(parts)}"


def _candidates(messages: Sequence[Message], sides: Sequence[SideReview]) -> list[list[str]]:
    """Per input message, the identifiers found in it (so each message is searched for its own few only)."""
    per: list[dict[str, None]] = [{} for _ in messages]
    for side in sides:
        for identifier in side.identifiers:
            for index in identifier.seen or (identifier.first,):
                per[index][identifier.text] = None
    return [list(texts) for texts in per]


def transcript_html(review: TranscriptReview, redact: bool, own_figures: bool = True) -> tuple[str, int]:
    """One transcript's part of the page, and the redactions made in it."""
    sides = review.sides
    all_ids = [i for side in sides for i in side.identifiers]
    if len(sides) == 2:  # in the messages, a text lost on either side is flagged
        lost = {i.text for i in all_ids if not i.survived}
        merged = {i.text: i for i in all_ids if i.survived}
        merged.update({i.text: i for i in all_ids if i.text in lost})
        all_ids = list(merged.values())
    marks = Highlighter(all_ids, redact)
    candidates = _candidates(review.messages, sides)
    title = esc(review.label or "transcript")
    figures = (
        figures_table([s.name + ": " + s.settings for s in sides], [s.figures for s in sides]) if own_figures else ""
    )
    out = [f'<section class="transcript" data-label="{title}"><h2>{title}</h2>{figures}']
    if len(sides) == 1:
        side = sides[0]
        out.append(f'<div class="cols">{probes_html(side, redact)}{identifiers_html(side, marks)}</div>')
        out.append(_messages_beside_spans(review, side, marks, candidates))
        out.append(sent_html(side, marks))
    else:
        columns = ""
        for s in sides:  # each side's summary is marked by what that side kept
            own = Highlighter(s.identifiers, redact)
            columns += (
                f'<div class="side" data-side="{esc(s.name)}"><h3>Side {esc(s.name)}: {esc(s.settings)}</h3>'
                + "".join(
                    summary_html(span.summary, own, s.name, s.headings) for span in s.spans if span.summary is not None
                )
                + probes_html(s, redact)
                + identifiers_html(s, own)
                + sent_html(s, own)
                + "</div>"
            )
            marks.redactions += own.redactions
        out.append(f'<div class="cols">{columns}</div>')
        out.append(text_diff_html(sides[0], sides[1], redact))
        out.append("<h3>Messages, with what each side did</h3>")
        for index, message in enumerate(review.messages):
            fates = [(s.name, *_fate(s, index)) for s in sides]
            out.append(message_html(index, message, fates, marks, candidates[index]))
    out.append("</section>")
    return "".join(out), marks.redactions


def _own_summaries(side: SideReview, redact: bool) -> list[str]:
    texts = [own_text(span.summary) for span in side.spans if span.summary is not None]
    return shown("\n\n".join(texts), redact)[0].splitlines()


def text_diff_html(a: SideReview, b: SideReview, redact: bool) -> str:
    """The two sides' summaries (each summarizer's own text), line by line, side by side: what the prompt changed."""
    import difflib

    left, right = _own_summaries(a, redact), _own_summaries(b, redact)
    rows = []
    changed = 0
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, left, right, autojunk=False).get_opcodes():
        for k in range(max(i2 - i1, j2 - j1)):
            old = left[i1 + k] if i1 + k < i2 else None
            new = right[j1 + k] if j1 + k < j2 else None
            kind = "same" if tag == "equal" else ("del" if new is None else "add" if old is None else "chg")
            changed += kind != "same"
            rows.append(
                f'<tr class="{kind}"><td class="a">{esc(old) if old is not None else ""}</td>'
                f'<td class="b">{esc(new) if new is not None else ""}</td></tr>'
            )
    return (
        f'<details class="textdiff" data-changed="{changed}" open><summary>The two summaries, side by side '
        f"(the summarizer's own text): {changed} line(s) differ</summary>"
        f'<table class="textdiff"><tr><th>Side {esc(a.name)}</th><th>Side {esc(b.name)}</th></tr>'
        f"{''.join(rows)}</table></details>"
    )


def _fate(side: SideReview, index: int) -> tuple[str, str]:
    entry = side.compaction.manifest[index]
    return entry.action, entry.reason


def _messages_beside_spans(
    review: TranscriptReview, side: SideReview, marks: Highlighter, candidates: list[list[str]]
) -> str:
    starts = {span.indices.start: span for span in side.spans}
    how = "as the manifest says" if side.fates_from == "manifest" else "their fates read off the output (no manifest)"
    out = [f'<h3 data-fates-from="{esc(side.fates_from)}">Messages, {how}</h3>']
    index = 0
    while index < len(review.messages):
        span = starts.get(index)
        if span is None:
            out.append(
                message_html(index, review.messages[index], [("", *_fate(side, index))], marks, candidates[index])
            )
            index += 1
            continue
        inner = "".join(
            message_html(i, review.messages[i], [("", *_fate(side, i))], marks, candidates[i]) for i in span.indices
        )
        out.append(
            f'<section class="span" data-from="{span.indices.start}" data-to="{span.indices.stop - 1}">'
            f"<div>{inner}</div>{summary_html(span.summary, marks, headings=side.headings)}</section>"
        )
        index = span.indices.stop
    return "".join(out)


def _fate_counts(reviews: Sequence[TranscriptReview], side: int) -> str:
    counts: dict[str, int] = {}
    for review in reviews:
        if side < len(review.sides):
            for entry in review.sides[side].compaction.manifest:
                counts[entry.action] = counts.get(entry.action, 0) + 1
    return ", ".join(f'<span data-action="{a}" data-count="{n}">{n} {a}</span>' for a, n in sorted(counts.items()))


def file_page(review: FileReview) -> str:
    """The whole page for one file: figures at the top, then each transcript."""
    parts, redactions = [], 0
    for transcript in review.transcripts:
        part, count = transcript_html(transcript, review.redact, own_figures=len(review.transcripts) > 1)
        parts.append(part)
        redactions += count
    names = [s.name + ": " + s.settings for s in review.transcripts[0].sides] if review.transcripts else ["A"]
    total = figures_table(names, [review.figures(i) for i in range(len(names))])
    fates = "; ".join(f"{esc(n)}: {_fate_counts(review.transcripts, i)}" for i, n in enumerate(names))
    toolbar = (
        '<div class="toolbar"><label><input type=checkbox data-toggle="only-gone"> only messages not kept</label>'
        '<label><input type=checkbox data-toggle="only-lost"> highlight only lost identifiers</label></div>'
    )
    head = (
        f'<header class="top"><h1>compactctl review: {esc(review.file)}</h1>'
        f'<p class="note">{esc(review.format)}, {len(review.transcripts)} transcript(s). '
        f'<mark class="id kept">kept</mark> identifiers survived the compaction; '
        f'<mark class="id lost">lost</mark> ones did not.</p>'
        f'{total}<p class="fates">{fates}</p>{secrets_note(review.redact, redactions)}{toolbar}</header>'
    )
    return _page(f"review: {review.file}", head + "<main>" + "".join(parts) + "</main>")


def index_page(reviews: Sequence[tuple[FileReview, str]], redact: bool) -> str:
    """Every file with its figures and a link to its page.

    With two sides, the first column is B minus A on the summarizers' own text (identifiers and
    probes: what tells two prompts apart) and the files are sorted by its size, biggest first;
    the largest gap of the whole-summary figures follows.
    """
    two = any(review.sides == 2 for review, _ in reviews)
    if two:
        ordered = sorted(
            reviews,
            key=lambda pair: (
                -abs(own_difference(pair[0].figures(0), pair[0].figures(1))),
                -difference(pair[0].figures(0), pair[0].figures(1)),
            ),
        )
    else:
        ordered = sorted(reviews, key=lambda pair: pair[0].figures(0).identifiers_share or 1.0)
    head = "<th>file</th>" + ("<th>B − A, summarizer's own text (pp)</th>" if two else "")
    head += "<th>transcripts</th><th>tokens before</th>"
    sides = ("A", "B") if two else ("",)
    for side in sides:
        label = f"{side} " if side else ""
        head += (
            f"<th>{label}reduction</th><th>{label}own text: identifiers</th><th>{label}own text: probes</th>"
            f"<th>{label}whole: identifiers</th><th>{label}whole: probes</th>"
        )
    if two:
        head += "<th>largest whole-summary gap (pp)</th>"
    rows = []
    for review, link in ordered:
        own = own_difference(review.figures(0), review.figures(1)) if two else 0.0
        cells = [f'<td><a href="{esc(link)}">{esc(review.file)}</a></td>']
        if two:
            cls = "better" if own > 0 else "worse" if own < 0 else ""
            cells.append(f'<td class="own-difference {cls}">{own:+.1f}</td>')
        cells.append(f"<td>{len(review.transcripts)}</td><td>{review.figures(0).tokens_before:,}</td>")
        for number in range(len(sides)):
            f = review.figures(number)
            cells.append(
                f"<td>{pct(f.reduction)}</td><td>{pct(f.identifiers_own_share)}</td><td>{pct(f.probes_own_share)}</td>"
                f"<td>{pct(f.identifiers_share)}</td><td>{pct(f.probes_share)}</td>"
            )
        diff = difference(review.figures(0), review.figures(1)) if two else 0.0
        if two:
            cells.append(f"<td class=difference>{diff:.1f}</td>")
        rows.append(
            f'<tr data-file="{esc(review.file)}" data-own-difference="{own:.3f}" data-difference="{diff:.3f}">'
            f"{''.join(cells)}</tr>"
        )
    order = (
        "Sorted by B minus A on the summarizers' own text (identifiers and probes found in what the "
        "summarizer wrote, without the ledger and requests compactctl appends), biggest first; "
        "'whole' counts the summary as written."
        if two
        else "Sorted by the share of the replaced spans' identifiers kept, lowest first."
    )
    body = (
        f'<header class="top"><h1>compactctl review: {len(reviews)} file(s)</h1><p class="note">{order}</p>'
        f"{secrets_note(redact, 0)}</header>"
        f'<main><table class="index"><tr>{head}</tr>{"".join(rows)}</table></main>'
    )
    return _page("compactctl review", body)
