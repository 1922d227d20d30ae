"""Running fuzz inputs: a pre-imported fork server, and the checks every run must pass.

Starting `python -m tlscope` costs ~0.2 s of imports per input, more than most mutated inputs
take to parse. So a fork server (this file run as `python bench/fuzzrun.py serve`, a process of
its own) imports tlscope and loads the report's templates once, then forks one child per input.
Each child is a fresh process as far as the input can tell: its own process group, its own
working folder, stdin from /dev/null, stdout and stderr to files, TMPDIR inside the folder; it
runs the command's `main(argv)` as the console script would (an uncaught exception printed as
the interpreter prints it, exit handlers run at the end). The server enforces the time limit
(the whole process group is killed: a hang), measures peak memory (`wait4`'s ru_maxrss, which
covers the child and the workers it reaped) and looks for processes of the group still alive
after the child exits.

The harness (`Runner`, in the caller's process) writes each input's files, sends the command
to the server, and checks the result (`check`): no traceback on stderr, an exit status of the
documented convention, no hang, no file written outside OUT, no temporary folder left behind,
OUT untouched by a failed run, no process left over. The server is a separate process so that
what the harness holds (every real trace, decoded) is not in each child's memory figure.
"""

from __future__ import annotations

import argparse
import atexit
import contextlib
import hashlib
import importlib
import importlib.util
import json
import os
import re
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import traceback
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

#: The exit statuses tlscope may end a fuzz run with: 0 ok, 1 problems under --strict or an
#: input/OS error. (2 is a usage error, which the harness's command lines never are; 130 an
#: interrupt, which it never sends.)
ALLOWED_STATUS = frozenset({0, 1})
DEFAULT_ENTRY = "tlscope.cli:main"
#: How long the processes of a finished run's group may take to go away.
LEFTOVER_GRACE_S = 3.0
SENTINEL = "sentinel.txt"
#: How a multi-rank run names a rank's crash (tlscope.pipeline.ranks.INTERNAL_ERROR; spelled out
#: here so the harness needs no tlscope import).
INTERNAL_ERROR = "internal error"

# -- the fork server -----------------------------------------------------------------------------


def _load_entry(spec: str) -> Callable[[Sequence[str]], int]:
    """`module:function`, or `path/to/file.py:function` (tests give hostile stand-ins)."""
    target, _, name = spec.rpartition(":")
    if target.endswith(".py"):
        module_spec = importlib.util.spec_from_file_location("fuzz_entry", target)
        assert module_spec is not None and module_spec.loader is not None
        module = importlib.util.module_from_spec(module_spec)
        module_spec.loader.exec_module(module)
    else:
        module = importlib.import_module(target)
    func: Callable[[Sequence[str]], int] = getattr(module, name)
    return func


def _preload() -> None:
    """What every run needs, imported and warmed before forking (as a long-lived server would)."""
    for name in ("tlscope.commands.parse_command", "tlscope.commands.split_command", "tlscope.commands.redact_command"):
        with contextlib.suppress(ImportError):
            importlib.import_module(name)
    with contextlib.suppress(ImportError):
        importlib.import_module("tlscope.write.report.assembly").preload_report()
    with contextlib.suppress(ImportError):
        importlib.import_module("tlscope.write.landing.writer").prepare_landing()


def _child(entry: Callable[[Sequence[str]], int], job: dict[str, Any]) -> None:
    """In the forked child: become a fresh-looking process, run the entry, exit like Python does."""
    os.setpgid(0, 0)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    work = Path(job["work"])
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    for fd, name in ((1, "stdout"), (2, "stderr")):
        out = os.open(job[name], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        os.dup2(out, fd)
    os.chdir(work)
    os.environ["TMPDIR"] = tempfile.tempdir = str(work / "tmp")
    status = 1
    try:
        status = entry(job["argv"])
    except SystemExit as exit_:
        status = exit_.code if isinstance(exit_.code, int) else (0 if exit_.code is None else 1)
    except BaseException:
        traceback.print_exc()  # what the interpreter prints for an uncaught exception
        status = 1
    with contextlib.suppress(BaseException):
        atexit._run_exitfuncs()  # e.g. multiprocessing's: terminates daemonic workers
    with contextlib.suppress(BaseException):
        sys.stdout.flush()
        sys.stderr.flush()
    os._exit(status & 0xFF)


def group_members(pgid: int) -> list[int]:
    """Live (not zombie) processes of process group `pgid`, from /proc."""
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                fields = f.read().rpartition(b")")[2].split()
        except OSError:
            continue
        if len(fields) > 2 and int(fields[2]) == pgid and fields[0] not in (b"Z", b"X"):
            found.append(int(name))
    return found


@dataclass
class _Running:
    job: dict[str, Any]
    started: float
    hung: bool = False


class _Lines:
    """Lines from a file descriptor, without Python's buffering (select must see what is unread)."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.buffer = b""
        self.closed = False

    def read(self) -> list[bytes]:
        chunk = os.read(self.fd, 65536)
        if not chunk:
            self.closed = True
        self.buffer += chunk
        *lines, self.buffer = self.buffer.split(b"\n")
        return lines


def _finished(pid: int, status: int, rusage: Any, running: _Running) -> dict[str, Any]:
    """The server's reply for a reaped child, after waiting out the rest of its group."""
    deadline = time.monotonic() + LEFTOVER_GRACE_S
    left = group_members(pid)
    while left and time.monotonic() < deadline:
        time.sleep(0.02)
        left = group_members(pid)
    if left:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pid, signal.SIGKILL)
    return {
        "id": running.job["id"],
        "status": os.waitstatus_to_exitcode(status),
        "hung": running.hung,
        "wall": time.monotonic() - running.started,
        "maxrss_kb": rusage.ru_maxrss,
        "leftover": left,
    }


