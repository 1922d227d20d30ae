"""Which two ranks of a job to compare first: `tlscope diff JOB` without `--ranks`.

A user with a job of hundreds of ranks does not know which pair shows the problem. The job's
divergence (ranks.json's, decided once in the fold) already says which ranks differ and how; the
pair is the first thing it says, in the order every view says its lists (`said_of`): the
compile-id groups, the functions some ranks compiled alone, the collectives, the settings (a
cause), the graphs and the output code (its effect), the caches; then, where nothing differs, the
slowest straggler against the median rank. Each pair is a rank of the most
ranks' side first (the reference, the lowest of its group) and the lowest rank of the other side.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import msgspec

from tlscope.analyse.ranks.cache_divergence import CacheMismatch
from tlscope.analyse.ranks.divergence import CollectiveMismatch, Divergence, JobView, said_of
from tlscope.analyse.ranks.frames import FrameShift
from tlscope.analyse.ranks.graph_divergence import GraphMismatch
from tlscope.analyse.ranks.settings_divergence import SettingsMismatch


class RankPair(msgspec.Struct, kw_only=True):
    """Two ranks to compare, the reference first, and why these two, in one clause."""

    ranks: tuple[int, int]
    #: `divergence` (the first item of ranks.json's divergence), `straggler` (the slowest against
    #: the median rank) or `lowest` (nothing stands out: the two lowest ranks).
    kind: str
    why: str


def pair_to_compare(view: JobView) -> RankPair | None:
    """The first pair the job's divergence names, else its slowest straggler against the median
    rank; None when the ranks agree and none straggles (any pair is as good as another)."""
    found = next((p for p in _divergent(view.divergence) if p is not None), None)
    if found is not None:
        return found
    stragglers = view.stragglers
    if stragglers is None or not stragglers.ranks or stragglers.median_rank is None:
        return None
    slow, median = stragglers.ranks[0], stragglers.median_rank
    if slow.rank == median:
        return None
    median_s = stragglers.median_compile_time_s
    why = f"rank {slow.rank} compiled slowest, {slow.compile_time_s:.2f} s against the median rank's {median_s:.2f} s"
    return RankPair(ranks=(median, slow.rank), kind="straggler", why=why)


def _divergent(divergence: Divergence) -> Iterator[RankPair | None]:
    """Each pair the divergence names, in the order every view says its lists (`said_of`); None
    for an item without two sides (a ranks.json another writer made)."""
    for said in said_of(divergence):
        if said.list == "groups":
            # The groups are said in their own order; the reference is the most ranks' sequence.
            groups = sorted((g.ranks for g in divergence.groups if g.ranks), key=lambda r: (-len(r), min(r)))
            yield _two(groups, "they compiled different compile ids")
        for item in getattr(divergence, said.list) if said.list != "groups" else ():
            yield _item_pair(item)


def _item_pair(
    item: CollectiveMismatch | FrameShift | SettingsMismatch | GraphMismatch | CacheMismatch,
) -> RankPair | None:
    """The pair one item of a divergence list names, and why, in one clause."""
    if isinstance(item, FrameShift):
        return _two([item.than, item.ranks], "they compiled other functions")
    if isinstance(item, SettingsMismatch):
        at = f" for {item.id}" if isinstance(item.id, str) else ""
        return _two([item.than, item.ranks], f"they compiled under other settings{at}")
    sides = [g.ranks for g in item.groups]
    if isinstance(item, CollectiveMismatch):
        return _two(sides, f"their collectives differ at {item.id}")
    if isinstance(item, GraphMismatch):
        what = "generated different code" if item.kind == "output_code" else "traced different graphs"
        return _two(sides, f"they {what} for {item.id}")
    return _two(sides, f"their caches answered differently for {item.id}")


def _two(sides: Sequence[Sequence[int]], why: str) -> RankPair | None:
    """The lowest rank of the first side (the reference, the most ranks) and of the second."""
    if len(sides) < 2 or not sides[0] or not sides[1]:
        return None
    return RankPair(ranks=(min(sides[0]), min(sides[1])), kind="divergence", why=why)
