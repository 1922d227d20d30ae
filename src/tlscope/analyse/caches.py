"""Why a cache did not serve a compile: the lookups a cache bypassed, with torch's reason (one
log: `bypasses`), and the parts two lookups' keys were made of, compared (two logs:
`key_changes`, for `tlscope diff`).

A bypass is a compile no run can load: the cache refused it (`Can't cache HigherOrderOperator:
cond`), so a warm start compiles it again, every time.

With each hit and miss Inductor's FX graph cache logs the key's parts (`components`), one string
per part: `[<hash>] <name>: <value>`, e.g. `gm`, `example_inputs[0]`, `fx_kwargs[…]`,
`inductor_config[fallback_random]`, `torch_version`, `system_info[hash]`. When two runs' lookups of
one compile have different keys (a warm start that missed: pytorch#152065), the parts whose
hashes differ are why. The hash decides, not the text: a value printed with an address
(`<function select_decomp_table at 0x…>`) hashes the same on every run. AOTAutograd's cache logs
its key with no parts (`components: []`): its change is said without them.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence

import msgspec

from tlscope.format.compiles import CacheOutcome, CompileEntry
from tlscope.format.json_boundary import JsonError, decode

#: Reads a payload file name (`payloads/<md5>.txt`) of one side; None when it has no text.
Reader = Callable[[str], "str | None"]

#: Parts listed per change; the rest are counted.
MAX_PARTS = 8
#: Characters of each side's value shown, around where the two first differ.
VALUE_WIDTH = 100

#: Parts of a key that are the graph and its inputs, which the diff compares itself.
_GRAPH_PART = re.compile(r"(gm|example_inputs\[\d+\])( #\d+)?")
_PART = re.compile(r"\[(?P<hash>[^\]\s]+)\] (?P<name>[^:\n]+?): (?P<value>.*)", re.DOTALL)


class KeyPart(msgspec.Struct, kw_only=True):
    """One part of the key that differs: its name and each side's value (cut to VALUE_WIDTH around
    the first difference), null on the side whose key has no such part."""

    name: str
    a: str | None
    b: str | None


class CacheKeyChange(msgspec.Struct, kw_only=True):
    """Two lookups of one cache, the n-th of each matched compile, whose keys differ."""

    #: The diff's match key of the compile, e.g. `fn (model.py:5) compile 1 attempt 0`.
    key: str
    #: e.g. `fx_graph`, `aotautograd`.
    cache: str
    #: Which lookup of that cache in the compile (1-based: a training compile looks up its
    #: forward, then its backward).
    nth: int
    a_outcome: str
    b_outcome: str
    a_key: str
    b_key: str
    #: How many parts A's key has; null when the log does not list them (AOTAutograd's).
    parts: int | None
    #: The parts whose hashes differ, at most MAX_PARTS, in A's order then B's own.
    changed: list[KeyPart]
    #: Differing parts beyond `changed`.
    more: int = 0
    #: The change follows from what the diff shows anyway, so its header leaves it out: every
    #: differing part is the graph or its inputs (`gm`, `example_inputs[i]`), or the log lists
    #: no parts and the compile's graphs, or another cache's key, differ too.
    said_elsewhere: bool = False
    #: The change in one line, e.g. `fx_graph lookup 1 (hit -> miss): 1 of 635 parts of the key
    #: differ: inductor_config[fallback_random]`.
    sentence: str


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
    return round(sum(aot), 6) if aot else round(sum(t for _, t in hits), 6) if hits else None


class _Lookup(msgspec.Struct):
    components: list[str] = []


_DECODER = msgspec.json.Decoder(_Lookup)


def key_changes(
    key: str,
    a: Sequence[CacheOutcome],
    b: Sequence[CacheOutcome],
    readers: tuple[Reader, Reader],
    *,
    graphs_differ: bool = False,
) -> list[CacheKeyChange]:
    """Each cache's lookups paired in order (the n-th of A with the n-th of B); those whose keys
    are both logged and differ, explained by their parts (`graphs_differ`: the diff shows the
    compile's graphs differing anyway)."""
    found = []
    for cache in dict.fromkeys(c.cache for c in a):
        mine = [c for c in a if c.cache == cache]
        theirs = [c for c in b if c.cache == cache]
        for nth, (x, y) in enumerate(zip(mine, theirs, strict=False), 1):
            if x.key is not None and y.key is not None and x.key != y.key:
                found.append(_change(key, nth, (x, y), readers))
    for change in found:
        if change.parts is not None:
            change.said_elsewhere = all(_GRAPH_PART.fullmatch(part.name) for part in change.changed) and not change.more
        else:
            change.said_elsewhere = graphs_differ or any(c.parts is not None for c in found)
    # The changes that say which parts differ first.
    return sorted(found, key=lambda change: change.parts is None)


def _change(
    key: str, nth: int, pair: tuple[CacheOutcome, CacheOutcome], readers: tuple[Reader, Reader]
) -> CacheKeyChange:
    x, y = pair
    left, right = _parts(x, readers[0]), _parts(y, readers[1])
    change = CacheKeyChange(
        key=key,
        cache=x.cache,
        nth=nth,
        a_outcome=x.outcome,
        b_outcome=y.outcome,
        a_key=x.key or "",
        b_key=y.key or "",
        parts=None,
        changed=[],
        sentence=f"{x.cache} lookup {nth} ({x.outcome} -> {y.outcome}): ",
    )
    if left is None or right is None:
        change.sentence += "the key differs; the log does not list its parts"
        return change
    names = [n for n in left if left[n][0] != right.get(n, ("", ""))[0]] + [n for n in right if n not in left]
    said = ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")
    change.parts = len(left)
    change.changed = [_part(n, left.get(n), right.get(n)) for n in names[:MAX_PARTS]]
    change.more = max(0, len(names) - MAX_PARTS)
    change.sentence += (
        f"{len(names)} of {len(left)} parts of the key differ: {said}" if names else "no part's hash differs"
    )
    return change


def _parts(lookup: CacheOutcome, read: Reader) -> dict[str, tuple[str, str]] | None:
    """The key's parts by name (a repeated name numbered `name #2`): (hash, value); None when the
    payload is missing, not the JSON expected, or lists no parts."""
    text = read(lookup.event.payload_filename) if lookup.event.payload_filename else None
    if text is None:
        return None
    try:
        components = decode(text, _DECODER).components
    except (JsonError, msgspec.ValidationError):
        return None
    parts: dict[str, tuple[str, str]] = {}
    seen: dict[str, int] = {}
    for component in components:
        match = _PART.match(component)
        if match is None:
            continue
        seen[match["name"]] = n = seen.get(match["name"], 0) + 1
        parts[match["name"] if n == 1 else f"{match['name']} #{n}"] = (match["hash"], match["value"])
    return parts or None


def _part(name: str, a: tuple[str, str] | None, b: tuple[str, str] | None) -> KeyPart:
    # One line each (a graph's value spans many), compared where they first differ.
    x, y = (" ".join(a[1].split()) if a else None), (" ".join(b[1].split()) if b else None)
    start = _differs_at(x or "", y or "")
    return KeyPart(name=name, a=None if x is None else _cut(x, start), b=None if y is None else _cut(y, start))


def _differs_at(x: str, y: str) -> int:
    for n, (p, q) in enumerate(zip(x, y, strict=False)):
        if p != q:
            return n
    return min(len(x), len(y))


def _cut(value: str, start: int) -> str:
    """At most VALUE_WIDTH characters of `value`, from a little before `start`."""
    begin = max(0, min(start, len(value)) - 30) if len(value) > VALUE_WIDTH else 0
    shown = value if begin == 0 else "…" + value[begin:]
    return shown if len(shown) <= VALUE_WIDTH else shown[: VALUE_WIDTH - 1] + "…"