def serve(entry_spec: str, timeout: float) -> None:
    """The server loop: jobs in on stdin (JSON lines), replies out on stdout, until stdin closes."""
    entry = _load_entry(entry_spec)
    if entry_spec == DEFAULT_ENTRY:
        _preload()
    commands = _Lines(sys.stdin.fileno())
    running: dict[int, _Running] = {}
    while not commands.closed or running:
        ready = select.select([commands.fd], [], [], 0.005)[0] if not commands.closed else []
        for line in commands.read() if ready else []:
            job = json.loads(line)
            sys.stdout.flush()
            pid = os.fork()
            if pid == 0:
                _child(entry, job)
            running[pid] = _Running(job, time.monotonic())
        while running:
            pid, status, rusage = os.wait4(-1, os.WNOHANG)
            if pid == 0:
                break
            reply = _finished(pid, status, rusage, running.pop(pid))
            print(json.dumps(reply), flush=True)
        now = time.monotonic()
        for pid, run in running.items():
            if not run.hung and now - run.started > timeout:
                run.hung = True
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(pid, signal.SIGKILL)
        if commands.closed and running:
            time.sleep(0.005)


# -- the harness side ----------------------------------------------------------------------------


@dataclass
class Outcome:
    """What one input did, and what was wrong with it (nothing, for a passing run)."""

    index: int
    target: str
    mode: str
    kinds: list[str]
    source: str
    argv: list[str]
    status: int | None
    wall_s: float
    maxrss_mb: float
    failures: list[str] = field(default_factory=list)
    stderr: str = ""

    @property
    def ok(self) -> bool:
        return not self.failures


_FRAME = re.compile(r'File "([^"]+)", line \d+, in (\S+)')


def traceback_signature(stderr: str) -> str:
    """`ExceptionType at module.py:function` for the innermost tlscope frame of the last traceback."""
    tail = stderr[stderr.rfind("Traceback") :]
    frames = _FRAME.findall(tail)
    ours = [f for f in frames if "tlscope" in f[0]] or frames
    where = f"{Path(ours[-1][0]).name}:{ours[-1][1]}" if ours else "?"
    lines = [ln for ln in tail.splitlines() if ln and not ln.startswith((" ", "Traceback"))]
    exc = lines[-1].split(":")[0] if lines else "?"
    return f"{exc} at {where}"


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _listing(folder: Path) -> list[str]:
    if not folder.exists():
        return []
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*"))


def check(case: Any, work: Path, reply: dict[str, Any], stderr: str, inputs: dict[str, str]) -> list[str]:
    """Every rule a run must keep; the list of those it broke."""
    failures: list[str] = []
    status = reply["status"]
    if reply["hung"]:
        failures.append("hang")
    elif status < 0:
        failures.append(f"killed by signal {-status}")
    elif status not in ALLOWED_STATUS:
        failures.append(f"exit status {status}")
    if "Traceback" in stderr:
        failures.append(f"traceback: {traceback_signature(stderr)}")
    if INTERNAL_ERROR in stderr:  # a multi-rank run lists a rank's crash instead of dying of it
        failures.append(f"rank {INTERNAL_ERROR}: {stderr.split(INTERNAL_ERROR, 1)[1][:80].strip()}")
    if reply["leftover"]:
        failures.append(f"leftover processes: {len(reply['leftover'])}")
    if status == 1 and not stderr.strip() and not reply["hung"]:
        failures.append("exit 1 without a message")
    failures += _outside(case, work, inputs)
    if not reply["hung"]:
        failures += _out_state(case, work, status)
    return failures


