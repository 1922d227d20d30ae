"""Graph diff by structure (issue 23, point 5): two printed FX graphs compared node by node.

A text diff of two graphs says that lines moved; this says what changed in the graph. Both
payloads are read into FxGraphs (analyse/fxgraph), and nodes are matched, not lines:

1. by what they compute and where it came from: op, target and the user's source line (`# File:`
   comment), in order among equals; then op, target and that line's code wherever it now is (an
   edit above moved it: matched by line number, its nodes met other code at their old numbers);
2. what is left, by op and source line: the same user line now calls another function, a
   **target change**;
3. what is left, by op and target alone: the same call from another line (the code moved).

Unmatched nodes are **added** (only in B) or **removed** (only in A). Matched nodes whose
annotation differs (dtype, sizes, strides) have a **shape change**; whose arguments, mapped through
the matching, differ, an **args change**. A tensor that differs only in its device (`cuda:0` on one
rank, `cuda:1` on another: every rank of a job on its own GPU) has a **device change**, counted and
said once per stage as the devices' mapping (`devices`), not listed node by node: between two ranks
it is every tensor of every graph, and would hide the changes that matter. Graph inputs are
matched by name. Nodes that only alias an input (`l_x_ = L_x_`) are inputs, not nodes. Names are
never matched on (FX names a node after its target, `add_1`, so a name says nothing of structure).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Hashable, Sequence

import msgspec

from tlscope.analyse.fxgraph import FxGraph, FxInput, FxNode, TensorMeta, parse_graph

#: Changes kept per stage (the counts count them all).
MAX_CHANGES = 40

#: Kinds of change said as a stage's `devices`, not listed in its `changes`.
DEVICE_KINDS = ("input_device", "device")


class NodeChange(msgspec.Struct, kw_only=True):
    #: `added`, `removed`, `target`, `shape`, `args`, `input_added`, `input_removed`, `input_shape`;
    #: `device`, `input_device` (counted, and said by the stage's `devices`).
    kind: str
    #: The node's (or input's) name on side B, else on side A.
    name: str
    #: What it was and what it is: a target, an annotation, the arguments, or the node as a line.
    a: str | None = None
    b: str | None = None
    #: `file:line  code` of the user line the node came from, when printed.
    source: str | None = None


class StageDiff(msgspec.Struct, kw_only=True):
    """One graph stage of a matched pair compared by structure."""

    #: e.g. `dynamo_output_graph #1`.
    stage: str
    #: Null when both graphs were read; else why one was not (the text diff still stands).
    unreadable: str | None = None
    nodes_a: int = 0
    nodes_b: int = 0
    matched: int = 0
    #: How many changes of each kind (`added`: 1, `shape`: 3…), all of them.
    counts: dict[str, int] = {}
    #: The changes, inputs first then nodes in B's order (removed ones in A's), at most MAX_CHANGES;
    #: device changes are not listed (see `devices`).
    changes: list[NodeChange] = []
    #: The devices of the tensors that differ only in their device, as (A's, B's) pairs in the order
    #: first met: `[("cuda:0", "cuda:1")]` when every such tensor moved from cuda:0 to cuda:1.
    devices: list[tuple[str, str]] = []


def _where(node: FxNode) -> str | None:
    if node.source is None:
        return None
    return f"{node.source.file.rsplit('/', 1)[-1]}:{node.source.line}  {node.source.code}"


def _line(node: FxNode) -> str:
    meta = f": {node.meta.text}" if node.meta is not None else ""
    return f"{node.name}{meta} = {node.target}({', '.join(node.args)})"


def _match(a: Sequence[FxNode], b: Sequence[FxNode], key: Callable[[FxNode], Hashable], pairs: dict[int, int]) -> None:
    """Pair the still unmatched nodes of equal `key`, in order (indices into a and b, in `pairs`)."""
    taken = set(pairs.values())
    # Queues, not lists: thousands of nodes of one key (a long unrolled loop) stay linear.
    waiting: dict[Hashable, deque[int]] = {}
    for j, node in enumerate(b):
        if j not in taken:
            waiting.setdefault(key(node), deque()).append(j)
    for i, node in enumerate(a):
        if i in pairs:
            continue
        queue = waiting.get(key(node))
        if queue:
            pairs[i] = queue.popleft()


def _source_key(node: FxNode) -> tuple[str, int] | None:
    return (node.source.file, node.source.line) if node.source is not None else None


def _code_key(node: FxNode) -> tuple[str, str | None] | None:
    """The user line's code without its number: the same call after an edit above moved it."""
    return (node.source.file, node.source.code) if node.source is not None else None


