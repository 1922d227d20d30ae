"""Multi-rank runs: find the rank logs, parse each into OUT/rank_N in parallel, then compare.

Flow (tlparse's `--all-ranks-html`, reference §6): discovery by tlparse's file-name pattern,
one full single-rank parse per rank, each giving back its typed summary (pipeline/rankfacts.py),
then the landing page built from those summaries (never the logs, nor the rank folders, again).
Differences from tlparse:
- ranks are parsed in worker processes (`jobs`) or on a Dask cluster (`scheduler`);
- a rank whose log or artifacts are malformed is reported on the landing page; the others
  are still parsed and compared (tlparse aborts the run);
- a single log holding several ranks (muxed) is split by rank first (tlscope.read.split);
- everything is in rank / name order, so two runs give identical output.
"""

from __future__ import annotations

import contextlib
import importlib
import multiprocessing
import os
import shutil
import sys
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path
from typing import Any

import msgspec

from tlscope.analyse.ranks.parity import load_entities
from tlscope.analyse.ranks.rank_summary import RankSummary
from tlscope.format import layout
from tlscope.format.errors import InputError, OutputError, StrictFailure, os_error_text
from tlscope.lifetime import keep_heap, prepare_workers, worker_init
from tlscope.pipeline.rank_store import RankSummaries
from tlscope.pipeline.rankfacts import RankFacts
from tlscope.pipeline.single import refuse_out_holding, run
from tlscope.read.inputs import RankLog, candidate_logs, discover
from tlscope.read.split import process_ranks, ranks_of, split_log
from tlscope.write.context import SinkFactory
from tlscope.write.graph_store import JOB_CLAIMS
from tlscope.write.landing.jsonout import pretty
from tlscope.write.outdir import OutputDir, UnsafePath
from tlscope.write.report.assembly import preload_report, report_sinks
from tlscope.write.report.derived import JOB_PAGES
from tlscope.write.run_options import ParseOptions

#: How a rank's summary names a failure that is a bug of tlscope's (reported, please), not of the log.
INTERNAL_ERROR = "internal error"
#: Where a muxed log's per-rank logs are written, inside OUT's temporary folder (removed before the end).
_SPLIT_FOLDER = ".split"
PARITY_DESCRIPTION = "Difference of # of collectives in scheduler and inductor output code and missing wait collectives"


class RankResult(msgspec.Struct):
    """What one rank's parse gives back (picklable: it comes from a worker process or Dask).

    No manifest: it is in rank_N/manifest.json (`Parsed.manifests` reads it there). Sent back, it
    was ~40 KB a rank held by the parent (results waited in their futures until every lower
    rank's was taken, so most of a job's could be held at once): 29 -> 74 MB from 8 to 1,000
    ranks. The parent now takes each result as it finishes and spills its summary at once
    (pipeline/rank_store.py).
    """

    summary: RankSummary


def parse_rank(
    log: str, rank: int, folder: str, options: ParseOptions, sinks: SinkFactory | None, landing: bool = True
) -> RankResult:
    """Worker: parse one rank log into `folder`, summarising it for the landing page as it goes.

    Without `landing` (a job parsed for its answers: `tlscope.load`, `summary`), the rank gets
    the format and the answers only: no report, no facts for a landing page; its summary only
    says whether it parsed.
    Runs in a worker process or on a Dask worker: takes and returns only picklable values.
    A failure of this rank is returned as a summary with `parsed=False`, never raised.
    """
    target = Path(folder)
    facts = RankFacts(rank)
    # One payload store per job: every rank's payloads in the job's payloads/, each once.
    options = msgspec.structs.replace(options, job_folder=options.job_folder or str(target.parent))
    try:
        # No guard process of its own: the folder is inside OUT's temporary folder, guarded.
        out = OutputDir(target, overwrite=True, guard=False)
        manifest = run(Path(log), out, options, sinks=facts.around(sinks) if landing else None)
    except BaseException as err:
        if not isinstance(err, Exception):
            raise
        return RankResult(RankSummary(rank=rank, parsed=False, errors=[f"parse failed: {_failure(err)}"]))
    if not landing:
        return RankResult(RankSummary(rank=rank, chromium_events=manifest.chromium_events))
    summary = facts.summary
    summary.chromium_events = manifest.chromium_events
    _write_parity(target, summary)
    return RankResult(summary)


