"""Per-stage CPU cost of one parse: where a run's time goes, so every stage has a budget.

    python bench/stages.py corpus/big/dedicated_log_torch_trace_*.log          # 3 runs, medians
    python bench/stages.py LOG --runs 5 --json bench/results/stages.json
    python bench/stages.py LOG --profile 30        # and cProfile's 30 most expensive functions
    python bench/stages.py --ranks /work/big/ranks/logs_64 --warm 4 --count 12   # one rank of a job

The parse runs in this process (`pipeline.parse.parse_log`, every output written, as `tlscope LOG
-o OUT` does) with the report's pages rendered in-process (`highlight_workers=1`), so the page
workers' share is measured too. Each stage is a function wrapped with a timer of process CPU
time; a stage's figure is its *own* time, without the stages it calls (the JSON boundary inside
the reader or an analysis is the boundary's, not the reader's). What no stage claims (the
pipeline's loop, the output folder's commit) is "other". The timers add some cost per call
(about 1 µs), reported as the run's total with and without them.

Stages (see docs/ARCHITECTURE.md for what each module does):

* reader: lines -> typed records (`LogReader`'s iteration);
* JSON boundary: every `json_boundary.decode` (msgspec decode plus the depth/number check);
* format writer: raw.jsonl, payloads/, chromium_events.json (`FormatWriter`);
* graphs: graphs/<md5>.json (`write/graph_store.py`): the main pass's share, and the graphs read
  and written, which a worker process does beside the main pass in a normal run (in-process here,
  so that its CPU is counted, as the report's pages are);
* answers: the sink's own work, the compile fold (compiles.json), the log-size fold, and writing
  both files;
* report: the per-record handlers (`dispatch`), the pages rendered from one payload (output code
  highlighting, JSON artifacts, kernel stack-trace pages), the flame graph, and the end of the
  run (index.html, compile_directory.json, raw.log).

`--ranks DIR` measures one rank of a job instead (issue 22): DIR's rank logs are parsed in this
process as a job's warm forked worker parses them (`pipeline.ranks.parse_rank` with the job's
options: multi-rank report, pages in-process, one payload store and page store per job), after
`--warm` ranks that fill the job's stores and caches as a worker's first ranks do; the figures are
per rank (the total over `--count` ranks divided by their number), each run a fresh job.

Module paths are looked up by name (a stage whose module moved is reported missing, not an
error): the figures are a measurement of the tree it runs in.
"""

from __future__ import annotations

import argparse
import cProfile
import importlib
import io
import json
import pstats
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
#: `--src DIR` measures another tree (e.g. a revision's src/ from `git archive`, as bench/ab.py
#: extracts it): read before anything of tlscope is imported.
_SRC = sys.argv[sys.argv.index("--src") + 1] if "--src" in sys.argv[:-1] else str(REPO / "src")
sys.path.insert(0, _SRC)

#: (stage, candidate "module:Class.method" or "module:function" targets). The first target that
#: exists is wrapped; every listed one that exists is, for functions imported by name elsewhere.
STAGES: list[tuple[str, list[str]]] = [
    ("format writer", ["tlscope.write.format:FormatWriter.feed", "tlscope.write.format:FormatWriter.finish"]),
    # Graphs as data (issue 23): the main pass's share (which payloads print a graph, the jobs
    # queued) and the graphs read and written, which a worker process does beside the pass; here
    # in-process (instrument() keeps the worker from starting), so its CPU is counted.
    ("format writer: graphs (main pass)", ["tlscope.write.graph_store:GraphStore.add"]),
    ("graphs files (a worker process in a normal run)", ["tlscope.write.graph_store:write_graph"]),
    ("answers: sink", ["tlscope.write.answers_sink:AnswersSink.feed"]),
    ("answers: compile fold", ["tlscope.analyse.fold.compile_fold:CompileFold.feed"]),
    ("answers: log size fold", ["tlscope.analyse.logsize_fold:LogSizeFold.feed"]),
    ("answers: files written", ["tlscope.write.answers_sink:AnswersSink.finish"]),
    ("report: per-record handlers", ["tlscope.write.report.sink:ReportSink.feed"]),
    ("report: end (index, directory, raw.log)", ["tlscope.write.report.sink:ReportSink.finish"]),
    ("report: flame graph", ["tlscope.write.report.answer_sections:write_flame_page"]),
    # A rank of a job (--ranks): its facts for the landing page, its parity file, its manifest.
    ("rank: facts (summary, parity)", ["tlscope.pipeline.rankfacts:RankFacts.feed",
                                       "tlscope.pipeline.rankfacts:RankFacts.finish",
                                       "tlscope.pipeline.ranks:_write_parity"]),
    ("manifest", ["tlscope.pipeline.single:_manifest"]),
]
#: The page jobs (write/report/derived.py's JOBS), by kind.
PAGE_JOBS = {"code": "report: output code highlighting", "json": "report: JSON artifact pages",
             "readable": "report: kernel stack-trace pages"}  # fmt: skip
