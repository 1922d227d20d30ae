"""Which guard failure of a recompile explains it best: FORMAT.md "Which failure is the cause".

Every earlier cache entry rejected the call, each on the first of its own guards that failed, so
every failure is true; the one to show first is the entry that came closest to matching. An entry
that failed on a size, stride or rank of a tensor it had specialised says little (it would have
failed on any other shape too); a guard tlscope does not classify says little more. Decided here
once and written into compiles.json (`recompile.recommended`): `tlscope summary`, the explorer
and every viewer show that choice instead of making their own.
"""

from __future__ import annotations

from collections.abc import Sequence

from tlscope.format.compiles import GuardFailure, RecommendedFailure

#: Guard kinds about a tensor's shape, which an entry fails when it had specialised that shape.
SHAPE_KINDS = frozenset({"size", "stride", "rank"})


def _distance(failure: GuardFailure) -> int:
    """How far an entry was from matching: 0 (not a specialised shape), 1 (`other`), 2 (a shape)."""
    if failure.kind in SHAPE_KINDS:
        return 2
    return 1 if failure.kind == "other" else 0


def recommended_failure(failures: Sequence[GuardFailure]) -> RecommendedFailure | None:
    """The newest entry with the smallest distance, and why; None without guard failures."""
    if not failures:
        return None
    best = min(range(len(failures)), key=lambda i: (_distance(failures[i]), i))
    return RecommendedFailure(index=best, why=_why(failures, best))


def _why(failures: Sequence[GuardFailure], best: int) -> str:
    chosen, newest = failures[best], failures[0]
    if len(failures) == 1:
        return "the only cache entry of this frame"
    if best > 0:
        what = (
            f"a {newest.kind} guard of a tensor it had specialised"
            if _distance(newest) == 2
            else "a guard tlscope does not classify"
        )
        return (
            f"the newest entry {newest.cache_entry} failed on {what}; "
            f"{chosen.cache_entry} came closest: it failed only on {chosen.kind}"
        )
    if _distance(chosen) == 0:
        return "the newest cache entry, which failed on something other than a specialised tensor shape"
    if _distance(chosen) == 1:
        return (
            "the newest cache entry; no other entry came closer (each failed on a guard tlscope "
            "does not classify, or on a specialised tensor shape)"
        )
    return "the newest cache entry; every other entry failed on a specialised tensor shape too"