def _failure(err: Exception) -> str:
    """Why a rank's parse failed, for its summary."""
    if isinstance(err, (StrictFailure, OutputError, UnsafePath)):
        return str(err)
    if isinstance(err, OSError):
        return os_error_text(err)
    # A bug met on this rank's log must not take the other ranks down.
    return f"{INTERNAL_ERROR} ({type(err).__name__}: {err})"


def _write_parity(folder: Path, summary: RankSummary) -> None:
    """rank_N/collectives_parity.json, as tlparse writes it (always, even when empty)."""
    body = {
        "description": PARITY_DESCRIPTION,
        "graphs": [msgspec.to_builtins(g) for g in summary.parity],
    }
    (folder / "collectives_parity.json").write_text(pretty(body, sort_keys=False), "utf-8")


#: Runs the parses of `work` ((rank log, folder) pairs) and yields their results as they finish,
#: in any order (each names its rank); calls `idle()` once, when this process has a core to spare:
#: with local workers, once one of them has no rank left to parse (the job's tail, where that core
#: would idle), at the latest after the last result; elsewhere once the first ranks are handed out.
Submit = Callable[[Sequence[tuple[RankLog, str]], Callable[[], None]], Iterator[RankResult]]
#: Told each rank's number as its parse finishes (well or not), in the order they finish: the
#: typed progress of a job (serve counts it), never the text `echo` prints. Called from one
#: thread at a time (a pool's or a cluster client's own thread), not necessarily the caller's.
RankDone = Callable[[int], None]
#: Ranks handed to the pool per worker at a time. The pool keeps one more call queued than it
#: has workers, so two per worker keep every worker busy; handed all at once, a 1,000-rank job
#: held 1,000 futures and work items in the parent (a lock and condition each) until the end.
_IN_FLIGHT_PER_WORKER = 2


def _no_rank_done(_: int) -> None:
    pass


def _local(
    jobs: int,
    options: ParseOptions,
    sinks: SinkFactory | None,
    preload: Callable[[], None] | None,
    done: RankDone = _no_rank_done,
    landing: bool = True,
) -> Submit:
    def submit(work: Sequence[tuple[RankLog, str]], idle: Callable[[], None]) -> Iterator[RankResult]:
        if jobs <= 1 or len(work) <= 1:
            idle()
            for log, folder in work:
                result = parse_rank(log.path, log.rank, folder, options, sinks, landing)
                done(log.rank)
                yield result
            return
        context = _fork_context()
        if context is not None:
            _before_fork(preload)
        workers = min(jobs, len(work))
        before = set(multiprocessing.active_children())
        executor = ProcessPoolExecutor(
            max_workers=workers, mp_context=context, initializer=_rank_worker, initargs=(os.getpid(),)
        )
        with _stopped_on_failure(executor, before):
            # Biggest logs first, so the last parse to start is a small one and no worker is
            # left alone with a big rank at the end (longest-processing-time-first).
            queue = sorted(work, key=lambda w: -_size(w[0].path))
            queue.reverse()  # popped from the end
            running: dict[Future[RankResult], int] = {}

            def hand_out() -> Iterator[RankResult]:
                while queue and len(running) < workers * _IN_FLIGHT_PER_WORKER:
                    log, folder = queue.pop()
                    try:
                        future = executor.submit(parse_rank, log.path, log.rank, folder, options, sinks, landing)
                    except BrokenProcessPool:
                        done(log.rank)
                        yield _died(log.rank)
                        continue
                    future.add_done_callback(_told(done, (log.rank,)))
                    running[future] = log.rank

            yield from hand_out()
            tail = False
            while running:
                if not tail and not queue and len(running) < workers:
                    # A worker has no rank left: this process's own work takes the core it leaves
                    # (before, it took a share of both cores while every worker parsed its first rank).
                    tail = True
                    _while_dispatching(idle)
                finished, _ = wait(running, return_when=FIRST_COMPLETED)
                for future in finished:
                    yield _outcome(future, running.pop(future))  # its result freed once taken
                yield from hand_out()
            if not tail:  # the last ranks ended together
                idle()

    return submit


#: A rank whose worker process died under it (killed, out of memory, a crash in C code).
WORKER_DIED = "its worker process died (killed, out of memory, or crashed)"


