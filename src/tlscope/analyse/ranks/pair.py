"""Which two ranks of a job to compare first: `tlscope diff JOB` without `--ranks`.

A user with a job of hundreds of ranks does not know which pair shows the problem. Ranks whose
first failures differ (ranks.json's first answers) come first: a rank that failed where the rest
did not, against one of the rest. Then the job's divergence (ranks.json's, decided once in the
fold), which already says which ranks differ and how; the pair is the first thing it says, in the
order every view says its lists (`said_of`): the compile-id groups, the functions some ranks
compiled alone, the collectives, the settings (a cause), the graphs and the output code (its
effect), the caches; then, where nothing differs, the slowest straggler against the median rank.
Each pair is a rank of the most ranks' side first (the reference, the lowest of its group) and the
lowest rank of the other side.
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
    #: `failure` (ranks whose first failures differ, ranks.json's first answers), `divergence`
    #: (the first item of ranks.json's divergence), `straggler` (the slowest against the median
    #: rank) or `lowest` (nothing stands out: the two lowest ranks).
    kind: str
    why: str


def pair_to_compare(view: JobView) -> RankPair | None:
    """Ranks that failed otherwise than the most ranks (ranks.json's first answers), else the
    first pair the job's divergence names, else its slowest straggler against the median rank;
    None when the ranks agree and none straggles (any pair is as good as another)."""
    found = _failed(view) or next((p for p in _divergent(view.divergence) if p is not None), None)
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


def _failed(view: JobView) -> RankPair | None:
    """Where the ranks' first failures differ (some failed, others not, or not alike): the most
    ranks' side (those without a failure, or saying one failure) against the next; a failure is
    what a user looks for first, and the divergence it causes comes after it."""
    answers = view.first_answers
    lines = [line for line in answers.lines if line.kind == "failure"] if answers is not None else []
    if not lines:
        return None
    failed = {rank for line in lines for rank in line.ranks}
    said: list[tuple[list[int], str]] = [(line.ranks, line.text) for line in lines]
    said.append(([line.rank for line in view.ranks if line.rank not in failed], ""))
    # The most ranks first; on a tie, those that did not fail (the reference is a healthy rank).
    sides = sorted((s for s in said if s[0]), key=lambda s: (-len(s[0]), bool(s[1]), min(s[0])))
    if len(sides) < 2:
        return None
    (ref, ref_text), (other, text) = sides[0], sides[1]
    a, b = min(ref), min(other)
    if not ref_text:
        why = f"rank {b} failed where rank {a} did not ({text})"
    elif not text:
        why = f"rank {a} failed where rank {b} did not ({ref_text})"
    else:
        why = f"they failed differently ({ref_text} on rank {a}; {text} on rank {b})"
    return RankPair(ranks=(a, b), kind="failure", why=why)


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