def _outside(case: Any, work: Path, inputs: dict[str, str]) -> list[str]:
    failures = []
    top = case.out.split("/")[0]
    for name in sorted(os.listdir(work)):
        if name not in ("in", "tmp", top):
            failures.append(f"wrote outside OUT: {name}")
    if _listing(work / "tmp"):
        failures.append(f"temporary files left: {_listing(work / 'tmp')[:3]}")
    now = {rel: _digest(work / "in" / rel) for rel in _listing(work / "in") if (work / "in" / rel).is_file()}
    if now != inputs:
        failures.append("input folder changed")
    return failures


def _out_state(case: Any, work: Path, status: int) -> list[str]:
    out = work / case.out
    if status != 0:
        if case.existing_out:
            intact = _listing(out) == [SENTINEL] and (out / SENTINEL).read_text() == str(case.index)
            return [] if intact else ["failed run changed the existing OUT"]
        return ["failed run left OUT behind"] if out.exists() else []
    if not out.exists():
        return ["successful run wrote no OUT"]
    if case.existing_out and (out / SENTINEL).exists():
        return ["successful run did not replace OUT"]
    return []


def _prepare(case: Any, work: Path) -> dict[str, str]:
    """A fresh run folder: in/ (the input files), tmp/ (TMPDIR), OUT with a sentinel if asked."""
    if work.exists():
        shutil.rmtree(work)
    (work / "in").mkdir(parents=True)
    (work / "tmp").mkdir()
    for rel, data in case.files.items():
        (work / "in" / rel).write_bytes(data)
    if case.existing_out:
        (work / case.out).mkdir()
        (work / case.out / SENTINEL).write_text(str(case.index))
    return {rel: _digest(work / "in" / rel) for rel in case.files}


class Runner:
    """Runs cases through a fork server `jobs` at a time; `run` yields each Outcome as it ends."""

    def __init__(self, scratch: Path, *, jobs: int = 2, timeout: float = 20.0, entry: str = DEFAULT_ENTRY) -> None:
        self.scratch = scratch
        self.jobs = jobs
        self.timeout = timeout
        self._server = subprocess.Popen(
            [sys.executable, str(Path(__file__).resolve()), "serve", "--entry", entry, "--timeout", str(timeout)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
        )

    def run(self, cases: Iterable[Any]) -> Iterator[Outcome]:
        free = list(range(self.jobs))
        pending: dict[int, tuple[Any, Path, dict[str, str]]] = {}
        todo = iter(cases)
        exhausted = False
        while pending or not exhausted:
            while free and not exhausted:
                case = next(todo, None)
                if case is None:
                    exhausted = True
                    break
                self._start(case, free.pop(), pending)
            if pending:
                outcome, slot = self._collect(pending)
                free.append(slot)
                yield outcome

    def _start(self, case: Any, slot: int, pending: dict[int, tuple[Any, Path, dict[str, str]]]) -> None:
        work = self.scratch / f"slot{slot}" / "run"
        inputs = _prepare(case, work)
        io = work.parent
        job = {"id": slot, "work": str(work), "argv": case.argv}
        job |= {"stdout": str(io / "stdout"), "stderr": str(io / "stderr")}
        pending[slot] = (case, work, inputs)
        assert self._server.stdin is not None
        self._server.stdin.write(json.dumps(job).encode() + b"\n")
        self._server.stdin.flush()

    def _collect(self, pending: dict[int, tuple[Any, Path, dict[str, str]]]) -> tuple[Outcome, int]:
        assert self._server.stdout is not None
        line = self._server.stdout.readline()
        if not line:
            raise RuntimeError("the fork server died")
        reply = json.loads(line)
        slot = reply["id"]
        case, work, inputs = pending.pop(slot)
        stderr = (work.parent / "stderr").read_text("utf-8", "replace")
        failures = check(case, work, reply, stderr, inputs)
        outcome = Outcome(
            case.index,
            case.target,
            case.mode,
            list(case.kinds),
            case.source,
            list(case.argv),
            reply["status"],
            reply["wall"],
            reply["maxrss_kb"] / 1024,
            failures,
            stderr[-4000:],
        )
        return outcome, slot

    def close(self) -> None:
        if self._server.stdin is not None:
            self._server.stdin.close()
        self._server.wait(timeout=self.timeout + 10)

    def __enter__(self) -> Runner:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="The fuzz harness's fork server (started by Runner).")
    parser.add_argument("command", choices=["serve"])
    parser.add_argument("--entry", default=DEFAULT_ENTRY)
    parser.add_argument("--timeout", type=float, default=20.0)
    args = parser.parse_args(argv)
    serve(args.entry, args.timeout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
