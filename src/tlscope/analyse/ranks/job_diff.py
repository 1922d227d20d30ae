"""Two jobs compared at the level of their ranks: `tlscope diff JOB_A JOB_B`, before one rank of
each is compared compile by compile.

Comparing run A of a job with run B, a user asks first what a single rank's diff cannot say: did
a rank start (or stop) failing, did the ranks stop agreeing (compile ids, collectives, settings,
graphs, caches), did a rank start to straggle, did the ranks as a whole get slower to compile.
Each side's answer is its ranks.json, decided once where the job was folded; this compares
those answers, it does not fold again.
"""

from __future__ import annotations

import re
import statistics
from collections import Counter
from collections.abc import Sequence
from typing import NamedTuple, Protocol

import msgspec

from tlscope.analyse.headline import COMPARED_KINDS
from tlscope.analyse.ranks.divergence import SAID, Divergence, JobView, with_job
from tlscope.analyse.ranks.job_answers import JobAnswer
from tlscope.analyse.ranks.words import who


class Divergent(Protocol):
    """An item of a divergence list: each says itself in a sentence."""

    @property
    def sentence(self) -> str: ...


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


#: A compile id as the sentences say it (`[4/0]`, `[0/0_1]`, `[-/-]`; not a shape, `f32[8, 32]`).
_CID = re.compile(r"\[(?:\d+|-)/(?:\d+|-)(?:_\d+)*\]")


def matching_key(sentence: str) -> str:
    """What two runs' sentences are matched by: the sentence with its compile ids masked. A run
    that compiled one more function first numbers every later compile one higher, and says the
    same divergence of the same functions (named beside their ids: `[4/0] forward (_ranks.py:40)`)
    under other ids: it is not a new one."""
    return _CID.sub("[…]", sentence)


def unmatched(mine: Sequence[str], theirs: Sequence[str]) -> list[str]:
    """`mine` less those `theirs` says too, by `matching_key`, each of theirs matching once."""
    left = Counter(matching_key(s) for s in theirs)
    found = []
    for sentence in mine:
        key = matching_key(sentence)
        if left[key]:
            left[key] -= 1
        else:
            found.append(sentence)
    return found


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
    said = [*_answers(a, b), *_groups(both), *_lists(both), *_stragglers(a, b)]
    differs = sides[0].ranks != sides[1].ranks or bool(said)
    lines += said or ["  the ranks' divergence, item by item, and stragglers are alike in A and B"]
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

    def first(self, side: str, sentences: Sequence[str], label: str = "the first in") -> list[str]:
        """The first of one side's sentences, its diff command naming that side's folder."""
        if not sentences:
            return []
        path = None if self.paths is None else self.paths[side == "B"]
        return [f"    {label} {side}: {with_job(sentences[0], path)}"]

    def compared(self, attribute: str) -> tuple[list[str], list[str], list[str], list[str]]:
        """One list's sentences on each side, and those only one side says (an item is the same
        divergence in both runs when its sentence is but for its compile ids, `matching_key`: it
        names the ranks, functions and lines, not times or folders)."""
        said_a, said_b = ([item.sentence for item in _items(d, attribute)] for d in (self.a, self.b))
        return said_a, said_b, unmatched(said_a, said_b), unmatched(said_b, said_a)

    def apart(self, said: tuple[list[str], list[str], list[str], list[str]]) -> list[str]:
        """The first sentence only each side says: `the first in B` when A says nothing of the
        kind, `the first only in B` beside A's own."""
        said_a, said_b, only_a, only_b = said
        return [
            *self.first("A", only_a, "the first in" if not said_b else "the first only in"),
            *self.first("B", only_b, "the first in" if not said_a else "the first only in"),
        ]


def _items(divergence: Divergence, attribute: str) -> Sequence[Divergent]:
    """One divergence list's items; a job whose ranks agree has no groups to compare."""
    if attribute == "groups" and not divergence.diverges:
        return []
    items: Sequence[Divergent] = getattr(divergence, attribute)
    return items


def _only(said: tuple[list[str], list[str], list[str], list[str]]) -> str:
    """` (1 only in A, 2 only in B)` where both sides say some, else nothing."""
    said_a, said_b, only_a, only_b = said
    parts = [f"{len(only)} only in {side}" for side, only in (("A", only_a), ("B", only_b)) if only]
    return f" ({', '.join(parts)})" if said_a and said_b and parts else ""


def _groups(both: _Both) -> list[str]:
    """Whether the ranks compiled the same compile ids on each side, and in the same groups,
    where that differs."""
    count_a, count_b = (len(d.groups) if d.diverges else 1 for d in (both.a, both.b))
    said = both.compared("groups")
    if count_a == count_b and (count_a == 1 or not (said[2] or said[3])):
        return []
    words = [
        f"diverge in {n} groups by compile id sequence" if n > 1 else "agree on their compile ids"
        for n in (count_a, count_b)
    ]
    if count_a == count_b:
        return [f"  ranks {words[0]} in A and in B, not the same groups{_only(said)}", *both.apart(said)]
    return [f"  ranks {words[0]} in A, {words[1]} in B{_only(said)}", *both.apart(said)]


def _lists(both: _Both) -> list[str]:
    """Each divergence list whose items differ: the counts (and how many only one side says),
    and the first sentence only each side says (what appeared or went away)."""
    lines: list[str] = []
    for attribute, noun in ((name, _NOUNS[name]) for name, _ in SAID if name in _NOUNS):
        said = both.compared(attribute)
        if said[2] or said[3]:
            lines.append(f"  {noun}: {len(said[0])} in A, {len(said[1])} in B{_only(said)}")
            lines += both.apart(said)
    return lines


def _answers(a: JobView, b: JobView) -> list[str]:
    """The ranks' first answers (ranks.json's, format 1.42) one side says and the other not, or
    says of other ranks: a failure that appeared or went away, first (what a user looks for);
    matched as the divergence's items are, compile ids masked. Not the slowest compiles: no two
    runs take the same time (`_times` compares the ranks' compile time, informative)."""
    said: list[dict[tuple[str, str], JobAnswer]] = [{}, {}]
    for mine, view in zip(said, (a, b), strict=True):
        for line in view.first_answers.lines if view.first_answers else []:
            if line.kind in COMPARED_KINDS:
                mine.setdefault((line.kind, matching_key(line.text)), line)
    lines: list[str] = []
    for side, (mine, theirs) in (("A", said), ("B", said[::-1])):
        for key, line in mine.items():
            if key not in theirs:
                lines.append(f"  first answer only in {side}: {line.who}: {line.text}")
            elif side == "A" and theirs[key].ranks != line.ranks:
                lines.append(
                    f"  first answer said by other ranks: {line.text} ({line.who} in A, {theirs[key].who} in B)"
                )
    return lines


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
