"""Two jobs compared at the level of their ranks: `tlscope diff JOB_A JOB_B`, before one rank of
each is compared compile by compile.

Comparing run A of a job with run B, a user asks first what a single rank's diff cannot say: did
the ranks stop agreeing (compile ids, collectives, settings, graphs, caches), did a rank start to
straggle, did the ranks as a whole get slower to compile. Each side's answer is its ranks.json,
decided once where the job was folded; this compares those answers, it does not fold again.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from typing import NamedTuple

import msgspec

from tlscope.analyse.ranks.divergence import SAID, Divergence, JobView, with_job
from tlscope.analyse.ranks.words import who


class JobSide(msgspec.Struct, kw_only=True):
    """One side of the diff: how many ranks it has (0: a single trace) and the rank compared."""

    ranks: int = 0
    compared: int | None = None


class JobDiff(msgspec.Struct, kw_only=True):
    """What differs between two jobs' ranks, in lines (`tlscope diff`'s first), and whether any
    of it is a difference (the compile time a rank, like a trace's, is informative only)."""

    a: JobSide
    b: JobSide
    differs: bool
    lines: list[str]


#: What each divergence list's items are, in words, for the counts (the lists said in `SAID`'s
#: order; the groups are said on their own, `_groups`).
_NOUNS = {
    "frames": "groups of ranks that compiled other functions",
    "collectives": "compile ids whose collectives differ between ranks",
    "settings": "groups of ranks that compiled under other settings",
    "graphs": "compile ids whose graphs or code differ between ranks",
    "caches": "compiles whose caches answered differently on different ranks",
}


def job_diff(
    a: JobView | None,
    b: JobView | None,
    compared: tuple[int | None, int | None],
    paths: tuple[str, str] | None = None,
) -> JobDiff | None:
    """A and B's ranks compared (None: neither is a job); `compared`, the rank of each whose
    compiles the rest of the diff compares (None for a single trace); `paths`, the folders the
    user named, which a sentence's `tlscope diff JOB --ranks` names."""
    if a is None and b is None:
        return None
    sides = (
        JobSide(ranks=len(a.ranks) if a else 0, compared=compared[0]),
        JobSide(ranks=len(b.ranks) if b else 0, compared=compared[1]),
    )
    lines = [_shape(*sides)]
    if a is None or b is None:
        return JobDiff(a=sides[0], b=sides[1], differs=True, lines=lines)
    both = _Both(a.divergence, b.divergence, paths)
    said = [*_groups(both), *_lists(both), *_stragglers(a, b)]
    differs = sides[0].ranks != sides[1].ranks or bool(said)
    lines += said or [
        "  the ranks' divergence (what differs between ranks, counted) and stragglers are alike in A and B"
    ]
    lines += _times(a, b)
    return JobDiff(a=sides[0], b=sides[1], differs=differs, lines=lines)


def _shape(a: JobSide, b: JobSide) -> str:
    """`Jobs: A has 8 ranks, B 16; compared below: rank 0 of A with rank 0 of B.`"""
    if a.ranks and b.ranks:
        size = f"A and B have {a.ranks} ranks each" if a.ranks == b.ranks else f"A has {a.ranks} ranks, B {b.ranks}"
    else:
        size = f"A has {a.ranks} ranks, B is one trace" if a.ranks else f"A is one trace, B has {b.ranks} ranks"
    ranks = (_side("A", a), _side("B", b))
    return f"Jobs: {size}; compared below: {ranks[0]} with {ranks[1]}."


def _side(name: str, side: JobSide) -> str:
    return f"rank {side.compared} of {name}" if side.ranks and side.compared is not None else name


class _Both(NamedTuple):
    a: Divergence
    b: Divergence
    paths: tuple[str, str] | None

    def first(self, side: str, attribute: str) -> list[str]:
        """The first sentence of one side's list, its diff command naming that side's folder."""
        items = getattr(self.b if side == "B" else self.a, attribute)
        if not items:
            return []
        path = None if self.paths is None else self.paths[side == "B"]
        return [f"    the first in {side}: {with_job(items[0].sentence, path)}"]


def _groups(both: _Both) -> list[str]:
    """Whether the ranks compiled the same compile ids on each side, where that differs."""
    count_a, count_b = (len(d.groups) if d.diverges else 1 for d in (both.a, both.b))
    if count_a == count_b:
        return []
    words = [
        f"diverge in {n} groups by compile id sequence" if n > 1 else "agree on their compile ids"
        for n in (count_a, count_b)
    ]
    return [f"  ranks {words[0]} in A, {words[1]} in B", *both.first("B" if count_b > count_a else "A", "groups")]


def _lists(both: _Both) -> list[str]:
    """Each divergence list whose length differs: the counts, and the first sentence of the side
    that has more (what a user reads to see what appeared or went away)."""
    said: list[str] = []
    for attribute, noun in ((name, _NOUNS[name]) for name, _ in SAID if name in _NOUNS):
        count_a, count_b = len(getattr(both.a, attribute)), len(getattr(both.b, attribute))
        if count_a != count_b:
            said.append(f"  {noun}: {count_a} in A, {count_b} in B")
            said += both.first("B" if count_b > count_a else "A", attribute)
    return said


def _stragglers(a: JobView, b: JobView) -> list[str]:
    """The straggling ranks of each side, where they differ."""
    slow_a, slow_b = (sorted(s.rank for s in v.stragglers.ranks) if v.stragglers else [] for v in (a, b))
    if slow_a == slow_b:
        return []
    return [f"  stragglers: {_ranks(slow_a)} in A, {_ranks(slow_b)} in B"]


def _ranks(ranks: Sequence[int]) -> str:
    return who(list(ranks)) if ranks else "none"


def _times(a: JobView, b: JobView) -> list[str]:
    """The compile time a rank on each side, median and slowest (informative: no two runs take
    the same)."""
    if not a.ranks or not b.ranks:
        return []
    medians = [statistics.median(line.compile_time_s for line in v.ranks) for v in (a, b)]
    slowest = [max(v.ranks, key=lambda line: (line.compile_time_s, -line.rank)) for v in (a, b)]
    return [
        f"  compile time a rank: median {medians[0]:.2f} s in A, {medians[1]:.2f} s in B; slowest "
        f"{slowest[0].compile_time_s:.2f} s (rank {slowest[0].rank}) in A, {slowest[1].compile_time_s:.2f} s "
        f"(rank {slowest[1].rank}) in B (informative)"
    ]
