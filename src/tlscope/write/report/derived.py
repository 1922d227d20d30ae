"""Report files derived from one payload, written by worker processes, once per distinct payload.

The heavy pages of a report are pure functions of one payload file: highlighted output code,
a JSON artifact pretty-printed like serde_json, a kernel stack-trace JSON's readable page.
The main pass (read, number, register) is the critical path, so it only names the page and
queues `(kind, payload file, page file)`; worker processes write it meanwhile. Recompiles log
the same payloads again and again, so each (kind, payload MD5) is rendered once and later
copies are hard-linked when the run closes. Rendering in-process (multi-rank workers, which
parse several ranks of one job each), pages are also kept for the process's next runs.

Workers take jobs from one shared pipe (multiprocessing.SimpleQueue), so this process runs no
helper threads: ProcessPoolExecutor's manager and feeder threads fought the main pass for the
GIL, and each submit waited out a GIL switch interval.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import time
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from tlscope.format.errors import OutputError, os_error_text
from tlscope.lifetime import worker_init
from tlscope.write.graph_store import claim
from tlscope.write.report.highlight import code_page
from tlscope.write.report.pages import readable_page, reformat_json

if TYPE_CHECKING:  # multiprocessing is imported when a worker starts: small logs start none
    from multiprocessing.process import BaseProcess
    from multiprocessing.queues import SimpleQueue

#: What each kind of job makes: a payload's bytes -> its page's bytes, as written.
JOBS: dict[str, Callable[[bytes], bytes]] = {
    "code": code_page,
    "json": reformat_json,
    "readable": readable_page,
}


def make_page(kind: str, source: str, dest: str) -> bytes:
    """Page file `dest` of kind `kind` from payload file `source` (a page worker's job); its bytes."""
    page = JOBS[kind](Path(source).read_bytes())
    Path(dest).write_bytes(page)
    return page


_Job = tuple[str, str, str]
#: A worker's first failure: ("os", "path: cause") for an OS error, ("bug", what) otherwise.
_Error = tuple[str, str]


#: In a job's temporary folder, the pages every rank may link (removed when the ranks are done).
JOB_PAGES = ".pages"


def link_or_copy(source: str | Path, dest: str | Path) -> None:
    """Hard-link (cheap, same content) or copy when the file system refuses."""
    try:
        os.link(source, dest)
    except OSError:
        shutil.copyfile(source, dest)


class PageWriteError(OutputError, RuntimeError):
    """A page worker met an OS error (a full disk, a refused name): an OutputError (one line,
    exit 1), still the RuntimeError any page failure raises."""


class DerivedFiles:
    """Queue of derived-file jobs; `close` waits for all of them and raises the first error."""

    def __init__(self, workers: int | None = None, shared: Path | None = None) -> None:
        # By default one core is left to the main pass, the critical path: one worker keeps up
        # with it, and a third busy process on a 2-core machine only takes CPU from the main
        # pass. An explicit 1 means in-process (multi-rank workers, whose pool has the cores).
        self._inline = workers is not None and workers <= 1
        self._count = workers if workers is not None else min(4, max(1, (os.cpu_count() or 1) - 1))
        self._jobs: SimpleQueue[_Job | None] | None = None
        self._results: SimpleQueue[_Error | None] | None = None
        self._workers: list[BaseProcess] = []
        self._first: dict[tuple[str, str], Path] = {}
        #: Each page's (kind, payload MD5), by its path: how `page` finds a page rendered here.
        #: Paths as str here and in `_copies`, one item per page of the log: a Path object is several
        #: times its text's size (issue 21: a scaled 1 GB log's pages are ~50,000 repeats).
        self._made: dict[str, tuple[str, str]] = {}
        self._copies: list[tuple[str, str]] = []
        #: A rank of a job: the job's folder of pages already made by any rank (`kind-md5`),
        #: linked instead of made again (a page is a function of its kind and payload only).
        self._shared = shared
        if shared is not None and self._inline:
            shared.mkdir(exist_ok=True)  # for the claims (`claim`) of pages being made
        #: Pages another rank of the job was making when this one needed them: (kind, payload MD5,
        #: payload file, page, the job's page), linked or made at `close`.
        self._later: list[tuple[str, str, str, str, str]] = []

    def submit(self, kind: str, md5: str, source: Path, dest: Path, payload: bytes | None = None) -> None:
        """Write `dest` from payload file `source` (whose MD5 is `md5`) with job `kind`.

        `payload`, the file's bytes when the caller holds them: a page made in this process is
        made from them, the file not read again (the big trace's in-process pages read 15.6 MB).
        """
        self._made[str(dest)] = (kind, md5)
        first = self._first.get((kind, md5))
        if first is not None:
            self._copies.append((str(first), str(dest)))
            return
        self._first[kind, md5] = dest
        made = self._shared / f"{kind}-{md5}" if self._shared is not None else None
        if made is not None and made.exists():
            self._copies.append((str(made), str(dest)))
            return
        if made is not None and self._inline and not claim(made.parent, f".claim-{kind}-{md5}"):
            self._later.append((kind, md5, str(source), str(dest), str(made)))  # another rank makes it now
            return
        if self._jobs is None and not self._inline:
            self._start()
        if self._jobs is None:
            _memo.write(kind, md5, source if payload is None else payload, dest)
            if made is not None:  # offered at once: the rank that found it claimed takes it at its end
                with contextlib.suppress(OSError):
                    os.link(dest, made)
        else:
            self._jobs.put((kind, str(source), str(dest)))

    def close(self) -> None:
        """Wait for every file; raise the first worker error; then make the linked copies.

        An OS error (a full disk, a refused name) is a PageWriteError (an OutputError naming the
        file and the cause); anything else a worker raised is a bug, raised as RuntimeError.
        """
        errors = self._drain()
        if errors:
            kind, message = errors[0]
            raise (PageWriteError if kind == "os" else RuntimeError)(f"writing a report page failed: {message}")
        for kind, md5, source, dest, made in self._later:  # before the copies: some are copies of these
            if os.path.exists(made):
                link_or_copy(Path(made), Path(dest))
            else:  # its maker failed or is still at it: made here (the same bytes)
                _memo.write(kind, md5, Path(source), Path(dest))
        self._later = []
        for source, dest in self._copies:
            link_or_copy(Path(source), Path(dest))
        self._copies = []
        if self._shared is not None:
            self._publish(self._shared)

    def page(self, dest: Path) -> bytes:
        """The text of page `dest` once `close` has run: as this process rendered it when it still
        holds it (in-process rendering: a job's ranks), else its file (a page worker's, or a page
        another rank of the job made, or one too big to keep)."""
        made = self._made.get(str(dest))
        kept = _memo.get(*made) if made is not None else None
        return kept if kept is not None else dest.read_bytes()

    def _publish(self, shared: Path) -> None:
        """Offer this rank's pages to the job's other ranks (hard links: stored once)."""
        shared.mkdir(exist_ok=True)
        for (kind, md5), dest in self._first.items():
            # OSError: made by another rank meanwhile (the same bytes), or no hard links here.
            with contextlib.suppress(OSError):
                os.link(dest, shared / f"{kind}-{md5}")

    def abort(self) -> None:
        """Stop the workers now, their pages unwanted (the run failed or was interrupted)."""
        for worker in self._workers:
            worker.terminate()  # SIGTERM: its default action in a worker (lifetime.worker_init)
        for worker in self._workers:
            worker.join()
        self._jobs = self._results = None
        self._workers = []
        self._copies = []
        self._later = []

    def _start(self) -> None:
        """Start the workers on the first job (a trace without heavy pages needs none)."""
        import multiprocessing

        context = multiprocessing.get_context()
        jobs: SimpleQueue[_Job | None] = context.SimpleQueue()
        results: SimpleQueue[_Error | None] = context.SimpleQueue()
        try:
            for _ in range(self._count):
                # Daemons, and dying with this process (worker_init): a run that dies part-way,
                # even by SIGKILL, must not leave workers behind.
                worker = context.Process(target=_work, args=(jobs, results, os.getpid()), daemon=True)
                worker.start()
                self._workers.append(worker)
        except AssertionError:  # inside a daemonic process (a pool worker): no children allowed
            self._inline = True
            if not self._workers:
                return
        self._jobs, self._results = jobs, results

    def _drain(self) -> list[_Error]:
        if self._jobs is None or self._results is None:
            return []
        for _ in self._workers:
            self._jobs.put(None)
        errors: list[_Error] = []
        pending = len(self._workers)
        while pending:
            if not self._results.empty():
                error = self._results.get()
                errors += [error] if error is not None else []
                pending -= 1
            elif dead := [w for w in self._workers if w.exitcode not in (None, 0)]:
                errors.append(("bug", f"a worker process died (exit code {dead[0].exitcode})"))  # e.g. killed
                break
            else:
                time.sleep(0.002)
        for worker in self._workers:
            worker.join()
        self._jobs = self._results = None
        self._workers = []
        return errors


class _PageMemo:
    """Pages rendered in this process, kept for its next runs (bounded, oldest dropped first).

    For in-process rendering, i.e. multi-rank workers: a worker parses several ranks of one job,
    and the ranks of a job log the same code and artifacts (ranks_same_4: all 7 output-code
    payloads identical across its 4 ranks), so later ranks copy the page instead of rendering
    it again (8 ranks of ranks_same_4: 56 code and 88 JSON renders -> 7 and 32, ~15% of the
    parse). Keyed by the payload's MD5, the reader's over the record's bytes, which names the
    payload file too (`payloads/<md5>.txt`), as `DerivedFiles` and a job's shared pages are: the
    payload is not read, nor hashed again, for a page kept (the big trace's in-process pages
    read and hashed 16.7 MB for none: bench/README.md, session 13, h21pages).
    """

    def __init__(self, budget: int) -> None:
        self._budget = budget
        self._size = 0
        self._pages: OrderedDict[tuple[str, str], bytes] = OrderedDict()

    def get(self, kind: str, md5: str) -> bytes | None:
        """The page of kind `kind` rendered from the payload whose MD5 (hex) is `md5`, if kept."""
        return self._pages.get((kind, md5))

    def write(self, kind: str, md5: str, payload: Path | bytes, dest: Path) -> None:
        """`dest`, the page of kind `kind` of `payload` (its bytes, or its file; MD5, hex, `md5`)."""
        key = (kind, md5)
        page = self._pages.get(key)
        if page is not None:
            self._pages.move_to_end(key)
            dest.write_bytes(page)
            return
        page = JOBS[kind](payload if isinstance(payload, bytes) else payload.read_bytes())
        dest.write_bytes(page)
        if len(page) <= self._budget // 4:
            self._pages[key] = page
            self._size += len(page)
            while self._size > self._budget:
                self._size -= len(self._pages.popitem(last=False)[1])


_memo = _PageMemo(16 * 1024 * 1024)


def _work(jobs: SimpleQueue[_Job | None], results: SimpleQueue[_Error | None], parent: int) -> None:
    """Worker loop: run jobs until the end marker, then report the first error (or None).

    A failed job does not stop the loop: the queue must keep draining or the main pass,
    blocked on a full pipe, would wait forever.
    """
    worker_init(parent)
    error: _Error | None = None
    while (job := jobs.get()) is not None:
        kind, source, dest = job
        try:
            make_page(kind, source, dest)
        except OSError as err:
            error = error or ("os", f"{dest}: {type(err).__name__}: {os_error_text(err)}")
        except Exception as err:  # reported to the main process, which raises it
            error = error or ("bug", f"{dest}: {type(err).__name__}: {err}")
    results.put(error)
