"""How a tlscope run ends: on a signal, with its workers, leaving nothing behind.

* **Signals in the main process.** SIGINT raises KeyboardInterrupt (Python's default) and, while
  `terminate_raises` is in force (the console script), SIGTERM and SIGHUP raise `Terminated`;
  both travel up like any exception, so every `with` on the way runs: the output folder's
  temporary sibling is removed, worker pools are stopped. The console script then exits with
  `exit_status`: 130 for SIGINT, 128 + the signal number for the others (143 for SIGTERM) —
  the statuses a shell shows for a command stopped by that signal.
* **Workers** (report page writers, multi-rank rank parsers) call `worker_init` first: they
  ignore SIGINT (Ctrl-C reaches the whole foreground process group; the parent stops them,
  so none prints a KeyboardInterrupt traceback of its own), take SIGTERM's default action
  (die quietly), and on Linux die with their parent (PR_SET_PDEATHSIG): a run killed with
  SIGKILL leaves no worker blocked on a pipe, holding its caller's stdout and stderr open.
* **Commits** of OUT run with these signals held (`signals_deferred`): an interrupt lands
  before the commit (OUT as it was) or after it (OUT complete), never between its renames.
* **SIGKILL** cannot be caught: a guard process (`start_guard`) removes the temporary folder
  (OUT's) or file (`redact`'s) once the run has ended however it ended.
* **The old OUT**, swapped out by a commit, is left to that guard to remove in a process that
  ends with its command (`ends_with_command`: the console script), so the command does not wait
  for it; a library caller's or a test's process goes on, and removes it before the commit returns.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # every command imports this module first: `tlscope --version` skips these
    from pathlib import Path
    from types import FrameType

#: Exit status of a run stopped by SIGINT (Ctrl-C).
EXIT_INTERRUPTED = 130
#: Signals that stop a run the way Ctrl-C does (those that exist on this platform).
STOP_SIGNALS = tuple(s for s in (getattr(signal, "SIGTERM", None), getattr(signal, "SIGHUP", None)) if s is not None)
_PR_SET_PDEATHSIG = 1


class Terminated(BaseException):
    """SIGTERM or SIGHUP arrived: stop, cleaning up on the way out (a BaseException, like
    KeyboardInterrupt, so `except Exception` handlers do not swallow it)."""

    def __init__(self, signum: int) -> None:
        super().__init__(f"terminated by signal {signum}")
        self.signum = signum


#: The signal that asked this run to stop, if one did (see `stop_requested`).
_requested: int | None = None


def _stop(signum: int, frame: FrameType | None) -> None:
    global _requested
    _requested = signum
    raise KeyboardInterrupt if signum == signal.SIGINT else Terminated(signum)


def _swallow_stops(hook: object) -> None:
    """sys.unraisablehook while stops raise: a stop raised inside a __del__ or a weakref callback
    cannot propagate (Python prints it and goes on); it is noted (`stop_requested`) instead of
    printed as a traceback."""
    if not isinstance(getattr(hook, "exc_value", None), (KeyboardInterrupt, Terminated)):
        sys.__unraisablehook__(hook)  # type: ignore[arg-type]


@contextlib.contextmanager
def terminate_raises() -> Iterator[None]:
    """While inside: SIGINT raises KeyboardInterrupt and SIGTERM / SIGHUP raise Terminated, each
    noted for `stop_requested` (main thread only; elsewhere a no-op). A signal the caller set to
    be ignored (`nohup` ignores SIGHUP; a background job SIGINT) stays ignored."""
    global _requested
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    _requested = None
    previous = {}
    for s in (signal.SIGINT, *STOP_SIGNALS):
        if signal.getsignal(s) is not signal.SIG_IGN:
            previous[s] = signal.signal(s, _stop)
    hook, sys.unraisablehook = sys.unraisablehook, _swallow_stops
    try:
        yield
    finally:
        sys.unraisablehook = hook
        for s, handler in previous.items():
            signal.signal(s, handler)


def stop_requested() -> int | None:
    """The signal that asked the run to stop, even if its exception was lost on the way
    (raised inside a __del__); None when none came."""
    return _requested


def stop_handled() -> None:
    """The command dealt with the stop it was asked for and exits with a status of its own (`tlscope
    run`: Ctrl-C is how its server normally ends, and the program's status still goes out)."""
    global _requested
    _requested = None


def exit_status(stop: BaseException | int) -> int:
    """The exit status for a run stopped by KeyboardInterrupt or Terminated (or by signal number)."""
    if isinstance(stop, int):
        return 128 + stop
    return 128 + stop.signum if isinstance(stop, Terminated) else EXIT_INTERRUPTED


@contextlib.contextmanager
def signals_deferred() -> Iterator[None]:
    """Hold SIGINT, SIGTERM and SIGHUP while inside; one that arrived is delivered at the end."""
    if not hasattr(signal, "pthread_sigmask") or threading.current_thread() is not threading.main_thread():
        yield
        return
    previous: set[int | signal.Signals] | None = None
    try:  # a handler already due may still raise right after blocking: the mask is restored then too
        previous = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, *STOP_SIGNALS})
        yield
    finally:
        if previous is not None:
            signal.pthread_sigmask(signal.SIG_SETMASK, previous)


