"""What a CI system reads besides the log: GitHub workflow commands and a JUnit report.

Both are rendered from the run's ``--json`` document (``compactctl/schema``), so the three
never disagree: one annotation per failed file, file with skipped lines and failed gate;
one JUnit test case per file and per gate.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any
from xml.etree import ElementTree


def repo_root(start: Path | None = None) -> Path:
    """Where annotation paths are relative to: $GITHUB_WORKSPACE, else the git work tree, else here."""
    workspace = os.environ.get("GITHUB_WORKSPACE")
    if workspace:
        return Path(workspace).resolve()
    here = (start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        if (folder / ".git").exists():
            return folder
    return here


def repo_path(file: str, root: Path) -> str:
    """A path as GitHub matches it against the checkout: relative to the repository, forward slashes."""
    if file in ("-", "<stdin>"):
        return ""
    path = Path(file).resolve()
    try:
        return path.relative_to(root).as_posix()
    except ValueError:  # outside the checkout: GitHub cannot place it, the absolute path still says where
        return path.as_posix()


def _data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _property(text: str) -> str:
    return _data(text).replace(":", "%3A").replace(",", "%2C")


def _command(kind: str, message: str, title: str, file: str = "", line: int | None = None) -> str:
    properties = [f"file={_property(file)}"] if file else []
    if file and line is not None:
        properties.append(f"line={line}")
    properties.append(f"title={_property(title)}")
    return f"::{kind} {','.join(properties)}::{_data(message)}"


def github_annotations(document: Mapping[str, Any], root: Path) -> Iterator[str]:
    """``::error``/``::warning`` lines for a run: errors for failed files and gates, warnings for skipped lines."""
    command = document.get("command", "compactctl")
    if document.get("error"):
        yield _command("error", document["error"]["message"], f"compactctl {command}")
    for entry in document.get("files", ()):
        file = repo_path(entry["file"], root)
        if entry["status"] == "failed":
            yield _command("error", entry["reason"], f"compactctl {command}: file failed", file, entry.get("line"))
        elif entry["status"] == "skipped-lines":
            for skipped in entry.get("skipped", ()):
                title = f"compactctl {command}: line skipped"
                yield _command("warning", skipped["problem"], title, file, skipped["line"])
    for gate in document.get("gates", ()):
        if gate["passed"]:
            continue
        title = f"compactctl {command}: gate {gate['name']} failed"
        files = gate.get("files") or []
        if not files:
            yield _command("error", gate["reason"], title)
        for failed in files:
            yield _command("error", failed["reason"], title, repo_path(failed["file"], root))


def junit_xml(document: Mapping[str, Any]) -> bytes:
    """A JUnit report: a test case per file (failed files are errors) and one per gate (failures)."""
    command = document.get("command", "compactctl")
    files = list(document.get("files", ()))
    gates = list(document.get("gates", ()))
    errors = sum(entry["status"] == "failed" for entry in files) + bool(document.get("error"))
    failures = sum(not gate["passed"] for gate in gates)
    suite = ElementTree.Element(
        "testsuite",
        name=f"compactctl {command}",
        tests=str(len(files) + len(gates) + bool(document.get("error"))),
        failures=str(failures),
        errors=str(errors),
        skipped="0",
    )
    if document.get("error"):
        case = ElementTree.SubElement(suite, "testcase", classname=f"compactctl.{command}", name="run")
        ElementTree.SubElement(case, "error", message=document["error"]["message"], type=document["error"]["kind"])
    for entry in files:
        case = ElementTree.SubElement(suite, "testcase", classname=f"compactctl.{command}.files", name=entry["file"])
        if entry["status"] == "failed":
            ElementTree.SubElement(case, "error", message=entry["reason"], type="unreadable")
        elif entry.get("reason"):
            out = ElementTree.SubElement(case, "system-out")
            out.text = f"{entry['status']}: {entry['reason']}"
    for gate in gates:
        case = ElementTree.SubElement(suite, "testcase", classname=f"compactctl.{command}.gates", name=gate["name"])
        if not gate["passed"]:
            failure = ElementTree.SubElement(case, "failure", message=gate["reason"], type="gate")
            failure.text = "\n".join(f"{f['file']}: {f['reason']}" for f in gate.get("files") or ()) or None
    suites = ElementTree.Element("testsuites")
    suites.append(suite)
    ElementTree.indent(suites)
    return ElementTree.tostring(suites, encoding="utf-8", xml_declaration=True) + b"\n"
