"""The `tlscope` console script: pick the command (tlscope.commands) and run it."""

from __future__ import annotations

import gc
import os
import sys
from collections.abc import Sequence
from typing import NoReturn

from tlscope.commands import ACTIONS, COMMANDS, DEFAULT, ERROR_STATUS, load
from tlscope.format.errors import TlscopeError, os_error_text
from tlscope.lifetime import Terminated, exit_status, stop_requested, terminate_raises
from tlscope.terminal import visible_output


def main(argv: Sequence[str] | None = None) -> int:
    """`tlscope COMMAND ARGS...`, or `tlscope ARGS...` for the default command (parse).

    A first argument that names a command runs it, unless a file of that name exists there
    (`tlscope split` with a log called `split` in the folder parses that log), unless the second
    names one of the command's actions (`tlscope corpus list` beside a folder named corpus).

    The exit status convention, for every command: 0 ok; 1 problems under --strict, or an
    input or OS error (one line on stderr naming the path and the cause, never a traceback);
    2 a usage error; 130 interrupted (Ctrl-C), 143 terminated (SIGTERM), 129 on SIGHUP; in
    each of the last three, OUT is left as it was and no temporary folder or worker remains.
    """
    args = list(sys.argv[1:] if argv is None else argv)
    with visible_output():  # every character a command prints, log strings included (terminal.py)
        return _main(args)


def _main(args: list[str]) -> int:
    action = len(args) > 1 and args[1] in ACTIONS.get(args[0], ())
    typo = _misspelt_command(args)
    if typo is not None:
        print(f"tlscope: {args[0]!r} is neither a command nor a file; did you mean 'tlscope {typo}'?", file=sys.stderr)
        return 2
    named = bool(args) and args[0] in COMMANDS and (action or not os.path.exists(args[0]))
    name, rest = (args[0], args[1:]) if named else (DEFAULT, args)
    try:
        with terminate_raises():
            status = load(name)(rest)
            signum = stop_requested()
        if signum is not None:  # its exception was lost in a __del__: the command finished anyway
            print("Interrupted just as the run ended; its output is complete.", file=sys.stderr)
            return exit_status(signum)
        return status
    except (KeyboardInterrupt, Terminated) as stop:
        print("Interrupted; the output was left as it was.", file=sys.stderr)
        return exit_status(stop)
    except TlscopeError as err:  # the one place a command's failure is reported (format/errors.py)
        print(f"Error: {err.line()}", file=sys.stderr)
        return ERROR_STATUS.get(name, err.exit_status)
    except OSError as err:
        print(f"Error: {os_error_text(err)}", file=sys.stderr)
        return ERROR_STATUS.get(name, 1)


def _misspelt_command(args: Sequence[str]) -> str | None:
    """The command the first argument is a near miss of (`sumary`), when it names no file either."""
    if not args or args[0] in COMMANDS or args[0].startswith("-") or os.path.exists(args[0]):
        return None
    import difflib

    close = difflib.get_close_matches(args[0], list(COMMANDS), n=1, cutoff=0.75)
    return close[0] if close else None


#: The collector's first threshold in a tlscope process (Python's default is 700 allocations).
#: A parse imports ~240 modules, whose objects (classes, functions, Structs' type data) all live
#: to the end; with the default the collector walked them again and again while they were being
#: imported: ~21M instructions, 3 % of a small log's run (callgrind). Cycles are still
#: collected, in bigger batches; the big trace's peak RSS stays 43.5 MB.
GC_THRESHOLD = 50_000


def console_main() -> NoReturn:
    """The `tlscope` command (and `python -m tlscope`): main(), then exit with its status.

    First the collector's threshold goes up (GC_THRESHOLD). Before exiting, every object is
    frozen (gc.freeze): the interpreter's final garbage collection then skips them. It would
    walk every object of every imported module (Jinja2, Pygments, msgspec...) only to free
    memory the OS frees anyway: 30-50 ms, a tenth of a small run. Then, when nothing is left for
    the shutdown to run (`_shutdown_is_idle`), it is skipped altogether. Neither in `main`, which
    tests and library users call in a process that goes on.
    """
    gc.set_threshold(GC_THRESHOLD)
    status = main()
    gc.freeze()
    try:
        sys.stdout.flush()
    except BrokenPipeError:  # the reader of our stdout went away (`tlscope ... | head`)
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no second error at exit
        status = status or 1
    if _shutdown_is_idle() and _stderr_flushed():
        os._exit(status)
    sys.exit(status)


def _stderr_flushed() -> bool:
    """stderr flushed; False if it could not be (the normal exit then reports it as it does)."""
    try:
        sys.stderr.flush()
    except Exception:  # any failure: the interpreter's shutdown reports it, as before
        return False
    return True


def _shutdown_is_idle() -> bool:
    """Whether the interpreter's shutdown has nothing to do for this run but free memory: no atexit
    callback (multiprocessing, logging, weakref.finalize and coverage register one), no thread
    left but this one, and none of threading's exit hooks (concurrent.futures' executors).

    Then the command leaves with os._exit, its streams flushed: the shutdown's teardown of every
    imported module (~270 on a small log) was ~9M instructions, 1.4 % of a small log's run
    (callgrind, bench/README.md, session 10). Every output is committed (renamed into place) and
    every file closed before `main` returns, so nothing is lost; when anything is registered,
    the normal exit runs it.
    """
    import atexit
    import threading

    callbacks = getattr(atexit, "_ncallbacks", None)
    hooks = getattr(threading, "_threading_atexits", None)
    if callbacks is None or hooks is None:  # another Python: take the documented way
        return False
    return callbacks() == 0 and not hooks and threading.active_count() == 1
