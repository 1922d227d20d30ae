"""Compile time on the two sides of a diff: each side's total, and the matched compiles whose time
changed markedly, each with where its time moved (phase_words' chain) and whether one side loaded its compile
from a cache. Two runs never take the same time, so none of this makes two traces differ: the
diff's header says it as information, as it says the log's size by event key.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import msgspec

from tlscope.analyse.phase_words import compile_seconds, innermost, phase_seconds
from tlscope.format.compiles import CompileEntry

#: A matched compile's change worth saying: at least this many seconds, and this ratio either way.
MIN_SECONDS = 0.5
MIN_RATIO = 1.25
#: Changes listed, the biggest first; the rest are counted.
MAX_LISTED = 10


class TimeChange(msgspec.Struct, kw_only=True):
    """A matched compile whose time changed by MIN_SECONDS and MIN_RATIO or more."""

    #: The diff's match key, e.g. `fn (model.py:5) compile 1`.
    key: str
    a_s: float
    b_s: float
    #: Where the time moved: the innermost phase of the chain that carries the change
    #: (analyse/phase_words.py, as a straggler's `why` and the slowest compile say where time
    #: went; the wrappers `dynamo` and `compile_attempt` never named), with its time on each side
    #: (0 on a side that did not log it); null when only the wrappers or no phase were logged.
    phase: str | None = None
    phase_a_s: float | None = None
    phase_b_s: float | None = None
    #: e.g. `9.05 s -> 1.37 s (0.15x); most in inductor_compile, 8.63 s -> 0.00 s; B loaded it from a cache`.
    sentence: str


class CompileTimes(msgspec.Struct, kw_only=True):
    """Each side's compile time (the compiles' own, summed) and the marked changes."""

    a_s: float
    b_s: float
    changed: list[TimeChange] = []
    #: Marked changes beyond `changed`.
    more: int = 0


def compile_times(
    a: Sequence[CompileEntry], b: Sequence[CompileEntry], pairs: Iterable[tuple[str, CompileEntry, CompileEntry]]
) -> CompileTimes | None:
    """Both sides' totals, and the matched `pairs` (key, A's entry, B's) whose time changed
    markedly; None when no compile of either side has a time (an export's log, say)."""
    if not any(_seconds(e) is not None for e in (*a, *b)):
        return None
    found = [change for key, x, y in pairs if (change := time_change(key, x, y)) is not None]
    found.sort(key=lambda change: -abs(change.b_s - change.a_s))
    return CompileTimes(a_s=_total(a), b_s=_total(b), changed=found[:MAX_LISTED], more=max(0, len(found) - MAX_LISTED))


def time_change(key: str, a: CompileEntry, b: CompileEntry) -> TimeChange | None:
    """How the compile's time changed, when it did by MIN_SECONDS and MIN_RATIO or more."""
    x, y = _seconds(a), _seconds(b)
    if x is None or y is None or abs(y - x) < MIN_SECONDS or max(x, y) < MIN_RATIO * min(x, y):
        return None
    ratio = f" ({y / x:.2f}x)" if x else ""
    change = TimeChange(key=key, a_s=x, b_s=y, sentence=f"{x:.2f} s -> {y:.2f} s{ratio}")
    mine, theirs = phase_seconds(a), phase_seconds(b)
    moved = [(n, abs(theirs.get(n, 0.0) - mine.get(n, 0.0))) for n in [*mine, *(n for n in theirs if n not in mine)]]
    name = innermost([m for m in moved if m[1] >= 0.005])
    if name is not None:
        change.phase, change.phase_a_s, change.phase_b_s = name, mine.get(name, 0.0), theirs.get(name, 0.0)
        change.sentence += f"; most in {name}, {change.phase_a_s:.2f} s -> {change.phase_b_s:.2f} s"
    hits = (hit_a_cache(a), hit_a_cache(b))
    if hits[0] != hits[1]:
        change.sentence += f"; {'A' if hits[0] else 'B'} loaded it from a cache"
    return change


def _seconds(entry: CompileEntry) -> float | None:
    """A compile's time as the run's total counts it: its backward's too."""
    return compile_seconds(entry)


def _total(entries: Sequence[CompileEntry]) -> float:
    """The run's compile time as `summary` says it (each compile's backward too)."""
    return round(sum(s for e in entries if (s := compile_seconds(e)) is not None), 6)


def hit_a_cache(entry: CompileEntry) -> bool:
    """Whether the compile loaded a result from a cache (its graphs then go unlogged, and its
    time is the load's)."""
    return any(c.outcome == "hit" for c in entry.cache)
