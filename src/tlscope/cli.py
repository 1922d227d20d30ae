"""The `tlscope` console script: pick the command (tlscope.commands) and run it."""

from __future__ import annotations

import gc
import os
import sys
from collections.abc import Sequence
from typing import NoReturn

from tlscope.commands import ACTIONS, COMMANDS, DEFAULT, ERROR_STATUS, load
from tlscope.format.errors import TlscopeError, os_error_text
from tlscope.lifetime import Terminated, ends_with_command, exit_status, stop_requested, terminate_raises
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
    except BrokenPipeError:  # the reader of our stdout went away mid-print (`tlscope diff … | head`)
        # Said by no message: the reader stopped reading on purpose, as with any Unix tool.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no second error at exit
        return ERROR_STATUS.get(name, 1)
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
    memory the OS frees anyway: 30-50 ms, a tenth of a small run. Then the shutdown's own work is
    done here (`_shutdown_done`: threads joined, exit callbacks run) and its teardown of every
    module skipped. Neither in `main`, which tests and library users call in a process that goes on.
    """
    gc.set_threshold(GC_THRESHOLD)
    ends_with_command()  # an old OUT is left to the run's guard to remove: lifetime.ends_with_command
    status = main()
    gc.freeze()
    try:
        sys.stdout.flush()
    except BrokenPipeError:  # the reader of our stdout went away (`tlscope ... | head`)
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no second error at exit
        status = status or 1
    _leave_after(EXIT_WAIT, status)
    if _shutdown_done() and _flushed():
        os._exit(status)
    sys.exit(status)


def _flushed() -> bool:
    """stdout and stderr flushed; False if they could not be (the normal exit then reports it as it
    does; stdout's broken pipe was dealt with before the exit callbacks, which may print)."""
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except Exception:  # any failure: the interpreter's shutdown reports it, as before
        return False
    return True


#: Seconds the exit may take (joining the threads left, the exit callbacks) before the process
#: leaves all the same. A run that has ended as it should takes milliseconds.
EXIT_WAIT = 20.0


def _leave_after(seconds: float, status: int) -> None:
    """Leave with `status` after `seconds`, whatever the exit is still waiting for then.

    A thread a library left waiting forever (a process pool's manager reading half a message
    from a worker killed mid-send) made the exit join it forever: an interrupted run said
    "Interrupted" and kept its pipes open. A low-level thread (not one the exit joins, nor one
    `threading.active_count` counts) sleeps out the time and ends the process; on a normal exit the
    process is gone long before.
    """
    import _thread
    import time

    def watch() -> None:
        time.sleep(seconds)
        _flushed()
        os._exit(status)

    _thread.start_new_thread(watch, ())


def _shutdown_done() -> bool:
    """Do what the interpreter's shutdown does before its teardown, in its order: join the threads
    left (running threading's exit hooks first: concurrent.futures' executors) and run the atexit
    callbacks (multiprocessing's, logging's, weakref.finalize's, coverage's). True when that left
    nothing but this thread: the teardown of every imported module that would follow only frees
    memory, and the command then leaves with os._exit, its streams flushed.

    The teardown was ~9M instructions on a small log (callgrind, bench/README.md, session 10) and
    7-15 ms of a multi-rank job's wall after its last rank (its pool registers exit hooks, so the
    job took the whole shutdown; bench/README.md, session 11, h22early). Every output is committed
    (renamed into place) and every file closed before `main` returns, so nothing is lost. A daemon
    thread still running after the join: the normal exit, as before (the callbacks are not run
    twice: both steps are done once and forgotten). Another Python without these functions: the
    documented way.
    """
    import atexit
    import threading

    join = getattr(threading, "_shutdown", None)
    callbacks = getattr(atexit, "_run_exitfuncs", None)
    if join is None or callbacks is None:
        return False
    join()
    callbacks()
    return threading.active_count() == 1