def _outcome(future: Future[RankResult], rank: int) -> RankResult:
    """A rank's result; a worker that died is that rank's failure, not a traceback of the run.

    The pool is broken from then on, so the ranks still queued or running fail the same way:
    each is listed (and under --strict the first one fails the run, named).
    """
    try:
        return future.result()
    except BrokenProcessPool:
        return _died(rank)


def _died(rank: int) -> RankResult:
    return RankResult(RankSummary(rank=rank, parsed=False, errors=[f"parse failed: {WORKER_DIED}"]))


@contextlib.contextmanager
def _stopped_on_failure(executor: ProcessPoolExecutor, before: set[Any] | None = None) -> Iterator[None]:
    """Shut the pool down on the way out; on an exception or interrupt, kill its workers first.

    `with executor` would wait for every rank already running (seconds to minutes) while the
    run is failing or the user pressed Ctrl-C, and the workers would go on writing into a
    folder being removed. The workers are the pool's list and every process started since
    `before` (the children alive when the pool was made): an interrupt that lands while the
    pool is starting a worker, after the fork and before the pool lists it, would otherwise
    leave that worker waiting for work forever, holding the run's stdout and stderr open.
    """
    try:
        yield
    except BaseException:
        workers = list((getattr(executor, "_processes", None) or {}).values())
        if before is not None:
            workers += [p for p in multiprocessing.active_children() if p not in before and p not in workers]
        # The pool's manager thread, which shutdown(wait=False) forgets: it is joined once its
        # workers are dead (it then ends at once). Left running, it raced the interpreter's exit
        # hook (concurrent.futures' _python_exit wakes every manager without the pool's lock, and
        # a manager closing its wake-up pipe meanwhile made it raise EBADF): an interrupted run
        # printed a traceback (bench/signals.py, 1 trial in ~300 under load).
        manager = getattr(executor, "_executor_manager_thread", None)
        executor.shutdown(wait=False, cancel_futures=True)
        for worker in workers:
            worker.kill()
        for worker in workers:
            worker.join()
        if manager is not None:
            _unblock(manager)
            manager.join(timeout=10)
        raise
    executor.shutdown(wait=True)


def _unblock(manager: Any) -> None:
    """End a manager thread left reading half a result: close this process's end of the results pipe.

    A worker killed while it was sending a rank's result (a message above 16 KB goes in two
    writes, and a big one in many) leaves the manager thread waiting in `recv` for the rest
    forever: this process holds the pipe's other end too, so no end-of-file comes. The thread is
    not a daemon, so the interpreter's exit waited for it: an interrupted run said "Interrupted"
    and never ended (test_10_sigterm_of_a_multi_rank_run_splitting_a_muxed_log, 1 run in ~50 of
    CI). The workers are dead by now, so with this end closed the read sees end-of-file, and the
    thread marks the pool broken and ends. concurrent.futures' internals: any change there
    leaves the 10-s join as the bound.
    """
    writer = getattr(getattr(manager, "result_queue", None), "_writer", None)
    if writer is not None:
        with contextlib.suppress(OSError):
            writer.close()


def _rank_worker(parent: int) -> None:
    """A rank worker's first step: `worker_init` (signals, dying with `parent`), then its C heap
    kept between its ranks (`keep_heap`: each rank re-faulted ~4 MB of pages otherwise)."""
    worker_init(parent)
    keep_heap()


def _before_fork(preload: Callable[[], None] | None) -> None:
    """What every forked worker would otherwise load on its first rank, loaded once here: the
    workers inherit it (less CPU in all; the wall time is the same, paid here before the fork
    instead of in every worker before its first rank)."""
    if preload is not None:
        preload()  # the report's code and templates
    prepare_workers()  # worker_init's ctypes and libc handle (~2 ms of imports a worker)
    load_entities()  # the collectives check's HTML entities (~3 ms of imports a worker)


def _while_dispatching(work: Callable[[], None]) -> None:
    """Run `work` while the pool's threads hand the first ranks to the workers.

    The pool's manager and feeder threads need the GIL for each step of a hand-over; with `work`
    holding it they waited out the 5 ms switch interval at each step, and the workers started
    their first rank 10-15 ms late. A short interval while `work` runs lets them in at once.
    """
    previous = sys.getswitchinterval()
    sys.setswitchinterval(0.0002)
    try:
        work()
    finally:
        sys.setswitchinterval(previous)


