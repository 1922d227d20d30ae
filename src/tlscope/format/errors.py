"""The error vocabulary: every failure a command reports is a `TlscopeError`.

It carries the exit status the CLI ends with (`exit_status`) (docs: 1 for an input, output or OS error or
problems under --strict) and the path it concerns, so `tlscope.cli` catches this one class and
prints one line, `Error: <path>: <cause>`, whatever the command. It lives at the bottom of the
layers (format/, beside the JSON boundary) so that raising or catching one imports no writer.
"""

from __future__ import annotations

from pathlib import Path


def os_error_text(err: OSError) -> str:
    """`PATH: cause` for an OSError (both paths for a rename), one line, no errno number."""
    cause = err.strerror or str(err)
    if err.filename is None:
        return cause
    if err.filename2 is not None:
        return f"{err.filename} -> {err.filename2}: {cause}"
    return f"{err.filename}: {cause}"


class TlscopeError(Exception):
    """A failure a command reports in one line; `exit_status` is the status the CLI exits with."""

    exit_status: int = 1

    def __init__(self, message: str, *, path: str | Path | None = None, exit_status: int | None = None) -> None:
        super().__init__(message)
        self.path = None if path is None else str(path)
        if exit_status is not None:
            self.exit_status = exit_status

    def line(self) -> str:
        """`<path>: <cause>` (the cause alone when it already names the path)."""
        cause = str(self)
        if self.path is None or cause.startswith(self.path):
            return cause
        return f"{self.path}: {cause}"


class FormatError(TlscopeError):
    """A folder that is not a tlscope output folder, or one of its files that cannot be read."""


class InputError(TlscopeError):
    """PATH does not name something tlscope can read."""


class OutputError(TlscopeError):
    """OUT cannot be used (exists without --overwrite, is a file, ...)."""


class StrictFailure(TlscopeError):
    """--strict (or --strict-compile-id) found a problem; OUT is left as it was."""

    def __init__(self, message: str, problem: object | None = None) -> None:
        super().__init__(message)
        #: The problem (a model.problems.Problem) that failed the run, when one did.
        self.problem = problem
