"""Diff two traces (or two ranks, or two compile ids): compiles matched by what they compiled.

Compiles are matched by their compiled function (name, file name, first line), then by the
order of that function's frame compiles (its 1st, 2nd… compile) and the attempt, not by compile
id: a trace with one more graph break earlier still lines up function by function. Within a
matched pair, graphs and code are matched by kind and order of that kind, guards as one text,
and a few numbers of the metrics (counts, never times: two runs of one program never take the
same time). Payloads are compared by file name, which is their MD5, so equal names mean equal
text; when the names differ, both texts are read and compared again without what changes on
every run (`# graph id: N`, object ids and addresses, inductor's temporary paths and kernel hashes).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from pathlib import PurePosixPath

import msgspec

from tlscope.format.compiles import CompileEntry, PayloadRef
from tlscope.format.logsize import LogSize

#: Reads a payload file name (`payloads/<md5>.txt`) of one side; None when it has no text.
PayloadReader = Callable[[str], "str | None"]

#: Metrics compared (counts and outcomes; times always differ between runs).
COMPARED_METRICS = ("graph_op_count", "graph_node_count", "graph_input_count", "guard_count", "shape_env_guard_count")


#: What differs between two runs of one program without meaning anything.
_VOLATILE = re.compile(
    r"# graph id: \d+|Guard latency = [\d.]+ us|0x[0-9a-f]{6,}|\b\d{12,}\b"
    r"|/tmp/torchinductor_[^/\s]+/[^\s'\"]*|\b[a-z0-9]{52}\b|\b[0-9a-f]{32,64}\b"
)


def normalised(text: str | None) -> str | None:
    return None if text is None else _VOLATILE.sub("…", text)


class Difference(msgspec.Struct, kw_only=True):
    """One thing that differs between the two sides of a matched pair."""

    #: e.g. `status`, `metrics.guard_count`, `graph dynamo_output_graph #1`, `guards`, `code inductor_output_code #1`.
    what: str
    #: `value` (a/b are the values as text) or `payload` (a/b are payload file names; null when absent on a side).
    kind: str
    a: str | None
    b: str | None


class CompileDiff(msgspec.Struct, kw_only=True):
    """A compile matched across the two sides (or present on one only), with its differences."""

    #: The matching key, e.g. `fn (model.py:12) compile 2 attempt 1`.
    key: str
    a_id: str | None
    b_id: str | None
    differences: list[Difference]


class SizeChange(msgspec.Struct, kw_only=True):
    """Log bytes of one event key on each side (log_size.json's `by_event_key`)."""

    key: str
    a_bytes: int
    b_bytes: int


class TraceDiff(msgspec.Struct, kw_only=True):
    equal: bool
    #: Pairs matched on both sides.
    matched: int
    only_a: int
    only_b: int
    #: Compiles that differ (or exist on one side only), in A's order then B's leftovers.
    compiles: list[CompileDiff]
    #: "Did the log get bigger?": bytes per event key whose size differs by more than
    #: SIZE_CHANGE (a tenth), biggest change first. Informative: sizes move a little between any
    #: two runs, so they never make two traces different.
    sizes: list[SizeChange] = []


#: A relative change in an event key's bytes worth reporting.
SIZE_CHANGE = 0.1


def size_changes(a: LogSize, b: LogSize) -> list[SizeChange]:
    """Event keys whose bytes differ by more than SIZE_CHANGE between two logs, biggest change first."""
    found = []
    for key in [*a.by_event_key, *(k for k in b.by_event_key if k not in a.by_event_key)]:
        x = a.by_event_key[key].bytes if key in a.by_event_key else 0
        y = b.by_event_key[key].bytes if key in b.by_event_key else 0
        if abs(x - y) > SIZE_CHANGE * max(x, y, 1):
            found.append(SizeChange(key=key, a_bytes=x, b_bytes=y))
    return sorted(found, key=lambda c: -abs(c.a_bytes - c.b_bytes))


def match_key(entry: CompileEntry, nth: int) -> str:
    fn = entry.function
    where = f"{PurePosixPath(fn.file).name}:{fn.line}" if fn and fn.file else "?"
    attempt = entry.id.rsplit("_", 1)[1].rstrip("]") if "_" in entry.id else "0"
    return f"{fn.name if fn else '?'} ({where}) compile {nth} attempt {attempt}"


def keyed(entries: Sequence[CompileEntry]) -> dict[str, CompileEntry]:
    """Each compile under its match key (outside-compile events left out)."""
    seen: dict[tuple[str | None, str | None, int | None], list[str]] = {}
    found: dict[str, CompileEntry] = {}
    for entry in entries:
        if entry.status == "outside":
            continue
        fn = entry.function
        ident = (fn.name, fn.file and PurePosixPath(fn.file).name, fn.line) if fn else (entry.id, None, None)
        frames = seen.setdefault(ident, [])
        if entry.frame_compile not in frames:
            frames.append(entry.frame_compile)
        found.setdefault(match_key(entry, frames.index(entry.frame_compile) + 1), entry)
    return found


def diff_traces(
    a: Sequence[CompileEntry], b: Sequence[CompileEntry], read_a: PayloadReader, read_b: PayloadReader
) -> TraceDiff:
    """Every matched pair compared; unmatched compiles listed as present on one side only."""
    left, right = keyed(a), keyed(b)
    compiles: list[CompileDiff] = []
    for key, entry in left.items():
        other = right.get(key)
        if other is None:
            compiles.append(CompileDiff(key=key, a_id=entry.id, b_id=None, differences=[]))
            continue
        differences = diff_compiles(entry, other, read_a, read_b)
        if differences:
            compiles.append(CompileDiff(key=key, a_id=entry.id, b_id=other.id, differences=differences))
    compiles += [CompileDiff(key=k, a_id=None, b_id=e.id, differences=[]) for k, e in right.items() if k not in left]
    matched = len(left.keys() & right.keys())
    return TraceDiff(
        equal=not compiles,
        matched=matched,
        only_a=len(left) - matched,
        only_b=len(right) - matched,
        compiles=compiles,
    )


def diff_compiles(a: CompileEntry, b: CompileEntry, read_a: PayloadReader, read_b: PayloadReader) -> list[Difference]:
    """What differs between two compiles: status, breaks, failure, caches, metrics, graphs, guards, code."""
    found = [
        _value(what, x, y)
        for what, x, y in (
            ("status", a.status, b.status),
            ("graph_breaks", [g.reason for g in a.graph_breaks], [g.reason for g in b.graph_breaks]),
            ("failure", a.failure.type if a.failure else None, b.failure.type if b.failure else None),
            (
                "cache",
                sorted(f"{c.cache} {c.outcome}" for c in a.cache),
                sorted(f"{c.cache} {c.outcome}" for c in b.cache),
            ),
            *((f"metrics.{m}", _metric(a, m), _metric(b, m)) for m in COMPARED_METRICS),
        )
        if x != y
    ]
    readers = (read_a, read_b)
    found += _payloads("graph", a.graphs, b.graphs, readers)
    found += _payloads("guards", [a.guards] if a.guards else [], [b.guards] if b.guards else [], readers)
    found += _payloads("code", a.code, b.code, readers)
    return found


def _metric(entry: CompileEntry, name: str) -> object:
    return getattr(entry.metrics, name, None) if entry.metrics is not None else None


def _value(what: str, a: object, b: object) -> Difference:
    return Difference(what=what, kind="value", a=None if a is None else str(a), b=None if b is None else str(b))


def _payloads(
    what: str, a: Sequence[PayloadRef], b: Sequence[PayloadRef], readers: tuple[PayloadReader, PayloadReader]
) -> list[Difference]:
    """Payloads matched by kind and order within the kind; compared by file name (their MD5), then text."""
    left, right = _numbered(a), _numbered(b)
    found = []
    for key in [*left, *(k for k in right if k not in left)]:
        x, y = left.get(key), right.get(key)
        if x != y and not _same_text(x, y, readers):
            label = what if what == "guards" else f"{what} {key}"
            found.append(Difference(what=label, kind="payload", a=x, b=y))
    return found


def _same_text(x: str | None, y: str | None, readers: tuple[PayloadReader, PayloadReader]) -> bool:
    if x is None or y is None:
        return False
    return normalised(readers[0](x)) == normalised(readers[1](y))


def _numbered(refs: Sequence[PayloadRef]) -> dict[str, str | None]:
    counts: dict[str, int] = {}
    found: dict[str, str | None] = {}
    for ref in refs:
        counts[ref.kind] = counts.get(ref.kind, 0) + 1
        found[f"{ref.kind} #{counts[ref.kind]}"] = ref.payload_filename
    return found


def compile_pair_diff(a: CompileEntry, b: CompileEntry, read_a: PayloadReader, read_b: PayloadReader) -> TraceDiff:
    """Two compiles of one trace (or of two traces) compared directly, whatever their keys."""
    differences = diff_compiles(a, b, read_a, read_b)
    pair = CompileDiff(key=f"{a.id} vs {b.id}", a_id=a.id, b_id=b.id, differences=differences)
    return TraceDiff(equal=not differences, matched=1, only_a=0, only_b=0, compiles=[pair] if differences else [])
