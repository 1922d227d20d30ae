"""Did the sizes change? (issue 23, point 3): compiles.json's `input_shapes`.

For every frame compiled more than once, the tensor inputs of its Dynamo graphs per compile, as
the graph's annotations print them (`f32[s77, 8][8, 1]cpu`, read by analyse/fxgraph's
annotation parser), each compared with the compile before it (the cache entry the recompile was
compared with, else the previous column): which dimensions' sizes and strides changed, whether
the dtype did, and which dimension the recompile's explaining guard failure names.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from tlscope.analyse.fold.graphs import placeholder_name
from tlscope.analyse.fold.guards import as_tensor_of, input_name
from tlscope.analyse.fold.symbols import size_refs
from tlscope.analyse.fxgraph.graph_parser import parse_annotation
from tlscope.analyse.fxgraph.model import TensorMeta
from tlscope.format.compiles import CompileEntry, FrameShapes, GuardFailure, InputShapes, ShapeCell

_INDEX = re.compile(r"(?:size|stride) mismatch at index (?P<dim>\d+)\.")


def _frame_key(entry: CompileEntry) -> str:
    return entry.frame_compile.rsplit("/", 1)[0]


def input_shapes(compiles: Sequence[CompileEntry], metas: dict[str, TensorMeta] | None = None) -> list[FrameShapes]:
    """One table per frame with more than one frame compile, in compile order (a frame's tables
    do not depend on other frames': called once per frame, with the same `metas`, gives the same).

    `metas`: each distinct annotation read once, its shape and stride lists shared by the cells
    that print it (never changed): a long job repeats the same few annotations in every compile.
    """
    frames: dict[str, list[CompileEntry]] = {}
    for entry in compiles:
        if entry.status != "outside":
            frames.setdefault(_frame_key(entry), []).append(entry)
    found = []
    metas = {} if metas is None else metas
    for entries in frames.values():
        if len({e.frame_compile for e in entries}) < 2:
            continue
        columns = [e for e in entries if any(g.kind == "dynamo_output_graph" for g in e.graphs)]
        if columns:
            found.append(_table(entries[0], columns, metas))
    return found


def _table(first: CompileEntry, columns: list[CompileEntry], metas: dict[str, TensorMeta]) -> FrameShapes:
    rows: dict[str, InputShapes] = {}
    cells: dict[str, dict[str, ShapeCell]] = {}
    column_of = {c.frame_compile: c.id for c in columns}
    previous: str | None = None
    for entry in columns:
        graph = [g for g in entry.graphs if g.kind == "dynamo_output_graph"][-1]
        here: dict[str, ShapeCell] = {}
        for item in graph.inputs:
            meta = metas.get(item.type or "")
            if meta is None:
                meta = metas[item.type or ""] = parse_annotation(item.type or "")
            if meta.shape is None:
                continue  # a Sym(...) or untyped input: not a tensor
            source = next(
                (t for t in entry.inputs if placeholder_name(as_tensor_of(t.source) or t.source) == item.name), None
            )
            if source is not None and as_tensor_of(source.source) is not None:
                continue  # a float made dynamic, passed as a 0-d tensor: a value, as an int's symbol is
            row = rows.setdefault(item.name, InputShapes(name=item.name, source=None, cells=[]))
            if row.source is None and source is not None:
                row.source = source.source
            here[item.name] = ShapeCell(
                compile_id=entry.id,
                dtype=meta.dtype or None,
                shape=meta.shape,
                stride=meta.stride,
                sizes=source.size if source is not None else None,
            )
        compared = entry.recompile.compared_with if entry.recompile is not None else None
        before = cells.get(column_of.get(compared or "", "") or previous or "", {})
        for name, cell in here.items():
            _compare(cell, before.get(name), entry, rows[name].source or name)
        cells[entry.id] = here
        previous = entry.id
    for entry in columns:
        for name, row in rows.items():
            row.cells.append(cells[entry.id].get(name) or ShapeCell(compile_id=entry.id, absent=True))
    return FrameShapes(
        frame=first.frame_compile,
        function=first.said_function(),
        compile_ids=[c.id for c in columns],
        inputs=list(rows.values()),
    )


def _compare(cell: ShapeCell, before: ShapeCell | None, entry: CompileEntry, source: str) -> None:
    if entry.recompile is not None:
        cell.recompile = entry.id
        failure = entry.recompile.shown_failure()
        named = failure_dim(failure, input_name(source)) if failure is not None else None
        if failure is not None and failure.kind == "stride":
            cell.reason_stride = named
        else:
            cell.reason_dim = named
    if before is None:
        return
    cell.changed_dims = _changed(before.shape, cell.shape)
    cell.changed_strides = _changed(before.stride, cell.stride)
    cell.dtype_changed = before.dtype != cell.dtype


def _changed(old: list[str] | None, new: list[str] | None) -> list[int]:
    old, new = old or [], new or []
    if len(old) != len(new):
        return list(range(len(new)))
    return [i for i, (a, b) in enumerate(zip(old, new, strict=True)) if a != b]


def failure_dim(failure: GuardFailure, name: str) -> int | None:
    """The dimension of input `name` a size, stride or dynamic-range guard failure names."""
    if failure.kind in ("size", "stride") and failure.subject == name:
        found = _INDEX.search(failure.guard)
        return int(found["dim"]) if found is not None else None
    if failure.kind == "dynamic_range":
        for expr, dim in size_refs(failure.guard):
            if input_name(expr) == name:
                return dim
    return None
