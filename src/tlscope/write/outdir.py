"""The output folder: confined paths and all-or-nothing runs.

Everything is written into a temporary sibling of OUT and swapped into place at the end, so
a run that fails or is interrupted leaves OUT exactly as it was, and nothing else behind:

* a failure or an interrupt (SIGINT, SIGTERM: tlscope.lifetime) removes the temporary folder
  on the way out;
* a SIGKILL cannot be caught, so a tiny guard process (`sh`, in its own session) waits for
  this process to end however it ends and removes the temporary folder if it is still there;
* the swap itself is one atomic exchange of the two folders on Linux (renameat2), so even a
  SIGKILL leaves either the old OUT or the new one; signals are held while it runs;
* the old OUT, swapped into the temporary folder's place, is removed before the commit returns,
  or, in a process that ends with its command (the console script), by the guard once the run
  lets it go (`tlscope.lifetime.ends_with_command`): the command does not wait for it.

Every path goes through `OutputDir.path`, which refuses anything that would land outside the
folder: log-derived names (artifact names, `has_payload`) are untrusted. Every OS error of OUT
(permissions, a read-only parent, a folder that cannot be searched) is an OutputError naming
the path and the cause in one line.
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import sys
import tempfile
from pathlib import Path, PurePosixPath
from types import TracebackType

from tlscope.format.errors import OutputError, os_error_text
from tlscope.lifetime import CleanupGuard, leave_to_guard, signals_deferred, start_guard, stop_guard


class UnsafePath(ValueError):
    """A relative output path that would escape the output folder."""


#: Characters never kept in a name: path separators, control and shell-special characters, and
#: lone surrogates (no UTF-8 form, so no file name on a UTF-8 file system). The surrogates are
#: their own pattern, compiled when a name is not ASCII: their range made the one pattern cost
#: ~0.5 ms to compile, in every run (sre's charset of a 2,048-character range).
_UNSAFE_CHARS = re.compile(r"[\x00-\x1f\x7f/\\:*?\"<>|]")


@functools.cache
def _surrogates() -> re.Pattern[str]:
    return re.compile(r"[\ud800-\udfff]")


#: Longest log-derived name kept, in characters (a stem people can still read).
_MAX_COMPONENT = 150
#: ... and in UTF-8 bytes: file systems allow 255 bytes per path component (ENAMETOOLONG
#: beyond), and tlscope adds at most ~50 around a log-derived name (`optimize_ddp_split_child_`,
#: a `_N` number, `_readable.html`). 150 characters of CJK or emoji are 450-600 bytes.
MAX_NAME_BYTES = 200


def safe_component(name: str) -> str:
    """Make one log-derived name safe as a single path component (never `..`, never empty).

    At most 150 characters and MAX_NAME_BYTES bytes of UTF-8, cut at a character boundary.
    """
    cleaned = _UNSAFE_CHARS.sub("_", name)
    if not cleaned.isascii():
        cleaned = _surrogates().sub("_", cleaned)
    cleaned = cleaned.strip()
    if cleaned.startswith("."):
        cleaned = "_" + cleaned[1:]
    cleaned = cleaned[:_MAX_COMPONENT]
    encoded = cleaned.encode("utf-8")
    if len(encoded) > MAX_NAME_BYTES:
        cleaned = encoded[:MAX_NAME_BYTES].decode("utf-8", "ignore")  # drops a cut character
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
    """Create with the target folder; use as a context manager; `path()` for every file.

    `guard=False` skips the SIGKILL guard process: for folders made inside another OutputDir's
    temporary folder (multi-rank rank folders), which that one's guard already covers.
    """

    def __init__(self, target: Path, *, overwrite: bool, guard: bool = True) -> None:
        self.target = target
        self.overwrite = overwrite
        self.guard = guard
        #: The folder as an absolute path, `.` and `..` resolved: `-o .` is named "" otherwise.
        self.real = Path(os.path.abspath(target))
        self._tmp: Path | None = None
        self._guard: CleanupGuard | None = None
        self._resolved_root: Path | None = None
        #: Parent folders already made and checked, as text: there is one per compile id, kept
        #: for the whole run, and a Path (object, parts list and cached text) costs ~3x its text.
        self._made: set[str] = set()

    def check(self) -> None:
        """Refuse early, before any input is read or anything is created."""
        try:
            self._check()
        except OSError as err:
            raise OutputError(f"cannot use {self.target}: {os_error_text(err)}") from None

    def _check(self) -> None:
        if self.target.exists() or self.target.is_symlink():
            if not self.target.is_dir() or self.target.is_symlink():
                raise OutputError(f"{self.target} exists and is not a directory")
            if Path.cwd().resolve().is_relative_to(self.target.resolve()):
                raise OutputError(
                    f"{self.target} is the current directory or holds it: replacing it would delete "
                    "the folder you are in; choose another -o"
                )
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

    def path_text(self, rel: str) -> str:
        """`str(self.path(rel))`, made as text when `rel` is plain (no empty or `.` part) and its
        folder was made already: most files a run writes go into folders it made before."""
        parts = rel.split("/")
        if "" in parts or "." in parts or ".." in parts or "\x00" in rel or "\\" in rel:
            return str(self.path(rel))  # checked, or normalised as pathlib does, there
        full = f"{self.root}/{rel}"
        if full.rpartition("/")[0] not in self._made:
            return str(self.path(rel))  # its folder made and checked there
        return full

    def __enter__(self) -> OutputDir:
        self.check()
        parent = self.real.parent
        try:
            parent.mkdir(parents=True, exist_ok=True)
            self._tmp = Path(tempfile.mkdtemp(prefix=f".{self.real.name}.tlscope-", dir=parent))
        except OSError as err:
            raise OutputError(f"cannot create {self.target}: {os_error_text(err)}") from None
        if self.guard:
            try:
                self._guard = start_guard(self._tmp)
            except BaseException:
                # A stop signal while the guard starts (a process to spawn: long on a loaded
                # machine) ends the run before `__exit__` can: the folder goes here.
                shutil.rmtree(self._tmp, ignore_errors=True)
                self._tmp = None
                raise
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
        try:
            if exc_type is not None:
                shutil.rmtree(tmp, ignore_errors=True)
                return
            try:
                self._commit(tmp)
            except OutputError:
                shutil.rmtree(tmp, ignore_errors=True)
                raise
            except OSError as err:
                shutil.rmtree(tmp, ignore_errors=True)
                raise OutputError(f"cannot write {self.target}: {os_error_text(err)}") from None
        finally:
            stop_guard(self._guard)
            self._guard = None

    def _commit(self, tmp: Path) -> None:
        os.chmod(tmp, 0o755)  # mkdtemp makes it 0700; OUT should be like any made folder
        with signals_deferred():
            old = self._swap(tmp)
        if old is None:
            return
        # `tmp` (the old OUT after an exchange) is still covered by the guard, which removes it
        # if this process dies now, or, once `stop_guard` lets it go, when the command ends.
        if not (old == tmp and self._guard is not None and leave_to_guard()):
            shutil.rmtree(old, ignore_errors=True)

    def _swap(self, tmp: Path) -> Path | None:
        """Put `tmp` in OUT's place; the folder now holding the old OUT (to delete), if any."""
        if not (self.real.exists() or self.real.is_symlink()):
            os.replace(tmp, self.real)
            return None
        self.check()  # something may have appeared meanwhile
        if _exchange(tmp, self.real):
            return tmp
        trash = Path(tempfile.mkdtemp(prefix=f".{self.real.name}.old-", dir=tmp.parent))
        os.replace(self.real, trash / "old")
        os.replace(tmp, self.real)
        return trash


_RENAME_EXCHANGE = 2
_AT_FDCWD = -100


def _exchange(a: Path, b: Path) -> bool:
    """Swap two folders in one atomic step (Linux renameat2); False where that is not available."""
    if not sys.platform.startswith("linux"):
        return False
    import ctypes  # here: only a run replacing an existing OUT swaps folders (~1 ms of imports)

    try:
        renameat2 = ctypes.CDLL(None, use_errno=True).renameat2
    except (OSError, AttributeError):
        return False
    done = renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE)
    return bool(done == 0)
