"""Compile ids whose caches answered differently on different ranks.

The ranks of a job compile the same functions; where they share a cache (a shared cache folder,
a remote cache) or start from the same one, they look up the same keys. When one rank's FX graph
or AOTAutograd cache misses where another's hits, that rank compiles again what the other
loaded: the commonest cause of one rank compiling slower than the rest (a local cache wiped on
one node, a remote cache that timed out), and a sign that the ranks' graphs or settings differ
in something the cache key sees. tlparse 0.4.3 compares only each rank's whole sequence of
cache marks (`✅❌`), so ranks with other compile ids "diverge" even when every compile they
share answered alike; this compares each compile (by function, as the other comparisons do)
among the ranks that looked a cache up for it, by how many lookups of each cache hit, missed
or were bypassed (the order of lookups within a compile is not compared).

`cache_text` runs where a rank is parsed (RankOverview.caches); `CacheFold` keeps the ranks'
texts a rank at a time, as the other folds of analyse/ranks/divergence.py do.
"""

from __future__ import annotations

from array import array
from collections import Counter
from collections.abc import Callable, Mapping

import msgspec

from tlscope.analyse.ranks.graph_divergence import GRAPH_DIFF
from tlscope.analyse.ranks.words import NAMED, who
from tlscope.format.compiles import CompileEntry

#: How an outcome's count is said.
_PLURAL = {"hit": ("hit", "hits"), "miss": ("miss", "misses"), "bypass": ("bypass", "bypasses")}
#: What a sentence adds when a cache hit on some ranks and missed on others.
WHY = "a rank whose cache missed compiled what a hit loads"
#: ... when the ranks looked up the same keys: the graphs and settings the keys hash agree.
KEYS_SAME = "the caches that missed lacked the entries (a cold or wiped cache, or another rank's write not yet there)"


class CacheGroup(msgspec.Struct, kw_only=True):
    """Ranks whose lookups for one compile answered alike."""

    ranks: list[int]
    #: Cache (`fx_graph`, `aotautograd`, ...) -> outcome (`hit`, `miss`, `bypass`) -> lookups.
    lookups: dict[str, dict[str, int]]


class CacheMismatch(msgspec.Struct, kw_only=True):
    """A compile whose cache lookups answered differently on different ranks."""

    #: The compile id the most ranks give the function (analyse/ranks/frames.py).
    id: str
    #: The ranks grouped by their lookups, the largest group first.
    groups: list[CacheGroup]
    #: The caches whose answers differ between the groups.
    caches: list[str]
    #: Whether the first two groups' lowest ranks looked up the same keys in those caches; null
    #: when either logged no key.
    same_keys: bool | None = None
    #: In one sentence.
    sentence: str


def cache_text(entry: CompileEntry) -> str:
    """A compile's cache lookups as the ranks' comparison sees them: one `cache outcome count`
    line per cache and outcome, sorted (`fx_graph hit 2`); "" when it looked none up."""
    counts = Counter((c.cache, c.outcome) for c in entry.cache)
    return "\n".join(f"{cache} {outcome} {n}" for (cache, outcome), n in sorted(counts.items()))


def _lookups(text: str) -> dict[str, dict[str, int]]:
    found: dict[str, dict[str, int]] = {}
    for line in text.split("\n"):
        cache, outcome, n = line.rsplit(" ", 2)
        found.setdefault(cache, {})[outcome] = int(n)
    return found


def cache_keys(entry: CompileEntry) -> str:
    """A compile's cache keys where the payloads give them, one `cache key` line each, sorted; ""
    when none is known."""
    return "\n".join(sorted(f"{c.cache} {c.key}" for c in entry.cache if c.key))


