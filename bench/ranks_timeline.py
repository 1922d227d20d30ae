"""A job's timeline as the parent sees it: where the wall time of a small job goes (issue 22).

    python bench/ranks_timeline.py LOGS [--runs 3] [--src DIR] [-j 2]

Runs `tlscope LOGS -o OUT -j 2` in a fresh process (`--src`: another tree's src/) with timers
put around the steps of a job, and prints, in milliseconds from the moment the process was
started (before the interpreter): the parent's imports, the input's discovery, the pool's start,
each worker's start and each rank it parses (start, end), the last rank's end, the landing page
(its timeline merge, multi_rank_summary.json, ranks.json, index.html), the commit of OUT, the
return of the command and the process's exit. The timers are function wrappers (~µs each), so
the job runs as it does without them. Then, per run: the fixed cost (the wall time outside the
span where both workers parse: before the first rank starts, the tail where one worker idles,
after the last rank ends), the parent's CPU, the workers' CPU, and the critical path in CPU time
(the parent's CPU before it hands out the first rank + the busiest worker's CPU + the parent's
CPU after the last result: the wall on two idle cores, steadier than the wall on a shared machine),
and the mean CPU of a worker's first rank against its later ranks.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

DRIVER = r"""
import time
T_START = time.time()
import json, os, resource, sys
events_path, logs, out, jobs = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
sink = os.open(events_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)

def note(what, rank=None):
    os.write(sink, (json.dumps([time.time(), os.getpid(), what, rank, time.process_time()]) + "\n").encode())

note("process (after the interpreter)")

def wrap(owner, name, label, rank_of=None):
    inner = getattr(owner, name, None)
    if inner is None:  # another tree's code: not timed there
        return None
    def wrapper(*args, **kwargs):
        rank = rank_of(args) if rank_of else None
        note(label + " start", rank)
        try:
            return inner(*args, **kwargs)
        finally:
            note(label + " end", rank)
    wrapper.__qualname__ = wrapper.__name__ = name + "_timed_" + label.replace(" ", "_").replace(":", "")
    globals()[wrapper.__qualname__] = wrapper  # picklable by reference from __main__ (forked workers have it)
    setattr(owner, name, wrapper)
    return wrapper

def timed_ranks(R):
    wrap(R, "parse_rank", "rank", rank_of=lambda a: a[1])
    init = R.worker_init
    def worker_init(*a):
        note("worker started")
        return init(*a)
    globals()["worker_init"] = worker_init
    R.worker_init = worker_init
    wrap(R, "_inputs", "discovery")
    wrap(R, "preload_report", "preload the report")
    wrap(R, "_prepare_landing", "prepare the landing page")
    wrap(R, "write_landing", "landing")  # older trees call it from pipeline/ranks.py's namespace
    Pool = R.ProcessPoolExecutor
    class TimedPool(Pool):
        def __init__(self, *a, **k):
            note("pool made")
            super().__init__(*a, **k)
        def submit(self, fn, *a, **k):
            if not getattr(self, "_noted", False):
                self._noted = True
                note("first rank handed out")
            return super().submit(fn, *a, **k)
        def shutdown(self, *a, **k):
            note("pool shutdown start")
            try:
                return super().shutdown(*a, **k)
            finally:
                note("pool shutdown end")
    R.ProcessPoolExecutor = TimedPool
    add = R.RankSummaries.add
    def add_timed(self, summary):
        note("result taken", summary.rank)
        return add(self, summary)
    R.RankSummaries.add = add_timed

def timed_landing(W):
    wrap(W, "write_landing", "landing")
    wrap(W, "merge_timelines", "landing: timeline merge")
    wrap(W, "_write_summary", "landing: multi_rank_summary.json")
    wrap(W, "_write_array", "landing: an array file")
    wrap(W, "_write_ranks_json", "landing: ranks.json")
    wrap(W, "_context", "landing: page context")
    wrap(W, "job_view", "landing: job view")

def timed_outdir(O):
    wrap(O.OutputDir, "__enter__", "OUT's temporary folder and its guard")
    wrap(O.OutputDir, "__exit__", "commit of OUT")