BOUNDARY_MODULES = ["tlscope.read.json_boundary", "tlscope.format.json_boundary"]


class Timers:
    """Own CPU time per stage: a stage's time minus that of the stages running inside it."""

    def __init__(self) -> None:
        self.own: dict[str, float] = defaultdict(float)
        self.calls: dict[str, int] = defaultdict(int)
        self._inner: list[float] = []

    def wrap(self, name: str, func: Callable[..., Any]) -> Callable[..., Any]:
        clock = time.process_time
        inner = self._inner
        own, calls = self.own, self.calls

        def timed(*args: Any, **kwargs: Any) -> Any:
            start = clock()
            inner.append(0.0)
            try:
                return func(*args, **kwargs)
            finally:
                elapsed = clock() - start
                own[name] += elapsed - inner.pop()
                calls[name] += 1
                if inner:
                    inner[-1] += elapsed

        timed.__wrapped__ = func  # type: ignore[attr-defined]
        return timed

    def iterate(self, name: str, items: Iterable[Any]) -> Iterator[Any]:
        """Each `next` of `items` timed as stage `name` (the reader is a generator)."""
        iterator = iter(items)
        step = self.wrap(name, lambda: next(iterator, _END))
        while (item := step()) is not _END:
            yield item


_END = object()


def _resolve(target: str) -> tuple[Any, str, Any] | None:
    module_name, _, attr = target.partition(":")
    try:
        owner: Any = importlib.import_module(module_name)
    except ImportError:
        return None
    *path, name = attr.split(".")
    for part in path:
        owner = getattr(owner, part, None)
        if owner is None:
            return None
    func = getattr(owner, name, None)
    return (owner, name, func) if func is not None else None


def instrument(timers: Timers) -> list[str]:
    """Wrap every stage's functions; returns the stages not found in this tree."""
    missing: list[str] = []
    for stage, targets in STAGES:
        found = [r for r in map(_resolve, targets) if r is not None]
        if not found:
            missing.append(stage)
        for owner, name, func in found:
            setattr(owner, name, timers.wrap(stage, func))
    derived = importlib.import_module("tlscope.write.report.derived")
    for kind, stage in PAGE_JOBS.items():
        if kind in derived.JOBS:
            derived.JOBS[kind] = timers.wrap(stage, derived.JOBS[kind])
    missing += _instrument_boundary(timers)
    store = _module("tlscope.write.graph_store")
    if store is not None and hasattr(store, "GraphStore"):  # graphs in-process, timed (see STAGES)
        store.GraphStore._start = lambda self: setattr(self, "_inline", True)
    return missing


def _instrument_boundary(timers: Timers) -> list[str]:
    """`decode` is imported by name into every module that decodes log JSON: wrap each binding."""
    boundary = next((m for m in map(_module, BOUNDARY_MODULES) if m is not None), None)
    if boundary is None:
        return ["JSON boundary"]
    original = boundary.decode
    timed = timers.wrap("JSON boundary", original)
    importlib.import_module("tlscope.write.report.assembly")  # every sink's modules, imported
    for module in list(sys.modules.values()):
        if getattr(module, "__name__", "").startswith("tlscope") and getattr(module, "decode", None) is original:
            module.decode = timed  # type: ignore[attr-defined]
    return []


