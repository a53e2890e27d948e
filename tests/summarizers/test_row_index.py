"""Rows that share their ``starts`` share the positions found for them (``Row.sub``'s ``starts_found``):
the text redacted is the text each row redacted on its own, positions found again after a row replaced
something (held to the loop of ``redact_rows`` as it was, written out here)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from compactctl.message_memo import remembering
from compactctl.summarizers.row_index import LINES_ABOVE, Row, StartsFound, row_index
from compactctl.summarizers.secret_rows import _SECRET_WORD_STARTS, TOKEN_ROWS, redact_rows


def _rows_alone(text: str, rows: tuple[Row, ...] = TOKEN_ROWS) -> tuple[str, int]:
    """``redact_rows`` before the rows shared their starts: each row looks for its own."""
    table = row_index(rows)
    lowered = text.lower() if table.folded_keys else text
    folded = table.held(lowered, folded=True)
    exact = table.held(text, folded=False)
    total, done = 0, -1
    todo = table.to_run(folded, exact)
    current: str | None = lowered if table.folded_keys else None
    while todo:
        index = todo.pop(0)
        row = rows[index]
        if len(text) < row.shortest:
            continue
        if row.starts and current is None:
            current = text.lower()
        text, count = row.sub(text, current)
        total += count
        done = index
        if count:
            current = None
            exact = table.held(text, folded=False)
            todo = [later for later in table.to_run(folded, exact) if later > done]
    return text, total


def test_two_rows_with_the_same_starts_run_on_one_text() -> None:
    shared = [row for row in TOKEN_ROWS if row.starts == _SECRET_WORD_STARTS]
    assert len(shared) >= 2  # else nothing is shared and this file pins nothing


def test_positions_are_found_again_after_a_row_replaced_something() -> None:
    # The quoted value goes first and shortens the text: the unquoted one is then further left.
    text = 'db_password = "correct-horse-battery" then API_TOKEN=Zk8q2mWv7Rt5Xn3b and more'
    assert redact_rows(text) == _rows_alone(text)
    assert redact_rows(text)[1] == 2
    assert "Zk8q2mWv7Rt5Xn3b" not in redact_rows(text)[0]


def test_a_row_given_positions_another_row_found_matches_as_alone() -> None:
    first, second = (row for row in TOKEN_ROWS if row.starts == _SECRET_WORD_STARTS)
    text = "client_secret: 'aB3dE5fG7hJ9kL1m' and auth_token=Qw3rTy7uI9oP2aS4"
    found: StartsFound = {}
    first.sub(text, text.lower(), found)
    assert found  # the first row left its positions for the second
    assert second.sub(text, text.lower(), found) == second.sub(text, text.lower())


_PIECES = st.sampled_from(
    [
        *_SECRET_WORD_STARTS,
        *("_key", "KEY", "=", ": ", " = ", '"', "'", "`", "(", ")", ",", " ", "\n", "\\n", "-", "_"),
        *("Zk8q2mWv7Rt5Xn3b", "hunter2hunter2", "abcdef", "get_token()", "x", "PASSWORD", "Secret"),
    ]
)


@settings(max_examples=400, deadline=None)
@given(st.lists(_PIECES, max_size=40).map("".join))
def test_shared_starts_redact_as_each_row_alone(text: str) -> None:
    assert redact_rows(text) == _rows_alone(text)


_LINE_PIECES = st.sampled_from(["ghp_", "sk-", "-----BEGIN ", "Token", "pass", "AKIA", "x", " ", "é", "→", "%", "gl"])
_LINES = st.lists(st.text(alphabet=st.characters(codec="utf-8"), max_size=8) | _LINE_PIECES, max_size=6).map("".join)


@settings(max_examples=300, deadline=None)
@given(st.lists(_LINES, min_size=1, max_size=120), st.lists(_LINES, max_size=40), st.booleans())
def test_a_long_texts_keys_are_those_it_holds_whatever_lines_were_seen(
    lines: list[str], seen: list[str], folded: bool
) -> None:
    """``held`` of a long text, its lines looked in together where the memo has not seen them: the keys
    the text holds, whichever of its lines an earlier text had (the memo), and the memo's lines' own."""
    table = row_index(TOKEN_ROWS)
    memo = table._lines_held[folded]
    memo.clear()
    text = "\n".join(["y" * 520, *lines])  # over LINES_ABOVE: read line by line (in a replay)
    text = text.lower() if folded else text
    earlier = "\n".join(["z" * 520, *seen])
    keys = table.folded_keys if folded else table.exact_keys
    with remembering():
        table.held(earlier.lower() if folded else earlier, folded)
        assert table.held(text, folded) == sorted(key for key in keys if key in text)
    for line, held in memo.items():
        assert set(held) == {key for key in keys if key in line}


def test_outside_a_replay_a_long_texts_keys_are_looked_for_in_it_whole() -> None:
    """One compaction redacts each text once: its lines are not split, kept or looked up (kcosr's
    session 19.3 -> 14.5 ms of redaction), and the keys are the same."""
    table = row_index(TOKEN_ROWS)
    memo = table._lines_held[False]
    memo.clear()
    text = "\n".join(["y" * LINES_ABOVE, "export GITHUB=ghp_x", "AKIA", "plain line"])
    held = table.held(text, folded=False)
    assert sorted(held) == ["AKIA", "ghp_"]  # "=" is a key of case-blind rows only
    assert memo == {}
    with remembering():
        assert table.held(text, folded=False) == sorted(held)
    assert "plain line" in memo
