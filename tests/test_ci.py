"""GitHub workflow commands and the JUnit report, both rendered from the run's --json document."""

from __future__ import annotations

import json
from pathlib import Path
from xml.etree import ElementTree

import jsonschema
from hypothesis import given
from hypothesis import strategies as st

from compactctl.ci import github_annotations, junit_xml, repo_path, repo_root
from compactctl.cli.outcome import exit_code
from compactctl.files.jobs import Failure

SCHEMA = json.loads((Path(__file__).parents[1] / "compactctl" / "schema" / "run.schema.json").read_text())


def document(root: Path) -> dict:
    """A run over logs/: one file written, one with a skipped line, one unreadable; two gates, one failed."""
    logs = root / "logs"
    return {
        "version": 2,
        "command": "compact",
        "exit_code": 2,
        "error": None,
        "files": [
            {"file": str(logs / "a.jsonl"), "name": "a.jsonl", "output": "out/a.jsonl", "status": "ok",
             "reason": None, "skipped_lines": [], "format": "chat"},
            {"file": str(logs / "b.jsonl"), "name": "b.jsonl", "output": "out/b.jsonl", "status": "skipped-lines",
             "reason": "1 line skipped", "skipped_lines": [3], "skipped": [{"line": 3, "problem": "malformed JSON"}],
             "format": "chat"},
            {"file": str(logs / "c,d.jsonl"), "name": "c,d.jsonl", "output": None, "status": "failed",
             "reason": "logs/c,d.jsonl:2: malformed JSON: unexpected end of data", "line": 2, "skipped_lines": []},
        ],
        "failed": [{"file": str(logs / "c,d.jsonl"), "error": "malformed JSON", "line": 2, "exit_code": 2}],
        "gates": [
            {"name": "facts", "passed": True, "reason": "every fact kept"},
            {"name": "fail-under", "passed": False, "reason": "total reduction 4.0% is under --fail-under 20%",
             "threshold": 20.0, "measured": 4.0},
        ],
        "total": {"inputs": 3, "written": 2, "unchanged": 0, "failed": 1, "skipped_lines": 1},
    }  # fmt: skip


def test_the_sample_document_is_a_valid_run_document(tmp_path):
    jsonschema.validate(document(tmp_path), SCHEMA)


def test_annotations_name_failed_files_skipped_lines_and_failed_gates_relative_to_the_repo(tmp_path):
    lines = list(github_annotations(document(tmp_path), tmp_path))
    assert lines == [
        "::warning file=logs/b.jsonl,line=3,title=compactctl compact%3A line skipped::malformed JSON",
        # A comma in a file name is escaped, or GitHub would read two properties.
        "::error file=logs/c%2Cd.jsonl,line=2,title=compactctl compact%3A file failed::"
        "logs/c,d.jsonl:2: malformed JSON: unexpected end of data",
        # % is escaped too, as GitHub reads it.
        "::error title=compactctl compact%3A gate fail-under failed::"
        "total reduction 4.0%25 is under --fail-under 20%25",
    ]


def test_a_gate_failed_by_files_gets_one_error_on_each_file(tmp_path):
    run = document(tmp_path)
    run["gates"] = [
        {"name": "facts", "passed": False, "reason": "1 file lost facts",
         "files": [{"file": str(tmp_path / "logs" / "a.jsonl"), "reason": "facts missing: 'ORD-1'\nsecond line"}]},
    ]  # fmt: skip
    (last,) = [line for line in github_annotations(run, tmp_path) if "gate" in line]
    assert last == (
        "::error file=logs/a.jsonl,title=compactctl compact%3A gate facts failed::facts missing: 'ORD-1'%0Asecond line"
    )


def test_a_usage_error_is_one_error_annotation():
    run = {"command": "report", "error": {"kind": "usage", "message": "No such option: --fail-undr"}, "files": []}
    assert list(github_annotations(run, Path("/"))) == ["::error title=compactctl report::No such option: --fail-undr"]


def test_junit_has_one_case_per_file_and_per_gate(tmp_path):
    suites = ElementTree.fromstring(junit_xml(document(tmp_path)))
    (suite,) = suites
    assert suite.attrib | {} == {
        "name": "compactctl compact", "tests": "5", "failures": "1", "errors": "1", "skipped": "0",
    }  # fmt: skip
    cases = {(case.attrib["classname"], case.attrib["name"]): case for case in suite}
    assert list(cases) == [
        ("compactctl.compact.files", str(tmp_path / "logs" / "a.jsonl")),
        ("compactctl.compact.files", str(tmp_path / "logs" / "b.jsonl")),
        ("compactctl.compact.files", str(tmp_path / "logs" / "c,d.jsonl")),
        ("compactctl.compact.gates", "facts"),
        ("compactctl.compact.gates", "fail-under"),
    ]
    failed = cases[("compactctl.compact.files", str(tmp_path / "logs" / "c,d.jsonl"))]
    assert failed.find("error").attrib["message"].endswith("unexpected end of data")
    assert cases[("compactctl.compact.gates", "facts")].find("failure") is None
    gate = cases[("compactctl.compact.gates", "fail-under")].find("failure")
    assert gate.attrib == {"message": "total reduction 4.0% is under --fail-under 20%", "type": "gate"}


def test_paths_are_relative_to_the_workspace_or_the_git_tree(tmp_path, monkeypatch):
    (tmp_path / "repo" / ".git").mkdir(parents=True)
    (tmp_path / "repo" / "logs").mkdir()
    monkeypatch.delenv("GITHUB_WORKSPACE", raising=False)
    assert repo_root(tmp_path / "repo" / "logs") == (tmp_path / "repo").resolve()
    monkeypatch.setenv("GITHUB_WORKSPACE", str(tmp_path))
    assert repo_root(tmp_path / "repo" / "logs") == tmp_path.resolve()
    assert repo_path(str(tmp_path / "repo" / "logs" / "x.jsonl"), tmp_path.resolve()) == "repo/logs/x.jsonl"
    assert repo_path("-", tmp_path) == ""


# --- the exit rule, for any mix of outcomes ------------------------------------------------------


@given(
    failed=st.lists(st.sampled_from([2, 3]), max_size=5),
    done=st.integers(0, 5),
    gates=st.lists(st.booleans(), max_size=3),
    allowed=st.integers(0, 6),
)
def test_the_exit_code_never_hides_a_bad_file_nor_a_failed_gate(failed, done, gates, allowed):
    failures = [Failure(f"f{i}", "bad", code) for i, code in enumerate(failed)]
    code = exit_code(failures, done, [{"name": "g", "passed": passed, "reason": "r"} for passed in gates], allowed)
    if 3 in failed:
        assert code == 3  # a summarizer failure is never tolerated
    elif len(failed) > allowed or (failed and not done):
        assert code == 2  # more bad files than allowed, or nothing read at all
    elif not all(gates):
        assert code == 1
    else:
        assert code == 0 and len(failed) <= allowed