def _fork_context() -> multiprocessing.context.BaseContext | None:
    """Fork where it is safe (Linux): workers start with this process's modules already imported.

    The platform default elsewhere (macOS: spawn). Python 3.14 makes forkserver Linux's
    default, whose workers would import tlscope afresh.
    """
    return multiprocessing.get_context("fork") if sys.platform.startswith("linux") else None


def _size(path: str) -> int:
    try:
        return os.stat(path).st_size
    except OSError:
        return 0


def _told(done: RankDone, ranks: Sequence[int]) -> Callable[[Any], None]:
    """A future's done-callback telling `done` each rank it parsed (a local worker's one, a Dask
    task's few); the future itself is not needed."""

    def tell(_future: Any) -> None:
        for rank in ranks:
            done(rank)

    return tell


def _dask(
    address: str,
    options: ParseOptions,
    sinks: SinkFactory | None,
    done: RankDone = _no_rank_done,
    landing: bool = True,
) -> Submit:
    try:
        # Imported by name, so the module is Any to mypy with and without the optional `dask`
        # extra installed: one source type-checks after `pip install -e ".[dev]"` alone.
        distributed: Any = importlib.import_module("distributed")
    except ImportError as err:
        raise InputError("--scheduler needs dask.distributed: pip install 'tlscope[dask]'") from err

    def submit(work: Sequence[tuple[RankLog, str]], idle: Callable[[], None]) -> Iterator[RankResult]:
        with distributed.Client(address) as client:
            # Biggest logs first, as locally; a bounded number in flight, taken as they finish.
            queue = sorted(((_size(log.path), log, folder) for log, folder in work), key=lambda w: -w[0])
            queue.reverse()  # popped from the end
            threads = sum(client.nthreads().values())
            window = max(_MIN_IN_FLIGHT, _IN_FLIGHT_PER_THREAD * threads)
            running = distributed.as_completed()
            batches: dict[str, list[int]] = {}

            def hand_out() -> None:
                while queue and running.count() < window:
                    batch = _next_batch(queue, threads)
                    calls = [(log.path, log.rank, folder) for log, folder in batch]
                    key = f"tlscope-ranks-{batch[0][0].rank}+{len(batch)}"  # a rank is in one batch
                    future = client.submit(parse_rank_batch, calls, options, sinks, landing, key=key)
                    batches[key] = [log.rank for log, _ in batch]
                    future.add_done_callback(_told(done, batches[key]))
                    running.add(future)

            hand_out()
            idle()
            for future in running:  # also those added while iterating
                results = _batch_outcome(future, batches.pop(future.key))
                del future  # let go: the cluster and this process keep no rank's result once taken
                hand_out()
                yield from results

    return submit


#: Tasks in flight on a Dask cluster per worker thread (at least _MIN_IN_FLIGHT), the rest handed
#: out as results come. Submitted all at once, a job's every rank had its future, its key and its
#: result (held until every lower rank's was taken) in this process and in the scheduler:
#: the parent grew ~10 KB a rank (64.6 MB at 64 ranks, 66.5 at 256). Two per thread keep each
#: worker's next task queued while it runs one.
_IN_FLIGHT_PER_THREAD = 2
_MIN_IN_FLIGHT = 8
#: A Dask task takes up to 1 / (_SHARES_PER_THREAD x the cluster's threads) of the log bytes not
#: yet handed out (guided self-scheduling): distributed spends ~14 ms of CPU a task on its own
#: (client, scheduler, the worker's event loop: bench/README.md, session 10, h22dask), a fifth
#: of a small rank's parse, so a job's first tasks are big; they shrink with what is left, to one
#: rank a task in the job's tail (the smallest logs, handed out last), so the threads finish
#: together. 256 ranks of similar size on two threads: 23 tasks (77 at 4 ranks a task).
_SHARES_PER_THREAD = 2
#: Ranks a Dask task parses at most: a task's results come back together, so this bounds what a
#: worker holds for the task and this process takes at once (and how far progress jumps).
_MAX_RANKS_PER_TASK = 32
#: One rank to parse: its log's size, the log, its folder.
_Queued = tuple[int, RankLog, str]


def _next_batch(queue: list[_Queued], threads: int) -> list[tuple[RankLog, str]]:
    """The next Dask task's ranks, popped from the end of `queue` (not empty; biggest logs last):
    the first, then each next while the task's bytes stay within its share of the bytes left."""
    share = sum(size for size, _, _ in queue) // (_SHARES_PER_THREAD * max(threads, 1))
    size, log, folder = queue.pop()
    batch, taken = [(log, folder)], size
    while queue and len(batch) < _MAX_RANKS_PER_TASK and taken + queue[-1][0] <= share:
        size, log, folder = queue.pop()
        batch.append((log, folder))
        taken += size
    return batch


