"""One error base class, caught once in the CLI and mapped to an exit code."""

from __future__ import annotations

EXIT_OK = 0
EXIT_GATE = 1
EXIT_INPUT = 2
EXIT_SUMMARIZER = 3


class CompactctlError(Exception):
    """Base of every error compactctl reports to a user."""

    exit_code = EXIT_INPUT


class InputError(CompactctlError, ValueError):
    """Bad input or bad usage: names the file, line and column where known.

    Also a ``ValueError``, so a library caller can catch it as the bad value it is.
    """

    exit_code = EXIT_INPUT

    def __init__(
        self, message: str, path: str | None = None, line: int | None = None, column: int | None = None
    ) -> None:
        self.message = message
        self.path = path
        self.line = line
        self.column = column
        super().__init__(str(self))

    def __str__(self) -> str:
        where = ":".join(str(part) for part in (self.path, self.line, self.column) if part is not None)
        return f"{where}: {self.message}" if where else self.message


class SummarizerError(CompactctlError):
    """The summarizer failed after its retries; nothing is written."""

    exit_code = EXIT_SUMMARIZER
