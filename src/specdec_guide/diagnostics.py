"""One error shape for every command: ``path:line:col: message``, never a traceback."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, order=True)
class Diagnostic:
    """A finding in a file. ``line`` and ``col`` are 1-based; 0 means "the whole file"."""

    path: str
    line: int
    col: int
    message: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}:{self.col}: {self.message}"


class UserError(Exception):
    """A problem the reader can fix (bad input, missing file, busy port).

    The CLI prints ``str(error)`` on stderr and exits with ``exit_code``; no traceback.
    """

    def __init__(self, message: str, exit_code: int = 2):
        super().__init__(message)
        self.exit_code = exit_code
