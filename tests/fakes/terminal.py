"""A real client's interactive screen on a pseudo-terminal: for what only the interactive client does
(Gemini CLI's ``/compress``, ``/chat save`` and ``/chat resume`` run in ``-p`` mode as a prompt sent to the model)."""

from __future__ import annotations

import fcntl
import os
import pty
import select
import signal
import struct
import subprocess
import termios
import time
from collections.abc import Callable
from pathlib import Path


class Terminal:
    """``args`` run on a 160x50 pseudo-terminal; ``type`` a line as keys, ``wait_for`` a condition."""

    def __init__(self, args: list[str], cwd: Path, env: dict[str, str]) -> None:
        self.master, slave = pty.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 50, 160, 0, 0))
        self.process = subprocess.Popen(
            args, cwd=cwd, env={**env, "TERM": "xterm-256color"}, stdin=slave, stdout=slave, stderr=slave,
            start_new_session=True,
        )  # fmt: skip
        os.close(slave)
        self.screen = b""

    def read(self, seconds: float) -> None:
        end = time.time() + seconds
        while time.time() < end:
            if select.select([self.master], [], [], 0.2)[0]:
                try:
                    self.screen += os.read(self.master, 65536)
                except OSError:  # the client closed its terminal
                    return

    def wait_for(self, done: Callable[[], bool], seconds: float = 60) -> None:
        end = time.time() + seconds
        while not done():
            assert time.time() < end, self.screen[-2000:].decode(errors="replace")
            self.read(0.5)
        self.read(1)  # what the client writes after it

    def type(self, line: str) -> None:
        """Keys one at a time (a paste is not a command), then Enter."""
        for key in line:
            os.write(self.master, key.encode())
            time.sleep(0.02)
        self.read(0.5)
        os.write(self.master, b"\r")

    def close(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
        self.process.wait(timeout=30)
        os.close(self.master)