def _module(name: str) -> Any:
    try:
        return importlib.import_module(name)
    except ImportError:
        return None


def one_run(log: Path, out: Path, timers: Timers | None, profile: cProfile.Profile | None = None) -> float:
    """CPU seconds of one parse of `log` into `out` (pages in-process)."""
    from tlscope.write.run_options import ParseOptions
    from tlscope.pipeline.parse import parse_log
    from tlscope.write.report.options import ReportOptions

    derived = importlib.import_module("tlscope.write.report.derived")
    if hasattr(derived, "_memo"):  # in-process pages are kept for the process's next run: not here
        derived._memo = type(derived._memo)(16 * 1024 * 1024)
    highlight = _module("tlscope.write.report.highlight")
    if hasattr(highlight, "_SEGMENTS"):  # nor the pieces of highlighted code (a page worker's start)
        highlight._SEGMENTS = type(highlight._SEGMENTS)(highlight._SEGMENTS._budget)
    options = ParseOptions(report=ReportOptions(highlight_workers=1))
    track = (lambda records, reader: timers.iterate("reader", records)) if timers else None
    start = time.process_time()
    if profile is not None:
        profile.enable()
    if track is None:
        parse_log(log, out, options, overwrite=True)
    else:
        parse_log(log, out, options, overwrite=True, track=track)
    if profile is not None:
        profile.disable()
    return time.process_time() - start


def rank_run(logs_dir: Path, out: Path, warm: int, count: int, timers: Timers | None,
             profile: cProfile.Profile | None = None) -> float:
    """CPU seconds per rank of `count` ranks of a job parsed after `warm` ranks, in a fresh job folder."""
    import msgspec

    from tlscope.format import layout
    from tlscope.pipeline import ranks
    from tlscope.read.inputs import discover
    from tlscope.write.outdir import OutputDir
    from tlscope.write.report.assembly import preload_report, report_sinks
    from tlscope.write.run_options import ParseOptions

    logs, _ = discover(logs_dir)
    if timers is not None and not hasattr(ranks.run, "__wrapped__"):  # the reader, timed as in one_run
        plain_run = ranks.run

        def tracked(*args: Any, **kwargs: Any) -> Any:
            return plain_run(*args, track=lambda records, reader: timers.iterate("reader", records), **kwargs)

        tracked.__wrapped__ = plain_run  # type: ignore[attr-defined]
        ranks.run = tracked
    options = ParseOptions()
    # As parse_ranks sets them for its workers.
    report = msgspec.structs.replace(options.report, multi_rank=True, highlight_workers=1)
    options = msgspec.structs.replace(options, report=report)
    preload_report()
    target = OutputDir(out, overwrite=True)
    target.check()
    spent = 0.0
    with target:
        work = [(log, str(target.path(layout.rank_dir(log.rank)))) for log in logs][: warm + count]
        for i, (log, folder) in enumerate(work):
            timed = i >= warm
            if i == warm and timers is not None:  # the warm-up ranks' figures are not counted
                timers.own.clear()
                timers.calls.clear()
            start = time.process_time()
            if timed and profile is not None:
                profile.enable()
            result = ranks.parse_rank(log.path, log.rank, folder, options, report_sinks)
            if timed and profile is not None:
                profile.disable()
            if timed:
                spent += time.process_time() - start
            if not result.summary.parsed:
                raise SystemExit(f"rank {log.rank} failed: {result.summary.errors}")
    return spent / max(1, len(work) - warm)