class CacheFold:
    """Every rank's cache texts, kept a rank at a time: a compile's name by function
    (`alignment_keys`) -> its text (shared by the ranks with it) -> the ranks with it; and the
    lowest rank's keys of each (name, text)."""

    def __init__(self) -> None:
        self.texts: dict[str, dict[str, array[int]]] = {}
        self.keys: dict[tuple[str, str], tuple[int, str]] = {}

    def add(self, rank: int, caches: Mapping[str, str], keys: Mapping[str, str], names: Mapping[str, str]) -> None:
        for cid, text in caches.items():
            name = names.get(cid, cid)
            self.texts.setdefault(name, {}).setdefault(text, array("q")).append(rank)
            known = self.keys.get((name, text))
            if known is None or rank < known[0]:
                self.keys[(name, text)] = (rank, keys.get(cid, ""))

    def mismatches(self, named: Callable[[str], tuple[str, str]]) -> list[tuple[str, CacheMismatch]]:
        """(name, mismatch) of each compile whose ranks' lookups differ, in no order; `named` gives
        a name's compile id and how a sentence says it (`[4/0] forward (train.py:40)`)."""
        found = []
        for name, texts in self.texts.items():
            if len(texts) > 1:
                keys = {text: self.keys[(name, text)][1] for text in texts}
                found.append((name, _mismatch(*named(name), texts, keys)))
        return found


def _mismatch(cid: str, head: str, texts: dict[str, array[int]], keys: dict[str, str]) -> CacheMismatch:
    made = [(CacheGroup(ranks=sorted(ranks), lookups=_lookups(text)), keys[text]) for text, ranks in texts.items()]
    made.sort(key=lambda g: (-len(g[0].ranks), g[0].ranks[0]))
    groups = [group for group, _ in made]
    every = sorted({cache for g in groups for cache in g.lookups})
    caches = [cache for cache in every if len({_said(g.lookups.get(cache)) for g in groups}) > 1]
    parts = [f"{cache} {_answers(cache, groups)}" for cache in caches]  # `fx_graph (ranks 0, 2: …)`
    tails = [WHY] if any(_hit_and_missed(cache, groups) for cache in caches) else []
    same = _same_keys(caches, made[0][1], made[1][1])
    if same is not None:
        first, second = who(groups[0].ranks), who(groups[1].ranks)
        pair = f"{groups[0].ranks[0]} {groups[1].ranks[0]}"  # `tlscope diff JOB --ranks 0 1`: JOB named by a text view
        tails.append(
            f"the same keys on {first} and {second}: {KEYS_SAME}"
            if same
            else f"other keys on {first} and {second}: {GRAPH_DIFF}{pair} says which parts differ"
        )
    tail = "".join(f"; {t}" for t in tails)
    sentence = f"{head}: caches answered differently on different ranks: {', '.join(parts)}{tail}"
    return CacheMismatch(id=cid, groups=groups, caches=caches, same_keys=same, sentence=sentence)


def _same_keys(caches: list[str], a: str, b: str) -> bool | None:
    """Whether two groups' lowest ranks looked up the same keys (as multisets) in those of
    `caches` both logged a key of; None when there is none. A cache one side did not look up is
    no other key: an AOTAutograd hit looks up no FX graph."""
    mine, theirs = ([line.split(" ", 1) for line in keys.split("\n") if line] for keys in (a, b))
    both = set(caches) & {cache for cache, _ in mine} & {cache for cache, _ in theirs}
    if not both:
        return None
    return sorted(k for c, k in mine if c in both) == sorted(k for c, k in theirs if c in both)


def _said(outcomes: dict[str, int] | None) -> str:
    """`2 hits and 3 misses`; `no lookup` when none."""
    if not outcomes:
        return "no lookup"
    said = [f"{n} {_PLURAL.get(o, (o, o + 's'))[n != 1]}" for o, n in sorted(outcomes.items())]
    return " and ".join(said) if len(said) <= 2 else ", ".join(said[:-1]) + f" and {said[-1]}"


def _answers(cache: str, groups: list[CacheGroup]) -> str:
    """`(ranks 0, 2, 3: 5 misses; rank 1: 2 hits and 3 misses)`: each group's answers of `cache`,
    the first NAMED groups."""
    said = [f"{who(g.ranks)}: {_said(g.lookups.get(cache))}" for g in groups[:NAMED]]
    more = f"; … ({len(groups) - NAMED} more groups)" if len(groups) > NAMED else ""
    return "(" + "; ".join(said) + more + ")"


def _hit_and_missed(cache: str, groups: list[CacheGroup]) -> bool:
    """Whether `cache` hit on some group and missed (or was not hit as often) on another."""
    hits = {g.lookups.get(cache, {}).get("hit", 0) for g in groups}
    return len(hits) > 1 and any(g.lookups.get(cache, {}).get("miss", 0) for g in groups)