#: Whether this process ends once its command returns (`ends_with_command`).
_ENDS_WITH_COMMAND: list[bool] = [False]


def ends_with_command() -> None:
    """Say that this process ends once its command returns (the console script calls it; `main`
    does not, as tests and library users call it in a process that goes on).

    A commit replacing an existing OUT then leaves the old OUT where the new one was written,
    the path the run's guard removes once this process lets it go (`stop_guard`): that removal,
    in a process of its own on a core this one does not use, no longer comes before the
    command's exit. It was 12.5 ms of an 8-rank job's 1,274 files (shutil.rmtree, tmpfs), a few
    per cent of that job's wall; 394 ms (350 of them the kernel's) for a 256-rank job's 34,859
    files, ~5 % of that job. `leave_to_guard` answers it.
    """
    _ENDS_WITH_COMMAND[0] = True


def leave_to_guard() -> bool:
    """Whether a path a guard covers is left for it to remove (see `ends_with_command`)."""
    return _ENDS_WITH_COMMAND[0]


#: The C library's handle (ctypes), once loaded: `prepare_workers` loads it in a parent before it
#: forks, so its workers inherit it instead of each importing ctypes before its first job.
_LIBC: list[Any] = []


def _libc() -> Any:
    if not _LIBC:
        import ctypes  # here: the console script's start-up does not pay for it

        _LIBC.append(ctypes.CDLL(None, use_errno=True))
    return _LIBC[0]


def prepare_workers() -> None:
    """Load what `worker_init` needs, in a process about to fork workers (Linux: their ctypes)."""
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError):
            _libc()


#: glibc's mallopt parameters (malloc.h) and the size a worker keeps below them.
_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3
_KEPT_HEAP = 8 << 20


def keep_heap() -> None:
    """Let this process's C heap keep its pages between jobs (Linux, glibc; elsewhere nothing).

    glibc serves a block of 128 KB or more with its own mmap and unmaps it when freed, and gives
    the free top of the heap back above 128 KB: a worker parsing rank after rank faulted ~1,000
    fresh pages into every rank (4 MB, each zeroed by the kernel) and unmapped them again. Below
    8 MB a block now comes from the heap and up to 8 MB of its free top is kept: a later rank's
    faults 1,000-1,400 -> 13-112, its CPU -5 to -8 % (bench/README.md, session 11, h22early),
    peak RSS unchanged (28.6 MB). Bigger blocks are still mapped and unmapped as before.
    Setting both also stops glibc's own adjustment of the two thresholds.
    """
    if not sys.platform.startswith("linux"):
        return
    with contextlib.suppress(OSError, AttributeError):
        mallopt = _libc().mallopt
        mallopt(_M_MMAP_THRESHOLD, _KEPT_HEAP)
        mallopt(_M_TRIM_THRESHOLD, _KEPT_HEAP)


def die_with_parent(parent: int) -> None:
    """Ask Linux to SIGKILL this process when its parent dies; exit now if `parent` is already gone."""
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            _libc().prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != parent:  # the parent died before the request was in place
        os._exit(1)


