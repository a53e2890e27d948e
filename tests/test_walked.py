"""A chat file walked in bounded memory gives, byte for byte, what it gives when held.

``files.compact_file`` walks a chat JSON Lines file (``walked.compact_walked``) when nobody
asked for its manifest and the steps allow it; with a manifest asked for it holds the
file as before. Both must write the same bytes and report the same figures: on every
sample, on every real transcript written as a chat file (both as orjson and as Python's
``json`` would space it), and on generated transcripts.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from compactctl import jsonbytes
from compactctl.files import compact as files_compact
from compactctl.files.io import Job
from compactctl.formats import FORMATS, dump, load
from compactctl.formats.base import Transcript
from compactctl.tokens import TokenCounter
from compactctl.walked import walkable
from tests.conftest import SHARED_TRANSCRIPTS, needs_transcripts
from tests.helpers import agent_transcripts, bundled_samples, compact_file_with
from tests.properties import examples

ROOT = Path(__file__).resolve().parent.parent
counter = TokenCounter("approx")

# Each deterministic strategy (prune in both modes, trim-tools made to trim), and the chain the issue names.
RUNS = [
    (["prune"], {"mode": "stub"}),
    (["prune"], {"mode": "drop"}),
    (["trim-tools"], {"tool_max_tokens": 20, "head_lines": 2, "tail_lines": 1}),
    (["prune", "trim-tools"], {"tool_max_tokens": 20, "head_lines": 2, "tail_lines": 1}),
    (["prune", "trim-tools"], {"mode": "drop", "tool_max_tokens": 20}),
    (["prune"], {"mode": "stub", "require": ("error", "the quick brown fox")}),
    (["mask-observations"], {}),
    (["clear-thinking"], {"keep_thinking_turns": 0}),
    (["window"], {"keep_recent": 5}),
]


def held_and_walked(source: Path, steps: list[str], options: dict, folder: Path):
    """(bytes, report) from the held path and from the walked one; asserts the walked one ran where it can."""
    options = {**options, "write_unchanged": True}  # the bytes are compared, changed or not
    held = compact_file_with(Job(str(source), str(folder / "held.jsonl"), source.name), steps, options, counter)
    walked = compact_file_with(
        Job(str(source), str(folder / "walked.jsonl"), source.name), steps, options, counter, keep_manifest=False
    )
    assert held.manifest, "the held path keeps a manifest"
    if walkable(steps):
        assert walked.manifest == [], "a walkable compaction of a chat file was not walked"
    return (folder / "held.jsonl").read_bytes(), held.report, (folder / "walked.jsonl").read_bytes(), walked.report


def check_same(source: Path, folder: Path) -> None:
    for steps, options in RUNS:
        held, held_report, walked, walked_report = held_and_walked(source, steps, options, folder)
        assert walked == held, f"{source.name} {steps} {options}: the walked output differs"
        assert walked_report == held_report, f"{source.name} {steps} {options}: the walked report differs"


def chat_samples() -> list[Path]:
    return [p for p in bundled_samples() if load(p.read_bytes(), str(p))[0].name == "chat"]


@pytest.mark.parametrize("sample", chat_samples(), ids=lambda p: p.name)
def test_every_chat_sample_walked_gives_what_it_gives_held(sample, tmp_path):
    check_same(sample, tmp_path)


def python_spaced(messages: list[dict]) -> bytes:
    """Lines as Python's json writes them (another writer's spacing: kept lines, byte for byte)."""
    return b"".join(json.dumps(m, ensure_ascii=False).encode() + b"\n" for m in messages)


def real_chat_files(folder: Path) -> list[Path]:
    """Every transcript of every real file, as a chat file twice: orjson-written and Python-written."""
    made = []
    files = sorted(p for p in SHARED_TRANSCRIPTS.rglob("*") if p.is_file() and p.suffix in (".jsonl", ".json", ".traj"))
    for number, path in enumerate(files):
        _, transcripts = load(path.read_bytes(), str(path))
        for run, transcript in enumerate(transcripts[:5]):  # tau-bench holds 200 runs: 5 are enough here
            messages = transcript.messages
            if not messages:
                continue
            for spacing, data in (
                ("orjson", dump([Transcript(messages)], "chat")),
                ("python", python_spaced(messages)),
            ):
                target = folder / f"{number:02d}-{run}-{spacing}-{path.stem[:30]}.jsonl"
                target.write_bytes(data)
                made.append(target)
    return made


@pytest.mark.slow  # every real transcript, twice
@needs_transcripts
def test_every_real_transcript_as_a_chat_file_walked_gives_what_it_gives_held(tmp_path):
    sources = tmp_path / "sources"
    sources.mkdir()
    made = real_chat_files(sources)
    assert len(made) >= 40, "the real transcripts folder holds fewer transcripts than expected"
    for source in made:
        check_same(source, tmp_path)


def test_a_python_spaced_file_with_observations_and_a_bom_comes_back_the_same(tmp_path):
    """mini-swe-agent's observations are marked on reading and unmarked on writing; a BOM and CRLF are kept out."""
    messages = [
        {"role": "system", "content": "You are an agent."},
        {"role": "user", "content": "Fix the bug."},
        {"role": "assistant", "content": "```bash\ncat a.py\n```"},
        {"role": "user", "content": "<returncode>0</returncode><output>print(1)\n" * 40 + "</output>"},
        {"role": "assistant", "content": "```bash\ncat a.py\n```"},
        {"role": "user", "content": "<returncode>0</returncode><output>print(1)\n" * 40 + "</output>"},
        {"role": "assistant", "content": "Done."},
    ]
    lines = python_spaced(messages).split(b"\n")
    source = tmp_path / "obs.jsonl"
    source.write_bytes(b"\xef\xbb\xbf" + b"\r\n".join(lines[:3]) + b"\n\n" + b"\n".join(lines[3:]))
    check_same(source, tmp_path)


