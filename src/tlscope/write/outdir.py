"""The output folder: confined paths and all-or-nothing runs.

Everything is written into a temporary sibling of OUT and renamed into place at the end, so
a run that fails or is interrupted leaves OUT exactly as it was. Every path goes through
`OutputDir.path`, which refuses anything that would land outside the folder: log-derived
names (artifact names, `has_payload`) are untrusted.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from pathlib import Path, PurePosixPath
from types import TracebackType


class OutputError(Exception):
    """OUT cannot be used (exists without --overwrite, is a file, ...)."""


class UnsafePath(ValueError):
    """A relative output path that would escape the output folder."""


_UNSAFE_CHARS = re.compile(r"[\x00-\x1f\x7f/\\:*?\"<>|]")
_MAX_COMPONENT = 150


def safe_component(name: str) -> str:
    """Make one log-derived name safe as a single path component (never `..`, never empty)."""
    cleaned = _UNSAFE_CHARS.sub("_", name).strip()
    if cleaned.startswith("."):
        cleaned = "_" + cleaned[1:]
    cleaned = cleaned[:_MAX_COMPONENT]
    return cleaned or "_"


def check_relative(rel: str) -> PurePosixPath:
    """Validate a relative POSIX path made by tlscope; raise UnsafePath if it could escape."""
    if not rel or "\x00" in rel or "\\" in rel:
        raise UnsafePath(f"unsafe output path {rel!r}")
    path = PurePosixPath(rel)
    if path.is_absolute() or any(part in ("..", "") for part in path.parts) or rel.startswith("/"):
        raise UnsafePath(f"unsafe output path {rel!r}")
    return path


class OutputDir:
    """Create with the target folder; use as a context manager; `path()` for every file."""

    def __init__(self, target: Path, *, overwrite: bool) -> None:
        self.target = target
        self.overwrite = overwrite
        self._tmp: Path | None = None
        self._resolved_root: Path | None = None
        #: Parent folders already made and checked, as text: there is one per compile id, kept
        #: for the whole run, and a Path (object, parts list and cached text) costs ~3x its text.
        self._made: set[str] = set()

    def check(self) -> None:
        """Refuse early, before any input is read or anything is created."""
        if self.target.exists() or self.target.is_symlink():
            if not self.target.is_dir() or self.target.is_symlink():
                raise OutputError(f"{self.target} exists and is not a directory")
            if not self.overwrite:
                raise OutputError(
                    f"Directory {self.target} already exists; pass --overwrite to replace it or use -o OUTDIR"
                )

    @property
    def root(self) -> Path:
        if self._tmp is None:
            raise RuntimeError("OutputDir used outside its context")
        return self._tmp

    def path(self, rel: str) -> Path:
        """The real path for `rel` inside the folder, parents created; confined or UnsafePath."""
        # check_relative's rules as plain string tests: this runs for every file written, and
        # building a PurePosixPath per call was a measurable share of a small rank's parse.
        if not rel or "\x00" in rel or "\\" in rel or rel[0] == "/" or ".." in rel.split("/"):
            raise UnsafePath(f"unsafe output path {rel!r}")
        full = self.root / rel  # pathlib drops empty and "." parts, as check_relative's parts do
        parent = full.parent
        folder = str(parent)
        if folder not in self._made:
            parent.mkdir(parents=True, exist_ok=True)
            # The folder is fresh and tlscope makes no symlinks in it, so a relative path
            # without `..` cannot leave it; resolving once per new folder (not per file, which
            # cost a third of a small run) makes sure no future change breaks that silently.
            if self._resolved_root is None:
                self._resolved_root = self.root.resolve()
            if not parent.resolve().is_relative_to(self._resolved_root):
                raise UnsafePath(f"output path {rel!r} escapes {self.target}")
            self._made.add(folder)
        return full

    def __enter__(self) -> OutputDir:
        self.check()
        parent = self.target.absolute().parent
        parent.mkdir(parents=True, exist_ok=True)
        self._tmp = Path(tempfile.mkdtemp(prefix=f".{self.target.name}.tlscope-", dir=parent))
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        tmp, self._tmp, self._resolved_root = self._tmp, None, None
        if tmp is None:
            return
        if exc_type is not None:
            shutil.rmtree(tmp, ignore_errors=True)
            return
        self._commit(tmp)

    def _commit(self, tmp: Path) -> None:
        os.chmod(tmp, 0o755)  # mkdtemp makes it 0700; OUT should be like any made folder
        if self.target.exists():
            self.check()  # something may have appeared meanwhile
            trash = Path(tempfile.mkdtemp(prefix=f".{self.target.name}.old-", dir=tmp.parent))
            os.replace(self.target, trash / "old")
            os.replace(tmp, self.target)
            shutil.rmtree(trash, ignore_errors=True)
        else:
            os.replace(tmp, self.target)