def worker_init(parent: int) -> None:
    """First thing in a worker process forked by `parent` (see the module docstring)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    for s in STOP_SIGNALS:
        signal.signal(s, signal.SIG_DFL)
    die_with_parent(parent)


#: The guard: waits for its stdin to close (this process and its forks have all ended, or the
#: run finished and closed it), then removes the folder (or file) if it is still there. Its own session,
#: so a signal to the run's process group does not stop it; it ignores the others. After a run
#: that ended well the path is gone: `test` is a shell builtin, so no `rm` process is started then
#: (its fork and exec were a few ms of every run's wall time, waited for by `stop_guard`).
_GUARD_SCRIPT = 'trap "" INT TERM HUP; read -r _; if [ -e "$1" ] || [ -L "$1" ]; then exec rm -rf -- "$1"; fi'


class CleanupGuard:
    """A started guard: its process id and the write end of its stdin. (Not a NamedTuple: making
    one compiles code, ~1 ms of the start-up of every command, `--version` included.)"""

    __slots__ = ("pid", "stdin")

    def __init__(self, pid: int, stdin: int) -> None:
        self.pid = pid
        self.stdin = stdin


def start_guard(path: Path) -> CleanupGuard | None:
    """A process that removes `path` (a temporary folder or file) if this run dies before
    `stop_guard`, SIGKILL included: the cleanup a `finally` cannot do. None where there is no
    /bin/sh or it cannot be started (the promise is then a `finally`'s).

    Started with `os.posix_spawn`, not subprocess: importing subprocess (with selectors,
    signal handling of its own...) was ~19M instructions, 2.5 % of a small log's run."""
    if os.name != "posix" or not os.path.exists("/bin/sh") or not hasattr(os, "posix_spawn"):
        return None
    try:
        read, write = _pipe()
    except OSError:
        return None
    try:
        pid = os.posix_spawn(
            "/bin/sh",
            ["/bin/sh", "-c", _GUARD_SCRIPT, "tlscope-cleanup", str(path)],
            os.environ,
            # Its stdin is the pipe's read end; the write end stays with this process and its
            # forks (close-on-exec, so the guard itself does not hold it).
            file_actions=[
                (os.POSIX_SPAWN_DUP2, read, 0),
                (os.POSIX_SPAWN_OPEN, 1, os.devnull, os.O_WRONLY, 0),
                (os.POSIX_SPAWN_OPEN, 2, os.devnull, os.O_WRONLY, 0),
            ],
            setsid=True,  # its own session: a signal to the run's process group misses it
            setsigdef=(signal.SIGPIPE,),  # Python ignores it; a started program gets the default
        )
    except OSError:
        os.close(write)
        return None
    finally:
        os.close(read)
    return CleanupGuard(pid, write)


def _pipe() -> tuple[int, int]:
    """A pipe, both ends close-on-exec and neither 0, 1 nor 2 (a run started with those closed):
    the guard's file actions overwrite these, and a write end there would take this run's output."""
    ends, low = list(os.pipe()), []
    try:
        for i, fd in enumerate(ends):
            while fd <= 2:
                low.append(fd)
                fd = os.dup(fd)
            ends[i] = fd
    except OSError:
        for fd in ends:
            if fd > 2:
                os.close(fd)
        raise
    finally:
        for fd in low:
            os.close(fd)
    return ends[0], ends[1]


#: Guards released and not yet reaped (process ids): `stop_guard` reaps those that have ended,
#: and once this process ends, init does.
_unreaped: list[int] = []


def stop_guard(guard: CleanupGuard | None) -> None:
    """Release the guard (the path is committed or removed by now): it ends on its own, after
    removing the path if it is still there. It is reaped here if it has ended already, else by a
    later call (a process that parses again has at most the last one unreaped) or, once this
    process is gone, by init.

    Not waited for: the guard ends 0.2-0.3 ms after its stdin closes, but on a busy machine it
    first waits for a core, and every run waited with it (2.2 ms median at load 7, against
    0.24 ms at load 3.4; bench/README.md, session 10). What comes after a stop (the command's
    exit, the next parse) never needs the guard gone.
    """
    if guard is not None:
        with contextlib.suppress(OSError):
            os.close(guard.stdin)
        _unreaped.append(guard.pid)
    for pid in list(_unreaped):
        try:
            ended = os.waitpid(pid, os.WNOHANG)[0] != 0
        except ChildProcessError:  # reaped elsewhere
            ended = True
        if ended:
            with contextlib.suppress(ValueError):  # another thread's call took it first
                _unreaped.remove(pid)
