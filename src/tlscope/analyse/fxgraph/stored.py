"""An FxGraph to and from its stored form in graphs/<md5>.json (format/graph_file.py).

The stored form keeps each distinct user line once per graph (`sources`) and points at it from
the nodes; reading it back gives the same FxGraph, each node's `source` shared by its line.
"""

from __future__ import annotations

from tlscope.analyse.fxgraph.model import FxGraph, FxInput, FxNode, FxSource
from tlscope.format.graph_file import StoredGraph, StoredInput, StoredNode


def to_stored(graph: FxGraph) -> StoredGraph:
    sources: dict[FxSource, int] = {}
    nodes = [
        StoredNode(
            name=n.name,
            names=n.names,
            op=n.op,
            target=n.target,
            args=n.args,
            users=n.users,
            meta=n.meta,
            source=None if n.source is None else sources.setdefault(n.source, len(sources)),
            module=n.module,
            line=n.line,
        )
        for n in graph.nodes
    ]
    return StoredGraph(
        name=graph.name,
        inputs=[StoredInput(name=i.name, meta=i.meta, module=i.module) for i in graph.inputs],
        nodes=nodes,
        outputs=graph.outputs,
        sources=list(sources),
        subgraphs={name: to_stored(sub) for name, sub in graph.subgraphs.items()},
    )


def from_stored(stored: StoredGraph) -> FxGraph:
    """The FxGraph of a stored graph; a `source` index out of range (a hand-edited file) reads as None.
    Its nodes' lists are their own (the line reader's stored nodes share theirs by line text)."""
    sources = stored.sources
    nodes = [
        FxNode(
            name=n.name,
            op=n.op,
            target=n.target,
            args=list(n.args),
            names=list(n.names),
            meta=n.meta,
            source=sources[n.source] if n.source is not None and 0 <= n.source < len(sources) else None,
            users=list(n.users),
            line=n.line,
            module=n.module,
        )
        for n in stored.nodes
    ]
    return FxGraph(
        name=stored.name,
        inputs=[FxInput(name=i.name, meta=i.meta, module=i.module) for i in stored.inputs],
        nodes=nodes,
        outputs=stored.outputs,
        subgraphs={name: from_stored(sub) for name, sub in stored.subgraphs.items()},
    )
