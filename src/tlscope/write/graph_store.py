"""graphs/<md5>.json beside payloads/<md5>.txt: each FX graph payload as data (issue 23).

Fed by the format writer with each payload it writes for the first time, so a payload logged
many times is read once, and only payloads that print a graph are read at all. Reading a graph
(Python's `ast` on its text) costs about as much CPU as the rest of the pass on a trace of many
graphs, and the main pass is the critical path: a worker process reads them meanwhile, from the
payload files the writer has just written (one job a payload: its path, never its bytes, goes
through the pipe), started on the first graph. A rank of a job (its pool has the cores), a small
log (write/run_options.py `small_log`: a worker's start costs more than its few graphs) and a
process that may not start children read them in-process. One graph is in memory at a time in
either. A payload that looks like a graph but cannot be read as one is a problem (`bad_graph`)
and still gets its file, saying why; its text stays in payloads/.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import msgspec

from tlscope.analyse.fxgraph import FxGraphFailure, looks_like_graph, stored_graph
from tlscope.format import layout
from tlscope.format.graph_file import GraphFile
from tlscope.format.manifest import FORMAT_MINOR, FORMAT_VERSION, GraphStats
from tlscope.lifetime import worker_init
from tlscope.model.problems import ProblemKind, Problems
from tlscope.write.outdir import OutputDir

if TYPE_CHECKING:  # multiprocessing is imported when the worker starts: a trace without graphs starts none
    from multiprocessing.process import BaseProcess
    from multiprocessing.queues import SimpleQueue

_ENCODER = msgspec.json.Encoder()
#: A job: (md5, payload file, graphs file, written under a temporary name first).
_Job = tuple[str, str, str, bool]
#: What a job gave: (md5, the failure or None, bytes written).
_Done = tuple[str, str | None, int]
#: The worker's answer at the end: every job's, and its first error (None when none).
_Report = tuple[list[_Done], str | None]


def graph_file(md5: str, payload: bytes) -> GraphFile:
    """The graphs file of a payload that looks like a graph (`looks_like_graph`); a failure to
    read it is in the file (`failure`), never raised."""
    parsed = stored_graph(payload.decode("utf-8", "replace"))
    failure = parsed.reason if isinstance(parsed, FxGraphFailure) else None
    return GraphFile(
        format_version=FORMAT_VERSION,
        format_minor=FORMAT_MINOR,
        payload=f"{layout.PAYLOADS}/{md5}.txt",
        graph=None if isinstance(parsed, FxGraphFailure) else parsed,
        failure=failure,
    )


#: In a job's folder, the shared files a rank is making right now, one empty file each (`claim`):
#: removed with the job's other scratch folders once its ranks are parsed.
JOB_CLAIMS = ".claims"


def claim(folder: Path, name: str) -> bool:
    """Whether this caller is the first of a job's ranks to make shared file `name` (claims are
    files of `folder`, created with O_EXCL): False when another rank (process or thread) claimed
    it first and is making it now. A job's workers start on ranks logging the same graphs and
    pages at the same moment, and each made every one of them (~117M instructions of a first
    rank's 658M on the 8-rank job); a rank that meets a claimed file takes it at its end instead,
    and makes it then only when it is still not there (its maker failed or is slow: the same
    bytes either way). A file system refusing the claim file (not a taken name) claims nothing:
    every rank makes the file, as before."""
    try:
        os.close(os.open(folder / name, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
    except FileExistsError:
        return False
    except OSError:
        return True
    return True


def part_path(path: Path, md5: str) -> Path:
    """Where this writer writes `path` (a job's shared file, payload or graphs file, named by its
    `md5`) before putting it in place: a name of its process's and thread's own, as the ranks of
    a job write the same files at once, in processes or in threads of one (a Dask worker with
    several threads; with the process alone, two of its ranks wrote into one file and one
    failed: "No such file or directory" when the other had renamed it away)."""
    return path.with_name(f".{md5}.{os.getpid()}-{threading.get_ident()}.part")


def write_graph(md5: str, source: str, dest: str, atomic: bool) -> _Done:
    """Read payload file `source`, write its graphs file `dest`; what it gave."""
    stored = graph_file(md5, Path(source).read_bytes())
    data = _ENCODER.encode(stored)
    path = Path(dest)
    if atomic:
        # A job's ranks write into the same graphs/ at once: under a name of this process's, then
        # renamed into place, so a reader never sees half a file (the same bytes either way).
        part = part_path(path, md5)
        part.write_bytes(data)
        os.replace(part, path)
    else:
        path.write_bytes(data)
    return md5, stored.failure, len(data)


class _Failure(msgspec.Struct):
    """The one field of a graphs file a rank needs from another rank's."""

    failure: str | None = None


_FAILURE = msgspec.json.Decoder(_Failure)


#: (failure, size) of the job graphs files this process wrote or read, by path: a rank worker
#: parses many ranks of one job, which log the same graphs, so each file is read once per worker
#: instead of once per rank (~35 reads a rank of ranks_same_4, ~1.5 ms). The path names the job's
#: output folder (a fresh temporary name per run), so a later job never finds an earlier job's.
_KNOWN: dict[str, tuple[str | None, int]] = {}
#: Entries kept at most (each ~200 bytes); past it the memo starts again.
_KNOWN_MAX = 1 << 15


def _remember(dest: str, failure: str | None, size: int) -> None:
    if len(_KNOWN) >= _KNOWN_MAX:
        _KNOWN.clear()
    _KNOWN[dest] = (failure, size)


def _written(dest: str) -> tuple[str | None, int] | None:
    """(failure, size) of graphs file `dest` when another rank of the job already wrote it (the
    same bytes this rank would: the file is a function of the payload); None when it is not
    there yet. A job's ranks log the same graphs: parsing each again was ~16% of a rank's parse.
    The file is complete when its name exists (written under another name, then renamed)."""
    known = _KNOWN.get(dest)
    if known is not None:
        return known
    try:
        data = Path(dest).read_bytes()
        found = _FAILURE.decode(data).failure, len(data)
    except (OSError, msgspec.DecodeError):
        return None
    _remember(dest, *found)
    return found


class GraphTally:
    """Each graph payload read and counted (manifest.json's `graphs`, its `bad_graph` problems),
    in-process, nothing written: the figures alone, which GraphStore keeps while writing the files.
    (`tlscope summary` reads no graph at all: graphs/ is none of its answers.)"""

    def __init__(self, problems: Problems) -> None:
        self._problems = problems
        self._lines: dict[str, int] = {}
        self.files = self.bytes = self.failed = 0

    def add(self, md5: str, payload: bytes, line: int) -> None:
        """A payload met for the first time: counted when it is a graph."""
        if not looks_like_graph(payload):
            return
        self._lines[md5] = line
        stored = graph_file(md5, payload)
        self._done((md5, stored.failure, len(_ENCODER.encode(stored))))

    def _done(self, done: _Done) -> None:
        md5, failure, size = done
        self.files += 1
        self.bytes += size
        if failure is not None:
            self.failed += 1
            self._problems.add(ProblemKind.BAD_GRAPH, self._lines.get(md5, 0), f"payloads/{md5}.txt: {failure}")

    def finish(self) -> None:
        """The pass is over (nothing pending for a tally)."""

    def abort(self) -> None:
        """The run failed (nothing to stop for a tally)."""

    def stats(self) -> GraphStats:
        return GraphStats(files=self.files, bytes=self.bytes, failed=self.failed)


class GraphStore(GraphTally):
    """graphs/, in the folder that holds payloads/ (a job's, for its ranks: `shared`); the payload
    files are where `payload_path(md5)` says (the payload store's)."""

    def __init__(
        self,
        out: OutputDir,
        problems: Problems,
        shared: Path | None,
        payload_path: Callable[[str], str],
        inline: bool = False,
    ) -> None:
        super().__init__(problems)
        self._out = out
        self._shared = shared
        self._payload_path = payload_path
        self._claims = shared / JOB_CLAIMS if shared is not None else None
        #: The job's graphs/ as text (a graphs file's name is made per graph payload); unused alone.
        self._shared_graphs = f"{shared}/{layout.GRAPHS}/" if shared is not None else ""
        if shared is not None and self._claims is not None:
            (shared / layout.GRAPHS).mkdir(exist_ok=True)
            self._claims.mkdir(exist_ok=True)
        #: A rank of a job: each graph's (md5, graphs file, (failure, size) or None while another
        #: rank makes the file), tallied at the end in the log's order (`_job_graph`).
        self._in_job: list[tuple[str, str, tuple[str | None, int] | None]] = []
        #: In-process: a rank of a job (its pool has the cores), a small log (`inline`: a worker's
        #: start costs more than its few graphs), or no children allowed here.
        self._inline = shared is not None or inline
        self._jobs: SimpleQueue[_Job | None] | None = None
        self._results: SimpleQueue[_Report] | None = None
        self._worker: BaseProcess | None = None

    def add(self, md5: str, payload: bytes, line: int) -> None:
        """A payload written for the first time: its graphs file when it is a graph."""
        if not looks_like_graph(payload):
            return
        self._lines[md5] = line
        if self._shared is not None:
            self._job_graph(md5, f"{self._shared_graphs}{md5}.json")
            return
        dest = self._out.path_text(f"{layout.GRAPHS}/{md5}.json")
        source = self._payload_path(md5)
        if self._jobs is None and not self._inline:
            self._start()
        if self._jobs is None:
            self._done(write_graph(md5, source, dest, False))
        else:
            self._jobs.put((md5, source, dest, False))

    def _job_graph(self, md5: str, dest: str) -> None:
        """A graph of a rank of a job, in the job's graphs/: taken from the file another rank
        wrote, made here, or, when another rank is making it at this moment (`claim`), taken at
        the end. Tallied at the end, in the log's order, like the graphs worker's of one log: the
        rank's problems then do not depend on which rank made which file first."""
        known = _written(dest)
        if known is None and (self._claims is None or claim(self._claims, f"graph-{md5}")):
            known = self._make(md5, dest)
        self._in_job.append((md5, dest, known))

    def _make(self, md5: str, dest: str) -> tuple[str | None, int]:
        done = write_graph(md5, self._payload_path(md5), dest, True)
        _remember(dest, done[1], done[2])
        return done[1], done[2]

    def _start(self) -> None:
        import multiprocessing

        context = multiprocessing.get_context()
        jobs: SimpleQueue[_Job | None] = context.SimpleQueue()
        results: SimpleQueue[_Report] = context.SimpleQueue()
        try:
            # A daemon dying with this process (worker_init): a run that dies part-way leaves none.
            worker = context.Process(target=_work, args=(jobs, results, os.getpid()), daemon=True)
            worker.start()
        except AssertionError:  # inside a daemonic process (a pool worker): no children allowed
            self._inline = True
            return
        self._jobs, self._results, self._worker = jobs, results, worker

    def finish(self) -> None:
        """Wait for the worker's graphs; count them and their problems. RuntimeError when it failed."""
        for md5, dest, known in self._in_job:
            if known is None:  # another rank was making it: there by now, or made here
                known = _written(dest) or self._make(md5, dest)
            self._done((md5, known[0], known[1]))
        self._in_job = []
        if self._jobs is None or self._results is None or self._worker is None:
            return
        self._jobs.put(None)
        while self._results.empty():
            if self._worker.exitcode not in (None, 0):
                raise RuntimeError(f"the graphs worker died (exit code {self._worker.exitcode})")
            time.sleep(0.002)
        done, error = self._results.get()
        self._worker.join()
        self._jobs = self._results = self._worker = None
        if error is not None:
            raise RuntimeError(f"writing a graphs file failed: {error}")
        for item in sorted(done, key=lambda d: self._lines.get(d[0], 0)):
            self._done(item)

    def abort(self) -> None:
        """Stop the worker now, its files unwanted (the run failed or was interrupted)."""
        self._in_job = []
        if self._worker is not None:
            self._worker.terminate()
            self._worker.join()
        self._jobs = self._results = self._worker = None


def _work(jobs: SimpleQueue[_Job | None], results: SimpleQueue[_Report], parent: int) -> None:
    """Worker loop: every job until the end marker, then one answer with all of them.

    A failed job does not stop the loop: the queue must keep draining or the main pass, blocked
    on a full pipe, would wait forever.
    """
    worker_init(parent)
    done: list[_Done] = []
    error: str | None = None
    while (job := jobs.get()) is not None:
        try:
            done.append(write_graph(*job))
        except Exception as err:  # reported to the main process, which raises it
            error = error or f"{job[2]}: {type(err).__name__}: {err}"
    results.put((done, error))