def table(rows: list[tuple[str, list[float], list[int]]], totals: list[float]) -> str:
    total = statistics.median(totals)
    lines = ["| stage | CPU s (median) | range | share | calls |", "|---|--:|--:|--:|--:|"]
    for stage, values, calls in sorted(rows, key=lambda r: -statistics.median(r[1])):
        med = statistics.median(values)
        lines.append(f"| {stage} | {med:.3f} | {min(values):.3f}–{max(values):.3f} | {100 * med / total:.0f}% | "
                     f"{calls[0]:,} |")  # fmt: skip
    lines.append(f"| **total (instrumented)** | **{total:.3f}** | {min(totals):.3f}–{max(totals):.3f} | 100% | |")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("log", type=Path, nargs="?", help="a log (or .gz log)")
    parser.add_argument("--runs", type=int, default=3, help="instrumented runs (default 3), after one warm-up")
    parser.add_argument("--json", type=Path, help="write every run's figures here")
    parser.add_argument("--profile", type=int, default=0, metavar="N", help="also print cProfile's top N functions")
    parser.add_argument("--src", default=_SRC, help="the src/ folder whose tlscope to measure (default: this checkout's)")
    parser.add_argument("--ranks", type=Path, metavar="DIR", help="measure one rank of the job of DIR's rank logs")
    parser.add_argument("--warm", type=int, default=4, help="--ranks: ranks parsed first, not counted (default 4)")
    parser.add_argument("--count", type=int, default=12, help="--ranks: ranks measured per run (default 12)")
    args = parser.parse_args(argv)
    if (args.log is None) == (args.ranks is None):
        parser.error("give a LOG or --ranks DIR")
    with tempfile.TemporaryDirectory(prefix="tlscope-stages-") as tmp:
        out = Path(tmp) / "out"

        def measure(timers: Timers | None, profile: cProfile.Profile | None = None) -> float:
            if args.ranks is not None:
                return rank_run(args.ranks, out, args.warm, args.count, timers, profile)
            return one_run(args.log, out, timers, profile)

        per = args.count if args.ranks is not None else 1  # stage figures per rank
        measure(None)  # warm-up: imports, page cache, template cache
        plain = [measure(None) for _ in range(max(1, args.runs // 2))]
        timers_runs: list[Timers] = []
        totals: list[float] = []
        timers = Timers()
        missing = instrument(timers)
        for _ in range(args.runs):
            timers.own.clear()
            timers.calls.clear()
            totals.append(measure(timers))
            snapshot = Timers()
            snapshot.own.update({k: v / per for k, v in timers.own.items()})
            snapshot.calls.update({k: round(v / per) for k, v in timers.calls.items()})
            timers_runs.append(snapshot)
        profile_text = _profile(measure, args.profile) if args.profile else ""
    stages = sorted({s for t in timers_runs for s in t.own})
    rows = [(s, [t.own.get(s, 0.0) for t in timers_runs], [t.calls.get(s, 0) for t in timers_runs]) for s in stages]
    other = [total - sum(t.own.values()) for total, t in zip(totals, timers_runs, strict=True)]
    rows.append(("other (pipeline loop, OUT's commit, manifest)", other, [0]))
    if args.ranks is not None:
        print(f"per rank of {args.ranks} ({args.count} ranks after {args.warm} warm-up ranks, per run):")
    print(table(rows, totals))
    print(f"\nuninstrumented total CPU: median {statistics.median(plain):.3f} s ({len(plain)} runs: "
          f"{', '.join(f'{p:.3f}' for p in plain)}); stages not found in this tree: {missing or 'none'}")  # fmt: skip
    if profile_text:
        print(profile_text)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        data = {"log": str(args.log or args.ranks), "totals": totals, "uninstrumented": plain,
                "stages": {s: v for s, v, _ in rows}, "missing": missing}  # fmt: skip
        args.json.write_text(json.dumps(data, indent=2) + "\n")
    return 0


def _profile(measure: Callable[..., float], top: int) -> str:
    profile = cProfile.Profile()
    measure(None, profile)
    text = io.StringIO()
    pstats.Stats(profile, stream=text).sort_stats("tottime").print_stats(top)
    return text.getvalue()


if __name__ == "__main__":
    sys.exit(main())