def parse_rank_batch(
    calls: Sequence[tuple[str, int, str]], options: ParseOptions, sinks: SinkFactory | None, landing: bool = True
) -> list[RankResult]:
    """Dask task: parse_rank for each (log, rank, folder), in order; each rank's failure is its own."""
    return [parse_rank(log, rank, folder, options, sinks, landing) for log, rank, folder in calls]


def _batch_outcome(future: Any, ranks: Sequence[int]) -> list[RankResult]:
    """A task's ranks' results from Dask. parse_rank returns its own failures, so what raises here
    is the cluster's (a worker killed, KilledWorker after retries, a lost connection): the failure
    of each rank of that task, listed, not a traceback that drops the other ranks."""
    try:
        results: list[RankResult] = future.result()
    except Exception as err:
        why = f"parse failed: its Dask task failed ({type(err).__name__}: {err})"
        return [RankResult(RankSummary(rank=rank, parsed=False, errors=[why])) for rank in ranks]
    return results


def run_multi_rank(
    path: Path,
    out: Path,
    options: ParseOptions,
    *,
    overwrite: bool = False,
    jobs: int | None = None,
    scheduler: str | None = None,
    sinks: SinkFactory | None = None,
    preload: Callable[[], None] | None = None,
    echo: Callable[[str], None] = print,
    strict_job: bool = False,
) -> Sequence[RankSummary]:
    """`parse_ranks`: the per-rank summaries (the landing page's facts), in rank order."""
    return parse_ranks(
        path,
        out,
        options,
        overwrite=overwrite,
        jobs=jobs,
        scheduler=scheduler,
        sinks=sinks,
        preload=preload,
        echo=echo,
        strict_job=strict_job,
    )


def parse_ranks(
    path: Path,
    out: Path,
    options: ParseOptions,
    *,
    overwrite: bool = False,
    jobs: int | None = None,
    scheduler: str | None = None,
    sinks: SinkFactory | None = None,
    preload: Callable[[], None] | None = None,
    echo: Callable[[str], None] = print,
    strict_job: bool = False,
    on_rank: RankDone = _no_rank_done,
    on_ranks: Callable[[Sequence[int]], None] | None = None,
    landing: bool = True,
) -> RankSummaries:
    """Parse every rank of `path` (a directory of rank logs, or one muxed log) into `out`.

    Raises InputError / OutputError before anything is written when the input or OUT is
    unusable. Per-rank failures do not raise: they are in the summaries and on the landing page
    (with `options.strict`, each rank's problems fail that rank). With `strict_job` (the
    command's --strict), the first failed rank fails the whole run instead: StrictFailure naming
    it, OUT left as it was.
    `preload` imports what the sinks need (and warms their caches) before local workers are
    forked; the default sinks (the report) come with theirs. `on_rank` is told each rank as its
    parse finishes (RankDone), `on_ranks` every rank to be parsed, once, before the first starts.
    Without `landing`, OUT holds each rank's format and answers only (`parse_rank`): no report,
    no landing page. Returns every rank's summary, in rank order, kept in a temporary file
    (pipeline/rank_store.py), not in memory.
    """
    if not path.exists():
        raise InputError(f"{path} does not exist")
    if sinks is None and landing:
        sinks, preload = report_sinks, preload or preload_report
    target = OutputDir(out, overwrite=overwrite)
    target.check()
    refuse_out_holding(path, out, "the logs")
    # Rank reports link their collectives_parity.json; the rank pool already uses the cores,
    # so each rank highlights in its own process instead of starting a second pool.
    report = msgspec.structs.replace(options.report, multi_rank=True, highlight_workers=1)
    options = msgspec.structs.replace(options, report=report)
    if scheduler:
        submit = _dask(scheduler, options, sinks, on_rank, landing)
    else:
        submit = _local(jobs or os.cpu_count() or 1, options, sinks, preload, on_rank, landing)
    return _run_job(path, target, submit, options, echo, strict_job, on_ranks, landing)


