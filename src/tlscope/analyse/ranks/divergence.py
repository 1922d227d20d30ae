"""Ranks first: a line per rank and how the ranks' compiles diverge, said in one sentence per group.

Both are folded from each rank's compiles.json entries (the same analysis as `tlscope summary`),
so the job's `ranks.json`, `tlscope summary DIR` and its `--json` say the same. `rank_overview`
runs where a rank is parsed (its result is small and picklable: it travels in `RankSummary`);
`job_view` compares the overviews.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Sequence

import msgspec

from tlscope.analyse.ranks.stragglers import Stragglers, find_stragglers
from tlscope.format.compiles import CompileEntry

#: Events logged outside any compilation; not a compilation, so never a divergence.
OUTSIDE = "[-/-]"
#: How many compile ids a sentence names before "…".
NAMED = 5
#: How many recompiles a sentence explains.
REASONS = 2


class RankLine(msgspec.Struct, kw_only=True):
    """One rank at a glance, from its compiles.json."""

    rank: int
    #: Forward `compilation_metrics` records (every compile PyTorch measured; `metrics_records`).
    compiles: int = 0
    #: The sum of those records' `time_s`, seconds.
    compile_time_s: float = 0.0
    #: `dynamo_graph_break_reason` artifacts (each graph break logged).
    graph_breaks: int = 0
    #: Entries explaining a recompile (`recompile` set).
    recompiles: int = 0
    #: Metrics records (any kind) with status `failed`.
    failures: int = 0
    cache_hits: int = 0
    cache_misses: int = 0


class RankOverview(msgspec.Struct, kw_only=True):
    """What the divergence needs of one rank: its line, its compile ids, why each recompiled."""

    line: RankLine
    #: Compile ids in compiles.json order, `[-/-]` left out.
    compile_ids: list[str] = []
    #: Compile id -> status (compiles.json's vocabulary).
    statuses: dict[str, str] = {}
    #: Compile id -> why it recompiled, in plain words (the first guard failure's explanation).
    recompiles: dict[str, str] = {}


class PartialId(msgspec.Struct, kw_only=True):
    """A compile id that not every rank has, and the ranks that have it."""

    id: str
    ranks: list[int]


class RankGroup(msgspec.Struct, kw_only=True):
    """Ranks whose compile id sequences are identical."""

    ranks: list[int]
    #: Ids this group has and no rank outside it has.
    only_here: list[str] = []
    #: Ids some rank outside the group has and this group lacks.
    missing: list[str] = []
    #: The group's divergence in one sentence, e.g. `rank 3: 1 compile no other rank has ([7/0])`.
    sentence: str


class Divergence(msgspec.Struct, kw_only=True):
    """How the ranks' compiles differ; `diverges` false when every rank compiled the same ids."""

    diverges: bool
    #: Ranks grouped by identical compile id sequences: groups with compile ids of their own first,
    #: then by lowest rank.
    groups: list[RankGroup] = []
    #: Compile ids not present on every rank, in compile order.
    not_on_every_rank: list[PartialId] = []


class JobView(msgspec.Struct, kw_only=True):
    """`ranks.json` (FORMAT.md) and `tlscope summary DIR --json`'s `ranks` and `divergence`."""

    ranks: list[RankLine]
    divergence: Divergence
    #: The ranks markedly slower to compile than the median rank (analyse/ranks/stragglers.py).
    stragglers: Stragglers | None = None


def rank_overview(rank: int, entries: Sequence[CompileEntry]) -> RankOverview:
    """One rank's line and compile ids from its compiles.json entries."""
    line = RankLine(rank=rank)
    overview = RankOverview(line=line)
    for entry in entries:
        if entry.status == "outside":
            continue
        overview.compile_ids.append(entry.id)
        overview.statuses[entry.id] = entry.status
        forward = [r for r in entry.metrics_records if r.kind == "compilation_metrics"]
        line.compiles += len(forward)
        line.compile_time_s += sum(r.time_s or 0.0 for r in forward)
        line.failures += sum(r.status == "failed" for r in entry.metrics_records)
        line.graph_breaks += len(entry.graph_breaks)
        line.cache_hits += sum(c.outcome == "hit" for c in entry.cache)
        line.cache_misses += sum(c.outcome == "miss" for c in entry.cache)
        if entry.recompile is not None:
            line.recompiles += 1
            overview.recompiles[entry.id] = entry.recompile.explanation() or "no reason logged"
    line.compile_time_s = round(line.compile_time_s, 6)
    return overview


