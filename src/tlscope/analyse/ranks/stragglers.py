"""Stragglers: the ranks whose compiles took markedly longer than the median rank's.

Computed once here and written into the job's ranks.json (FORMAT.md section 16), so the
landing page, `tlscope summary` and the explorer's Ranks view mark the same ranks. A rank is a
straggler when its compile time (ranks.json's `compile_time_s`: its forward compiles' times,
summed) is above `FACTOR` times the median rank's **and** at least `MARGIN_S` seconds above it: the
factor says "markedly slower", the margin keeps ranks that compile in a second or two (where a
factor is noise) from being flagged.

The median rank (`median_rank`) is the one rank a slow rank is compared with (the explorer's "why
is rank K slow"): order the ranks by compile time, ties by lower rank number, and take the middle
one; for an even count the lower middle (index `(n - 1) // 2`). Null when no rank was parsed.
"""

from __future__ import annotations

from collections.abc import Sequence

import msgspec

#: A straggler's compile time is above this many times the median rank's…
FACTOR = 1.25
#: …and at least this many seconds above it.
MARGIN_S = 1.0


class Straggler(msgspec.Struct, kw_only=True):
    rank: int
    compile_time_s: float
    #: Its compile time minus the median, seconds.
    over_median_s: float
    #: Its compile time over the median (null when the median is 0).
    ratio: float | None
    #: Where its time went beyond the median rank's, in one sentence (analyse/ranks/straggler_why.py):
    #: the compile that took longest beyond the median rank's compile of the same function, the
    #: phases that grew most, the caches it missed where that rank hit; null when not said. Since 1.35.
    why: str | None = None


class Stragglers(msgspec.Struct, kw_only=True):
    """The rule, the median it was applied to and the ranks it picked (slowest first)."""

    rule: str
    factor: float
    margin_s: float
    median_compile_time_s: float
    #: The rank whose compile time is the median's (module docstring's rule); null without ranks.
    median_rank: int | None = None
    ranks: list[Straggler] = []


def find_stragglers(times: Sequence[tuple[int, float]]) -> Stragglers:
    """(rank, compile time in s) of every parsed rank → the stragglers by the module's rule."""
    import statistics  # here: it imports random, fractions... (~3 ms), which one log's parse never calls

    median = round(statistics.median(t for _, t in times), 6) if times else 0.0
    found = [
        Straggler(
            rank=rank,
            compile_time_s=seconds,
            over_median_s=round(seconds - median, 6),
            ratio=round(seconds / median, 3) if median > 0 else None,
        )
        for rank, seconds in times
        if seconds > FACTOR * median and seconds - median >= MARGIN_S
    ]
    found.sort(key=lambda s: (-s.compile_time_s, s.rank))
    return Stragglers(
        rule=f"compile time above {FACTOR:g} times the median rank's and at least {MARGIN_S:g} s above it",
        factor=FACTOR,
        margin_s=MARGIN_S,
        median_compile_time_s=median,
        median_rank=median_rank(times),
        ranks=found,
    )


def straggler_title(found: Stragglers) -> str:
    """The heading of the stragglers' lines, with the rule and the median."""
    return f"Stragglers ({found.rule}; median {found.median_compile_time_s:.2f} s):"


#: Stragglers a text lists (a 1,000-rank job can have hundreds); ranks.json lists them all.
LISTED = 10


def straggler_lines(found: Stragglers) -> list[str]:
    """The first LISTED stragglers' lines (`straggler_line`), then how many more there are."""
    lines = [straggler_line(s) for s in found.ranks[:LISTED]]
    if len(found.ranks) > LISTED:
        lines.append(f"… and {len(found.ranks) - LISTED} more (ranks.json lists every straggler)")
    return lines


def straggler_line(straggler: Straggler) -> str:
    """`rank 49: 104.04 s, 70.01 s over the median; most in [4/0] forward (…): …` (its `why`)."""
    said = f"rank {straggler.rank}: {straggler.compile_time_s:.2f} s, {straggler.over_median_s:.2f} s over the median"
    return said + (f"; {straggler.why}" if straggler.why else "")


def median_rank(times: Sequence[tuple[int, float]]) -> int | None:
    """The rank at the lower middle of the ranks ordered by (compile time, rank); None if none."""
    if not times:
        return None
    ordered = sorted(times, key=lambda t: (t[1], t[0]))
    return ordered[(len(ordered) - 1) // 2][0]