def _run_job(
    path: Path,
    target: OutputDir,
    submit: Submit,
    options: ParseOptions,
    echo: Callable[[str], None],
    strict_job: bool,
    on_ranks: Callable[[Sequence[int]], None] | None,
    landing: bool,
) -> RankSummaries:
    """`parse_ranks` once OUT is checked: the ranks into OUT's temporary folder, then the landing page."""
    out = target.target
    with target:
        # A muxed log is split inside OUT's temporary folder, so whatever ends the run (an
        # error, Ctrl-C, SIGTERM, even SIGKILL) removes the split logs with it.
        scratch = target.path(f"{_SPLIT_FOLDER}/.keep").parent
        logs, notes, info = _inputs(path, scratch)
        if on_ranks is not None:
            on_ranks([log.rank for log in logs])
        summaries = _parse_into(target, logs, submit, echo)
        shutil.rmtree(scratch)
        shutil.rmtree(target.root / JOB_PAGES, ignore_errors=True)  # the ranks' pages keep their links
        shutil.rmtree(target.root / JOB_CLAIMS, ignore_errors=True)
        if strict_job:
            _check_strict(logs, summaries)
        if not landing:
            return summaries
        from tlscope.write.landing.writer import write_landing  # imported by now: see _prepare_landing

        written = write_landing(target, summaries, notes, info=info, header=options.report.custom_header_html)
    for label, name in written.items():
        echo(f"{label}: {out}/{name}")
    echo(f"Multi-rank report generated under {out}")
    echo("Individual pages: rank_*/index.html")
    return summaries


def _parse_into(
    target: OutputDir, logs: Sequence[RankLog], submit: Submit, echo: Callable[[str], None]
) -> RankSummaries:
    """The ranks into OUT's temporary folder (open); their summaries, each spilled as it comes."""
    out = target.target
    # Each worker's own OutputDir creates rank_N inside OUT's (still temporary) folder.
    work = [(log, str(target.path(layout.rank_dir(log.rank)))) for log in logs]
    for log, _ in work:
        echo(f"Processing rank {log.rank} → {out}/rank_{log.rank}")
    # While the ranks are parsed, this process prepares the landing page: otherwise it would be
    # serial work before the first rank or after the last.
    summaries = RankSummaries()
    for result in submit(work, _prepare_landing):
        summaries.add(result.summary)
    return summaries


def _prepare_landing() -> None:
    """The landing page's modules imported and its template compiled while the last ranks are
    parsed (`Submit`'s idle step: with local workers, on the core a worker leaves idle at the
    job's end). Only this process writes the landing page: imported with this module, its modules
    (the rank comparisons and tables, ~10 ms) delayed the fork of the workers, so every worker's
    first rank; run while the workers parsed their first ranks, it took a share of their cores."""
    from tlscope.write.landing.writer import prepare_landing

    prepare_landing()


def _check_strict(logs: Sequence[RankLog], summaries: Sequence[RankSummary]) -> None:
    """The first rank with an error fails the run (OUT untouched): the command's --strict.

    Each rank's own parse already fails under --strict when its log has a problem; here that
    failure stops the job instead of becoming a line of the landing page.
    """
    for log, summary in zip(logs, summaries, strict=True):
        if summary.errors:
            name = Path(log.path).name
            raise StrictFailure(f"rank {log.rank} ({name}): {summary.errors[0]}", None)


def _inputs(path: Path, scratch: Path) -> tuple[list[RankLog], list[str], list[str]]:
    """(rank logs, notes on what was left out, what tlscope did: not problems)."""
    if path.is_dir() and not discover(path)[0] and len(muxed := candidate_logs(path)) == 1:
        path = muxed[0]  # a folder holding one muxed log is that log
    if path.is_file():
        owners = process_ranks(path)  # pass one, read once: the split below takes the map
        ranks = ranks_of(owners)
        if len(ranks) < 1:
            raise InputError(f"{path} holds no rank-tagged events")
        split_log(path, scratch, owners)
        logs, notes = discover(scratch)
        info = [f"{path.name} holds ranks {', '.join(map(str, ranks))}: tlscope split it by rank before parsing"]
        if (scratch / "unranked.log").exists():
            notes.append("events of processes that never logged a rank were left out (unranked.log)")
        return logs, notes, info
    if not path.is_dir():
        raise InputError(f"Input path {path} must be a directory when using --all-ranks-html")
    logs, notes = discover(path)
    if not logs:
        raise InputError(f"No rank log files found in directory {path}")
    return logs, notes, []