# Each module is timed as it is imported, where the command imports it (never earlier: when
# the job's modules are imported is part of what is measured).
HOOKS = {
    "tlscope.pipeline.ranks": timed_ranks,
    "tlscope.write.landing.writer": timed_landing,
    "tlscope.write.outdir": timed_outdir,
    "tlscope.pipeline.parse": lambda P: wrap(P, "classify", "classify the input"),
    "tlscope.pipeline.single": lambda S: note("imported: the parse of a log (pipeline/single.py)"),
}
import importlib.abc, importlib.machinery
class Hooked(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name not in HOOKS:
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is None:
            return None
        execute = spec.loader.exec_module
        def exec_module(module):
            execute(module)
            HOOKS[name](module)
        spec.loader.exec_module = exec_module
        return spec
sys.meta_path.insert(0, Hooked())
import atexit, io, contextlib
from tlscope.cli import console_main
def last_words():
    use = resource.getrusage(resource.RUSAGE_SELF)
    note("parent cpu %.3f" % (use.ru_utime + use.ru_stime))
atexit.register(last_words)
sys.argv = ["tlscope", logs, "-o", out, "--overwrite", "--no-browser", "-j", jobs]
with contextlib.redirect_stdout(io.StringIO()):
    try:
        console_main()  # as the console script: its collector settings and its exit
    except SystemExit:
        note("command returned")
        raise
"""


def run_once(logs: Path, src: Path, jobs: int, work: Path) -> list[list[object]]:
    events = work / "events.jsonl"
    events.unlink(missing_ok=True)
    env = {**os.environ, "PYTHONPATH": str(src)}
    start = time.time()
    subprocess.run(
        [sys.executable, "-c", DRIVER, str(events), str(logs), str(work / "out"), str(jobs)], env=env, check=True
    )
    end = time.time()
    rows: list[list[object]] = [[start, 0, "launched", None]]
    rows += [json.loads(line) for line in events.read_text().splitlines()]
    rows.append([end, 0, "process exited", None])
    return rows


def show(rows: list[list[object]], verbose: bool = True) -> dict[str, float]:
    t0 = float(rows[0][0])  # type: ignore[arg-type]
    parent = next(int(r[1]) for r in rows if r[2] == "process (after the interpreter)")  # type: ignore[call-overload]
    workers = sorted({int(r[1]) for r in rows if r[2] == "rank start"})  # type: ignore[call-overload]
    for r in rows:
        t, pid, what, rank = float(r[0]), int(r[1]), str(r[2]), r[3]  # type: ignore[arg-type, call-overload]
        who = "parent" if pid in (0, parent) else f"worker {workers.index(pid) if pid in workers else '?'}"
        if verbose:
            print(f"{(t - t0) * 1000:8.1f} ms  {who:9}  {what}{'' if rank is None else f' {rank}'}")
    starts = [float(r[0]) for r in rows if r[2] == "rank start"]  # type: ignore[arg-type]
    ends = [float(r[0]) for r in rows if r[2] == "rank end"]  # type: ignore[arg-type]
    firsts = [min(float(r[0]) for r in rows if r[2] == "rank start" and r[1] == w) for w in workers]  # type: ignore[arg-type]
    lasts = [max(float(r[0]) for r in rows if r[2] == "rank end" and r[1] == w) for w in workers]  # type: ignore[arg-type]
    cpu = next(float(str(r[2]).split()[-1]) for r in rows if str(r[2]).startswith("parent cpu"))
    # The parent's own CPU (process time) when it hands out the first rank: its imports and
    # preparation, steadier than wall times on a shared machine.
    handed = next((float(r[4]) for r in rows if r[2] == "first rank handed out"), float("nan"))  # type: ignore[arg-type]
    last = max(float(r[0]) for r in rows if r[2] == "result taken")  # type: ignore[arg-type]
    after = [float(r[4]) for r in rows if r[1] == parent and len(r) > 4 and float(r[0]) >= last]  # type: ignore[arg-type]
    # Each worker's CPU (process time since its fork) at its last note: with the parent's CPU
    # before the first rank and after the last result, the job's critical path in CPU time, the
    # wall it would take on two idle cores (the load-independent figure of the wall).
    worker_cpu = [max(float(r[4]) for r in rows if r[1] == w and len(r) > 4) for w in workers]  # type: ignore[arg-type]
    first_cpu, later_cpu = _rank_cpu(rows, workers)
    figures = {
        "wall_ms": (float(rows[-1][0]) - t0) * 1000,  # type: ignore[arg-type]
        "before_first_rank_ms": (min(starts) - t0) * 1000,
        "last_worker_start_ms": (max(firsts) - t0) * 1000,
        "tail_one_worker_ms": (max(lasts) - min(lasts)) * 1000,
        "after_last_rank_ms": (float(rows[-1][0]) - max(ends)) * 1000,  # type: ignore[arg-type]
        "ranks_busy_ms": (max(ends) - min(starts)) * 1000,
        "parent_cpu_s": cpu,
        "parent_cpu_before_first_rank_ms": handed * 1000,
        "parent_cpu_after_last_result_ms": (max(after) - min(after)) * 1000 if after else float("nan"),
        "workers_cpu_ms": sum(worker_cpu) * 1000,
        "critical_path_cpu_ms": (handed + max(worker_cpu)) * 1000
        + ((max(after) - min(after)) * 1000 if after else 0.0),
        "first_rank_cpu_ms": first_cpu,
        "later_rank_cpu_ms": later_cpu,
    }
    print(json.dumps({k: round(v, 1 if k.endswith("ms") else 3) for k, v in figures.items()}))
    return figures


def _rank_cpu(rows: list[list[object]], workers: list[int]) -> tuple[float, float]:
    """The mean CPU (process time) of a worker's first rank and of its later ranks, in ms: what
    a rank costs a worker that has parsed nothing yet (its warm-ups, and the job's shared files
    made by whichever rank meets them first) against one that has."""
    first: list[float] = []
    later: list[float] = []
    for w in workers:
        kinds = ("rank start", "rank end")
        marks = [(str(r[2]), float(r[4])) for r in rows if r[1] == w and len(r) > 4 and r[2] in kinds]  # type: ignore[arg-type]
        spans = [end - start for (a, start), (b, end) in itertools.pairwise(marks) if (a, b) == kinds]
        first += spans[:1]
        later += spans[1:]
    mean = statistics.fmean
    return (mean(first) * 1000 if first else float("nan")), (mean(later) * 1000 if later else float("nan"))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("logs", type=Path, help="a folder of rank logs")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--src", type=Path, default=REPO / "src", help="the tlscope tree to run (its src/)")
    parser.add_argument("-j", "--jobs", type=int, default=2)
    parser.add_argument("--quiet", action="store_true", help="print each run's figures only")
    args = parser.parse_args(argv)
    runs: list[dict[str, float]] = []
    with tempfile.TemporaryDirectory(prefix="tlscope-ranks-timeline-") as work:
        for i in range(args.runs):
            print(f"-- run {i + 1}, load {os.getloadavg()[0]:.1f}")
            rows = run_once(args.logs.resolve(), args.src.resolve(), args.jobs, Path(work))
            runs.append(show(rows, verbose=not args.quiet))
    print("median:", json.dumps({k: round(statistics.median(r[k] for r in runs), 1) for k in runs[0]}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