def test_a_file_the_walk_cannot_take_is_held(tmp_path, monkeypatch):
    """A bare JSON array of messages is not walked: held, with the output the same, and no manifest
    made where nobody asked for one."""
    source = tmp_path / "array.json"
    source.write_bytes(jsonbytes.dumps([{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}]))
    always = {"write_unchanged": True}
    result = compact_file_with(Job(str(source), str(tmp_path / "out.json"), "array.json"), ["prune"], always, counter)

    def no_walk(*args, **kwargs):
        raise AssertionError("a bare JSON array was walked")

    monkeypatch.setattr(files_compact, "_compact_walked", no_walk)
    held = compact_file_with(
        Job(str(source), str(tmp_path / "out2.json"), "array.json"), ["prune"], always, counter, keep_manifest=False
    )
    assert result.manifest != [] and held.manifest == []
    assert (tmp_path / "out.json").read_bytes() == (tmp_path / "out2.json").read_bytes()


def test_walkable_steps_are_prune_first_then_per_message_steps():
    assert walkable(["prune"]) and walkable(["prune", "trim-tools"]) and walkable(["trim-tools", "trim-tools"])
    assert not walkable([]) and not walkable(["trim-tools", "prune"]) and not walkable(["prune", "window"])
    assert not walkable(["summary"])


def test_a_bad_line_is_the_same_one_line_error_walked_and_held(tmp_path):
    source = tmp_path / "bad.jsonl"
    source.write_bytes(b'{"role": "user", "content": "hi"}\n{"role": "robot", "content": "x"}\n')
    errors = []
    for keep in (True, False):
        with pytest.raises(Exception) as raised:
            compact_file_with(
                Job(str(source), str(tmp_path / "o.jsonl"), "bad.jsonl"), ["prune"], {}, counter, keep_manifest=keep
            )
        errors.append(str(raised.value))
    assert errors[0] == errors[1] and ":2" in errors[0]
    assert not (tmp_path / "o.jsonl").exists()


@settings(
    max_examples=examples(60),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    transcript=agent_transcripts(),
    run=st.sampled_from(RUNS[:6]),
    spacing=st.sampled_from(["orjson", "python"]),
)
def test_generated_transcripts_walked_give_what_they_give_held(tmp_path, transcript, run, spacing):
    source = tmp_path / "generated.jsonl"
    source.write_bytes(dump([Transcript(transcript)], "chat") if spacing == "orjson" else python_spaced(transcript))
    steps, options = run
    held, held_report, walked, walked_report = held_and_walked(source, steps, options, tmp_path)
    assert walked == held
    assert walked_report == held_report


