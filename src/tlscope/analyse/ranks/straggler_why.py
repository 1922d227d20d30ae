"""Why a straggler is slow, in one sentence: the compile that took it longest beyond the median
rank's compile of the same function, the phases that grew most, the caches it missed where
the median rank hit, and the settings that compile ran under on it alone (the job's settings
mismatches of one compile, format 1.38: `max_autotune` patched on one rank makes it straggle).

Decided here, once, and written into ranks.json (`stragglers.ranks[].why`), so `tlscope JOB`,
`summary`, the landing page and the explorer's Ranks view say the same; the explorer's "why is
rank K slow" table shows the rest, phase by phase. Compiles are matched by function
(`alignment_keys`: a rank that compiled one more function early numbers every later one higher),
and a compile's time is its forward compiles' (ranks.json's `compile_time_s` sums the same).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from tlscope.analyse.phase_words import phase_seconds, where_it_went
from tlscope.analyse.ranks.divergence import forward_time_s, frame_functions
from tlscope.analyse.ranks.frames import alignment_keys
from tlscope.analyse.ranks.graph_divergence import compile_label
from tlscope.analyse.ranks.settings_divergence import SAID, SettingsMismatch
from tlscope.analyse.ranks.stragglers import Stragglers
from tlscope.format.compiles import CompileEntry

#: Phases a sentence names.
PHASES = 2
#: Stragglers explained (each reads two ranks' compiles.json); later ones keep `why` null.
EXPLAINED = 5


def explain_stragglers(
    found: Stragglers,
    compiles_of: Callable[[int], Sequence[CompileEntry] | None],
    settings: Sequence[SettingsMismatch] = (),
) -> None:
    """Set each straggler's `why` (the first EXPLAINED), reading its and the median rank's compiles
    with `compiles_of` (None: unreadable, the straggler keeps no `why`); `settings`, the job's
    `divergence.settings`, says which compiles ran under other settings on which ranks."""
    median = found.median_rank
    theirs = compiles_of(median) if median is not None and found.ranks else None
    if median is None or theirs is None:
        return
    for straggler in found.ranks[:EXPLAINED]:
        mine = compiles_of(straggler.rank)
        if mine is not None:
            straggler.why = why_slower(mine, median, theirs, _changed_on(settings, straggler.rank, median))


def _changed_on(settings: Sequence[SettingsMismatch], rank: int, median: int) -> dict[str, SettingsMismatch]:
    """Compile id -> the job's settings mismatch (format 1.38: one compile's) that has `rank` in its
    group and the median rank in the group it is compared with (`than`: its `changed[].a` are the
    median rank's values; a median rank in a third group ran other values still, not said here)."""
    return {
        m.id: m
        for m in settings
        if isinstance(m.id, str) and rank in m.ranks and median in m.than and median not in m.ranks
    }


def why_slower(
    mine: Sequence[CompileEntry],
    median: int,
    theirs: Sequence[CompileEntry],
    changed: Mapping[str, SettingsMismatch] | None = None,
) -> str | None:
    """`most in [4/0] forward (_ranks.py:40): 31.20 s against rank 12's 5.10 s, in code_gen
    (+20.10 s of backend_compile's +25.90 s), aot_trace_joint_graph (+1.20 s); its fx_graph cache
    missed where rank 12's hit`, and where the job's settings mismatches (`changed`: compile id ->
    one naming this rank and not the median rank) say that compile ran under other settings on it,
    `; it ran under other settings: inductor max_autotune True (False)`; None when no compile of it
    took longer than the median rank's."""
    ours, others = _by_function(mine), _by_function(theirs)
    excess = {
        key: forward_time_s(entry) - (forward_time_s(others[key]) if key in others else 0.0)
        for key, entry in ours.items()
    }
    if not excess or max(excess.values()) <= 0:
        return None
    key = max(excess, key=lambda k: (excess[k], k))
    entry = ours[key]
    other = others.get(key) or _same_code(entry, theirs)
    said = f"most in {entry.id} {compile_label(entry)}: {forward_time_s(entry):.2f} s against "
    if other is not None and isinstance(other.unfinished, list) and other.unfinished:
        return said + f"none on rank {median}, whose log ends inside it (in {other.unfinished[-1]})"
    if other is None:
        return said + f"none on rank {median}, which did not compile it"
    said += f"rank {median}'s {forward_time_s(other):.2f} s" + ("" if other.id == entry.id else f" ({other.id})")
    grew = _phases(entry, other)
    if grew:
        said += ", in " + ", ".join(grew)
    hits = {c.cache for c in other.cache if c.outcome == "hit"}
    missed = sorted({c.cache for c in entry.cache if c.outcome == "miss"} & hits)
    if missed:
        said += f"; its {', '.join(missed)} cache{'s' if len(missed) > 1 else ''} missed where rank {median}'s hit"
    other_settings = (changed or {}).get(other.id) or (changed or {}).get(entry.id)
    if other_settings is not None and other_settings.changed:
        shown = other_settings.changed[:SAID]
        values = ", ".join(f"{c.section} {c.key} {c.b} ({c.a})" for c in shown)
        more = len(other_settings.changed) - len(shown) + other_settings.more
        said += f"; it ran under other settings: {values}" + (f", {more} more" if more > 0 else "")
    return said


def _same_code(entry: CompileEntry, theirs: Sequence[CompileEntry]) -> CompileEntry | None:
    """The other rank's compile of the same id and code (function name, file, line) when naming
    them by function did not pair them: a compile that logged no guards (it never finished) has no
    class for its method, `forward` where the rank that finished says `Mlp.forward`."""
    fn = entry.function
    if fn is None:
        return None
    found = next((e for e in theirs if e.id == entry.id), None)
    other = found.function if found is not None else None
    return found if other is not None and (other.name, other.file, other.line) == (fn.name, fn.file, fn.line) else None


def _by_function(entries: Sequence[CompileEntry]) -> dict[str, CompileEntry]:
    """The compiles (not `[-/-]`) by their names by function (`alignment_keys`)."""
    kept = [e for e in entries if e.status != "outside"]
    names = alignment_keys([e.id for e in kept], frame_functions(kept))
    return {names[e.id]: e for e in kept}


def _phases(entry: CompileEntry, other: CompileEntry) -> list[str]:
    """Where the compile grew against `other`, at most PHASES phases in words (`where_it_went`:
    `compile_file (+41.83 s of inductor_compile's +57.49 s)`, then the largest excess outside that
    chain); the wrappers never named."""
    mine, theirs = phase_seconds(entry), phase_seconds(other)
    grew = [(name, seconds - theirs.get(name, 0.0)) for name, seconds in mine.items()]
    return where_it_went([g for g in grew if g[1] >= 0.005], "+")[:PHASES]
