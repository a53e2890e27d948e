"""``compactctl prune``: outputs, archive, explain, manifest, report, gates."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest
from typer.testing import CliRunner

from compactctl.cli.main import app
from compactctl.errors import EXIT_GATE, EXIT_INPUT, EXIT_OK
from compactctl.formats import load
from compactctl.transcript import is_valid
from tests.conftest import SHARED_TRANSCRIPTS, needs_transcripts
from tests.helpers import call

runner = CliRunner()
LONG = "a long tool output line that is well worth pruning away\n" * 4


def session(tag: str = "") -> list[dict[str, Any]]:
    """An agent that reads the same file twice and gets one answer twice."""
    return [
        {"role": "system", "content": "You are a coding agent."},
        {"role": "user", "content": f"Fix the bug{tag}. Results in CSV.", "compactctl": {"facts": ["Results in CSV"]}},
        {"role": "assistant", "content": None, "tool_calls": [call("c1", "read_file", '{"path": "a.py"}')]},
        {"role": "tool", "tool_call_id": "c1", "content": "v1\n" + LONG, "compactctl": {"defines": ["a.py"]}},
        {"role": "assistant", "content": "a.py has the bug.", "compactctl": {"references": ["a.py"]}},
        {
            "role": "assistant",
            "content": "Checking both.",
            "tool_calls": [call("c2", "read_file", '{"path": "b.py"}'), call("c3", "grep", '{"q": "x"}')],
        },
        {"role": "tool", "tool_call_id": "c2", "content": "b\n" + LONG},
        {"role": "tool", "tool_call_id": "c3", "content": "B\n" + LONG.upper()},
        {"role": "assistant", "content": None, "tool_calls": [call("c4", "read_file", '{"path":"a.py"}')]},
        {"role": "tool", "tool_call_id": "c4", "content": "v2\n" + LONG},
        {"role": "assistant", "content": None, "tool_calls": [call("c5", "read_file", '{"path": "c.py"}')]},
        {"role": "tool", "tool_call_id": "c5", "content": "b\n" + LONG},
        {"role": "assistant", "content": "Fixed."},
    ]


def write_chat(path: Path, messages: list[dict[str, Any]]) -> Path:
    path.write_bytes(b"".join(orjson.dumps(m) + b"\n" for m in messages))
    return path


def read_jsonl(path: Path) -> list[Any]:
    return [orjson.loads(line) for line in path.read_bytes().splitlines() if line.strip()]


def rebuild(output: list[dict[str, Any]], archived: list[dict[str, Any]], total: int) -> list[dict[str, Any]]:
    """The input again, from the pruned output and the archive."""
    by_index = {entry["index"]: entry for entry in archived}
    rest = iter(output)
    messages = []
    for index in range(total):
        entry = by_index.get(index)
        if entry is None:
            messages.append(next(rest))
            continue
        messages.append(entry["message"])
        if entry["action"] != "removed":
            next(rest)  # elided: its changed copy stands in the output
    assert next(rest, None) is None
    return messages


def test_default_output_is_beside_the_input_and_prunes(tmp_path):
    source = write_chat(tmp_path / "run.jsonl", session())
    result = runner.invoke(app, ["prune", str(source)])
    assert result.exit_code == EXIT_OK, result.output
    out = read_jsonl(tmp_path / "run.pruned.jsonl")
    assert len(out) == len(session())
    assert out[3] == session()[3]  # superseded by #9, but #4 still refers to it
    assert out[7]["content"] == out[11]["content"] == "[compactctl: duplicate of message #6]"
    assert [m for i, m in enumerate(out) if i not in (7, 11)] == [
        m for i, m in enumerate(session()) if i not in (7, 11)
    ]
    assert "reduction" in result.stdout


@pytest.mark.parametrize("mode", ["stub", "drop"])
def test_archive_and_output_give_back_the_input_exactly(tmp_path, mode):
    lines = [{"messages": session(" one"), "id": 1}, {"messages": session(" two")[:8], "id": 2}]
    source = tmp_path / "runs.jsonl"
    source.write_bytes(b"".join(orjson.dumps(line) + b"\n" for line in lines))
    archive, target = tmp_path / "archive.jsonl", tmp_path / "out.jsonl"
    result = runner.invoke(app, ["prune", str(source), "-o", str(target), "--mode", mode, "--archive", str(archive)])
    assert result.exit_code == EXIT_OK, result.output
    _, pruned = load(target.read_bytes())
    archived = read_jsonl(archive)
    assert archived, "nothing archived"
    for line, transcript in zip(lines, pruned, strict=True):
        entries = [e for e in archived if e["transcript"] == transcript.label]
        assert entries and all(e["file"] == "runs.jsonl" for e in entries)
        assert rebuild(transcript.messages, entries, len(line["messages"])) == line["messages"]
        assert is_valid(transcript.messages)
        assert transcript.envelope is not None and transcript.envelope["id"] == line["id"]


def test_explain_lists_index_role_action_and_reason(tmp_path):
    source = write_chat(tmp_path / "run.jsonl", session())
    result = runner.invoke(app, ["prune", str(source), "--mode", "drop", "--explain", "-q"])
    assert result.exit_code == EXIT_OK, result.output
    rows = [line for line in result.stdout.splitlines() if "│" in line]
    cells = [[cell.strip() for cell in row.strip("│").split("│")] for row in rows]
    assert ["3", "tool", "restored", "referenced by #4"] in cells
    assert ["7", "tool", "removed", "duplicate of #6"] in cells
    assert ["11", "tool", "removed", "duplicate of #6"] in cells
    assert ["10", "assistant", "removed", "no content and no calls left"] in cells
    assert ["5", "assistant", "elided", "1 tool call(s) removed with their results"] in cells
    assert len(cells) == 5


def test_manifest_says_what_became_of_every_message(tmp_path):
    source = write_chat(tmp_path / "run.jsonl", session())
    manifest = tmp_path / "manifest.jsonl"
    result = runner.invoke(app, ["prune", str(source), "--manifest", str(manifest), "-q"])
    assert result.exit_code == EXIT_OK
    entries = read_jsonl(manifest)
    assert [e["index"] for e in entries] == list(range(len(session())))
    assert set(entries[0]) == {"file", "transcript", "index", "role", "action", "reason", "sha256"}
    assert [e["action"] for e in entries].count("elided") == 2
    assert entries[3]["action"] == "restored"


def test_json_report_and_transcript_on_stdout(tmp_path):
    source = write_chat(tmp_path / "run.jsonl", session())
    result = runner.invoke(app, ["prune", str(source), "-o", "-", "--json", "--mode", "drop"])
    assert result.exit_code == EXIT_OK, result.output
    out = [orjson.loads(line) for line in result.stdout.splitlines()]
    assert is_valid(out) and len(out) < len(session())
    report = orjson.loads(result.stderr)
    assert list(report) == ["version", "command", "exit_code", "error", "files", "failed", "gates", "total"]
    assert report["command"] == "prune" and report["files"][0]["output"] == "-"
    file = report["files"][0]
    assert file["messages_after"] == len(out)
    assert file["facts_required"] == file["facts_preserved"] == 1
    assert file["valid_after"] is True and 0 < file["reduction"] < 1


def test_bad_mode_is_one_line_exit_2_and_writes_nothing(tmp_path):
    source = write_chat(tmp_path / "run.jsonl", session())
    bad = runner.invoke(app, ["prune", str(source), "--mode", "cut"])
    assert bad.exit_code == EXIT_INPUT
    assert bad.stderr.strip() == "error: mode must be one of stub, drop, not 'cut' (given as --mode)"
    assert not (tmp_path / "run.pruned.jsonl").exists()


def test_fail_under_and_lost_facts_are_gates(tmp_path):
    source = write_chat(tmp_path / "run.jsonl", session())
    assert runner.invoke(app, ["prune", str(source), "--fail-under", "90", "-q"]).exit_code == EXIT_GATE
    assert runner.invoke(app, ["prune", str(source), "--fail-under", "1", "-q"]).exit_code == EXIT_OK
    # A required text in a duplicate keeps that message: the gate then holds.
    kept = runner.invoke(app, ["prune", str(source), "--require", "B\nA LONG TOOL", "--json", "-o", "-"])
    assert kept.exit_code == EXIT_OK, kept.stderr
    assert orjson.loads(kept.stderr)["files"][0]["facts_missing"] == []


def test_a_folder_is_mirrored_and_earlier_outputs_are_skipped(tmp_path):
    folder = tmp_path / "logs"
    (folder / "deep").mkdir(parents=True)
    write_chat(folder / "deep" / "a.jsonl", session())
    write_chat(folder / "a.pruned.jsonl", session())
    write_chat(folder / "b.compacted.jsonl", session())
    result = runner.invoke(app, ["prune", str(folder), "-o", str(tmp_path / "out"), "-q"])
    assert result.exit_code == EXIT_OK, result.output
    written = sorted(p.relative_to(tmp_path / "out").as_posix() for p in (tmp_path / "out").rglob("*.jsonl"))
    assert written == ["deep/a.jsonl"]


@pytest.mark.slow  # a console script on the real transcripts
@needs_transcripts
def test_console_script_prunes_real_tau_bench_runs(tmp_path):
    source = SHARED_TRANSCRIPTS / "tau-bench" / "historical_trajectories" / "gpt-4o-airline.json"
    target = tmp_path / "tau.json"
    script = Path(sys.executable).with_name("compactctl")
    done = subprocess.run(
        [str(script), "prune", str(source), "-o", str(target), "--mode", "drop", "--json"],
        capture_output=True,
        check=False,
    )
    assert done.returncode == EXIT_OK, done.stderr
    report = orjson.loads(done.stdout)["files"][0]
    assert report["transcripts"] == 200
    assert report["valid_before"] and report["valid_after"]
    assert report["messages_after"] < report["messages_before"]
    _, runs = load(target.read_bytes())
    assert all(is_valid(run.messages) for run in runs)


@pytest.mark.parametrize("mode", ["stub", "drop"])
def test_pruning_a_pruned_file_changes_nothing(tmp_path, mode):
    source = write_chat(tmp_path / "run.jsonl", session())
    once, twice = tmp_path / "once.jsonl", tmp_path / "twice.jsonl"
    assert runner.invoke(app, ["prune", str(source), "-o", str(once), "--mode", mode, "-q"]).exit_code == EXIT_OK
    again = runner.invoke(app, ["prune", str(once), "-o", str(twice), "--mode", mode, "--json"])
    assert again.exit_code == EXIT_OK
    assert once.read_bytes() != source.read_bytes()
    # Nothing changed the second time: no copy is written, and the report says why.
    assert not twice.exists() and orjson.loads(again.stdout)["files"][0]["unchanged_reason"]
    assert (
        runner.invoke(app, ["prune", str(once), "-o", str(twice), "--mode", mode, "-q", "--write-unchanged"]).exit_code
        == EXIT_OK
    )
    assert twice.read_bytes() == once.read_bytes()


@pytest.mark.parametrize(
    ("flags", "named"),
    [
        (["--manifest", "{input}"], "--manifest would overwrite an input"),
        (["--archive", "{input}"], "--archive would overwrite an input"),
        (["--archive", "{output}"], "--archive would overwrite an output"),
        (["--archive", "{side}", "--manifest", "{side}"], "--manifest would overwrite the --archive file"),
    ],
)
def test_a_side_file_never_overwrites_an_input_or_an_output(cli, tmp_path, flags, named):
    source = tmp_path / "in.jsonl"
    source.write_bytes(b'{"role":"user","content":"hi"}\n{"role":"assistant","content":"yo"}\n')
    out, side = tmp_path / "out.jsonl", tmp_path / "side.jsonl"
    args = [f.format(input=source, output=out, side=side) for f in flags]
    result = cli("prune", source, "-o", out, *args)
    assert result.exit_code == EXIT_INPUT, result.output
    assert named in result.stderr
    assert source.read_bytes() == b'{"role":"user","content":"hi"}\n{"role":"assistant","content":"yo"}\n'
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.jsonl"]


def test_compact_manifest_never_overwrites_the_input(cli, tmp_path):
    source = tmp_path / "in.jsonl"
    source.write_bytes(b'{"role":"user","content":"hi"}\n')
    result = cli("compact", "-s", "window", source, "-o", tmp_path / "out.jsonl", "--manifest", source)
    assert result.exit_code == EXIT_INPUT
    assert source.read_bytes() == b'{"role":"user","content":"hi"}\n'


@pytest.mark.parametrize("flag", ["--manifest", "--archive"])
def test_a_side_file_that_cannot_be_written_is_one_error_line(cli, tmp_path, flag):
    source = tmp_path / "in.jsonl"
    source.write_bytes(b'{"role":"user","content":"hi"}\n')
    (tmp_path / "afile").write_text("")
    result = cli("prune", source, "-o", tmp_path / "out.jsonl", flag, tmp_path / "afile" / "side.jsonl")
    assert result.exit_code == EXIT_INPUT
    assert "side.jsonl: cannot write" in result.stderr
    assert "Traceback" not in result.output


def test_quiet_prune_counts_no_token_and_writes_what_a_reported_one_writes(tmp_path):
    source = write_chat(tmp_path / "s.jsonl", session())
    code = (
        "import sys\n"
        "from compactctl.cli.main import main\n"
        "sys.argv = ['compactctl', 'prune', *sys.argv[1:]]\n"
        "try:\n"
        "    main()\n"
        "except SystemExit as done:\n"
        "    tokenizer = 'tiktoken' in sys.modules or 'bpe_openai._bindings' in sys.modules\n"
        "    print(tokenizer, done.code, file=sys.stderr)\n"
    )
    outputs = {}
    for flag in ("-q", "--json"):
        out = tmp_path / f"out{flag}.jsonl"
        run = subprocess.run([sys.executable, "-c", code, str(source), "-o", str(out), flag], capture_output=True)
        outputs[flag] = (run.stderr.decode().split()[-2:], out.read_bytes())
    assert outputs["-q"][0] == ["False", "0"]  # nothing counted, so no tokenizer loaded
    assert outputs["--json"][0] == ["True", "0"]
    assert outputs["-q"][1] == outputs["--json"][1]
