"""Writing outputs: atomic for files, straight through for devices and pipes."""

from __future__ import annotations

import os
import stat

from compactctl.batch import write_atomic


def test_a_named_pipe_output_is_written_through_not_replaced(tmp_path):
    # -o /dev/null, or a FIFO: renaming a temporary file onto it would replace the device (as root, /dev/null).
    fifo = tmp_path / "out.fifo"
    os.mkfifo(fifo)
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    try:
        write_atomic(str(fifo), b'{"role":"user","content":"hi"}\n')
        assert stat.S_ISFIFO(fifo.stat().st_mode)
        assert os.read(reader, 1024) == b'{"role":"user","content":"hi"}\n'
    finally:
        os.close(reader)


def test_a_regular_file_is_still_replaced_atomically(tmp_path):
    out = tmp_path / "out.jsonl"
    out.write_bytes(b"old\n")
    write_atomic(str(out), b"new\n")
    assert out.read_bytes() == b"new\n"
    assert [p.name for p in tmp_path.iterdir()] == ["out.jsonl"]