def dataset_files(folder: Path) -> list[Path]:
    """The dataset sample, and the same lines with Python's spacing, a blank line and CRLF endings."""
    sample = ROOT / "samples" / "dataset.jsonl"
    lines = [json.loads(line) for line in sample.read_bytes().splitlines() if line.strip()]
    spaced = folder / "dataset-python.jsonl"
    spaced.write_bytes(b"\r\n".join(json.dumps(line).encode() for line in lines) + b"\r\n\r\n")
    return [sample, spaced]


@pytest.mark.parametrize("steps, options", RUNS, ids=lambda v: str(v))
def test_a_dataset_file_compacted_a_line_at_a_time_gives_what_it_gives_held(steps, options, tmp_path, monkeypatch):

    options = {**options, "write_unchanged": True}  # the bytes are compared, changed or not
    for source in dataset_files(tmp_path):
        lines = compact_file_with(Job(str(source), str(tmp_path / "lines.jsonl"), source.name), steps, options, counter)
        with monkeypatch.context() as held_only:
            held_only.setitem(FORMATS, "dataset", dataclasses.replace(FORMATS["dataset"], one_per_line=False))
            held = compact_file_with(
                Job(str(source), str(tmp_path / "held.jsonl"), source.name), steps, options, counter
            )
        assert (tmp_path / "lines.jsonl").read_bytes() == (tmp_path / "held.jsonl").read_bytes()
        assert lines == held  # report, manifest and archive alike
        assert held.report.transcripts > 1


def test_a_dataset_line_that_does_not_parse_is_skipped_and_named_with_on_error_skip(tmp_path):
    sample = (ROOT / "samples" / "dataset.jsonl").read_bytes().splitlines()
    source = tmp_path / "broken.jsonl"
    source.write_bytes(b"\n".join([sample[0], b"{not json", *sample[1:]]) + b"\n")
    result = compact_file_with(
        Job(str(source), str(tmp_path / "o.jsonl"), "broken.jsonl"), ["prune"], {"on_error": "skip"}, counter
    )
    assert result.report.skipped_lines == [2]
    assert len((tmp_path / "o.jsonl").read_bytes().splitlines()) == len(sample)


def test_a_chat_line_that_does_not_parse_is_skipped_walked_as_held(tmp_path):
    sample = (ROOT / "samples" / "coding-agent.jsonl").read_bytes().splitlines()
    source = tmp_path / "broken.jsonl"
    source.write_bytes(b"\n".join([*sample[:3], b'{"role": "tool", "content": ', *sample[3:]]) + b"\n")
    held, held_report, walked, walked_report = held_and_walked(source, ["prune"], {"on_error": "skip"}, tmp_path)
    assert walked == held and walked_report == held_report
    assert walked_report.skipped_lines == [4]


def test_lines_that_are_not_messages_or_transcripts_are_skipped_as_held_skips_them(tmp_path, monkeypatch):
    """--on-error skip also leaves out a line of the wrong shape, and names what is wrong with it."""

    chat_lines = (ROOT / "samples" / "coding-agent.jsonl").read_bytes().splitlines()
    source = tmp_path / "chat.jsonl"
    source.write_bytes(b"\n".join([*chat_lines[:2], b'{"role": "robot"}', b"{bad", *chat_lines[2:]]) + b"\n")
    held, held_report, walked, walked_report = held_and_walked(source, ["prune"], {"on_error": "skip"}, tmp_path)
    assert walked == held and walked_report == held_report
    assert [(s["line"], "robot" in s["problem"]) for s in walked_report.skipped] == [(3, True), (4, False)]

    rows = (ROOT / "samples" / "dataset.jsonl").read_bytes().splitlines()
    source = tmp_path / "dataset.jsonl"
    source.write_bytes(b"\n".join([rows[0], b'{"messages": 3}', b"{bad", *rows[1:]]) + b"\n")
    options = {"on_error": "skip"}
    lines = compact_file_with(Job(str(source), str(tmp_path / "lines.jsonl"), "d"), ["prune"], options, counter)
    monkeypatch.setitem(FORMATS, "dataset", dataclasses.replace(FORMATS["dataset"], one_per_line=False))
    held_file = compact_file_with(Job(str(source), str(tmp_path / "held.jsonl"), "d"), ["prune"], options, counter)
    assert lines == held_file
    assert (tmp_path / "lines.jsonl").read_bytes() == (tmp_path / "held.jsonl").read_bytes()
    assert lines.report.skipped_lines == [2, 3]
