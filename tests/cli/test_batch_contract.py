"""A folder of logs in CI: the --json contract, exit codes that cannot hide a bad file, safe re-runs.

The folder mixes good sessions with a truncated file, an empty one and files of no known format,
as a real folder of logs does; every command's --json is checked against the shipped schema.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from xml.etree import ElementTree

import jsonschema
import orjson
import pytest

from compactctl.cli.outcome import SCHEMA
from tests.conftest import ROOT

VALIDATOR = jsonschema.Draft202012Validator(json.loads(SCHEMA.read_text()))
SAMPLES = ROOT / "samples"
PI_SESSION = b'{"type":"session","version":3,"id":"9f1c","timestamp":"2026-02-20T20:17:15Z","cwd":"/home/u"}\n'


def valid(text: str) -> dict:
    """The --json document, after checking it against the schema."""
    document = json.loads(text)
    VALIDATOR.validate(document)
    return document


@pytest.fixture
def logs(tmp_path, monkeypatch) -> Path:
    """logs/ (run from its parent, so paths are given relative): 2 good sessions, 1 with a bad line,
    and 3 that cannot be read (empty, of no known format, a pi session)."""
    monkeypatch.chdir(tmp_path)
    folder = tmp_path / "logs"
    (folder / "team").mkdir(parents=True)
    shutil.copy(SAMPLES / "coding-agent.jsonl", folder / "coding-agent.jsonl")
    shutil.copy(SAMPLES / "support-fr.jsonl", folder / "team" / "support-fr.jsonl")
    lines = (SAMPLES / "rag-assistant.jsonl").read_bytes().splitlines(keepends=True)
    (folder / "team" / "bad-line.jsonl").write_bytes(b"".join([*lines[:2], b'{"role": "user", "cont\n', *lines[2:]]))
    (folder / "empty.jsonl").write_bytes(b"")
    (folder / "package.json").write_bytes(b'{"name": "app", "version": "1.0.0", "dependencies": {}}\n')
    (folder / "team" / "pi.jsonl").write_bytes(PI_SESSION)
    return Path("logs")


GOOD = ["logs/coding-agent.jsonl", "logs/team/support-fr.jsonl"]
UNREADABLE = ["logs/empty.jsonl", "logs/package.json", "logs/team/pi.jsonl"]


def test_compact_json_names_every_file_as_given_with_its_output_and_status(cli, logs):
    result = cli("compact", logs, "-o", "out", "-s", "prune", "--json", "--on-error", "skip")
    doc = valid(result.stdout)
    assert result.exit_code == doc["exit_code"] == 2  # 3 files could not be read
    by_file = {entry["file"]: entry for entry in doc["files"]}
    assert sorted(by_file) == sorted([*GOOD, *UNREADABLE, "logs/team/bad-line.jsonl"])
    for file in GOOD:
        assert by_file[file]["status"] in ("ok", "unchanged")
        assert by_file[file]["output"] == "out/" + file.removeprefix("logs/")
        assert Path(by_file[file]["output"]).is_file()
    skipped = by_file["logs/team/bad-line.jsonl"]
    assert (skipped["status"], skipped["skipped_lines"]) == ("skipped-lines", [3])
    assert "line 3" in skipped["reason"]
    for file in UNREADABLE:
        assert (by_file[file]["status"], by_file[file]["output"]) == ("failed", None)
    assert "cannot tell the format of logs/package.json (known: " in by_file["logs/package.json"]["reason"]
    assert "a pi coding-agent session, which is not supported" in by_file["logs/team/pi.jsonl"]["reason"]
    assert [f["file"] for f in doc["failed"]] == [f for f in by_file if f in UNREADABLE]  # one path convention
    counts = {key: doc["total"][key] for key in ("inputs", "written", "failed", "skipped_lines")}
    assert counts == {"inputs": 6, "written": 3, "failed": 3, "skipped_lines": 1}


def test_an_unreadable_file_fails_the_run_after_the_others_are_written_skip_or_not(cli, logs):
    for on_error in ("fail", "skip"):
        result = cli("compact", logs, "-o", f"out-{on_error}", "-s", "prune", "--on-error", on_error)
        assert result.exit_code == 2, on_error
        assert Path(f"out-{on_error}/coding-agent.jsonl").is_file()
        assert "error: logs/empty.jsonl: empty file" in result.stderr


def test_max_failed_files_tolerates_what_it_says_and_still_reports_it(cli, logs):
    result = cli("compact", logs, "-o", "out", "-s", "prune", "--on-error", "skip", "--max-failed-files", "3")
    assert result.exit_code == 0
    assert "3 file(s) failed, within --max-failed-files 3" in result.stderr
    assert "6 inputs: 3 written, " in result.stdout and "3 failed, 1 line(s) skipped" in result.stdout
    tighter = cli("compact", logs, "-o", "out2", "-s", "prune", "--on-error", "skip", "--max-failed-files", "2")
    assert tighter.exit_code == 2


def test_a_bad_line_fails_its_file_unless_skipped(cli, logs):
    strict = cli("report", "logs/team/bad-line.jsonl", "--json")
    assert strict.exit_code == 2 and valid(strict.stdout)["files"][0]["status"] == "failed"
    skipping = cli("report", "logs/team/bad-line.jsonl", "--json", "--on-error", "skip")
    doc = valid(skipping.stdout)
    assert skipping.exit_code == 0 and doc["files"][0]["status"] == "skipped-lines"
    assert doc["total"]["skipped_lines"] == 1


def test_a_failing_gate_is_named_whatever_else_failed(cli, logs):
    result = cli("compact", logs, "-o", "out", "-s", "prune", "--fail-under", "99", "--json")
    doc = valid(result.stdout)
    assert result.exit_code == 2  # the unreadable files decide the code...
    (gate,) = [g for g in doc["gates"] if g["name"] == "fail-under"]
    assert gate["passed"] is False and gate["threshold"] == 99 and gate["measured"] < 99
    assert "gate failed: total reduction" in result.stderr  # ...and the gate is still named
    passing = cli("compact", "logs/coding-agent.jsonl", "-o", "one.jsonl", "-s", "prune", "--fail-under", "99")
    assert passing.exit_code == 1 and "under --fail-under 99%" in passing.stderr


@pytest.mark.slow  # every command three ways, each output checked against the schema: 0.9 s of CPU
def test_every_command_gives_valid_json_on_success_failure_and_usage_errors(cli, logs):
    shutil.copytree("logs", "after")
    runs = {
        "compact": ["compact", logs, "-o", "o1", "-s", "prune"],
        "prune": ["prune", logs, "-o", "o2"],
        "report": ["report", logs],
        "report pair": ["report", logs, "after"],
        "replay": ["replay", logs, "-t", "2000"],
        "eval": ["eval", logs, "after"],
        "review": ["review", logs, "-o", "pages", "-s", "prune"],
    }
    for name, args in runs.items():
        result = cli(*args, "--json")
        doc = valid(result.stdout)
        assert (doc["command"], doc["exit_code"], result.exit_code) == (args[0], 2, 2), name
        assert doc["total"]["failed"] == 4 and doc["total"]["inputs"] == 6, name  # the bad line too: no skip
    for args in (["compact", logs, "--fail-undr", "3"], ["report", logs, "--fail-under", "x"], ["replay"]):
        result = cli(*args, "--json")
        doc = valid(result.stdout)
        assert result.exit_code == 2 and doc["error"]["kind"] == "usage" and doc["command"] == args[0]
        assert doc["error"]["message"] in result.stderr
    pair = valid(cli("report", logs, "after", "--json").stdout)
    assert {e["file"]: e.get("after") for e in pair["files"] if e["status"] != "failed"} == {
        f: f.replace("logs/", "after/", 1) for f in [*GOOD, "logs/team/bad-line.jsonl"] if "bad-line" not in f
    }
    missing = cli("report", "nowhere", "--json")
    doc = valid(missing.stdout)
    assert (missing.exit_code, doc["error"]) == (2, {"kind": "input", "message": "nowhere: no such file or folder"})
    folder_without_o = cli("compact", logs, "--json")
    assert valid(folder_without_o.stdout)["error"]["message"].startswith("a folder input needs -o DIR")


def test_an_unknown_file_gets_the_same_words_from_every_command(cli, logs):
    said = set()
    for args in (["compact", "-o", "x.jsonl"], ["prune", "-o", "y.jsonl"], ["report"], ["replay"]):
        result = cli(args[0], "logs/package.json", *args[1:])
        assert result.exit_code == 2
        said.add(result.stderr.strip())
    assert len(said) == 1 and said.pop().startswith("error: cannot tell the format of logs/package.json (known: ")


def test_rerunning_over_the_same_files_changes_nothing(cli, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for sample in ("coding-agent.jsonl", "support-fr.jsonl", "dataset.jsonl"):
        shutil.copy(SAMPLES / sample, tmp_path / sample)

    def run_over_glob() -> dict[str, bytes]:  # what `compactctl compact *.jsonl` gives, the shell's glob
        given = sorted(str(p.name) for p in tmp_path.glob("*.jsonl"))
        result = cli("compact", *given, "-s", "prune")
        assert result.exit_code == 0, result.stderr
        return {p.name: p.read_bytes() for p in sorted(tmp_path.iterdir())}

    first = run_over_glob()
    # dataset.jsonl has nothing prune folds: no copy of it is written (--write-unchanged would).
    assert sorted(first) == sorted(
        [
            "coding-agent.jsonl",
            "coding-agent.compacted.jsonl",
            "support-fr.jsonl",
            "support-fr.compacted.jsonl",
            "dataset.jsonl",
        ]
    )

    again = cli("compact", *sorted(p.name for p in tmp_path.glob("*.jsonl")), "-s", "prune")
    assert "left out 2 output(s) of an earlier run" in again.stderr
    assert run_over_glob() == first  # no x.compacted.compacted.jsonl, and the same bytes
    alone = cli("report", "support-fr.compacted.jsonl", "--json")  # named alone, an output is read
    assert valid(alone.stdout)["files"][0]["file"] == "support-fr.compacted.jsonl"
    outputs_only = cli("replay", "coding-agent.compacted.jsonl", "support-fr.compacted.jsonl", "-t", "2000", "--json")
    assert [f["file"] for f in valid(outputs_only.stdout)["files"]] == [
        "coding-agent.compacted.jsonl",
        "support-fr.compacted.jsonl",
    ]  # only outputs named: they are what was meant


def test_a_folder_rerun_mirrors_the_same_outputs(cli, logs):
    cli("compact", logs, "-o", "out", "-s", "prune", "--max-failed-files", "3")
    first = {p: p.read_bytes() for p in sorted(Path("out").rglob("*")) if p.is_file()}
    cli("compact", logs, "-o", "out", "-s", "prune", "--max-failed-files", "3")
    assert {p: p.read_bytes() for p in sorted(Path("out").rglob("*")) if p.is_file()} == first


def test_no_progress_when_piped_as_spec_says_but_failures_and_skipped_lines_still_said(cli, logs):
    piped = cli("report", logs, "--on-error", "skip")  # the runner's stderr is not a terminal
    assert not [line for line in piped.stderr.splitlines() if line.startswith("compactctl: ")]
    assert "error: " in piped.stderr and "skipped: " in piped.stderr
    quiet = cli("report", logs, "-q", "--on-error", "skip")
    assert "compactctl: " not in quiet.stderr and "skipped: " in quiet.stderr


def test_github_annotations_and_junit_from_one_run(cli, logs, tmp_path, monkeypatch):
    monkeypatch.setenv("GITHUB_WORKSPACE", str(tmp_path))
    result = cli(
        "compact", logs, "-o", "out", "-s", "prune", "--on-error", "skip", "--fail-under", "99",
        "--annotations", "github", "--junit", "report.xml",
    )  # fmt: skip
    assert result.exit_code == 2
    commands = [line for line in result.stderr.splitlines() if line.startswith("::")]
    assert "::error file=logs/empty.jsonl,title=compactctl compact%3A file failed::" in "\n".join(commands)
    assert any(c.startswith("::warning file=logs/team/bad-line.jsonl,line=3,") for c in commands)
    assert any(c.startswith("::error title=compactctl compact%3A gate fail-under failed::") for c in commands)
    (suite,) = ElementTree.parse("report.xml").getroot()
    cases = [(case.attrib["classname"], case.attrib["name"]) for case in suite]
    files = sorted(name for kind, name in cases if kind == "compactctl.compact.files")
    assert files == sorted([*GOOD, *UNREADABLE, "logs/team/bad-line.jsonl"])  # a case per file...
    gates = [name for kind, name in cases if kind == "compactctl.compact.gates"]
    assert gates == ["facts", "api-valid", "fail-under"]  # ...and per gate
    assert suite.attrib["errors"] == "3" and suite.attrib["failures"] == "1"


def test_a_stdin_run_has_a_document_too(cli):
    data = (SAMPLES / "coding-agent.jsonl").read_bytes()
    result = cli("report", "-", "--json", input=data)
    doc = valid(result.stdout)
    assert doc["files"][0]["file"] == "-" and doc["files"][0]["name"] == "<stdin>"
    assert orjson.loads(result.stdout)["total"]["inputs"] == 1


def test_a_run_that_does_not_start_is_reported_to_ci_too(cli, logs, tmp_path, monkeypatch):
    monkeypatch.setenv("GITHUB_WORKSPACE", str(tmp_path))
    result = cli("compact", logs, "--annotations", "github", "--junit", "report.xml")  # a folder needs -o
    assert result.exit_code == 2
    assert "::error title=compactctl compact::a folder input needs -o DIR" in result.stderr
    (suite,) = ElementTree.parse("report.xml").getroot()
    (case,) = suite
    assert case.attrib["name"] == "run" and case.find("error").attrib["type"] == "input"


def test_an_unchanged_file_says_why_and_is_written_only_when_asked(cli, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    shutil.copy(SAMPLES / "dataset.jsonl", "dataset.jsonl")  # nothing in it for prune to fold
    (entry,) = valid(cli("compact", "dataset.jsonl", "-s", "prune", "--json").stdout)["files"]
    assert (entry["status"], entry["output"]) == ("unchanged", None) and entry["reason"]
    assert not Path("dataset.compacted.jsonl").exists()
    doc = valid(cli("compact", "dataset.jsonl", "-s", "prune", "--json", "--write-unchanged").stdout)
    assert doc["files"][0]["output"] == "dataset.compacted.jsonl" and doc["total"]["written"] == 1
    assert Path("dataset.compacted.jsonl").is_file()


@pytest.mark.parametrize(
    ("command", "junit"),
    [
        (["compact", "logs/coding-agent.jsonl", "-o", "out.jsonl"], "logs/coding-agent.jsonl"),
        (["compact", "logs/coding-agent.jsonl", "-o", "out.jsonl"], "out.jsonl"),
        (["prune", "logs/coding-agent.jsonl", "-o", "out.jsonl"], "logs/coding-agent.jsonl"),
        (["report", "logs/coding-agent.jsonl"], "logs/coding-agent.jsonl"),
        (["report", "logs/coding-agent.jsonl", "logs/team/support-fr.jsonl"], "logs/team/support-fr.jsonl"),
        (["report", "logs", "--on-error", "skip", "--max-failed-files", "9"], "logs/team/support-fr.jsonl"),
        (["eval", "logs/coding-agent.jsonl", "logs/team/support-fr.jsonl"], "logs/team/support-fr.jsonl"),
        (["replay", "logs/coding-agent.jsonl", "-t", "4000"], "logs/coding-agent.jsonl"),
        (["report", "logs/coding-agent.jsonl", "--format", "nosuch"], "logs/coding-agent.jsonl"),  # stopped early
    ],
)
def test_junit_never_overwrites_an_input_or_an_output(cli, logs, command, junit):
    """--junit FILE is written last, over whatever is there: a transcript the run reads or writes is refused
    (exit 2, said on stderr), as --manifest and --archive are, and stays as it was."""
    Path("out.jsonl").write_bytes(b'{"role": "user", "content": "an earlier output"}\n')
    before = Path(junit).read_bytes()
    result = cli(*command, "--junit", junit)
    assert result.exit_code == 2, result.stderr
    assert f"{junit}: --junit would overwrite" in result.stderr
    assert Path(junit).read_bytes() == before


@pytest.mark.parametrize(
    "command",
    [
        ["compact", "logs/coding-agent.jsonl", "-o", "-", "--manifest", "-"],
        ["prune", "logs/coding-agent.jsonl", "-o", "-", "--archive", "-"],
        ["prune", "logs/coding-agent.jsonl", "-o", "out.jsonl", "--archive", "-", "--manifest", "-"],
        ["compact", "logs/coding-agent.jsonl", "-o", "-", "--junit", "-"],
        ["report", "logs/coding-agent.jsonl", "--json", "--junit", "-"],
        ["replay", "logs/coding-agent.jsonl", "-t", "4000", "--json", "--junit", "-"],
    ],
)
def test_two_documents_are_never_written_to_stdout_together(cli, logs, command):
    """-o -, --json, and a side file given as - each write stdout: two of them would interleave a transcript, a
    manifest, a JSON report or JUnit XML into one stream no reader can split; a usage error, nothing written."""
    result = cli(*command)
    assert result.exit_code == 2, result.output
    assert "would both write to stdout; give --" in result.stderr
    assert "<testsuites" not in result.stdout and '"action"' not in result.stdout and '"role"' not in result.stdout
    assert not Path("out.jsonl").exists()
