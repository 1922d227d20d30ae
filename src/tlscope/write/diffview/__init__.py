"""The faces of a diff (analyse/diff.py): a unified diff for the terminal, a side-by-side HTML page.

Payload texts are read here, only for the differences found; the page is a Jinja template with
autoescape on, so log text cannot inject markup.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterator, Sequence

import msgspec

from tlscope.analyse.diff import Difference, PayloadReader, TraceDiff, by_kind, normalised
from tlscope.analyse.graph_diff import DEVICE_KINDS, NodeChange, StageDiff
from tlscope.analyse.ranks.cache_divergence import CacheMismatch
from tlscope.analyse.ranks.divergence import CollectiveMismatch, Divergence, said_of, with_job
from tlscope.analyse.ranks.frames import FrameShift
from tlscope.analyse.ranks.graph_divergence import GraphMismatch
from tlscope.analyse.ranks.settings_divergence import SettingsMismatch
from tlscope.write import templates

#: Lines of context around each change.
CONTEXT = 3


class Row(msgspec.Struct, kw_only=True):
    """One side-by-side row: `tag` is equal, replace, delete, insert or skip (elided lines)."""

    tag: str
    a_no: int | None = None
    a: str = ""
    b_no: int | None = None
    b: str = ""


class Section(msgspec.Struct, kw_only=True):
    title: str
    a_label: str
    b_label: str
    rows: list[Row]


def texts(diff: Difference, read_a: PayloadReader, read_b: PayloadReader) -> tuple[list[str], list[str]]:
    """The two sides of a difference as lines (payloads read, values as one line).

    Payloads are shown with what changes on every run masked (`…` for object ids, addresses,
    temporary paths: analyse/diff.py's `normalised`), so a line differing only there is no change.
    """
    if diff.kind == "payload":
        a = normalised(read_a(diff.a)) if diff.a else None
        b = normalised(read_b(diff.b)) if diff.b else None
        return (a or "").splitlines(), (b or "").splitlines()
    return ([] if diff.a is None else [diff.a]), ([] if diff.b is None else [diff.b])


def header(result: TraceDiff, sides: tuple[str, str] = ("in A", "in B")) -> Iterator[str]:
    """What differs, first, in a few lines (`sides`: how to say each side, e.g. `on rank 1`)."""
    summary = result.summary
    if result.equal:
        yield "No differences."
        yield from dynamic_said(result)
        yield from time_lines(result, sides)
        return
    yield "What differs:"
    # What a run says first (its failure, its break, its recompile), then the causes: a setting
    # someone changed, a profile one side read.
    yield from (f"  {line}" for line in summary.first_answers)
    yield from dynamic_said(result)
    for side, found in ((sides[0], summary.only_a), (sides[1], summary.only_b)):
        if found:
            yield f"  {len(found)} compile{'' if len(found) == 1 else 's'} only {side}: {', '.join(found)}"
    for line in summary.recompiles:
        yield f"  recompile reason differs: {line}"
    for change in summary.guards:
        yield f"  guards differ: {change.key}:"
        yield from (f"      {line}" for line in change.change)
    for change in summary.graphs:
        count = f"{len(change.stages)} graph{'' if len(change.stages) == 1 else 's'}"
        yield f"  graphs differ: {change.key}: {count} ({by_kind(change.stages)}); the change, in {change.stages[0]}:"
        # By structure when both graphs were read and a node changed; else by line (a constant…).
        readable = [s for s in change.structure if s.unreadable is None]
        if not (readable and readable[0].counts):
            yield from (f"      {line}" for line in change.change)
        yield from structure_lines(change.structure)
    for cache in summary.caches:
        if cache.said_elsewhere:
            continue
        yield f"  cache key differs: {cache.key}: {cache.sentence}"
        for part in cache.changed:
            yield f"      {part.name}: {_or(part.a, 'A')} -> {_or(part.b, 'B')}"
        if cache.more:
            yield f"      … {cache.more} more"
    for line in summary.other:
        yield f"  {line}"
    for line in summary.exports:
        yield f"  {line}"
    if summary.not_logged:
        yield f"  ({summary.not_logged} payloads logged on one side only because the other hit a cache: not compared)"
    yield from time_lines(result, sides)


def dynamic_said(result: TraceDiff) -> Iterator[str]:
    """The settings that differ (analyse/config_diff.py) and why the sides' inputs are dynamic
    differently (analyse/dynamic_diff.py): informative, the causes of what differs."""
    from tlscope.analyse.config_diff import config_lines

    for line in config_lines(result.summary.config):
        yield f"  config differs: {line}"
    for line in result.summary.dynamic:
        yield f"  why dynamic differs: {line}"


def time_lines(result: TraceDiff, sides: tuple[str, str] = ("in A", "in B")) -> Iterator[str]:
    """Each side's compile time and the compiles whose time changed markedly (informative)."""
    times = result.times
    if times is None:
        return
    totals = f"{times.a_s:.2f} s {sides[0]}, {times.b_s:.2f} s {sides[1]}"
    yield f"Compile time: {totals} (informative: no two runs take the same)"
    for change in times.changed:
        yield f"  {change.key}: {change.sentence}"
    if times.more:
        yield f"  … {times.more} more compiles whose time changed as much"


def _or(value: str | None, side: str) -> str:
    return f"(no such part in {side})" if value is None else value


#: Structural changes printed for a graph change's first stage.
STRUCTURE_LINES = 8


def structure_lines(stages: list[StageDiff]) -> Iterator[str]:
    """The first stage's change by structure, then the stages it reaches, said once."""
    readable = [s for s in stages if s.unreadable is None]
    if not readable:
        return
    first = readable[0]
    if not first.counts:
        yield f"      by structure, in {first.stage}: no node changed (only constants, names or comments)"
    elif not first.changes:
        yield f"      by structure, in {first.stage}: only devices changed, {_devices(first)}"
    else:
        nodes = f"nodes: {first.nodes_a} in A, {first.nodes_b} in B, {first.matched} matched"
        yield f"      by structure, in {first.stage} ({nodes}):"
    shown = first.changes[:STRUCTURE_LINES]
    yield from (f"        {_said(change)}" for change in shown)
    changed = sum(n for kind, n in first.counts.items() if kind not in DEVICE_KINDS)
    if changed > len(shown):
        yield f"        … {changed - len(shown)} more"
    if first.changes and first.devices:
        yield f"        ~ devices: {_devices(first)}"
    # Later stages grouped by the kinds of change they show: a change made in the user's code
    # reaches every later stage, said once.
    groups: dict[tuple[str, ...], list[str]] = {}
    for other in readable[1:]:
        groups.setdefault(tuple(sorted(other.counts)), []).append(other.stage)
    for kinds, names in groups.items():
        listed = ", ".join(names[:4]) + (f", … ({len(names) - 4} more)" if len(names) > 4 else "")
        plural = "" if len(names) == 1 else "s"
        if kinds == tuple(sorted(first.counts)):
            yield f"      the same kind of change reaches {len(names)} later stage{plural}: {listed}"
        else:
            said = ", ".join(kinds) or "no node changed"
            yield f"      {len(names)} later stage{plural} with {said}: {listed}"


def _devices(stage: StageDiff) -> str:
    """`cuda:0 -> cuda:1 (3 inputs, 5 nodes; nothing else changed on them)`."""
    moves = ", ".join(f"{a} -> {b}" for a, b in stage.devices)
    counted = ((stage.counts.get("input_device", 0), "input"), (stage.counts.get("device", 0), "node"))
    said = [f"{n} {what}{'' if n == 1 else 's'}" for n, what in counted if n]
    return f"{moves} ({', '.join(said)}; nothing else changed on them)"


def _said(change: NodeChange) -> str:
    where = f"   ({change.source})" if change.source else ""
    if change.kind == "added":
        return f"+ {change.b}{where}"
    if change.kind == "removed":
        return f"- {change.a}{where}"
    if change.kind == "input_added":
        return f"+ input {change.name}: {change.b}"
    if change.kind == "input_removed":
        return f"- input {change.name}: {change.a}"
    label = {"input_shape": "input", "shape": "shape of", "target": "target of", "args": "arguments of"}[change.kind]
    return f"~ {label} {change.name}: {change.a} -> {change.b}{where}"


def rank_groups(divergence: Divergence, ranks: tuple[int, int], total: int, job: str | None = None) -> Iterator[str]:
    """Where the two ranks of `diff --ranks` stand in the job, first: the job's divergence groups,
    the very ones of ranks.json and `tlscope summary` (one sentence each), and which group each
    rank is in; so the reader sees whether the pair is representative before reading its diff.
    Then the divergence's other lists, in the order and with the titles every view says them
    (`said_of`), each sentence marked where the two ranks are on different sides; `job`, the
    folder the user named, is the one the graphs' diff commands name."""
    said_here = said_of(divergence)
    if not divergence.diverges:
        # "Agree" only when no list below says otherwise (their collectives may still differ).
        agree = "Ranks agree: all" if not said_here else "All"
        yield f"{agree} {total} ranks compiled the same compile ids (one group)."
        yield f"Rank {ranks[0]} and rank {ranks[1]} are in it."
    for said in said_here:
        items = getattr(divergence, said.list)
        if said.list == "groups":
            yield from _groups(divergence, ranks, total)
        elif said.list in ("frames", "settings"):
            yield from _rank_sets(f"{said.title}:", items, ranks)
        else:
            yield from _mismatches(f"{said.title}:", items, ranks, job)


def _groups(divergence: Divergence, ranks: tuple[int, int], total: int) -> Iterator[str]:
    yield f"Ranks diverge: {total} ranks in {len(divergence.groups)} groups by compile id sequence:"
    where: dict[int, int] = {}
    for number, group in enumerate(divergence.groups, 1):
        here = [r for r in ranks if r in group.ranks]
        where.update(dict.fromkeys(here, number))
        mark = f"   <- rank {' and '.join(map(str, dict.fromkeys(here)))}" if here else ""
        yield f"  {number}. {group.sentence}{mark}"
    first, second = (where.get(r) for r in ranks)
    if first == second:
        yield f"Rank {ranks[0]} and rank {ranks[1]} are in the same group ({first})."
    else:
        yield f"Rank {ranks[0]} is in group {first}, rank {ranks[1]} in group {second}."


def _rank_sets(title: str, groups: Sequence[SettingsMismatch | FrameShift], ranks: tuple[int, int]) -> Iterator[str]:
    """The groups of ranks that compiled under other settings (or other functions) than the most
    ranks, marked where one of the two ranks is in the group and the other is not."""
    if groups:
        yield title
    for group in groups:
        inside = [r in group.ranks for r in ranks]
        mark = "" if inside[0] == inside[1] else f"   <- rank {ranks[0]} and rank {ranks[1]} differ here"
        yield f"  {group.sentence}{mark}"


def _mismatches(
    title: str,
    mismatches: Sequence[CollectiveMismatch | GraphMismatch | CacheMismatch],
    ranks: tuple[int, int],
    job: str | None = None,
) -> Iterator[str]:
    """ranks.json's sentences of the compile ids whose collectives (or graphs, or caches' answers)
    differ between ranks, each marked where the two ranks are in different groups."""
    if mismatches:
        yield title
    for mismatch in mismatches:
        groups = [g.ranks for g in mismatch.groups]
        sides = [next((n for n, group in enumerate(groups) if r in group), None) for r in ranks]
        mark = "" if sides[0] == sides[1] else f"   <- rank {ranks[0]} and rank {ranks[1]} differ here"
        yield f"  {with_job(mismatch.sentence, job)}{mark}"


def unified(result: TraceDiff, read_a: PayloadReader, read_b: PayloadReader, labels: tuple[str, str]) -> Iterator[str]:
    """The diff as text lines (no trailing newlines), in diff(1)'s unified form per difference."""
    for compile_diff in result.compiles:
        a_id, b_id = compile_diff.a_id or "(none)", compile_diff.b_id or "(none)"
        yield f"=== {compile_diff.key}: {labels[0]} {a_id} vs {labels[1]} {b_id}"
        if compile_diff.a_id is None or compile_diff.b_id is None:
            side = labels[0] if compile_diff.b_id is None else labels[1]
            yield f"only in {side}"
            continue
        for diff in compile_diff.differences:
            a, b = texts(diff, read_a, read_b)
            head = (f"{labels[0]} {a_id} {diff.what}", f"{labels[1]} {b_id} {diff.what}")
            yield from difflib.unified_diff(a, b, head[0], head[1], n=CONTEXT, lineterm="")


def size_lines(result: TraceDiff, labels: tuple[str, str]) -> Iterator[str]:
    """The event keys whose log bytes moved by more than a tenth (informative, not a difference)."""
    if result.sizes:
        yield f"log size by event key, bytes ({labels[0]} -> {labels[1]}):"
    for change in result.sizes:
        yield f"  {change.key}: {change.a_bytes:,} -> {change.b_bytes:,}"


def side_by_side(a: list[str], b: list[str]) -> list[Row]:
    """Rows for two texts, equal runs longer than 2*CONTEXT elided."""
    rows: list[Row] = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag == "equal" and i2 - i1 > 2 * CONTEXT:
            rows += [
                Row(tag="equal", a_no=i + 1, a=a[i], b_no=j + 1, b=b[j])
                for i, j in zip(range(i1, i1 + CONTEXT), range(j1, j1 + CONTEXT), strict=True)
            ]
            rows.append(Row(tag="skip", a=f"… {i2 - i1 - 2 * CONTEXT} equal lines"))
            rows += [
                Row(tag="equal", a_no=i + 1, a=a[i], b_no=j + 1, b=b[j])
                for i, j in zip(range(i2 - CONTEXT, i2), range(j2 - CONTEXT, j2), strict=True)
            ]
            continue
        for k in range(max(i2 - i1, j2 - j1)):
            i, j = i1 + k, j1 + k
            rows.append(
                Row(
                    tag=tag,
                    a_no=i + 1 if i < i2 else None,
                    a=a[i] if i < i2 else "",
                    b_no=j + 1 if j < j2 else None,
                    b=b[j] if j < j2 else "",
                )
            )
    return rows


def sections(result: TraceDiff, read_a: PayloadReader, read_b: PayloadReader) -> Iterator[Section]:
    for compile_diff in result.compiles:
        a_id, b_id = compile_diff.a_id or "(none)", compile_diff.b_id or "(none)"
        if not compile_diff.differences:
            only = [Row(tag="delete" if compile_diff.b_id is None else "insert", a=a_id, b=b_id)]
            yield Section(title=f"{compile_diff.key}: on one side only", a_label=a_id, b_label=b_id, rows=only)
        for diff in compile_diff.differences:
            a, b = texts(diff, read_a, read_b)
            yield Section(title=f"{compile_diff.key}: {diff.what}", a_label=a_id, b_label=b_id, rows=side_by_side(a, b))


def html(
    result: TraceDiff,
    read_a: PayloadReader,
    read_b: PayloadReader,
    labels: tuple[str, str],
    sides: tuple[str, str] = ("in A", "in B"),
    jobs: Sequence[str] = (),
) -> str:
    """The side-by-side page (one self-contained file): the jobs' ranks compared (`jobs`, the lines
    of `analyse/ranks/job_diff.py`, when A or B is a job), what differs, contents, then each difference."""
    env = templates.environment("tlscope.write.diffview", {})
    page = env.get_template("diff.html.jinja")
    head = list(header(result, sides))
    listed = list(sections(result, read_a, read_b))
    return page.render(result=result, labels=labels, header=head, sections=listed, jobs=list(jobs))
