"""The error vocabulary: every failure a command reports is a `TlscopeError`.

It carries the exit status the CLI ends with (docs: 1 for an input, output or OS error or
problems under --strict) and the path it concerns, so `tlscope.cli` catches this one class and
prints one line, `Error: <path>: <cause>`, whatever the command. It lives at the bottom of the
layers (format/, beside the JSON boundary) so that raising or catching one imports no writer.
"""

from __future__ import annotations

from pathlib import Path


class TlscopeError(Exception):
    """A failure a command reports in one line; `status` is the exit status."""

    status: int = 1

    def __init__(self, message: str, *, path: str | Path | None = None, status: int | None = None) -> None:
        super().__init__(message)
        self.path = None if path is None else str(path)
        if status is not None:
            self.status = status

    def line(self) -> str:
        """`<path>: <cause>` (the cause alone when it already names the path)."""
        cause = str(self)
        if self.path is None or cause.startswith(self.path):
            return cause
        return f"{self.path}: {cause}"


class FormatError(TlscopeError):
    """A folder that is not a tlscope output folder, or one of its files that cannot be read."""
