"""Why a cache key changed between two runs: the parts two lookups' keys were made of, compared
(`key_changes`, for `tlscope diff`).

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
from collections.abc import Callable, Sequence

import msgspec

from tlscope.analyse.excerpt import around, differs_at
from tlscope.format.compiles import CacheOutcome
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

    #: The diff's match key of the compile, e.g. `fn (model.py:5) compile 1`.
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
    start = differs_at(x or "", y or "")
    return KeyPart(name=name, a=_shown(x, start), b=_shown(y, start))


def _shown(value: str | None, start: int) -> str | None:
    """At most VALUE_WIDTH characters of a part's value, from a little before `start`."""
    return None if value is None else around(value, start, VALUE_WIDTH, 30)
