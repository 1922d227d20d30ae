"""What `tlscope summary` shows and `--json` prints: the four questions answered in one object.

A pure function of compiles.json's entries and distinct graph breaks, log_size.json and the
manifest, so the terminal, the JSON and `Trace.summary()` hold the same figures.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import msgspec

from tlscope.analyse.caches import CacheBypass, bypasses, logged_sum, missed_time, time_saved
from tlscope.analyse.flame import aoti_path, timed_compiles
from tlscope.analyse.fold.capture import renumbered_why
from tlscope.analyse.phase_words import backward_s, compile_seconds
from tlscope.analyse.ranks.divergence import Divergence, JobView, RankLine
from tlscope.analyse.ranks.job_answers import JobAnswers
from tlscope.analyse.ranks.stragglers import Stragglers
from tlscope.format.compiles import (
    AotInductorCompile,
    CompileEntry,
    DistinctGraphBreak,
    Dynamic,
    ExportCall,
    FirstAnswer,
    Fix,
    FrameShapes,
    GuardFailure,
    RecommendedFailure,
    Settings,
    SourceLocation,
    Symbol,
    Timing,
    Vllm,
    is_torch_wrapper,
)
from tlscope.format.logsize import LogSize, SizeStats
from tlscope.format.manifest import Manifest
from tlscope.model.problems import OUTPUT_KINDS

#: How many rows of each ranking are kept.
TOP = 10


class CompileRow(msgspec.Struct, kw_only=True):
    id: str
    status: str
    function: str | None
    #: `file:line` of the compile's innermost user-code frame when it is not in the function's own
    #: file (library code compiled, reached from there); null otherwise.
    called_from: str | None = None
    duration_s: float | None
    graph_breaks: int
    #: The seconds AOTAutograd took compiling this compile's backward, at the first backward call
    #: (after `duration_s`'s span: the compile's time is both); null when none was logged.
    backward_s: float | None = None
    #: compiles.json `capture`: `aot_compile`, `export` or `fullgraph` for a fullgraph capture. Since 1.20.
    capture: str | None = None
    #: How many compiles the id held: its forward metrics records (torch._dynamo.reset() numbers
    #: ids again, so one id can hold several), at least 1.
    compiles: int = 1
    #: compiles.json `time_fix` (1.49): the change that makes this slow compile faster (kind
    #: `regional`: compile each repeated block); null otherwise.
    time_fix: Fix | None = None


class RecompileRow(msgspec.Struct, kw_only=True):
    id: str
    function: str | None
    #: compilation_metrics.recompile_reason, verbatim.
    reason: str | None
    #: Every failed guard, newest cache entry first.
    reasons: list[GuardFailure]
    #: The plain-words explanation of the recommended guard failure (compiles.json
    #: `recompile.recommended`; the newest cache entry's in folders written before 1.9).
    explanation: str | None
    #: Which of `reasons` that is, and why it was chosen (null with no guard failure).
    recommended: RecommendedFailure | None = None
    #: What changed in the inputs, e.g. `L['x'] size: [4, 8] -> [5, 8]`.
    changes: list[str]
    #: When a size caused it: the change that avoids it (compiles.json `recompile.fix`, since 1.10).
    fix: Fix | None = None


class PhaseRow(msgspec.Struct, kw_only=True):
    name: str
    seconds: float
    compiles: int


class FunctionTime(msgspec.Struct, kw_only=True):
    """Compile time of one compiled function (the flame graph's leaves, summed)."""

    function: str
    #: Where the function is defined; for a module torch compiled through its wrapper `inner`
    #: (`Sequential.forward`: external_utils.py, torch's file) the user's line that first called it.
    file: str | None
    line: int | None
    seconds: float
    compiles: int


class CacheRates(msgspec.Struct, kw_only=True):
    hits: int
    misses: int
    bypasses: int
    #: hits / (hits + misses + bypasses); null with no lookup.
    hit_rate: float | None
    #: Per cache (`fx_graph`, `aotautograd`…): outcome -> count.
    by_cache: dict[str, dict[str, int]]
    #: The bypassed lookups by cache and torch's reason, the most first: compiles no warm start
    #: can load (analyse/caches.py).
    bypassed: list[CacheBypass] = []
    #: The compile time the hits saved, as logged (per compile: AOTAutograd's count when it hit,
    #: else its other hits' summed: analyse/caches.py `time_saved`); null when no hit logged one.
    saved_s: float | None = None
    #: The time the misses' compiles took (the FX graph cache's `time_taken_s`: Inductor's compile
    #: of each graph, which a warm cache would load instead); null when no miss logged one.
    missed_s: float | None = None


class LogSizeSummary(msgspec.Struct, kw_only=True):
    total_bytes: int
    total_lines: int
    by_event_key: dict[str, SizeStats]
    other: SizeStats
    #: The biggest kinds by the setting that makes PyTorch write them: setting -> bytes.
    by_setting: dict[str, int]


class ReusedId(msgspec.Struct, kw_only=True):
    """A compile id that held several compiles, or a failed compile before a later compile of the
    same id worked: PyTorch numbers compiles from `[0/0]` again after `torch._dynamo.reset()`
    (compiles.json `metrics_records`)."""

    id: str
    #: The failed compiles' failure types (e.g. `BackendCompilerFailed`), in log order.
    failed: list[str]
    #: Their compile time, seconds.
    failed_time_s: float
    #: Its forward compiles (`compilation_metrics` records), and the functions they compiled, in
    #: log order (`co_name`; `?` where a record named none). Since format 1.24.
    compiles: int = 0
    functions: list[str] = []
    #: Why the id held several: `ids are numbered again after torch._dynamo.reset()`, or for strict
    #: export's traces `strict export numbers compile ids from [0/0] again for each call`.
    why: str = ""


class Summary(msgspec.Struct, kw_only=True):
    torch_version: str | None
    #: The rank whose details follow, for a multi-rank trace (null for a single log).
    rank: int | None = None
    #: A multi-rank trace's every rank at a glance (compiles, compile time, breaks, recompiles,
    #: failures, cache), ranks ascending; empty for a single log.
    ranks: list[RankLine] = []
    #: How the ranks' compiles diverge (groups with identical compile sequences, ids not on every
    #: rank, one sentence per group); null for a single log.
    divergence: Divergence | None = None
    #: A job's stragglers (the rule, the median, the ranks it picked); null for one rank.
    stragglers: Stragglers | None = None
    #: A job's first answers, each line once with the ranks that say it (ranks.json's
    #: `first_answers`); null for one rank, or a job folder written before format 1.42.
    rank_answers: JobAnswers | None = None
    #: Compile ids per status.
    statuses: dict[str, int]
    #: The compiles' wall time (each one's `time.duration_s`: the dynamo span where logged, and its
    #: backward's, which AOTAutograd compiles at the first backward call, after the span); a rank's
    #: line in `ranks` sums `entire_frame_compile_time_s` instead, a little less (docs/MULTIRANK.md).
    compile_time_s: float
    compiles: list[CompileRow]
    graph_breaks: list[DistinctGraphBreak]
    recompiles: list[RecompileRow]
    failures: list[CompileEntry]
    #: Compile ids reused after torch._dynamo.reset() whose earlier compile failed (see ReusedId).
    reused: list[ReusedId] = []
    slowest_phases: list[PhaseRow]
    #: Compile time per compiled function, biggest first: where the flame graph is widest.
    slowest_functions: list[FunctionTime]
    cache: CacheRates
    log_size: LogSizeSummary
    #: Problems met reading the log and computing its answers, per kind (manifest.json's counts
    #: but the kinds of files summary does not write: `report`, `bad_graph`).
    problems: dict[str, int]
    #: Did the sizes change? Each frame compiled more than once, its graphs' input shapes per
    #: compile (compiles.json `input_shapes`, since 1.10).
    input_shapes: list[FrameShapes] = []
    #: Where each dynamic dimension comes from (compiles.json `symbols`, since 1.10).
    symbols: list[Symbol] = []
    #: Each torch.export call and how it ended (compiles.json `exports`, since 1.18).
    exports: list[ExportCall] = []
    #: What the calls cannot say (compiles.json `exports_note`, since 1.19).
    exports_note: str | None = None
    #: Each AOT Inductor compile (compiles.json `aot_inductor`, since 1.21); their times are in
    #: `compile_time_s`.
    aot_inductor: list[AotInductorCompile] = []
    #: Each vLLM compile: its config, compile ranges and pieces (compiles.json `vllm`, since 1.22).
    vllm: list[Vllm] = []
    #: What made inputs dynamic on torch's own, and the setting that asks for it (compiles.json
    #: `dynamic`, since 1.29).
    dynamic: Dynamic | None = None
    #: The compiles that ran under other settings than the first (compiles.json `settings`, since 1.29).
    settings: Settings | None = None
    #: The first answers in a line each (analyse/headline.py): what `tlscope LOG` says under its
    #: counts, the first failure, the most frequent graph break, the first recompile and its fix,
    #: the slowest compile.
    headline: list[str] = []


#: The problem kinds summary leaves out (model/problems.py's OUTPUT_KINDS), by name as manifest.json counts them.
_OUTPUT_KINDS = frozenset(kind.value for kind in OUTPUT_KINDS)


def summarise_trace(
    compiles: Sequence[CompileEntry],
    breaks: Sequence[DistinctGraphBreak],
    size: LogSize,
    manifest: Manifest,
    *,
    rank: int | None = None,
    job: JobView | None = None,
    input_shapes: Sequence[FrameShapes] = (),
    symbols: Sequence[Symbol] = (),
    exports: Sequence[ExportCall] = (),
    exports_note: str | None = None,
    aot_inductor: Sequence[AotInductorCompile] = (),
    vllm: Sequence[Vllm] = (),
    dynamic: Dynamic | None = None,
    settings: Settings | None = None,
    first_answers: Sequence[FirstAnswer] = (),
) -> Summary:
    real = [c for c in compiles if c.status != "outside"]
    problems = manifest.problems.counts
    return Summary(
        torch_version=manifest.torch_version,
        rank=rank,
        ranks=job.ranks if job is not None else [],
        divergence=job.divergence if job is not None else None,
        stragglers=job.stragglers if job is not None else None,
        rank_answers=job.first_answers if job is not None else None,
        statuses=dict(Counter(c.status for c in real).most_common()),
        compile_time_s=round(
            sum(compile_seconds(c) or 0.0 for c in real) + _seconds([c.time for c in aot_inductor]), 6
        ),
        compiles=[_compile_row(c) for c in real],
        graph_breaks=list(breaks),
        recompiles=[_recompile_row(c) for c in real if c.recompile is not None],
        failures=[c for c in real if c.failure is not None],
        reused=[r for c in real if c.status != "failed" and (r := _reused(c)) is not None],
        slowest_phases=_phases([*real, *aot_inductor]),
        slowest_functions=_functions(real, aot_inductor),
        cache=_cache(real),
        log_size=LogSizeSummary(
            total_bytes=size.total_bytes,
            total_lines=size.total_lines,
            by_event_key=size.by_event_key,
            other=size.other,
            by_setting={s.setting: s.bytes for s in size.by_setting},
        ),
        problems={k: n for k, n in problems.items() if k not in _OUTPUT_KINDS} if isinstance(problems, dict) else {},
        input_shapes=list(input_shapes),
        symbols=list(symbols),
        exports=list(exports),
        exports_note=exports_note,
        aot_inductor=list(aot_inductor),
        vllm=list(vllm),
        dynamic=dynamic,
        settings=settings,
        headline=[answer.text for answer in first_answers],
    )


def _seconds(times: Sequence[Timing | None]) -> float:
    return sum(t.duration_s or 0.0 for t in times if t is not None)


def _compile_row(entry: CompileEntry) -> CompileRow:
    return CompileRow(
        id=entry.id,
        status=entry.status,
        function=entry.function_name(),
        called_from=_called_from(entry),
        duration_s=entry.time.duration_s if entry.time else None,
        graph_breaks=len(entry.graph_breaks),
        backward_s=round(backward, 6) if (backward := backward_s(entry)) else None,
        capture=entry.capture,
        compiles=max(1, sum(1 for r in entry.metrics_records if r.kind == "compilation_metrics")),
        time_fix=entry.time_fix if isinstance(entry.time_fix, Fix) else None,
    )


def _called_from(entry: CompileEntry) -> str | None:
    frame, fn = entry.user_frame, entry.function
    if frame is None or frame.file is None or (fn is not None and fn.file == frame.file):
        return None
    return f"{frame.file.rsplit('/', 1)[-1]}:{frame.line}"


def _recompile_row(entry: CompileEntry) -> RecompileRow:
    recompile = entry.recompile
    assert recompile is not None
    failures = recompile.guard_failures
    chosen = recompile.recommended
    if chosen is not None and not 0 <= chosen.index < len(failures):
        chosen = None  # a hand-edited or damaged file: fall back to the newest entry
    return RecompileRow(
        id=entry.id,
        function=entry.function_name(),
        reason=recompile.reason,
        reasons=failures,
        recommended=chosen,
        explanation=recompile.explanation(),
        changes=[f"{c.said()} {c.what}: {c.before} -> {c.after}" for c in recompile.changes],
        fix=recompile.fix,
    )


def _phases(compiles: Sequence[CompileEntry | AotInductorCompile]) -> list[PhaseRow]:
    """Time per phase over all compiles (AOT Inductor's too), biggest first (`dynamo`, the whole, left out)."""
    totals: dict[str, list[float]] = {}
    for entry in compiles:
        for phase in entry.phases:
            if phase.name != "dynamo":
                total = totals.setdefault(phase.name, [0.0, 0])
                total[0] += phase.seconds
                total[1] += 1
    rows = [PhaseRow(name=n, seconds=round(t[0], 6), compiles=int(t[1])) for n, t in totals.items()]
    return sorted(rows, key=lambda r: -r.seconds)[:TOP]


def _functions(compiles: Sequence[CompileEntry], aot_inductor: Sequence[AotInductorCompile] = ()) -> list[FunctionTime]:
    """Compile time per compiled function, biggest first: each compile of an id that held several
    counts for its own function (flame.py `timed_compiles`); an AOT Inductor compile counts as the
    torch function the user called (`aoti_compile_and_package (AOT Inductor)`), at the call."""
    totals: dict[tuple[str, str | None, int | None], FunctionTime] = {}
    timed: list[tuple[tuple[str, str | None, int | None], float]] = []
    shown: dict[tuple[str, str | None, int | None], SourceLocation | None] = {}
    for entry in compiles:
        for _, fn, seconds in timed_compiles(entry):
            key = (fn.name or "?", fn.file, fn.line) if fn else ("?", None, None)
            raw = entry.function
            if raw is not None and fn is not None and fn.file == raw.file and is_torch_wrapper(raw):
                shown.setdefault(key, entry.user_frame)  # torch's file says nothing: the user's call
            timed.append((key, seconds))
    for aoti in aot_inductor:
        if aoti.time is not None and aoti.time.duration_s is not None:
            at = aoti.user_frame
            key = (aoti_path(aoti)[-1].name or "?", at.file if at else None, at.line if at else None)
            timed.append((key, aoti.time.duration_s))
    for key, seconds in timed:
        at = shown.get(key)
        file, line = (at.file, at.line) if at else key[1:]
        row = totals.setdefault(key, FunctionTime(function=key[0], file=file, line=line, seconds=0.0, compiles=0))
        row.seconds = round(row.seconds + seconds, 6)
        row.compiles += 1
    return sorted(totals.values(), key=lambda r: -r.seconds)[:TOP]


def _cache(compiles: Sequence[CompileEntry]) -> CacheRates:
    by_cache: dict[str, Counter[str]] = {}
    for entry in compiles:
        for lookup in entry.cache:
            by_cache.setdefault(lookup.cache, Counter())[lookup.outcome] += 1
    total: Counter[str] = sum(by_cache.values(), Counter())
    lookups = sum(total.values())
    return CacheRates(
        hits=total["hit"],
        misses=total["miss"],
        bypasses=total["bypass"],
        hit_rate=round(total["hit"] / lookups, 4) if lookups else None,
        by_cache={name: dict(counts) for name, counts in sorted(by_cache.items())},
        bypassed=bypasses(compiles) if total["bypass"] else [],
        saved_s=logged_sum(time_saved(e.cache) for e in compiles),
        missed_s=logged_sum(missed_time(e.cache) for e in compiles),
    )


def _reused(entry: CompileEntry) -> ReusedId | None:
    """The failed compiles an id held before its last one worked (None when it held none)."""
    failed = [r for r in entry.metrics_records if r.status == "failed"]
    forward = [r for r in entry.metrics_records if r.kind == "compilation_metrics"]
    if not failed and len(forward) < 2:
        return None
    types = [r.failure.type if r.failure is not None else "failed" for r in failed]
    return ReusedId(
        id=entry.id,
        failed=types,
        failed_time_s=round(sum(r.time_s or 0.0 for r in failed), 6),
        compiles=len(forward),
        functions=[r.co_name or "?" for r in forward],
        why=renumbered_why(entry.capture),
    )