def diff_graphs(stage: str, a: FxGraph, b: FxGraph) -> StageDiff:
    """Two graphs of one stage compared by structure (see the module docstring)."""
    left = [n for n in a.nodes if n.op != "placeholder_alias"]
    right = [n for n in b.nodes if n.op != "placeholder_alias"]
    pairs: dict[int, int] = {}
    _match(left, right, lambda n: (n.op, n.target, _source_key(n)), pairs)
    _match(left, right, lambda n: (n.op, n.target, _code_key(n)), pairs)
    _match(left, right, lambda n: (n.op, _source_key(n)) if n.source is not None else (n.op, n.target, id(n)), pairs)
    _match(left, right, lambda n: (n.op, n.target), pairs)
    inputs = input_pairs(a, b)
    changes = _input_changes(a, b, inputs) + _node_changes(left, right, pairs, inputs)
    counts: dict[str, int] = {}
    devices: dict[tuple[str, str], None] = {}
    for change in changes:
        counts[change.kind] = counts.get(change.kind, 0) + 1
        if change.kind in DEVICE_KINDS and change.a is not None and change.b is not None:
            devices[(change.a, change.b)] = None
    return StageDiff(
        stage=stage,
        nodes_a=len(left),
        nodes_b=len(right),
        matched=len(pairs),
        counts=counts,
        changes=[c for c in changes if c.kind not in DEVICE_KINDS][:MAX_CHANGES],
        devices=list(devices),
    )


def _annotation_change(
    kind: str, name: str, a: TensorMeta | None, b: TensorMeta | None, source: str | None
) -> NodeChange:
    """A changed annotation: a device change (`a`, `b` the devices) when both are tensors that differ
    in nothing else, else a shape change (`a`, `b` the annotations as printed)."""
    if (
        a is not None
        and b is not None
        and a.shape is not None
        and a.device != b.device
        and (a.dtype, a.shape, a.stride) == (b.dtype, b.shape, b.stride)
    ):
        device = "input_device" if kind == "input_shape" else "device"
        return NodeChange(kind=device, name=name, a=a.device, b=b.device, source=source)
    return NodeChange(
        kind=kind, name=name, a=a.text if a is not None else None, b=b.text if b is not None else None, source=source
    )


def _kind(item: FxInput) -> str:
    return "sym" if item.meta is not None and item.meta.dtype == "Sym" else "tensor"


def _text(item: FxInput) -> str | None:
    return item.meta.text if item.meta is not None else None


def input_pairs(a: FxGraph, b: FxGraph) -> dict[str, str]:
    """A's input names -> B's: by name when the kind (tensor or symbolic int) agrees, then the rest
    by kind and order (AOT graphs name inputs by position, `arg0_1`, shifted by a new `Sym` input)."""
    new = {i.name: i for i in b.inputs}
    pairs = {i.name: i.name for i in a.inputs if i.name in new and _kind(new[i.name]) == _kind(i)}
    taken = set(pairs.values())
    for kind in ("tensor", "sym"):
        rest = [i.name for i in b.inputs if i.name not in taken and _kind(i) == kind]
        for item in a.inputs:
            if item.name not in pairs and _kind(item) == kind and rest:
                pairs[item.name] = rest.pop(0)
    return pairs


def _input_changes(a: FxGraph, b: FxGraph, pairs: dict[str, str]) -> list[NodeChange]:
    old = {i.name: i for i in a.inputs}
    back = {y: x for x, y in pairs.items()}
    found = []
    for item in b.inputs:
        if item.name not in back:
            found.append(NodeChange(kind="input_added", name=item.name, b=_text(item)))
        elif _text(old[back[item.name]]) != _text(item):
            found.append(_annotation_change("input_shape", item.name, old[back[item.name]].meta, item.meta, None))
    found += [NodeChange(kind="input_removed", name=i.name, a=_text(i)) for i in a.inputs if i.name not in pairs]
    return found


def _node_changes(
    left: list[FxNode], right: list[FxNode], pairs: dict[int, int], inputs: dict[str, str]
) -> list[NodeChange]:
    # An argument is a matched node (renamed to B's name) or an input's alias (`l_x_`, named
    # after the input, so the same on both sides).
    renamed = {**inputs, **{left[i].name: right[j].name for i, j in pairs.items()}}
    back = {j: i for i, j in pairs.items()}
    found: list[NodeChange] = []
    for j, node in enumerate(right):
        i = back.get(j)
        if i is None:
            found.append(NodeChange(kind="added", name=node.name, b=_line(node), source=_where(node)))
            continue
        old = left[i]
        if old.target != node.target:
            found.append(NodeChange(kind="target", name=node.name, a=old.target, b=node.target, source=_where(node)))
        before = old.meta.text if old.meta is not None else None
        after = node.meta.text if node.meta is not None else None
        if before != after:
            found.append(_annotation_change("shape", node.name, old.meta, node.meta, _where(node)))
        mapped = [renamed.get(x, x) for x in old.args]
        if mapped != node.args:
            found.append(
                NodeChange(
                    kind="args", name=node.name, a=", ".join(old.args), b=", ".join(node.args), source=_where(node)
                )
            )
    found += [
        NodeChange(kind="removed", name=n.name, a=_line(n), source=_where(n))
        for i, n in enumerate(left)
        if i not in pairs
    ]
    return found


def diff_graph_texts(stage: str, a: str | None, b: str | None) -> StageDiff:
    """Two payload texts of one stage read and compared; `unreadable` says why when one is no graph."""
    left = parse_graph(a) if a is not None else None
    right = parse_graph(b) if b is not None else None
    if not isinstance(left, FxGraph) or not isinstance(right, FxGraph):
        failure = left if not isinstance(left, FxGraph) else right
        why = getattr(failure, "reason", None) or "payload missing"
        return StageDiff(stage=stage, unreadable=why)
    return diff_graphs(stage, left, right)
