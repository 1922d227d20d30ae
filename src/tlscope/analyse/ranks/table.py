"""Beyond tlparse: the per-rank table with outliers marked, and the compile-id matrix."""

from __future__ import annotations

import statistics
from collections.abc import Sequence

import msgspec

from tlscope.analyse.ranks.compare import OUTSIDE_COMPILE
from tlscope.analyse.ranks.divergence import RankLine
from tlscope.analyse.ranks.rank_summary import CompileInfo, RankSummary

#: A rank is "slow" when its total compile time exceeds the median by this factor.
SLOW_FACTOR = 1.2


class RankRow(msgspec.Struct, frozen=True):
    rank: int
    #: The rank's figures: its ranks.json line (analyse/ranks/divergence.py), not a count of its own.
    line: RankLine
    #: Why this rank stands out: "slowest", "slow", "more compilations", "fewer compilations",
    #: "failures", "errors" (malformed artifacts), "not parsed".
    marks: list[str]


def rank_table(ranks: Sequence[RankSummary]) -> list[RankRow]:
    """One row per rank (ascending) with its outlier marks.

    Marks need something to compare with: with one rank nothing is an outlier. The slowest
    rank is marked only when ranks differ; compilation counts are compared to the most
    common count, so the odd rank (not the majority) is the one marked.
    """
    parsed = [r for r in ranks if r.parsed]
    times = [r.line.compile_time_s for r in parsed]
    counts = [r.line.compiles for r in parsed]
    usual = statistics.mode(counts) if counts else 0
    median = statistics.median(times) if times else 0.0
    slowest = max(times) if times else 0.0
    rows = []
    for r in sorted(ranks, key=lambda s: s.rank):
        marks: list[str] = []
        if not r.parsed:
            marks.append("not parsed")
        elif len(parsed) > 1:
            t = r.line.compile_time_s
            if t == slowest and slowest > min(times):
                marks.append("slowest")
            elif median > 0 and t > median * SLOW_FACTOR:
                marks.append("slow")
            if r.line.compiles > usual:
                marks.append("more compilations")
            elif r.line.compiles < usual:
                marks.append("fewer compilations")
        if r.line.failures:
            marks.append("failures")
        if r.errors:
            marks.append("errors")
        rows.append(RankRow(rank=r.rank, line=r.line, marks=marks))
    return rows


class MatrixRow(msgspec.Struct, frozen=True):
    compile_id: str
    #: rank -> its compile of this id, None where the rank did not compile it.
    cells: dict[int, CompileInfo | None]
    #: True when not every rank compiled it, or statuses differ.
    odd: bool


def compile_id_matrix(ranks: Sequence[RankSummary]) -> list[MatrixRow]:
    """Which rank compiled each compile id, with its status and time; odd rows flagged.

    Ids come from compile_directory.json and the compilation metrics (a compile id with
    artifacts but no metrics and no compiles.json status shows `metrics_missing`, as tlparse's
    trie shows "missing").
    """
    order = sorted(r.rank for r in ranks if r.parsed)
    by_rank = {r.rank: r for r in ranks if r.parsed}
    ids: set[str] = set()
    for r in by_rank.values():
        ids.update(c for c in r.compile_ids if c != OUTSIDE_COMPILE)
        ids.update(r.compiles)
    rows = []
    for cid in sorted(ids, key=_cid_key):
        cells: dict[int, CompileInfo | None] = {}
        for rank in order:
            r = by_rank[rank]
            info = r.compiles.get(cid)
            if info is None and cid in r.compile_ids:
                info = CompileInfo(status="metrics_missing")
            cells[rank] = info
        statuses = {c.status if c else None for c in cells.values()}
        rows.append(MatrixRow(compile_id=cid, cells=cells, odd=len(statuses) > 1))
    return rows


def _cid_key(cid: str) -> tuple[tuple[int, int | str], ...]:
    """Natural order: [0/2] before [0/10], [!1/0/0] after the plain ids."""
    parts: list[tuple[int, int | str]] = []
    for piece in cid.strip("[]").replace("!", "~/").replace("_", "/").split("/"):
        parts.append((0, int(piece)) if piece.isdigit() else (1, piece))
    return tuple(parts)
