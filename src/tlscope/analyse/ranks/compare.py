"""Cross-rank comparisons over RankSummary lists: pure functions, deterministic results.

Groups are listed by their lowest rank (tlparse prints them in hash-map order).
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Callable, Iterable, Iterator, Sequence
from decimal import ROUND_HALF_UP, Decimal
from enum import Enum

import msgspec

from tlscope.analyse.ranks.rank_summary import RankSummary

#: Events logged outside any compilation; not a compilation, so never a divergence.
OUTSIDE_COMPILE = "[-/-]"


def group_ranks(keys: Iterable[tuple[int, str]]) -> list[list[int]]:
    """Ranks grouped by equal key ((rank, key) pairs); groups ordered by their lowest rank, ranks
    ascending. Folded as the pairs come: each distinct key is kept once, not a key per rank (a
    job's summaries are read one at a time)."""
    groups: dict[str, list[int]] = {}
    for rank, key in keys:
        groups.setdefault(key, []).append(rank)
    for group in groups.values():
        group.sort()
    return sorted(groups.values(), key=lambda g: g[0])


def compile_id_divergence(ranks: Iterable[RankSummary]) -> list[list[int]]:
    """Groups of ranks that compiled the same ids; more than one group means divergence.

    `[-/-]` is left out: tlparse counts it, so a rank that merely logged an event outside any
    compilation looked divergent although every rank compiled the same ids.
    """
    return group_ranks((r.rank, ",".join(c for c in r.compile_ids if c != OUTSIDE_COMPILE)) for r in ranks)


def cache_divergence(ranks: Iterable[RankSummary]) -> list[list[int]]:
    return group_ranks((r.rank, r.cache_pattern) for r in ranks)


def collective_divergence(ranks: Iterable[RankSummary]) -> list[list[int]]:
    """Ranks grouped by their collective sequence (all graphs' ops, graph name order)."""
    return group_ranks((r.rank, ",".join(op for g in r.schedules for op in g.ops)) for r in ranks)


def tensor_meta_divergence(ranks: Iterable[RankSummary]) -> list[list[int]]:
    """Ranks grouped by tensor-meta signature; ranks without the artifact are not grouped."""
    return group_ranks((r.rank, ",".join(fp for _, fp in r.tensor_meta)) for r in ranks if r.tensor_meta)


# -- runtime ----------------------------------------------------------------------------------


class GraphDelta(msgspec.Struct, frozen=True):
    graph: str
    delta_ms: float
    fastest_rank: int
    fastest_ms: float
    slowest_rank: int
    slowest_ms: float


def round_ms(ns: float) -> float:
    """ns -> ms, 3 decimals, half away from zero (as tlparse rounds)."""
    quantum = Decimal("0.001")
    value = Decimal(repr(ns / 1e6)).quantize(quantum, rounding=ROUND_HALF_UP)
    return float(value)


def runtime_deltas(ranks: Iterable[RankSummary]) -> list[GraphDelta] | None:
    """Per graph index, the fastest and slowest rank; None when ranks compiled different counts.

    Graphs are aligned by name order within each rank (tlparse aligns by directory order).
    Ties go to the highest rank, as in tlparse. `ranks` in rank order, folded as they come:
    per graph the first rank's name and the fastest and slowest so far, never every rank's totals.
    """
    names: list[str] | None = None
    fastest: list[tuple[int, float]] = []
    slowest: list[tuple[int, float]] = []
    same_counts = True
    for r in ranks:
        if not r.runtimes:
            continue
        totals = [sum(ns for _, ns in g.ops) for g in r.runtimes]
        if names is None:
            names = [g.graph for g in r.runtimes]
            fastest = [(r.rank, total) for total in totals]
            slowest = list(fastest)
        elif len(totals) != len(names):
            same_counts = False
        elif same_counts:
            for i, total in enumerate(totals):
                if total <= fastest[i][1]:
                    fastest[i] = (r.rank, total)
                if total >= slowest[i][1]:
                    slowest[i] = (r.rank, total)
    if names is None:
        return []
    if not same_counts:
        return None
    rows = [
        GraphDelta(
            graph=name,
            delta_ms=round_ms(slow[1] - fast[1]),
            fastest_rank=fast[0],
            fastest_ms=round_ms(fast[1]),
            slowest_rank=slow[0],
            slowest_ms=round_ms(slow[1]),
        )
        for name, fast, slow in zip(names, fastest, slowest, strict=True)
    ]
    return sorted(rows, key=lambda row: row.graph)


def fxhash_rank_graph(rank: int, graph: str) -> int:
    """Low 32 bits of rustc's FxHash64 of (rank: u32, graph: str): tlparse's thread id."""
    seed, mask = 0x517CC1B727220A95, (1 << 64) - 1

    def add(h: int, word: int) -> int:
        return ((((h << 5) | (h >> 59)) & mask) ^ word) * seed & mask

    h = add(0, rank & 0xFFFFFFFF)
    data = graph.encode()
    i = 0
    while len(data) - i >= 8:
        h = add(h, int.from_bytes(data[i : i + 8], "little"))
        i += 8
    if len(data) - i >= 4:
        h = add(h, int.from_bytes(data[i : i + 4], "little"))
        i += 4
    for byte in data[i:]:
        h = add(h, byte)
    h = add(h, 0xFF)
    return h & 0xFFFFFFFF


def runtime_trace(ranks: Sequence[RankSummary]) -> Iterator[list[dict[str, object]]]:
    """chromium_trace_with_runtime.json's events, a list at a time (their concatenation is the
    file's array): each graph's ops back to back on its own thread, a rank's after another's,
    then each rank's process and thread names. `ranks` in rank order; read twice (a job's
    summaries are decoded again at each pass: the events and names of every rank are never held
    at once, only the numbers of the ranks that estimated runtimes)."""
    pids = array("q")
    for summary in ranks:
        if summary.runtimes:
            pids.append(summary.rank)
            yield _runtime_ops(summary)
    for pid in pids:
        yield [
            {"name": "process_name", "ph": "M", "pid": pid, "args": {"name": f"Rank {pid}"}},
            {"name": "process_sort_index", "ph": "M", "pid": pid, "args": {"sort_index": pid}},
        ]
    for summary in ranks:
        if summary.runtimes:
            yield _thread_names(summary)


def _runtime_ops(summary: RankSummary) -> list[dict[str, object]]:
    """A rank's runtime estimations as chromium events: each graph's ops on its own thread."""
    events: list[dict[str, object]] = []
    for graph in summary.runtimes:
        tid = fxhash_rank_graph(summary.rank, graph.graph)
        ts = 0
        for name, ns in graph.ops:
            dur = max(1, math.ceil(ns / 1000))
            args = {"graph": graph.graph, "rank": summary.rank, "runtime_ns": int(ns)}
            events.append(
                {"name": name, "ph": "X", "ts": ts, "dur": dur, "pid": summary.rank, "tid": tid,
                 "cat": "runtime", "args": args}
            )  # fmt: skip
            ts += dur
    return events


def _thread_names(summary: RankSummary) -> list[dict[str, object]]:
    """A rank's graphs' threads named and ordered (by graph name), as chromium metadata events."""
    pid, events = summary.rank, []
    threads = sorted((graph.graph, fxhash_rank_graph(pid, graph.graph)) for graph in summary.runtimes)
    for index, (name, tid) in enumerate(threads):
        events.append({"name": "thread_name", "ph": "M", "pid": pid, "tid": tid, "args": {"name": f"graph {name}"}})
        events.append({"name": "thread_sort_index", "ph": "M", "pid": pid, "tid": tid, "args": {"sort_index": index}})
    return events


# -- execution order --------------------------------------------------------------------------


class Issue(str, Enum):
    SCHEDULE_MISMATCH = "schedule_mismatch"
    CACHE_MISMATCH = "cache_mismatch"


class OrderRow(msgspec.Struct, frozen=True):
    index: int
    by_rank: dict[int, str]
    issues: list[Issue]


def analyze_execution_order(
    orders: dict[int, list[str]],
    schedules: dict[tuple[int, str], list[str]],
    cache: dict[tuple[int, str], str],
) -> list[OrderRow]:
    """tlparse's analysis: step through each rank's executed compile ids side by side."""
    rows: list[OrderRow] = []
    width = max((len(o) for o in orders.values()), default=0)
    for index in range(width):
        by_rank = {r: orders[r][index] for r in sorted(orders) if index < len(orders[r])}
        if not by_rank:
            continue
        issues: list[Issue] = []
        if _differs([schedules.get((r, c)) for r, c in by_rank.items()], lambda v: v is not None):
            issues.append(Issue.SCHEDULE_MISMATCH)
        if _differs([cache.get((r, c)) for r, c in by_rank.items()], bool):
            issues.append(Issue.CACHE_MISMATCH)
        rows.append(OrderRow(index, by_rank, issues))
    return rows


def _differs(values: list[object], present: Callable[[object], bool]) -> bool:
    kept = [msgspec.json.encode(v) for v in values if present(v)]
    return len(kept) >= 2 and len(set(kept)) > 1


class OrderSummary(msgspec.Struct, frozen=True):
    order_differs: bool
    schedule_ranks: list[int]
    cache_ranks: list[int]


def execution_order_summary(ranks: Iterable[RankSummary]) -> OrderSummary | None:
    """None when fewer than two ranks logged their graph execution order."""
    orders = {r.rank: r.execution_order for r in ranks if r.execution_order is not None}
    if len(orders) < 2:
        return None
    schedules: dict[tuple[int, str], list[str]] = {}
    cache: dict[tuple[int, str], str] = {}
    for r in ranks:
        for g in r.schedules:
            schedules.setdefault((r.rank, r.dir_to_cid.get(g.graph, g.graph)), []).extend(g.ops)
        for cid, status in r.cache_status.items():
            cache[(r.rank, cid)] = status
    rows = analyze_execution_order(orders, schedules, cache)
    return OrderSummary(
        order_differs=any(len(set(row.by_rank.values())) > 1 for row in rows),
        schedule_ranks=_ranks_with(rows, Issue.SCHEDULE_MISMATCH),
        cache_ranks=_ranks_with(rows, Issue.CACHE_MISMATCH),
    )


def _ranks_with(rows: list[OrderRow], issue: Issue) -> list[int]:
    return sorted({r for row in rows if issue in row.issues for r in row.by_rank})
