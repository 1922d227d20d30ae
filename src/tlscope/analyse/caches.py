"""What the caches did for a log's compiles, as `tlscope summary` and the report say it: the
lookups a cache bypassed, grouped with torch's reason (`bypasses`), and the compile time the hits
saved (`time_saved`). Why two runs' keys differ is analyse/cache_key.py's (`tlscope diff`).

A bypass is a compile no run can load: the cache refused it (`Can't cache HigherOrderOperator:
cond`), so a warm start compiles it again, every time.
"""

from __future__ import annotations

from collections.abc import Iterable

import msgspec

from tlscope.format.compiles import CacheOutcome, CompileEntry


class CacheBypass(msgspec.Struct, kw_only=True):
    """The lookups of one cache bypassed for one reason."""

    #: e.g. `fx_graph`, `aotautograd`.
    cache: str
    #: torch's reason, on one line (at most REASON_WIDTH characters); `reason not logged` when none.
    reason: str
    #: The compile ids, in log order (at most MAX_IDS; `compiles` counts them all).
    compile_ids: list[str]
    compiles: int
    #: Lookups bypassed (a training compile looks up its forward and its backward).
    lookups: int


#: Compile ids listed per bypass, and characters of its reason kept.
MAX_IDS = 20
REASON_WIDTH = 300


def bypasses(compiles: Iterable[CompileEntry]) -> list[CacheBypass]:
    """The bypassed lookups grouped by cache and reason, the most lookups first."""
    return grouped((e.id, c.cache, c.reason) for e in compiles for c in e.cache if c.outcome == "bypass")


def grouped(lookups: Iterable[tuple[str, str, str | None]]) -> list[CacheBypass]:
    """Bypassed lookups, each (compile id, cache, reason), grouped by cache and reason."""
    found: dict[tuple[str, str], CacheBypass] = {}
    ids: dict[tuple[str, str], set[str]] = {}
    for compile_id, cache, why in lookups:
        reason = " ".join((why or "reason not logged").split())
        if len(reason) > REASON_WIDTH:
            reason = reason[: REASON_WIDTH - 1] + "…"
        key = (cache, reason)
        group = found.setdefault(key, CacheBypass(cache=cache, reason=reason, compile_ids=[], compiles=0, lookups=0))
        group.lookups += 1
        seen = ids.setdefault(key, set())
        if compile_id not in seen:
            seen.add(compile_id)
            group.compiles += 1
            if len(group.compile_ids) < MAX_IDS:
                group.compile_ids.append(compile_id)
    return sorted(found.values(), key=lambda group: -group.lookups)


def time_saved(lookups: Iterable[CacheOutcome]) -> float | None:
    """The compile time one compile's cache hits saved: AOTAutograd's hits' when they logged it
    (their count covers the Inductor compile an FX graph hit inside them saved too: summing both
    would count it twice), else its other hits' summed; None when no hit logged a time."""
    hits = [(c.cache, c.time_saved_s) for c in lookups if c.outcome == "hit" and c.time_saved_s is not None]
    aot = [t for cache, t in hits if cache == "aotautograd"]
    return logged_sum(aot) if aot else logged_sum(t for _, t in hits)


def missed_time(lookups: Iterable[CacheOutcome]) -> float | None:
    """The compile time one compile's misses logged (the FX graph cache's `time_taken_s`: the
    Inductor compile a warm cache would load instead); None when none logged one."""
    return logged_sum(c.time_taken_s for c in lookups if c.outcome == "miss")


def logged_sum(values: Iterable[float | None]) -> float | None:
    """The sum of the values logged; None when none was."""
    found = [v for v in values if v is not None]
    return round(sum(found), 6) if found else None
