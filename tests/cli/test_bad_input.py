"""Every kind of bad input: one clear line on stderr, exit 2, nothing written."""

import pytest

from compactctl.errors import EXIT_INPUT, EXIT_OK

CASES = {
    "malformed-json": (
        b'{"role":"user","content":"ok"}\n{"role": "user", "content": oops}\n',
        "x.jsonl:2:29: malformed JSON",
    ),
    "not-an-object": (
        b'{"role":"user","content":"ok"}\n["a", "b"]\n',
        "x.jsonl:2: expected a message object, got list",
    ),
    # No line has a 'role': not a chat file with a bad line, a file of no known format.
    "missing-role": (b'{"content":"hi"}\n', "but no record has 'role' (the first has 'content')"),
    "unknown-role": (b'{"role":"robot","content":"hi"}\n', "x.jsonl:1: unknown role 'robot'"),
    "content-type": (b'{"role":"user","content":42}\n', "x.jsonl:1: user 'content' is int"),
    "empty-file": (b"\n\n", "x.jsonl: empty file"),
    "binary": (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "x.jsonl: binary file"),
    "not-utf8": (b'{"role":"user","content":"caf\xe9"}\n', "x.jsonl:1: not UTF-8 text"),
    "nested-too-deep": (
        b'{"role":"user","content":"ok"}\n{"role":"user","content":'
        + b'[{"type":"x","content":' * 200
        + b"[]"
        + b"}]" * 200
        + b"}\n",
        "x.jsonl:2: JSON nested more than 254 levels deep",
    ),
    "dataset-line": (
        b'{"messages":[{"role":"user","content":"a"}]}\n{"messages":[{"role":"user"}],"x":1}\n{"y":2}\n',
        "x.jsonl:3: expected an object with a 'messages' list",
    ),
}


@pytest.mark.parametrize("command", ["compact", "report"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_bad_input_is_one_line_exit_2_and_nothing_written(cli, tmp_path, command, case):
    data, expected = CASES[case]
    source = tmp_path / "x.jsonl"
    source.write_bytes(data)
    args = [command, source] + (["-s", "window", "-o", tmp_path / "out.jsonl"] if command == "compact" else [])
    result = cli(*args)
    assert result.exit_code == EXIT_INPUT
    assert expected in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert result.stdout == ""
    assert sorted(p.name for p in tmp_path.iterdir()) == ["x.jsonl"]
    assert source.read_bytes() == data


def test_folder_with_no_transcripts(cli, tmp_path):
    (tmp_path / "notes.txt").write_text("nothing here")
    result = cli("compact", tmp_path, "-o", tmp_path.parent / "out")
    assert result.exit_code == EXIT_INPUT
    assert "no transcripts" in result.stderr
    assert not (tmp_path.parent / "out").exists()


def test_output_folder_inside_the_input_folder_is_refused(cli, chat_file):
    folder = chat_file.parent
    result = cli("compact", folder, "-s", "window", "-o", folder / "compacted")
    assert result.exit_code == EXIT_INPUT
    assert "inside the input folder" in result.stderr
    assert not (folder / "compacted").exists()


def test_output_onto_the_input_is_refused(cli, chat_file):
    before = chat_file.read_bytes()
    result = cli("compact", chat_file, "-s", "window", "-o", chat_file)
    assert result.exit_code == EXIT_INPUT
    assert "never overwritten" in result.stderr
    assert chat_file.read_bytes() == before


def test_unknown_strategy_is_bad_usage(cli, chat_file):
    result = cli("compact", chat_file, "-s", "shrink")
    assert result.exit_code == EXIT_INPUT
    assert "unknown strategy 'shrink'" in result.stderr
    assert sorted(p.name for p in chat_file.parent.iterdir()) == ["session.jsonl"]


def test_missing_input_file(cli, tmp_path):
    result = cli("report", tmp_path / "nope.jsonl")
    assert result.exit_code == EXIT_INPUT
    assert "no such file or folder" in result.stderr


@pytest.mark.parametrize("command", ["compact", "report", "prune", "replay"])
def test_a_utf8_byte_order_mark_is_not_bad_input(cli, tmp_path, command):
    source = tmp_path / "bom.jsonl"
    source.write_bytes(b'\xef\xbb\xbf{"role":"user","content":"hi"}\n{"role":"assistant","content":"yo"}\n')
    args = [command, source, "-q"] + (
        [] if command in ("report", "replay") else ["-o", tmp_path / "out.jsonl", "--write-unchanged"]
    )
    result = cli(*args)
    assert result.exit_code == EXIT_OK, result.output
    if command in ("compact", "prune"):
        assert (tmp_path / "out.jsonl").read_bytes().startswith(b'{"role":"user"')


def test_a_byte_order_mark_on_stdin_is_not_bad_input(cli):
    result = cli("report", "-", "--json", input=b'\xef\xbb\xbf{"role":"user","content":"hi"}\n')
    assert result.exit_code == EXIT_OK, result.output


def test_json_nested_deep_but_writable_still_compacts(cli, tmp_path):
    source = tmp_path / "x.jsonl"
    deep = b'[{"type":"x","content":' * 100 + b"[]" + b"}]" * 100
    source.write_bytes(b'{"role":"user","content":' + deep + b'}\n{"role":"assistant","content":"ok"}\n')
    result = cli("compact", "-s", "window", source, "-o", tmp_path / "out.jsonl", "-q", "--write-unchanged")
    assert result.exit_code == EXIT_OK, result.output
    assert (tmp_path / "out.jsonl").read_bytes() == source.read_bytes()
