"""How the ranks' sentences name ranks, counts and compile ids: one wording for every answer of
ranks.json (the groups, the collectives, the graphs)."""

from __future__ import annotations

#: How many compile ids a sentence names before "…".
NAMED = 5


def who(ranks: list[int]) -> str:
    """`rank 3`, or `ranks 0, 1, 2` (`rank_list`)."""
    return f"rank {ranks[0]}" if len(ranks) == 1 else f"ranks {rank_list(ranks)}"


#: Runs of consecutive ranks at least this long are said as a range (`0-309`).
RUN = 4
#: Pieces (ranks or ranges) a list of ranks names before "…".
PIECES = 10


def rank_list(ranks: list[int]) -> str:
    """`0, 1, 2` as such; runs of RUN or more consecutive ranks as ranges, the first PIECES pieces
    and the count when long: `0-309, 311-365, …, 992-999 (990 ranks)`. A 1,000-rank job's group
    was a sentence of 990 numbers."""
    pieces: list[str] = []
    start = 0
    for end in range(1, len(ranks) + 1):
        if end < len(ranks) and ranks[end] == ranks[end - 1] + 1:
            continue
        run = ranks[start:end]
        pieces.extend([f"{run[0]}-{run[-1]}"] if len(run) >= RUN else map(str, run))
        start = end
    # "…" stands for two pieces at least (never for one it could have shown).
    shown = pieces if len(pieces) <= PIECES + 1 else [*pieces[: PIECES - 1], "…", pieces[-1]]
    count = f" ({len(ranks)} ranks)" if len(ranks) > PIECES else ""
    return ", ".join(shown) + count


def count(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def ids(ids: list[str]) -> str:
    shown = ", ".join(ids[:NAMED])
    return shown + (f", … ({len(ids) - NAMED} more)" if len(ids) > NAMED else "")
