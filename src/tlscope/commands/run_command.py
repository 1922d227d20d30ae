"""`tlscope run [-o OUT] [--no-serve] [server flags] -- PROGRAM ARGS...` (tlparse #162).

Runs PROGRAM with TORCH_TRACE set to a fresh folder, parses what it wrote (one log, or a job's
rank logs), then serves the result (as `tlscope serve OUT` would) or, with `--no-serve`, only
writes OUT. The exit status is PROGRAM's (128+N when a signal N ended it), also after the
server is stopped with Ctrl-C (the normal way to end it); a run of tlscope that fails itself
exits 1 (or 2 for a usage error), or PROGRAM's status when that was not 0.

Ctrl-C while PROGRAM runs reaches PROGRAM too (same process group): tlscope waits for it to
stop (30 s at most; a second Ctrl-C kills it at once), then still parses what it wrote (a
stopped training run is often exactly what one wants to look at). Ctrl-C during the parse stops
tlscope (exit 130; OUT is left as it was).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

from tlscope.format.errors import TlscopeError, os_error_text
from tlscope.lifetime import Terminated, stop_handled
from tlscope.pipeline.classify import classify
from tlscope.pipeline.parse import parse
from tlscope.serve.serve_cli import add_server_flags, serve, start

_STOP_WAIT = 30.0  # seconds PROGRAM gets to stop after Ctrl-C before it is killed


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tlscope run",
        usage="tlscope run [-o OUT] [--no-serve] [server flags] -- PROGRAM [ARGS...]",
        description="Run PROGRAM with TORCH_TRACE set to a fresh folder, parse what it wrote, then serve it.",
    )
    parser.add_argument("-o", dest="out", type=Path, metavar="OUT", help="write the parsed trace to OUT")
    parser.add_argument("--overwrite", action="store_true", help="replace OUT if it exists")
    parser.add_argument("--no-serve", action="store_true", help="only write the output (with -o OUT)")
    add_server_flags(parser)
    return parser


def split_argv(argv: Sequence[str]) -> tuple[list[str], list[str]]:
    """(tlscope's flags, PROGRAM and its arguments): split at the first `--`."""
    args = list(argv)
    if "--" in args:
        at = args.index("--")
        return args[:at], args[at + 1 :]
    return args, []


def run_program(program: list[str], trace_dir: Path) -> int:
    """Run PROGRAM with TORCH_TRACE=trace_dir; its exit status (128+N for signal N)."""
    env = {**os.environ, "TORCH_TRACE": str(trace_dir)}
    # Ctrl-C reaches the program (same process group); here it is only noted, never raised: a
    # KeyboardInterrupt landing just after waitpid() reaped the program loses its status (Popen
    # then reports 0), which is the one thing this command must pass on. Noted from before the
    # program starts: installed after Popen, a Ctrl-C the program already handles could reach
    # tlscope first (a loaded machine may run the new program before Popen returns here).
    interrupts: list[float] = []
    previous = signal.signal(signal.SIGINT, lambda signum, frame: interrupts.append(time.monotonic()))
    try:
        try:
            proc = subprocess.Popen(program, env=env)
        except OSError as err:
            print(f"Error: {program[0]}: {err.strerror or err}", file=sys.stderr)
            return 127 if isinstance(err, FileNotFoundError) else 126
        try:
            status = _wait(proc, interrupts)
        except Terminated:  # SIGTERM/SIGHUP to tlscope alone: the program must not outlive it
            proc.terminate()
            _wait(proc, [time.monotonic()])
            raise
    finally:
        signal.signal(signal.SIGINT, previous)
    return 128 - status if status < 0 else status


def _wait(proc: subprocess.Popen[bytes], interrupts: list[float]) -> int:
    """The program's status; after a Ctrl-C it gets _STOP_WAIT seconds, after a second one none."""
    told = False
    while True:
        try:
            return proc.wait(timeout=0.2)
        except subprocess.TimeoutExpired:
            pass
        if interrupts and not told:
            print("tlscope run: waiting for the program to stop (Ctrl-C again to kill it)...", file=sys.stderr)
            told = True
        if len(interrupts) > 1 or (interrupts and time.monotonic() - interrupts[0] > _STOP_WAIT):
            proc.kill()
            return proc.wait()


def what_to_parse(trace_dir: Path) -> Path | None:
    """The folder (one log or a job's ranks), or the biggest log when the program wrote unrelated ones."""
    found = classify(trace_dir)
    logs = found.logs
    if found.multi_rank or len(logs) == 1:
        return trace_dir
    if not logs:
        return None
    biggest = max(logs, key=lambda p: (p.stat().st_size, p.name))
    others = ", ".join(p.name for p in logs if p != biggest)
    print(
        f"tlscope run: {len(logs)} logs written; parsing the biggest, {biggest.name} (also: {others})", file=sys.stderr
    )
    return biggest


@contextlib.contextmanager
def _program_status(status: int) -> Iterator[None]:
    """A failure after the program ran is reported by tlscope.cli, exiting with the program's
    own status when it failed (so `tlscope run -- false` exits 1 whatever tlscope met)."""
    try:
        yield
    except TlscopeError as err:
        err.exit_status = status or err.exit_status
        raise
    except OSError as err:
        raise TlscopeError(os_error_text(err), exit_status=status or 1) from None


def main(argv: Sequence[str]) -> int:
    parser = build_parser()
    flags, program = split_argv(argv)
    args = parser.parse_args(flags)
    if not program:
        parser.error("name the program to run after --, e.g. tlscope run -- python train.py")
    if args.no_serve and args.out is None:
        parser.error("--no-serve needs -o OUT (where to write the output)")
    trace_dir = Path(tempfile.mkdtemp(prefix="tlscope-run-"))
    status = run_program(program, trace_dir)
    source = what_to_parse(trace_dir)
    if source is None:
        print(f"tlscope run: the program wrote no trace into {trace_dir} (did it run torch.compile?)", file=sys.stderr)
        shutil.rmtree(trace_dir, ignore_errors=True)
        return status or 1
    out = args.out if args.out is not None else trace_dir / "tl_out"
    with _program_status(status):
        parse(source, out, overwrite=args.overwrite, command=["tlscope", "run", "--", *program])
    print(f"tlscope run: program exited {status}; trace parsed into {out}", file=sys.stderr)
    if args.out is not None:
        shutil.rmtree(trace_dir, ignore_errors=True)  # OUT holds the logs (raw.log) and everything else
    else:
        print(f"tlscope run: the logs and the output stay in {trace_dir}", file=sys.stderr)
    if args.no_serve:
        return status
    with _program_status(status):
        server, sock = start(args, [str(out)])
    serve(server, sock, browser=not args.no_browser)  # Ctrl-C is how this part normally ends
    stop_handled()
    return status
