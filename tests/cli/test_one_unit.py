"""Outputs, --manifest and --archive are one unit; modes are kept; long names and failed writes are handled.

A run writes every file as a 0600 temporary beside its target and renames them together
once all succeeded; a failure (bad input, a full disk) leaves every existing file as it was.
"""

from __future__ import annotations

import errno
import json
import os
import stat
from pathlib import Path

import pytest
from typer.testing import CliRunner

from compactctl.cli.main import app
from compactctl.errors import InputError
from compactctl.files import io

runner = CliRunner()

GOOD = [
    {"role": "system", "content": "You are helpful."},
    {"role": "user", "content": "Fix the test in src/app.py"},
    {"role": "assistant", "content": "Done: the fixture path was wrong."},
    {"role": "user", "content": "thanks"},
    {"role": "assistant", "content": "You are welcome."},
]


def write(path: Path, messages: list[dict], mode: int = 0o644) -> Path:
    path.write_text("".join(json.dumps(m) + "\n" for m in messages), encoding="utf-8")
    path.chmod(mode)
    return path


def mode_of(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.mark.parametrize("command", ["compact", "prune"])
def test_a_failed_file_leaves_the_existing_outputs_manifest_and_archive_as_they_were(tmp_path, command):
    inputs = tmp_path / "in"
    inputs.mkdir()
    write(inputs / "a.jsonl", GOOD)
    (inputs / "b.jsonl").write_text('{"role": "user", "content": "hi"}\n{"role": 7}\n')
    out = tmp_path / "out"
    out.mkdir()
    (out / "a.jsonl").write_text("earlier output\n")
    manifest, archive = tmp_path / "manifest.jsonl", tmp_path / "archive.jsonl"
    manifest.write_text("earlier manifest\n")
    archive.write_text("earlier archive\n")
    args = [command, str(inputs), "-o", str(out), "--manifest", str(manifest)]
    args += ["--archive", str(archive)] if command == "prune" else ["-s", "window", "--keep-recent", "2"]
    result = runner.invoke(app, args)
    assert result.exit_code == 2, result.output
    assert "nothing written" in result.stderr and "b.jsonl" in result.stderr
    assert (out / "a.jsonl").read_text() == "earlier output\n"
    assert manifest.read_text() == "earlier manifest\n" and archive.read_text() == "earlier archive\n"
    assert sorted(p.name for p in out.iterdir()) == ["a.jsonl"]  # no temporary left behind
    assert not list(tmp_path.glob(".*compactctl-*"))


def test_without_side_files_the_files_that_succeeded_are_written(tmp_path):
    inputs = tmp_path / "in"
    inputs.mkdir()
    write(inputs / "a.jsonl", GOOD)
    (inputs / "b.jsonl").write_text('{"role": 7}\n')
    result = runner.invoke(
        app, ["compact", str(inputs), "-o", str(tmp_path / "out"), "-s", "window", "--keep-recent", "2"]
    )
    assert result.exit_code == 2
    assert (tmp_path / "out" / "a.jsonl").is_file() and not (tmp_path / "out" / "b.jsonl").exists()


def test_a_full_disk_while_writing_the_manifest_writes_nothing_and_names_the_manifest(tmp_path, monkeypatch):
    source = write(tmp_path / "s.jsonl", GOOD)
    target, manifest = tmp_path / "s.out.jsonl", tmp_path / "m.jsonl"
    target.write_text("earlier output\n")
    real = io.write_atomic

    def full_disk_for_the_manifest(path, data, like=()):
        if path == str(manifest):

            def fill(file):
                raise OSError(errno.ENOSPC, "No space left on device")

            return real(path, fill, like)
        return real(path, data, like)

    monkeypatch.setattr("compactctl.cli.exit.write_atomic", full_disk_for_the_manifest)
    args = ["compact", "--write-unchanged", str(source), "-o", str(target), "--manifest", str(manifest), "-s", "window"]
    result = runner.invoke(app, [*args, "--keep-recent", "2"])
    assert result.exit_code == 2, result.output
    assert f"{manifest}: cannot write: No space left on device" in result.stderr
    assert ".tmp" not in result.stderr  # the output is named, not its temporary
    assert target.read_text() == "earlier output\n" and not manifest.exists()
    assert not list(tmp_path.glob(".*compactctl-*"))


def test_a_successful_run_renames_all_and_syncs_their_folder(tmp_path, monkeypatch):
    synced: list[Path] = []
    monkeypatch.setattr(io, "sync_folder", synced.append)
    source = write(tmp_path / "s.jsonl", GOOD)
    manifest = tmp_path / "side" / "m.jsonl"
    result = runner.invoke(
        app, ["compact", "--write-unchanged", str(source), "-o", str(tmp_path / "o.jsonl"), "--manifest", str(manifest)]
    )
    assert result.exit_code == 0, result.output
    assert (tmp_path / "o.jsonl").is_file() and manifest.is_file()
    assert set(synced) == {tmp_path, tmp_path / "side"}


@pytest.mark.parametrize(
    "input_mode, existing, expected",
    [(0o600, None, 0o600), (0o644, 0o640, 0o640), (0o600, 0o644, 0o600), (0o640, None, 0o640)],
)
def test_an_output_keeps_the_input_mode_or_the_existing_output_mode_never_wider(
    tmp_path, input_mode, existing, expected
):
    source = write(tmp_path / "s.jsonl", GOOD, input_mode)
    target, manifest = tmp_path / "o.jsonl", tmp_path / "m.jsonl"
    if existing is not None:
        target.write_text("x\n")
        target.chmod(existing)
    result = runner.invoke(
        app, ["compact", "--write-unchanged", str(source), "-o", str(target), "--manifest", str(manifest)]
    )
    assert result.exit_code == 0, result.output
    assert mode_of(target) == expected
    assert mode_of(manifest) == input_mode & (0o666 & ~io._UMASK)  # the manifest quotes the input


def test_a_temporary_is_created_0600(tmp_path):
    seen: list[int] = []

    def fill(file):
        temporaries = list(tmp_path.glob(".*compactctl-*.tmp"))
        seen.extend(mode_of(p) for p in temporaries)
        file.write(b"{}\n")

    io.write_atomic(str(tmp_path / "o.jsonl"), fill)
    assert seen == [0o600] and mode_of(tmp_path / "o.jsonl") == 0o666 & ~io._UMASK


def test_an_output_name_of_255_characters_is_written(tmp_path):
    source = write(tmp_path / "s.jsonl", GOOD)
    for length in (225, 240, 255):
        target = tmp_path / ("o" * (length - 6) + ".jsonl")
        result = runner.invoke(app, ["compact", "--write-unchanged", str(source), "-o", str(target)])
        assert result.exit_code == 0, result.output
        assert len(target.name) == length and target.is_file()


def test_two_long_names_sharing_a_start_get_temporaries_of_their_own(tmp_path):
    from compactctl import interrupts

    a, b = tmp_path / ("x" * 240 + "a.jsonl"), tmp_path / ("x" * 240 + "b.jsonl")
    name_a, name_b = interrupts.temporary_name(a).name, interrupts.temporary_name(b).name
    assert len(name_a.encode()) <= 255 and name_a.split(".compactctl-")[0] != name_b.split(".compactctl-")[0]


def test_a_write_error_names_the_target(tmp_path):
    def fill(file):
        raise OSError(errno.EIO, "Input/output error")

    with pytest.raises(InputError) as raised:
        io.write_atomic(str(tmp_path / "o.jsonl"), fill)
    assert str(raised.value) == f"{tmp_path / 'o.jsonl'}: cannot write: Input/output error"
    assert os.listdir(tmp_path) == []
