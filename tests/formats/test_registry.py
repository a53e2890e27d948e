"""The format registry imports a reader when it is used: each row says what its module says, and
a sniff never turns away a file its format's ``detect`` claims, so detection finds what it found
when every reader was imported and asked in turn."""

from __future__ import annotations

import ast
import importlib
import json
import subprocess
import sys
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from compactctl.formats import _ROWS, FORMATS, SUFFIXES, detect, records_of, writing_formats
from compactctl.formats.records import Record

ROOT = Path(__file__).resolve().parents[2]
TRANSCRIPTS = ROOT.parent / "shared" / "transcripts"
# Every key some format's detect looks for, so generated records often come close to a format.
KEYS = [
    "resourceSpans", "spanId", "context", "span_id", "attributes", "gen_ai.system", "parts", "id", "role",
    "history", "traj", "payload", "type", "projectHash", "sessionId", "$rewindTo", "$set", "uuid", "leafUuid",
    "messageId", "messages", "content", "input", "model",
]  # fmt: skip
VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(0, 3) | st.sampled_from(["gemini", "user", "session_meta", "text", "x"]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(KEYS), inner, max_size=4),
    max_leaves=12,
)


def test_each_row_says_what_its_module_declares():
    for name, row in _ROWS.items():
        module = importlib.import_module(f"compactctl.formats.{row.module}")
        assert name == module.NAME
        assert row.suffixes == getattr(module, "SUFFIXES", (".jsonl", ".json"))
        assert row.writes == getattr(module, "WRITES", True)
        assert row.resumable == getattr(module, "RESUMABLE", False)
    assert writing_formats() == [name for name, fmt in FORMATS.items() if fmt.writes]
    assert tuple(dict.fromkeys(s for fmt in FORMATS.values() for s in fmt.suffixes)) == SUFFIXES


def test_the_clients_whose_sessions_are_found_are_the_resumable_formats_by_their_reader_s_module_name():
    from compactctl.formats import resumable_formats
    from compactctl.sessions import CLIENTS

    assert set(resumable_formats()) == {name for name, fmt in FORMATS.items() if fmt.resumable} == set(CLIENTS)
    assert {"claude-code", "codex", "gemini"} <= set(CLIENTS)
    for name, module in resumable_formats().items():
        assert CLIENTS[name].__name__ == f"compactctl.sessions.{module}" and name == CLIENTS[name].NAME


@given(st.lists(VALUES, min_size=0, max_size=6))
def test_a_sniff_never_turns_away_what_its_format_detects(values):
    records = [Record(n + 1, value) for n, value in enumerate(values)]
    for name, row in _ROWS.items():
        if FORMATS[name].detect(records):
            assert row.sniff is None or row.sniff(records), name


def _every_reader_asked(records: list[Record]) -> str | None:
    return next((name for name, fmt in FORMATS.items() if fmt.detect(records)), None)


def test_every_test_file_and_real_transcript_is_detected_as_when_every_reader_was_asked():
    files = [p for p in (ROOT / "tests" / "formats" / "data").rglob("*") if p.suffix in (".json", ".jsonl")]
    files += [p for p in TRANSCRIPTS.rglob("*") if p.suffix in SUFFIXES] if TRANSCRIPTS.is_dir() else []
    assert len(files) >= 5
    seen = set()
    for path in files:
        try:
            records = records_of(path.read_bytes(), str(path))
        except Exception:  # a file that does not parse is not detection's to judge
            continue
        expected = _every_reader_asked(records)
        try:
            found: str | None = detect(records, str(path)).name
        except Exception:
            found = None
        assert found == expected, path
        seen.add(found)
    assert {"claude-code", "codex"} <= seen


def test_detecting_a_claude_code_session_imports_its_reader_only():
    session = json.dumps({"type": "user", "sessionId": "s", "uuid": "u", "message": {"role": "user", "content": "hi"}})
    code = (
        "import sys; from compactctl.formats import detect, records_of\n"
        f"print(detect(records_of({session.encode()!r})).name)\n"
        "print(sorted(m.rsplit('.', 1)[1] for m in sys.modules if m.startswith('compactctl.formats.')))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    name, modules = done.stdout.splitlines()
    assert name == "claude-code"
    readers = {row.module for row in _ROWS.values()}
    # claude_code reads through anthropic's blocks; no other reader is imported to be asked.
    assert readers & set(ast.literal_eval(modules)) == {"claude_code", "anthropic"}