def job_view(overviews: Iterable[RankOverview]) -> JobView:
    """The ranks' lines and their divergence (ranks ascending), whatever order `overviews` come in.

    Folded as they come (`_Fold`): a job's overviews are decoded one at a time, and only each
    rank's line and what the divergence needs of it are kept.
    """
    fold = _Fold()
    for overview in overviews:
        fold.add(overview)
    lines = sorted(fold.lines, key=lambda line: line.rank)
    slow = find_stragglers([(line.rank, line.compile_time_s) for line in lines])
    return JobView(ranks=lines, divergence=fold.divergence(), stragglers=slow)


def divergence(overviews: Iterable[RankOverview]) -> Divergence:
    fold = _Fold()
    for overview in overviews:
        fold.add(overview)
    return fold.divergence()


class _Fold:
    """What the divergence needs of every rank, kept a rank at a time.

    The result is what walking the ranks in ascending order gives: a compile id's place in
    `order` is where that walk first meets it (the lowest (rank, position) it is at), and a
    group speaks with its lowest rank's reasons.
    """

    def __init__(self) -> None:
        self.lines: list[RankLine] = []
        #: Compile id -> the ranks that have it.
        self.having: dict[str, array[int]] = {}
        #: Compile id -> the lowest (rank, position in that rank's ids) it is at.
        self.first: dict[str, tuple[int, int]] = {}
        #: A compile id sequence -> the lowest rank's overview with it, and every rank with it.
        self.keyed: dict[tuple[str, ...], tuple[RankOverview, array[int]]] = {}

    def add(self, overview: RankOverview) -> None:
        rank = overview.line.rank
        self.lines.append(overview.line)
        for at, cid in enumerate(overview.compile_ids):
            self.having.setdefault(cid, array("q")).append(rank)
            if cid not in self.first or (rank, at) < self.first[cid]:
                self.first[cid] = (rank, at)
        key = tuple(overview.compile_ids)
        known = self.keyed.get(key)
        if known is None:
            self.keyed[key] = (overview, array("q", [rank]))
            return
        known[1].append(rank)
        if rank < known[0].line.rank:
            self.keyed[key] = (overview, known[1])

    def divergence(self) -> Divergence:
        count = len(self.lines)
        having = {cid: sorted(ranks) for cid, ranks in self.having.items()}
        order = sorted(self.first, key=self.first.__getitem__)
        partial = [PartialId(id=cid, ranks=having[cid]) for cid in order if len(having[cid]) < count]
        if len(self.keyed) <= 1:
            return Divergence(diverges=False, not_on_every_rank=partial)
        groups = [_group(first, sorted(ranks), having, order) for first, ranks in self.keyed.values()]
        # The groups with compiles of their own first (what the reader is looking for), then the rest.
        groups.sort(key=lambda g: (not g.only_here, g.ranks[0]))
        return Divergence(diverges=True, groups=groups, not_on_every_rank=partial)


def _group(first: RankOverview, ranks: list[int], having: dict[str, list[int]], order: list[str]) -> RankGroup:
    """The group of `ranks`, whose lowest rank's overview is `first`."""
    mine = set(first.compile_ids)
    members = set(ranks)
    only = [cid for cid in order if cid in mine and set(having[cid]) <= members]
    missing = [cid for cid in order if cid not in mine]
    why = {cid: first.recompiles[cid] for cid in only if cid in first.recompiles}
    return RankGroup(ranks=ranks, only_here=only, missing=missing, sentence=_sentence(ranks, only, missing, why))


def _sentence(ranks: list[int], only: list[str], missing: list[str], why: dict[str, str]) -> str:
    who = f"rank {ranks[0]}" if len(ranks) == 1 else f"ranks {_rank_list(ranks)}"
    nobody = "no other rank has" if len(ranks) == 1 else "no rank outside them has"
    parts = []
    if only:
        parts.append(f"{_count(len(only), 'compile')} {nobody} ({_ids(only)})")
    if missing:
        verb = "lacks" if len(ranks) == 1 else "lack"
        parts.append(f"{verb} {_count(len(missing), 'compile')} other ranks have ({_ids(missing)})")
    parts.extend(f"recompiled {cid} because {reason}" for cid, reason in list(why.items())[:REASONS])
    if len(why) > REASONS:
        parts.append(f"{_count(len(why) - REASONS, 'more recompile')} of its own")
    return f"{who}: {'; '.join(parts)}" if parts else f"{who}: the same compile ids in another order"


def _rank_list(ranks: list[int]) -> str:
    return ", ".join(map(str, ranks))


def _count(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def _ids(ids: list[str]) -> str:
    shown = ", ".join(ids[:NAMED])
    return shown + (f", … ({len(ids) - NAMED} more)" if len(ids) > NAMED else "")
