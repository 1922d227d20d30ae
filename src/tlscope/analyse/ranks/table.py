"""Beyond tlparse: the per-rank table with outliers marked, and the compile-id matrix."""

from __future__ import annotations

import math
import statistics
from array import array
from collections.abc import Iterable, Iterator, Mapping

import msgspec

from tlscope.analyse.ranks.compare import OUTSIDE_COMPILE
from tlscope.analyse.ranks.divergence import RankLine
from tlscope.analyse.ranks.frames import column_key
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


class RankTable:
    """One row per rank (ascending) with its outlier marks, made as the rows are iterated.

    Marks need something to compare with: with one rank nothing is an outlier. The slowest
    rank is marked only when ranks differ; compilation counts are compared to the most
    common count, so the odd rank (not the majority) is the one marked.
    Only the figures the marks compare (a time and a count per parsed rank) are kept; each
    iteration reads `ranks` again (a job's summaries are decoded from a file, one at a time).
    """

    def __init__(self, ranks: Iterable[RankSummary]) -> None:
        times: list[float] = []
        counts: list[int] = []
        numbers: list[int] = []
        for r in ranks:
            numbers.append(r.rank)
            if r.parsed:
                times.append(r.line.compile_time_s)
                counts.append(r.line.compiles)
        self._compared = len(times) > 1
        self._usual = statistics.mode(counts) if counts else 0
        self._median = statistics.median(times) if times else 0.0
        self._slowest = max(times) if times else 0.0
        self._fastest = min(times) if times else 0.0
        self._ranks = _in_rank_order(ranks, numbers)

    def __iter__(self) -> Iterator[RankRow]:
        for r in self._ranks:
            yield RankRow(rank=r.rank, line=r.line, marks=self._marks(r))

    def _marks(self, r: RankSummary) -> list[str]:
        marks: list[str] = []
        if not r.parsed:
            marks.append("not parsed")
        elif self._compared:
            t = r.line.compile_time_s
            if t == self._slowest and self._slowest > self._fastest:
                marks.append("slowest")
            elif self._median > 0 and t > self._median * SLOW_FACTOR:
                marks.append("slow")
            if r.line.compiles > self._usual:
                marks.append("more compilations")
            elif r.line.compiles < self._usual:
                marks.append("fewer compilations")
        if r.line.failures:
            marks.append("failures")
        if r.errors:
            marks.append("errors")
        return marks


def rank_table(ranks: Iterable[RankSummary]) -> RankTable:
    """The rank table (`RankTable`): iterate it for its rows."""
    return RankTable(ranks)


def _in_rank_order(ranks: Iterable[RankSummary], numbers: list[int]) -> Iterable[RankSummary]:
    """`ranks` (whose rank numbers are `numbers`) in rank order: as they are when they already are
    (a job's summaries always are, and are read again rather than copied)."""
    return ranks if numbers == sorted(numbers) else sorted(ranks, key=lambda s: s.rank)


class MatrixRow(msgspec.Struct, frozen=True):
    #: The compile id, or where ranks number functions differently, the column of one function
    #: (ranks.json's `divergence.rows[].columns`).
    compile_id: str
    #: rank -> its compile of this id, None where the rank did not compile it.
    cells: dict[int, CompileInfo | None]
    #: True when not every rank compiled it, or statuses differ, or a rank numbers it otherwise.
    odd: bool
    #: rank -> its own compile id of this row, for the ranks that number it otherwise.
    ids: dict[int, str] = {}


#: A compile id a rank has in its compile directory but no compile entry or metrics for.
_MISSING = CompileInfo(status="metrics_missing")


class CompileIdMatrix:
    """Which rank compiled each compile id, with its status and time; odd rows flagged.

    Ids come from compile_directory.json and the compilation metrics (a compile id with
    artifacts but no metrics and no compiles.json status shows `metrics_missing`, as tlparse's
    trie shows "missing"). Iterate it for its rows (`MatrixRow`, natural compile-id order), each
    made when reached: the matrix keeps, per compile id, a status number (one byte) and a time
    (eight) per rank, not a CompileInfo per cell (~13,000 cells at 1,000 ranks).

    `renamed` (rank -> own compile id -> row, ranks.json's `divergence.rows[].columns`): where
    ranks number functions differently, each row is one function, drawn from each rank's own id
    for it; a rank's other ids keep their rows.
    """

    def __init__(self, ranks: Iterable[RankSummary], renamed: Mapping[int, Mapping[str, str]] | None = None) -> None:
        self.renamed = renamed or {}
        ids: set[str] = set()
        numbers: list[int] = []
        for r in ranks:
            numbers.append(r.rank)
            if r.parsed:
                moved = self.renamed.get(r.rank, {})
                own = {c for c in r.compile_ids if c != OUTSIDE_COMPILE} | set(r.compiles)
                ids.update(moved.get(c, c) for c in own)
        self.ids = sorted(ids, key=column_key)
        self.ranks: list[int] = []
        self._back: dict[int, dict[str, str]] = {}
        #: Status names; index 0 is "no compile of this id on this rank".
        self._statuses: list[str | None] = [None]
        self._codes: list[bytearray] = [bytearray() for _ in self.ids]
        self._times: list[array[float]] = [array("d") for _ in self.ids]
        for r in _in_rank_order(ranks, numbers):
            if r.parsed:
                self._add(r)

    def _add(self, r: RankSummary) -> None:
        self.ranks.append(r.rank)
        known = set(r.compile_ids)
        for i, row in enumerate(self.ids):
            cid = self._own(r.rank, row)
            info = None if cid is None else r.compiles.get(cid)
            if info is None and cid is not None and cid in known:
                info = _MISSING
            self._codes[i].append(0 if info is None else self._code(info.status))
            self._times[i].append(math.nan if info is None or info.compile_time_s is None else info.compile_time_s)

    def _own(self, rank: int, row: str) -> str | None:
        """Rank `rank`'s compile id drawn in row `row`; None when it draws that id elsewhere."""
        moved = self.renamed.get(rank)
        if not moved:
            return row
        back = self._back.get(rank)
        if back is None:
            back = self._back[rank] = {column: cid for cid, column in moved.items()}
        return back.get(row, None if row in moved else row)

    def _code(self, status: str) -> int:
        if status not in self._statuses:
            self._statuses.append(status)
        return self._statuses.index(status)

    def __bool__(self) -> bool:
        return bool(self.ids)

    def __iter__(self) -> Iterator[MatrixRow]:
        for i, row in enumerate(self.ids):
            cells = {rank: self._cell(i, at) for at, rank in enumerate(self.ranks)}
            # A renumbering rank's own id, said where the row's label does not start with it.
            label = row.partition(" ")[0]
            renumbering = (rank for rank in self.ranks if rank in self.renamed)
            own = {rank: cid for rank in renumbering if (cid := self._own(rank, row)) not in (label, None)}
            yield MatrixRow(compile_id=row, cells=cells, odd=len(set(self._codes[i])) > 1 or bool(own), ids=own)

    def _cell(self, row: int, at: int) -> CompileInfo | None:
        status = self._statuses[self._codes[row][at]]
        if status is None:
            return None
        seconds = self._times[row][at]
        return CompileInfo(status=status, compile_time_s=None if math.isnan(seconds) else seconds)


def compile_id_matrix(
    ranks: Iterable[RankSummary], renamed: Mapping[int, Mapping[str, str]] | None = None
) -> CompileIdMatrix:
    """The compile-id matrix (`CompileIdMatrix`): iterate it for its rows."""
    return CompileIdMatrix(ranks, renamed)
