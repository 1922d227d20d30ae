"""Diff two traces (or two ranks, or two compile ids): compiles matched by what they compiled.

Compiles are matched by their compiled function (name, file name, first line), then by the
order of that function's frame compiles (its 1st, 2nd… compile) and the attempt, not by compile
id: a trace with one more graph break earlier still lines up function by function. What is left
is matched by name and file (an edit above the function moved its first line), then by name (a
renamed script), each only when one compile of each side has that looser key. Within a
matched pair, graphs and code are matched by kind and order of that kind, guards as one text,
and a few numbers of the metrics (counts, never times: two runs of one program never take the
same time). Payloads are compared by file name, which is their MD5, so equal names mean equal
text; when the names differ, both texts are read and compared again without what changes on
every run (`# graph id: N`, object ids and addresses, inductor's temporary paths and kernel hashes)
and where the user's code is (`model.py:14`, another line after an edit above it).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Iterator, Sequence
from pathlib import PurePosixPath

import msgspec

from tlscope.analyse.cache_key import CacheKeyChange, key_changes
from tlscope.analyse.config_diff import ConfigDiff
from tlscope.analyse.excerpt import around, differs_at
from tlscope.analyse.graph_diff import StageDiff, diff_graph_texts
from tlscope.analyse.ranks.divergence import scheduled_text
from tlscope.analyse.time_diff import CompileTimes, compile_times, hit_a_cache
from tlscope.format.compiles import CompileEntry, ExportCall, PayloadRef
from tlscope.format.logsize import LogSize

#: Reads a payload file name (`payloads/<md5>.txt`) of one side; None when it has no text.
PayloadReader = Callable[[str], "str | None"]

#: Metrics compared (counts and outcomes; times always differ between runs).
COMPARED_METRICS = ("graph_op_count", "graph_node_count", "graph_input_count", "guard_count", "shape_env_guard_count")


#: What differs between two runs of one program without meaning anything.
_VOLATILE = re.compile(
    r"# graph id: \d+|Guard latency = [\d.]+ us|0x[0-9a-f]{6,}|\b\d{12,}\b"
    r"|/tmp/torchinductor_[^/\s]+/[^\s'\"]*|\b[a-z0-9]{52}\b|\b[0-9a-f]{32,64}\b"
    # fx_graph_runnable's first lines set the run's TORCH_TRACE folder: a new one every run.
    r"|(?<=os\.environ\['TORCH_TRACE'\] = )'[^'\n]*'"
    # Where the user's code is (`# File: /a/model.py:14 in f`, a guard's `# model.py:14 in f`):
    # another line after an edit above it, another folder for a copy of the script. The code
    # beside it stays compared. Only from a token's start: linear on a long token without one.
    r"|(?<![^\s'\"(])[^\s'\"(]*\.py:\d+"
)


#: An object's or a type's address in an ID_MATCH / TYPE_MATCH guard: another in every process,
#: whatever its width (a 10-digit address on macOS is not `_VOLATILE`'s long number). The
#: guarded source stays compared.
_GUARDED_ID = re.compile(r"(___check_(?:obj|type)_id\([^,()]*(?:\([^()]*\)[^,()]*)*, )\d+")


def normalised(text: str | None) -> str | None:
    return None if text is None else _GUARDED_ID.sub(r"\g<1>…", _VOLATILE.sub("…", text))


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

    #: The matching key, e.g. `fn (model.py:12) compile 2` (`fn (model.py:12) compile 2, restarted
    #: attempt 0` for an attempt that restarted).
    key: str
    a_id: str | None
    b_id: str | None
    differences: list[Difference]
    #: Payloads logged on one side only because the other side's compile hit a cache (Inductor
    #: does not log the graphs of a compile it loads): not differences, e.g. `graph
    #: inductor_post_grad_graph #1 (only in A; B hit a cache)`.
    not_logged: list[str] = []


class GraphChange(msgspec.Struct, kw_only=True):
    """The graphs of one matched pair that differ, the change said once for every stage it reaches."""

    key: str
    #: Every graph stage that differs (`dynamo_output_graph #1`, `aot_forward_graph #1`, …), in
    #: pipeline order: a change made in the user's code propagates from the first to the rest.
    stages: list[str]
    #: The lines removed (`- …`) and added (`+ …`) in the first stage, object ids masked, at most CHANGE_LINES.
    change: list[str]
    #: Each stage compared by structure (analyse/graph_diff.py: nodes matched by op, target and
    #: user source, not by line): nodes added, removed, targets, shapes and arguments changed.
    #: Empty for guards, and past the first MAX_STRUCTURAL graph changes of a diff.
    structure: list[StageDiff] = []


class DiffSummary(msgspec.Struct, kw_only=True):
    """What differs, said first (`tlscope diff` prints it before the details)."""

    #: Compiles on one side only, as `[7/0] <lambda> (_ranks.py:85)`.
    only_a: list[str] = []
    only_b: list[str] = []
    #: Matched pairs whose recompile reasons differ: `key: A <why or none> / B <why or none>`.
    recompiles: list[str] = []
    #: The matched pairs whose guards differ, each with its first changed guard lines (`stages` is `["guards"]`).
    guards: list[GraphChange] = []
    graphs: list[GraphChange] = []
    #: Other differences, one line each: `key: what A -> B`.
    other: list[str] = []
    #: How the torch.export calls differ (compiles.json `exports`), one line each: a status that
    #: changed, an issue on one side only (`diff_exports`).
    exports: list[str] = []
    #: How many payloads were not compared because a side hit a cache.
    not_logged: int = 0
    #: Cache lookups of matched compiles whose keys differ, with the parts of the key that
    #: differ (why a warm start missed: analyse/cache_key.py).
    caches: list[CacheKeyChange] = []
    #: Why the sides' inputs are dynamic differently (analyse/dynamic_diff.py), one line each:
    #: informative, it explains graph differences listed above. Since 1.29.
    dynamic: list[str] = []
    #: How the two runs' first answers differ (compiles.json `first_answers`: the first failure,
    #: the most frequent graph break, the first recompile), a line a kind (analyse/headline.py
    #: `answer_changes`). Informative: what a user reads first, said by what differs below it.
    first_answers: list[str] = []
    #: The settings whose values differ between the two runs' first metrics records (dynamo,
    #: compiler, functorch, inductor configs: analyse/config_diff.py); null when none does.
    #: Informative, as `dynamic`: the cause of differences listed above, never one itself.
    config: ConfigDiff | None = None


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
    #: What differs, in a few lines: the header of `tlscope diff`.
    summary: DiffSummary = msgspec.field(default_factory=DiffSummary)
    #: Each side's compile time and the matched compiles whose time changed markedly
    #: (analyse/time_diff.py); null when neither side timed a compile. Informative, as `sizes`:
    #: never makes two traces different.
    times: CompileTimes | None = None


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


class _Keyed(msgspec.Struct, frozen=True):
    """A compile's match key in parts: its function's name, where it is defined, and which of that
    function's compiles it is (`compile 2`, `compile 1, restarted attempt 0`). `key` is
    `Net.forward (a.py:7) compile 1`: the nth compile of a function, matched across runs by its
    last attempt, the one that compiled (a run whose compile restarted after a graph break is
    compared with one that did not break by what each ended with); a restarted attempt is keyed
    apart."""

    name: str
    file: str | None
    line: int | None
    nth: str
    entry: CompileEntry

    @classmethod
    def of(cls, entry: CompileEntry, nth: int) -> _Keyed:
        fn = entry.function
        file = PurePosixPath(fn.file).name if fn and fn.file else None
        said = f"compile {nth}"
        if entry.restarted_as is not None:
            attempt = entry.id.rsplit("_", 1)[1].rstrip("]") if "_" in entry.id else "0"
            said += f", restarted attempt {attempt}"
        return cls(entry.function_name() or "?", file, fn.line if fn and file else None, said, entry)

    @property
    def where(self) -> str:
        return f"{self.file}:{self.line}" if self.file else "?"

    @property
    def key(self) -> str:
        return f"{self.name} ({self.where}) {self.nth}"

    def moved_to(self, other: _Keyed) -> str:
        """The key of a pair whose function is defined elsewhere in B: `f (a.py:7 -> a.py:9) compile 1`."""
        return f"{self.name} ({self.where} -> {other.where}) {self.nth}"


def _keys(entries: Sequence[CompileEntry]) -> list[_Keyed]:
    """Each compile under its match key, the first of equals kept (outside-compile events left out)."""
    seen: dict[tuple[str | None, str | None, int | None], list[str]] = {}
    found: dict[str, _Keyed] = {}
    for entry in entries:
        if entry.status == "outside":
            continue
        fn = entry.function
        ident = (
            (entry.function_name(), fn.file and PurePosixPath(fn.file).name, fn.line) if fn else (entry.id, None, None)
        )
        frames = seen.setdefault(ident, [])
        if entry.frame_compile not in frames:
            frames.append(entry.frame_compile)
        keyed_entry = _Keyed.of(entry, frames.index(entry.frame_compile) + 1)
        found.setdefault(keyed_entry.key, keyed_entry)
    return list(found.values())


#: How a compile left unmatched by its key is matched again: the same function and nth compile in
#: the same file at another line (an edit above it moved it), then in another file (a renamed
#: script), each only when one compile of each side has it.
_LOOSER: tuple[Callable[[_Keyed], tuple[str | None, ...]], ...] = (
    lambda k: (k.name, k.file, k.nth),
    lambda k: (k.name, k.nth),
)


def matched(
    a: Sequence[CompileEntry], b: Sequence[CompileEntry]
) -> list[tuple[str, CompileEntry | None, CompileEntry | None]]:
    """A's compiles in order, each with its match in B (or None), then B's unmatched: matched by
    key, else by `_LOOSER` (the key then says where each side defines the function)."""
    left, right = _keys(a), _keys(b)
    by_key = {k.key: k for k in right}
    pairs: dict[int, _Keyed] = {i: by_key[k.key] for i, k in enumerate(left) if k.key in by_key}
    used = {k.key for k in pairs.values()}
    for looser in _LOOSER:
        lonely = [k for k in right if k.key not in used]
        theirs = _unique(looser, lonely)
        mine = _unique(looser, [k for i, k in enumerate(left) if i not in pairs])
        for i, k in enumerate(left):
            other = theirs.get(looser(k)) if i not in pairs and looser(k) in mine else None
            if other is not None:
                pairs[i] = other
                used.add(other.key)
    found: list[tuple[str, CompileEntry | None, CompileEntry | None]] = []
    for i, k in enumerate(left):
        other = pairs.get(i)
        key = k.key if other is None or other.key == k.key else k.moved_to(other)
        found.append((key, k.entry, other.entry if other is not None else None))
    found += [(k.key, None, k.entry) for k in right if k.key not in used]
    return found


def _unique(
    looser: Callable[[_Keyed], tuple[str | None, ...]], keys: Sequence[_Keyed]
) -> dict[tuple[str | None, ...], _Keyed]:
    """`keys` by `looser`, those whose looser key only one of them has."""
    counted: dict[tuple[str | None, ...], list[_Keyed]] = {}
    for k in keys:
        counted.setdefault(looser(k), []).append(k)
    return {loose: ks[0] for loose, ks in counted.items() if len(ks) == 1}


def diff_traces(
    a: Sequence[CompileEntry],
    b: Sequence[CompileEntry],
    read_a: PayloadReader,
    read_b: PayloadReader,
    exports: tuple[Sequence[ExportCall], Sequence[ExportCall]] = ((), ()),
) -> TraceDiff:
    """Every matched pair compared; unmatched compiles listed as present on one side only; the
    torch.export calls compared in order (`diff_exports`)."""
    compiles: list[CompileDiff] = []
    summary = DiffSummary()
    pairs = matched(a, b)
    both: list[tuple[str, CompileEntry, CompileEntry]] = []
    for key, x, y in pairs:
        if x is not None and y is not None:
            both.append((key, x, y))
            pair = _pair(key, x, y, (read_a, read_b), summary)
            if pair.differences:
                compiles.append(pair)
        elif x is not None:
            compiles.append(CompileDiff(key=key, a_id=x.id, b_id=None, differences=[]))
            summary.only_a.append(_named(x))
        elif y is not None:
            compiles.append(CompileDiff(key=key, a_id=None, b_id=y.id, differences=[]))
            summary.only_b.append(_named(y))
    summary.exports = diff_exports(exports[0], exports[1])
    return TraceDiff(
        equal=not compiles and not summary.exports,
        matched=len(both),
        only_a=sum(y is None for _, _, y in pairs),
        only_b=sum(x is None for _, x, _ in pairs),
        compiles=compiles,
        summary=summary,
        times=compile_times(a, b, both),
    )


def _pair(
    key: str,
    a: CompileEntry,
    b: CompileEntry,
    readers: tuple[PayloadReader, PayloadReader],
    summary: DiffSummary,
) -> CompileDiff:
    """One matched pair compared, its differences added to `summary`."""
    found = diff_compiles(a, b, *readers)
    real = [d for d in found if d.kind != "not_logged"]
    # A key that changed is a difference even when both lookups missed (a cold run against a
    # run with another config): said once, with its parts, in `summary.caches`.
    graphs = [d for d in real if d.what.startswith("graph ")]
    caches = key_changes(key, a.cache, b.cache, readers, graphs_differ=bool(graphs))
    real += [
        Difference(what=f"cache key {c.cache} lookup {c.nth}", kind="value", a=c.a_key, b=c.b_key)
        for c in caches
        if not c.said_elsewhere
    ]
    summary.caches += caches
    pair = CompileDiff(
        key=key, a_id=a.id, b_id=b.id, differences=real, not_logged=[d.what for d in found if d.kind == "not_logged"]
    )
    summary.not_logged += len(pair.not_logged)
    if graphs:
        summary.graphs.append(_graph_change(key, graphs, readers, structural=len(summary.graphs) < MAX_STRUCTURAL))
    for d in real:
        if d.what == "recompile":
            summary.recompiles.append(f"{key}: A {d.a or 'not a recompile'} / B {d.b or 'not a recompile'}")
        elif d.what == "guards":
            summary.guards.append(GraphChange(key=key, stages=["guards"], change=_change_lines(d, readers, 2)))
        elif d.kind == "value" and not d.what.startswith("cache key "):
            summary.other.append(f"{key}: {d.what} {d.a} -> {d.b}")
    code = [d.what.removeprefix("code ") for d in real if d.what.startswith("code ")]
    if code:
        summary.other.append(f"{key}: generated code differs ({by_kind(code)})")
    return pair


def diff_exports(a: Sequence[ExportCall], b: Sequence[ExportCall]) -> list[str]:
    """The export calls of two traces, paired in order: a count that differs, then per pair its
    status if it changed and each issue (kind and expression, or operator) on one side only,
    e.g. `export call 0: failed -> exported` and `export call 0: only in A: data_dependent_error k > 2`."""
    lines = []
    if len(a) != len(b):
        lines.append(f"export calls: {len(a)} in A, {len(b)} in B")
    for x, y in zip(a, b, strict=False):
        if x.status != y.status:
            lines.append(f"export call {x.index}: {x.status} -> {y.status}")
        mine, theirs = _issue_keys(x), _issue_keys(y)
        for side, keys, other in (("A", mine, theirs), ("B", theirs, mine)):
            gone = [k for k in keys if k not in other]
            if gone:
                lines.append(f"export call {x.index}: only in {side}: {'; '.join(gone[:3])}")
    return lines


def _issue_keys(call: ExportCall) -> list[str]:
    return list(dict.fromkeys(f"{i.kind} {i.code_expr or i.op or ''}".strip() for i in call.issues))


def by_kind(labels: Sequence[str]) -> str:
    """`kind #1, kind #2, other #1` as `2 kind, other`: payload labels counted by kind, in order."""
    counts: dict[str, int] = {}
    for label in labels:
        kind = label.rsplit(" #", 1)[0]
        counts[kind] = counts.get(kind, 0) + 1
    return ", ".join(kind if n == 1 else f"{n} {kind}" for kind, n in counts.items())


def _named(entry: CompileEntry) -> str:
    """`[0/1] f (a.py:3)`; `[0/0] f (a.py:3, restarted)` for an attempt that restarted (its
    frame compile's last attempt is the one compared)."""
    fn = entry.function
    where = f"{PurePosixPath(fn.file).name}:{fn.line}" if fn and fn.file else ""
    said = ", ".join(part for part in (where, "restarted" if entry.restarted_as else "") if part)
    return f"{entry.id} {entry.function_name() or '?'}" + (f" ({said})" if said else "")


#: How many removed/added lines a graph change shows in the summary, and how long each may be.
CHANGE_LINES = 6
CHANGE_WIDTH = 160


def _cut(line: str, differs_at: int = 0) -> str:
    """At most CHANGE_WIDTH characters of `line`, starting a little before `differs_at`."""
    return around(line, differs_at, CHANGE_WIDTH, 40)


#: Graph changes of one diff compared by structure too (each reads and parses its payloads).
MAX_STRUCTURAL = 50


def _graph_change(
    key: str, graphs: list[Difference], readers: tuple[PayloadReader, PayloadReader], *, structural: bool = True
) -> GraphChange:
    """The stages that differ and the first stage's change: the lines only one side has, and
    each stage compared by structure."""
    change = _change_lines(graphs[0], readers, CHANGE_LINES)
    stages = [d.what.removeprefix("graph ") for d in graphs]
    structure = []
    if structural:
        for stage, d in zip(stages, graphs, strict=True):
            a = readers[0](d.a) if d.a else None
            b = readers[1](d.b) if d.b else None
            structure.append(diff_graph_texts(stage, a, b))
    return GraphChange(key=key, stages=stages, change=change, structure=structure)


def _change_lines(diff: Difference, readers: tuple[PayloadReader, PayloadReader], limit: int) -> list[str]:
    """The lines only one side of a payload difference has (`- …` / `+ …`, ids masked), at most `limit`."""
    a = ((normalised(readers[0](diff.a)) or "") if diff.a else "").splitlines()
    b = ((normalised(readers[1](diff.b)) or "") if diff.b else "").splitlines()
    change: list[str] = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag == "equal":
            continue
        old, new = [t.strip() for t in a[i1:i2]], [t.strip() for t in b[j1:j2]]
        # A long line changed at its end (a size in a guard) is shown from a little before the change.
        skip = [differs_at(x, y) for x, y in zip(old, new, strict=False)]
        change += [f"- {_cut(x, skip[k] if k < len(skip) else 0)}" for k, x in enumerate(old)]
        change += [f"+ {_cut(y, skip[k] if k < len(skip) else 0)}" for k, y in enumerate(new)]
    shown = change[:limit]
    if len(change) > limit:
        shown.append(f"  … {len(change) - limit} more changed lines")
    return shown


def diff_compiles(a: CompileEntry, b: CompileEntry, read_a: PayloadReader, read_b: PayloadReader) -> list[Difference]:
    """What differs between two compiles: status, breaks, failure, caches, metrics, graphs, guards, code."""
    found = [
        _value(what, x, y)
        for what, x, y in (
            ("status", a.status, b.status),
            ("graph_breaks", [g.reason for g in a.graph_breaks], [g.reason for g in b.graph_breaks]),
            ("failure", a.failure.type if a.failure else None, b.failure.type if b.failure else None),
            ("recompile", why_recompiled(a), why_recompiled(b)),
            (
                "cache",
                sorted(f"{c.cache} {c.outcome}" for c in a.cache),
                sorted(f"{c.cache} {c.outcome}" for c in b.cache),
            ),
            *((f"metrics.{m}", _metric(a, m), _metric(b, m)) for m in COMPARED_METRICS),
            ("collectives_scheduled", *_scheduled(a, b)),
        )
        if x != y
    ]
    readers = (read_a, read_b)
    hits = (hit_a_cache(a), hit_a_cache(b))
    found += _payloads("graph", a.graphs, b.graphs, readers, hits)
    found += _payloads("guards", [a.guards] if a.guards else [], [b.guards] if b.guards else [], readers, hits)
    found += _payloads("code", a.code, b.code, readers, hits)
    return found


def _scheduled(a: CompileEntry, b: CompileEntry) -> tuple[str | None, str | None]:
    """The collectives Inductor scheduled for each compile (compiles.json's `collective_schedules`,
    as ranks.json compares them: the waits left out), when both logged one; else (None, None): a
    compile whose FX graph cache hit logs none, which says nothing of what it runs."""
    if not (a.collective_schedules and b.collective_schedules):
        return None, None
    said = [scheduled_text(e).replace("\n", ", ") or "none" for e in (a, b)]
    return said[0], said[1]


def why_recompiled(entry: CompileEntry) -> str | None:
    """Why a compile recompiled, in plain words (its recommended guard failure, as summary and the
    explorer say it), or None."""
    recompile = entry.recompile
    if recompile is None:
        return None
    return recompile.explanation() or "reason not logged"


def _metric(entry: CompileEntry, name: str) -> object:
    return getattr(entry.metrics, name, None) if entry.metrics is not None else None


def _value(what: str, a: object, b: object) -> Difference:
    return Difference(what=what, kind="value", a=None if a is None else str(a), b=None if b is None else str(b))


def _payloads(
    what: str,
    a: Sequence[PayloadRef],
    b: Sequence[PayloadRef],
    readers: tuple[PayloadReader, PayloadReader],
    hits: tuple[bool, bool],
) -> list[Difference]:
    """Payloads matched by kind and order within the kind; compared by file name (their MD5), then text.

    A payload missing on a side whose compile hit a cache was not logged, not deleted: it is
    reported as `not_logged`, never as a difference. A hit leaves gaps anywhere in a kind's
    sequence (Inductor logs a graph's `before_post_grad_graph` only when it compiles it, so a
    forward loaded from the cache drops one from the middle), so then the payloads of each kind
    are aligned by text (`_aligned`), not paired by position: by position every payload after
    the gap would be compared with the next one's counterpart, a graph with another graph.
    """
    found = []
    for key, (x, in_a), (y, in_b) in _aligned(a, b, readers) if any(hits) else _by_position(a, b):
        if in_a and in_b and (x == y or _same_text(x, y, readers)):
            continue
        label = what if what == "guards" else f"{what} {key}"
        if (not in_b and hits[1]) or (not in_a and hits[0]):
            side = "A" if in_a else "B"
            found.append(
                Difference(
                    what=f"{label} (only in {side}; {'B' if side == 'A' else 'A'} hit a cache)",
                    kind="not_logged",
                    a=x,
                    b=y,
                )
            )
        else:
            found.append(Difference(what=label, kind="payload", a=x, b=y))
    return found


#: One payload of a side: its file name (None: the event had no payload) and whether it is there.
_Side = tuple["str | None", bool]


def _by_position(a: Sequence[PayloadRef], b: Sequence[PayloadRef]) -> Iterator[tuple[str, _Side, _Side]]:
    """(`kind #n`, A's, B's): the n-th payload of each kind on each side."""
    left, right = _numbered(a), _numbered(b)
    for key in [*left, *(k for k in right if k not in left)]:
        yield key, (left.get(key), key in left), (right.get(key), key in right)


def _aligned(
    a: Sequence[PayloadRef], b: Sequence[PayloadRef], readers: tuple[PayloadReader, PayloadReader]
) -> Iterator[tuple[str, _Side, _Side]]:
    """(`kind #n`, A's, B's) for the payloads of each kind that are not the same text on both
    sides, once each kind's two sequences are aligned by their texts (what changes on every run
    masked): a payload only one side logged is paired with nothing. Named by A's number, or
    `#n in B` for one only B has."""
    kinds = dict.fromkeys(r.kind for r in [*a, *b])
    for kind in kinds:
        xs = [r.payload_filename for r in a if r.kind == kind]
        ys = [r.payload_filename for r in b if r.kind == kind]
        texts = (
            [normalised(readers[0](x)) if x else None for x in xs],
            [normalised(readers[1](y)) if y else None for y in ys],
        )
        for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, *texts, autojunk=False).get_opcodes():
            if op == "equal":
                continue
            for k in range(max(i2 - i1, j2 - j1)):
                i, j = i1 + k, j1 + k
                in_a, in_b = i < i2, j < j2
                key = f"{kind} #{i + 1}" if in_a else f"{kind} #{j + 1} in B"
                yield key, (xs[i] if in_a else None, in_a), (ys[j] if in_b else None, in_b)


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
    summary = DiffSummary()
    key = f"{a.id} vs {b.id}"
    pair = _pair(key, a, b, (read_a, read_b), summary)
    differs = bool(pair.differences)
    return TraceDiff(
        equal=not differs,
        matched=1,
        only_a=0,
        only_b=0,
        compiles=[pair] if differs else [],
        summary=summary,
        times=compile_times([a], [b], [(key, a, b)]),
    )
